"""RKN-max and stacked gapped k-mer layers against brute-force enumeration (part 3, §10)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.linalg
import torch
from test_ckn_seq import ALPHA, _one_hot

from kernelkit.models._ckn_seq import (
    GappedKmerLayer,
    KmerStack,
    fit_kmer_anchors,
    gap_max,
    keep_levels,
    pyramid_prefixes,
)
from kernelkit.utils._errors import InputError

pytestmark = pytest.mark.usefixtures("one_torch_thread")



def _b(z, v):
    """``||v|| kappa(<z, v / ||v||>)`` for a unit anchor row ``z`` (0 for a zero ``v``)."""
    n = float(np.linalg.norm(v))
    return 0.0 if n == 0 else n * float(np.exp(ALPHA * (np.dot(z, v) / n - 1)))


def _brute_h(Z, x, k, lam, ends=None, reduce=max):
    """``reduce`` over index tuples (ending in ``ends``) of ``lambda^gaps prod_l b_l``;
    ``x`` is (A, T) numpy, ``Z`` (k, A) numpy; ``None`` when no tuple qualifies."""
    T = x.shape[1]
    values = [
        lam ** (idx[-1] - idx[0] + 1 - k) * np.prod([_b(Z[j], x[:, t]) for j, t in enumerate(idx)])
        for idx in itertools.combinations(range(T), k)
        if ends is None or idx[-1] in ends
    ]
    return reduce(values) if values else None


def test_gap_max_is_the_decayed_running_maximum_across_blocks():
    """``c[t] = max_{s<=t} lambda^{t-s} v[s]`` against a double loop, with ``lambda`` small
    enough that float32 needs many blocks (2 positions each for lambda = 1e-4)."""
    rng = np.random.default_rng(0)
    v = rng.random((3, 40))
    for lam, dtype in (
        (0.5, torch.float64),
        (1e-4, torch.float32),
        (0.0, torch.float64),
        (1.0, torch.float64),
    ):
        out = gap_max(torch.tensor(v, dtype=dtype), lam).double().numpy()
        expected = np.array(
            [[max(lam ** (t - s) * row[s] for s in range(t + 1)) for t in range(40)] for row in v]
        )
        np.testing.assert_allclose(out, expected, rtol=1e-5 if dtype == torch.float32 else 1e-12)


@pytest.mark.parametrize(("k", "lam"), [(1, 0.5), (2, 0.0), (3, 0.6), (3, 1.0), (4, 0.3)])
def test_max_pooling_is_the_best_gapped_kmer_of_a_brute_force_enumeration(k, lam):
    """RKN-max: ``Psi(x) = K_0(Z, Z)^{-1/2} max_i lambda^gaps(i) prod_l b_l(i_l)`` over all
    index tuples (itertools), ``K_0(Z, Z)^{-1/2}`` by SciPy's ``sqrtm``."""
    seqs = ["GATTACA", "CCGTA", "TTAGGCA"]
    x = _one_hot(seqs)
    x[0, :, 2] *= 1.7
    layer = GappedKmerLayer(4, 5, k, gap_penalty=lam, sigma=0.5, pooling="max")
    with torch.no_grad():
        out = layer(x).numpy()
        Z = layer.anchors().numpy()
        isqrt = np.linalg.inv(np.real(scipy.linalg.sqrtm(layer.anchor_gram().numpy())))
    for n, s in enumerate(seqs):
        h = np.array([_brute_h(Z[q], x[n, :, : len(s)].numpy(), k, lam) for q in range(5)])
        np.testing.assert_allclose(out[n], h @ isqrt, rtol=1e-9, atol=1e-12)


