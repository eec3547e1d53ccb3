"""The gapped k-mer layer against brute-force enumeration of index tuples (part 3, §10)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.linalg
import torch

from kernelkit.kernels._dot_product import kappa_exp
from kernelkit.models._ckn_seq import (
    GappedKmerLayer,
    KmerLengthSum,
    KmerStack,
    fit_kmer_anchors,
    gap_matrix,
    keep_levels,
    kmer_layers,
    padded_lengths,
    pyramid_prefixes,
)
from kernelkit.models._ckn_train import map_in_batches
from kernelkit.models._spherical_kmeans import spherical_kmeans

pytestmark = pytest.mark.usefixtures("one_torch_thread")

ALPHA = 1 / 0.5**2


def _one_hot(seqs, alphabet="ACGT"):
    T = max(map(len, seqs))
    x = torch.zeros(len(seqs), len(alphabet), T, dtype=torch.float64)
    for i, s in enumerate(seqs):
        for t, ch in enumerate(s):
            x[i, alphabet.index(ch), t] = 1.0
    return x


def _base_kernel(a, b):
    """``prod_l ||a_l|| ||b_l|| kappa(cos(a_l, b_l))`` for k-mers given as (k, A) tensors."""
    value = torch.tensor(1.0, dtype=torch.float64)
    for u, v in zip(a, b, strict=True):
        nu, nv = u.norm(), v.norm()
        if nu == 0 or nv == 0:
            return torch.tensor(0.0, dtype=torch.float64)
        value = value * nu * nv * kappa_exp(torch.dot(u, v) / (nu * nv), ALPHA)
    return value


def _tuples(x, k, lam):
    """``(lambda^gaps(i), x_[i])`` for every index tuple of a (A, T) sequence."""
    T = x.shape[1]
    for idx in itertools.combinations(range(T), k):
        yield lam ** (idx[-1] - idx[0] + 1 - k), x[:, list(idx)].T


@pytest.mark.parametrize(("k", "lam"), [(1, 0.5), (2, 0.0), (4, 0.0), (3, 0.7), (3, 1.0)])
def test_recursion_equals_enumeration_of_index_tuples(k, lam):
    x = _one_hot(["GATTACA", "CCGTA"])
    x[0, :, 2] *= 1.7  # a non-unit position vector: the base kernel is homogeneous per position
    layer = GappedKmerLayer(4, 5, k, gap_penalty=lam, sigma=0.5, pooling="sum")
    Z = layer.anchors()
    h = layer.position_map(x).sum(-1)
    for n in range(2):
        for q in range(5):
            expected = sum(w * _base_kernel(Z[q], kmer) for w, kmer in _tuples(x[n], k, lam))
            torch.testing.assert_close(h[n, q], expected, rtol=1e-12, atol=1e-14)


def test_nystrom_with_all_kmers_as_anchors_is_the_exact_sequence_kernel():
    seqs = ["GATTA", "ACGT", "TTGCA"]
    x = _one_hot(seqs)
    k, lam = 2, 0.6
    kmers = {
        tuple(s[i] for i in idx) for s in seqs for idx in itertools.combinations(range(len(s)), k)
    }
    anchors = _one_hot(["".join(m) for m in sorted(kmers)]).permute(0, 2, 1)
    layer = GappedKmerLayer(4, len(anchors), k, gap_penalty=lam, sigma=0.5, pooling="sum")
    layer.set_anchors(anchors)
    psi = layer(x)
    K = torch.zeros(3, 3, dtype=torch.float64)
    for i, j in itertools.product(range(3), range(3)):
        K[i, j] = sum(
            wa * wb * _base_kernel(a, b)
            for wa, a in _tuples(x[i, :, : len(seqs[i])], k, lam)
            for wb, b in _tuples(x[j, :, : len(seqs[j])], k, lam)
        )
    torch.testing.assert_close(psi @ psi.T, K, rtol=0, atol=1e-8 * float(K.max()))


def test_zero_gap_penalty_keeps_contiguous_kmers_and_padding_is_ignored():
    x = _one_hot(["GATTACA", "CAT"])
    layer = GappedKmerLayer(4, 6, 3, gap_penalty=0.0, pooling="sum")
    h = layer.position_map(x)
    Z = layer.anchors()
    for t in range(2, 7):
        expected = torch.stack([_base_kernel(Z[q], x[0, :, t - 2 : t + 1].T) for q in range(6)])
        torch.testing.assert_close(h[0, :, t], expected)
    assert float(h[1, :, 3:].detach().abs().max()) == 0.0  # padding positions contribute nothing
    mean = GappedKmerLayer(4, 6, 3, pooling="mean")
    mean.set_anchors(Z)
    torch.testing.assert_close(mean(x)[1] * 3, layer(x)[1])


def test_gap_matrix():
    L = gap_matrix(4, 0.5, torch.float64, "cpu")
    expected = torch.tensor(
        [[0.5 ** (t - s) if t >= s else 0.0 for t in range(4)] for s in range(4)]
    )
    torch.testing.assert_close(L, expected.double())
    torch.testing.assert_close(gap_matrix(3, 0.0, torch.float64, "cpu"), torch.eye(3).double())


def test_block_spherical_kmeans_gives_unit_rows():
    gen = torch.Generator().manual_seed(0)
    X = torch.as_tensor(np.random.default_rng(0).standard_normal((60, 3 * 4)))
    C = spherical_kmeans(X, 5, n_iter=5, generator=gen, blocks=3)
    torch.testing.assert_close(C.view(5, 3, 4).norm(dim=2), torch.ones(5, 3).double())


@pytest.mark.parametrize("pooling", ["mean", "sum"])
def test_position_bins_pool_each_bin_separately(pooling):
    """Bins against a loop: position ``t`` of a sequence of length ``L`` is in bin
    ``floor(t B / L)``; block ``b`` is the bin's mean (or sum) of ``h`` times
    ``K_0(Z, Z)^{-1/2}`` (SciPy's ``sqrtm``); one bin is the global pooling."""
    seqs = ["ACGTTGCAAC", "GGTACA", "TTGACGTAGCAT"]
    x = _one_hot(seqs)
    g = torch.Generator().manual_seed(1)
    layer = GappedKmerLayer(4, 5, 3, gap_penalty=0.4, sigma=0.5, pooling=pooling, n_bins=3)
    layer.weight.data = torch.randn(5, 3, 4, generator=g, dtype=torch.float64)
    with torch.no_grad():
        out = layer(x)
        h = layer.position_map(x)
        isqrt = np.linalg.inv(np.real(scipy.linalg.sqrtm(layer.anchor_gram().numpy())))
    assert out.shape == (3, 15)
    for i, s in enumerate(seqs):
        for b in range(3):
            ts = [t for t in range(len(s)) if t * 3 // len(s) == b]
            pooled = h[i][:, ts].sum(1).numpy() / (len(ts) if pooling == "mean" else 1)
            np.testing.assert_allclose(out[i, 5 * b : 5 * b + 5], pooled @ isqrt, rtol=1e-7)
    one = GappedKmerLayer(4, 5, 3, gap_penalty=0.4, sigma=0.5, pooling=pooling, n_bins=1)
    one.weight.data = layer.weight.data
    with torch.no_grad():
        lengths = np.array([10.0, 6.0, 12.0])[:, None] if pooling == "mean" else 1.0
        np.testing.assert_allclose(one(x), h.sum(-1).numpy() / lengths @ isqrt, rtol=1e-7)


def test_pyramid_is_the_concatenation_of_its_levels_and_normalize_gives_unit_blocks():
    """``n_bins=(1, 3)`` equals the layers with ``n_bins=1`` and ``n_bins=3`` (same anchors)
    side by side; ``normalize=True`` divides each level's block by its norm, the normalised
    kernel ``K / sqrt(K(x, x) K(x', x'))`` of the level."""
    x = _one_hot(["ACGTTGCAAC", "GGTACA", "TTGACGTAGCAT"])
    g = torch.Generator().manual_seed(2)
    weight = torch.randn(5, 3, 4, generator=g, dtype=torch.float64)
    layers = {}
    for bins in (1, 3, (1, 3)):
        for norm in (False, True):
            layer = GappedKmerLayer(4, 5, 3, sigma=0.5, n_bins=bins, normalize=norm)
            layer.weight.data = weight
            with torch.no_grad():
                layers[bins, norm] = layer(x)
    torch.testing.assert_close(
        layers[(1, 3), False], torch.cat([layers[1, False], layers[3, False]], 1)
    )
    for bins, cols in ((1, slice(0, 5)), (3, slice(5, 20))):
        raw = layers[bins, False]
        expected = raw / raw.norm(dim=1, keepdim=True)
        torch.testing.assert_close(layers[bins, True], expected)
        torch.testing.assert_close(layers[(1, 3), True][:, cols], expected)
        gram = raw @ raw.T
        d = gram.diagonal().sqrt()
        torch.testing.assert_close(expected @ expected.T, gram / d[:, None] / d[None, :])


def test_sum_over_lengths_is_the_sum_of_the_kernels_and_levels_can_be_cut():
    x = _one_hot(["ACGTTGCAAC", "GGTACA", "TTGACGTAGCAT"])
    gen = torch.Generator().manual_seed(0)
    parts = [GappedKmerLayer(4, 6, k, sigma=0.5, n_bins=(1, 2)) for k in (2, 3)]
    net = KmerLengthSum(parts)
    fit_kmer_anchors(net, x, n_kmers=100, n_iter=5, generator=gen)
    with torch.no_grad():
        F = net(x)
        grams = [layer(x) @ layer(x).T for layer in parts]
    torch.testing.assert_close(F @ F.T, grams[0] + grams[1])
    masks = pyramid_prefixes(net)
    assert [int(m.sum()) for m in masks] == [12, 36] and F.shape[1] == 36
    keep_levels(net, 1)
    with torch.no_grad():
        torch.testing.assert_close(net(x), F[:, masks[0]])
    assert net.n_bins == 1 and all(layer.levels == (1,) for layer in kmer_layers(net))


def test_padded_lengths_end_after_the_last_nonzero_column():
    x = _one_hot(["GATTACA", "CAT", "A"])
    x[0, :, 3] = 0.0  # an inner zero column is not padding
    x = torch.cat([x, torch.zeros(1, 4, 7, dtype=x.dtype)])
    assert padded_lengths(x).tolist() == [7, 3, 1, 0]


@pytest.mark.parametrize(("pooling", "lam"), [("mean", 0.0), ("max", 0.0), ("sum", 0.5)])
def test_length_ordered_batches_give_the_features_of_one_batch(pooling, lam):
    rng = np.random.default_rng(0)
    seqs = ["".join(rng.choice(list("ACGT"), size=n)) for n in rng.integers(4, 40, size=11)]
    x = _one_hot(seqs)
    net = KmerLengthSum(
        [GappedKmerLayer(4, 5, k, gap_penalty=lam, pooling=pooling, n_bins=(1, 3)) for k in (2, 3)]
    )
    with torch.no_grad():
        whole = net(x)
    batched = map_in_batches(net, x, 3, padded_lengths(x))
    torch.testing.assert_close(batched, whole, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("pooling", ["mean", "max"])
def test_contiguous_exp_map_has_finite_gradients_through_padding_and_stacked_layers(pooling):
    x = _one_hot(["GATTACAGG", "CAT"])
    stack = KmerStack(
        [
            GappedKmerLayer(4, 6, 3, sigma=0.5),
            GappedKmerLayer(6, 5, 2, sigma=0.5, pooling=pooling, shift=0.01),
        ]
    )
    stack(x).sum().backward()
    grads = [p.grad for p in stack.parameters()]
    assert all(g is not None and bool(torch.isfinite(g).all()) for g in grads)
    assert all(float(g.abs().max()) > 0 for g in grads)
