"""Top eigenpairs against numpy.linalg.eigh (issue 2)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from kernelkit.gram import GramOperator, center_gram
from kernelkit.kernels import Gaussian
from kernelkit.solvers import top_eigenpairs
from kernelkit.solvers._eigen import EigenResult, choose_method
from kernelkit.utils._errors import InputError

RNG = np.random.default_rng(5)
X = torch.as_tensor(RNG.normal(size=(150, 4)))
K = center_gram(Gaussian(1.5)(X))
W, V = np.linalg.eigh(K.numpy())


def check_pairs(res: EigenResult, k: int, largest: bool, tol: float) -> None:
    sel = np.arange(149, 149 - k, -1) if largest else np.arange(k)
    vals = res.values.double().numpy()
    np.testing.assert_allclose(vals, W[sel], rtol=tol, atol=tol * abs(W).max())
    vecs = res.vectors.double().numpy()
    assert vecs.shape == (150, k)
    # same vectors up to sign, and the sign rule holds
    for j in range(k):
        ref = V[:, sel[j]]
        assert min(np.abs(vecs[:, j] - ref).max(), np.abs(vecs[:, j] + ref).max()) < 100 * tol
        assert vecs[np.argmax(np.abs(vecs[:, j])), j] > 0


# ARPACK "SA" stalls on the cluster of ~0 eigenvalues of a centred Gram (no shift-invert), so
# its smallest pairs are tested on a separated spectrum below.
@pytest.mark.parametrize(
    ("method", "largest"),
    [(m, True) for m in ("full", "subset", "arpack", "auto")]
    + [(m, False) for m in ("full", "subset", "auto")],
)
def test_methods_match_numpy(method, largest):
    k = 6 if largest else 3  # smallest of a centred Gram: one zero, then tiny distinct ones
    res = top_eigenpairs(K, k, method=method, largest=largest)
    assert res.method in ("full", "subset", "arpack", "block")
    if largest:
        check_pairs(res, k, largest, 1e-9)
    else:
        np.testing.assert_allclose(res.values.numpy(), W[:k], atol=1e-9)


def test_arpack_smallest_on_separated_spectrum():
    Q, _ = np.linalg.qr(RNG.normal(size=(60, 60)))
    A = (Q * np.arange(1.0, 61.0)) @ Q.T
    res = top_eigenpairs(A, 3, method="arpack", largest=False)
    np.testing.assert_allclose(res.values.numpy(), [1.0, 2.0, 3.0], rtol=1e-9)


def test_descending_and_deterministic():
    a = top_eigenpairs(K, 8, method="arpack")
    b = top_eigenpairs(K, 8, method="arpack")
    assert torch.equal(a.vectors, b.vectors)
    assert bool((a.values[:-1] >= a.values[1:]).all())


def test_operator_input_uses_arpack():
    op = GramOperator(Gaussian(1.5), X, block_size=40)
    res = top_eigenpairs(op, 5)
    assert res.method == "arpack"
    Wk, _ = np.linalg.eigh(Gaussian(1.5)(X).numpy())
    np.testing.assert_allclose(res.values.numpy(), Wk[::-1][:5], rtol=1e-9)
    full = top_eigenpairs(op, 5, method="full")
    np.testing.assert_allclose(full.values.numpy(), Wk[::-1][:5], rtol=1e-9)


def test_float32_preserved():
    res = top_eigenpairs(K.float(), 4, method="subset")
    assert res.values.dtype == torch.float32 and res.vectors.dtype == torch.float32
    np.testing.assert_allclose(res.values.numpy(), W[::-1][:4], rtol=1e-4)


def test_k_equal_n_and_auto_rule():
    res = top_eigenpairs(K, 150)
    assert res.method == "full"
    np.testing.assert_allclose(res.values.numpy(), W[::-1], atol=1e-9)
    assert choose_method(5000, 50, is_operator=False) == "block"
    assert choose_method(100, 5, is_operator=False) == "full"
    assert choose_method(10**5, 5, is_operator=True) == "arpack"


def test_bad_inputs():
    with pytest.raises(InputError, match="square"):
        top_eigenpairs(np.ones((3, 4)), 1)
    with pytest.raises(InputError, match="k: expected at most"):
        top_eigenpairs(K, 151)
    with pytest.raises(InputError, match="k: expected an integer"):
        top_eigenpairs(K, 0)
    with pytest.raises(InputError, match="arpack"):
        top_eigenpairs(K, 150, method="arpack")
    with pytest.raises(InputError, match="method"):
        top_eigenpairs(K, 2, method="qr")


def _spectrum_matrix(values: np.ndarray, seed: int) -> np.ndarray:
    Q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(len(values), len(values))))
    return (Q * values) @ Q.T


@pytest.mark.parametrize(
    "A",
    [
        K.numpy(),  # centred Gaussian Gram: fast decay and a zero eigenvalue
        center_gram(Gaussian(6.0)(torch.as_tensor(RNG.normal(size=(400, 8))))).numpy(),
        _spectrum_matrix(1.0 / np.arange(1.0, 301.0) ** 0.5, 1),  # slow decay
        _spectrum_matrix(np.r_[[5.0, 5.0, 5.0, 4.0, 4.0], np.linspace(3.0, 0.0, 295)], 2),
    ],
    ids=["centred-gram", "centred-gram-400", "slow-decay", "degenerate-top"],
)
def test_block_matches_numpy_eigh(A):
    k = 7
    res = top_eigenpairs(A, k, method="block")
    assert res.method == "block" and res.n_iter > 0
    w, U = np.linalg.eigh(A)
    np.testing.assert_allclose(res.values.numpy(), w[::-1][:k], atol=1e-10 * abs(w).max())
    Vb = res.vectors.numpy()
    np.testing.assert_allclose(Vb.T @ Vb, np.eye(k), atol=1e-10)
    # certified residuals, recomputed independently
    R = A @ Vb - Vb * res.values.numpy()
    rel = np.linalg.norm(R, axis=0) / abs(w).max()
    assert (rel <= 4e-11).all()
    np.testing.assert_allclose(res.residual.numpy(), rel, atol=1e-12)
    # the spanned subspace equals numpy's (robust to degenerate eigenvalues): projector distance
    top = U[:, ::-1][:, :k]
    if w[::-1][k - 1] - w[::-1][k] > 1e-6:
        assert np.linalg.norm(Vb @ Vb.T - top @ top.T, 2) < 1e-6
    assert all(Vb[np.argmax(np.abs(Vb[:, j])), j] > 0 for j in range(k))


def test_block_vectors_match_numpy_on_gap():
    res = top_eigenpairs(K, 6, method="block")
    check_pairs(res, 6, True, 1e-9)


def test_block_smallest_and_operator():
    A = _spectrum_matrix(np.arange(1.0, 61.0), 3)
    res = top_eigenpairs(A, 3, method="block", largest=False)
    np.testing.assert_allclose(res.values.numpy(), [1.0, 2.0, 3.0], rtol=1e-9)
    op = GramOperator(Gaussian(1.5), X, block_size=40)
    res = top_eigenpairs(op, 5, method="block")
    Wk = np.linalg.eigvalsh(Gaussian(1.5)(X).numpy())
    assert res.method == "block"
    np.testing.assert_allclose(res.values.numpy(), Wk[::-1][:5], rtol=1e-9)


def test_block_fallback_when_not_converged():
    res = top_eigenpairs(K, 6, method="block", max_iter=1)
    assert res.method == "arpack" and res.residual is None and res.n_iter > 0
    check_pairs(res, 6, True, 1e-9)
    res = top_eigenpairs(K.numpy(), 3, method="block", largest=False, max_iter=1)
    assert res.method == "subset"
    np.testing.assert_allclose(res.values.numpy(), W[:3], atol=1e-9)


@pytest.mark.parametrize("largest", [True, False])
def test_lobpcg_matches_numpy_eigh(largest):
    # numpy.linalg.eigh is the oracle: LOBPCG on a separated spectrum (n = 60 >= 5 k + 1),
    # and the full fallback below that size (as scikit-learn's spectral embedding)
    Q, _ = np.linalg.qr(RNG.normal(size=(60, 60)))
    A = (Q * np.arange(1.0, 61.0) ** 2) @ Q.T
    w, V = np.linalg.eigh(A)
    res = top_eigenpairs(A, 3, method="lobpcg", largest=largest, tol=1e-12, max_iter=500)
    assert res.method == "lobpcg"
    sel = [59, 58, 57] if largest else [0, 1, 2]
    np.testing.assert_allclose(res.values.numpy(), w[sel], rtol=1e-8)
    overlap = np.abs(np.sum(res.vectors.numpy() * V[:, sel], axis=0))
    np.testing.assert_allclose(overlap, 1.0, atol=1e-6)
    small = top_eigenpairs(A[:10, :10], 3, method="lobpcg")
    assert small.method == "full"
    np.testing.assert_allclose(small.values.numpy(), np.linalg.eigvalsh(A[:10, :10])[::-1][:3])