def test_max_pooling_per_bin_and_differs_from_sum():
    seqs = ["ACGTTGCAAC", "GGTACA"]
    x = _one_hot(seqs)
    layer = GappedKmerLayer(4, 3, 2, gap_penalty=0.5, sigma=0.5, pooling="max", n_bins=2)
    with torch.no_grad():
        out = layer(x).numpy()
        Z = layer.anchors().numpy()
        isqrt = np.linalg.inv(np.real(scipy.linalg.sqrtm(layer.anchor_gram().numpy())))
    for n, s in enumerate(seqs):
        for b in range(2):
            ends = {t for t in range(len(s)) if t * 2 // len(s) == b}
            h = [_brute_h(Z[q], x[n, :, : len(s)].numpy(), 2, 0.5, ends) for q in range(3)]
            h = np.array([0.0 if v is None else v for v in h])
            np.testing.assert_allclose(out[n, 3 * b : 3 * b + 3], h @ isqrt, rtol=1e-9)
    summed = GappedKmerLayer(4, 3, 2, gap_penalty=0.5, sigma=0.5, pooling="sum", n_bins=2)
    summed.set_anchors(layer.anchors())
    with torch.no_grad():
        assert not np.allclose(summed(x).numpy(), out)


def test_max_pooling_has_gradients_for_the_anchors():
    x = _one_hot(["GATTACA", "CCGTA"])
    layer = GappedKmerLayer(4, 3, 3, gap_penalty=0.5, sigma=0.5, pooling="max")
    layer(x).sum().backward()
    assert layer.weight.grad is not None and bool(torch.isfinite(layer.weight.grad).all())
    assert float(layer.weight.grad.abs().sum()) > 0


@pytest.mark.parametrize("pooling", ["sum", "max"])
def test_two_layers_equal_a_dense_recomputation(pooling):
    """Layer composition: layer 1's position features ``K_1^{-1/2} h_1[t]`` recomputed by
    enumeration at every position (index tuples ending at ``t``), fed to an enumeration of
    layer 2, then pooled (sum or max) over positions, against :class:`KmerStack`."""
    seqs = ["GATTACAG", "CCGTAT"]
    x = _one_hot(seqs)
    lam = 0.4
    first = GappedKmerLayer(4, 4, 2, gap_penalty=lam, sigma=0.5, pooling=pooling)
    second = GappedKmerLayer(4, 3, 2, gap_penalty=lam, sigma=0.5, pooling=pooling)
    stack = KmerStack([first, second])
    reduce = max if pooling == "max" else sum
    with torch.no_grad():
        out = stack(x).numpy()
        iso = [
            np.linalg.inv(np.real(scipy.linalg.sqrtm(layer.anchor_gram().numpy())))
            for layer in (first, second)
        ]
        Zs = [layer.anchors().numpy() for layer in (first, second)]
    for n, s in enumerate(seqs):
        xs = x[n, :, : len(s)].numpy()
        h1 = np.zeros((4, len(s)))
        for t in range(len(s)):
            for q in range(4):
                value = _brute_h(Zs[0][q], xs, 2, lam, {t}, reduce)
                h1[q, t] = 0.0 if value is None else value
        z = iso[0].T @ h1  # position features of layer 1, (q1, T)
        h2 = np.array([_brute_h(Zs[1][q], z, 2, lam, None, reduce) for q in range(3)])
        np.testing.assert_allclose(out[n], h2 @ iso[1], rtol=1e-8, atol=1e-12)


def test_stack_anchors_fit_layer_by_layer_and_pyramids_cut():
    x = _one_hot(["ACGTTGCAAC", "GGTACA", "TTGACGTAGCAT"] * 4)
    gen = torch.Generator().manual_seed(0)
    layers = [
        GappedKmerLayer(4, 6, 3, sigma=0.5, pooling="max", gap_penalty=0.5),
        GappedKmerLayer(6, 5, 2, sigma=0.5, pooling="max", gap_penalty=0.5, n_bins=(1, 2)),
    ]
    stack = KmerStack(layers)
    fit_kmer_anchors(stack, x, n_kmers=50, n_iter=3, generator=gen)
    with torch.no_grad():
        F = stack(x)
        assert F.shape == (12, 15) and bool(torch.isfinite(F).all())
        masks = pyramid_prefixes(stack)
        keep_levels(stack, 1)
        torch.testing.assert_close(stack(x), F[:, masks[0]])
    assert stack.n_bins == 1
    with pytest.raises(InputError, match="layers\\[1\\]"):
        KmerStack([GappedKmerLayer(4, 6, 3), GappedKmerLayer(4, 5, 2)])
