"""Randomised eigenpairs (Halko, Martinsson and Tropp 2011) against LAPACK."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

from kernelkit.solvers import randomized_eigh, top_eigenpairs
from kernelkit.solvers._randomized import randomized_range
from kernelkit.utils._errors import InputError


def decaying(n: int, seed: int = 0) -> np.ndarray:
    """Symmetric PSD matrix with eigenvalues 2^-i (a smooth kernel's decay)."""
    Q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(n, n)))
    return (Q * 0.5 ** np.arange(n)) @ Q.T


@pytest.mark.parametrize("k", [1, 5, 20])
def test_randomized_eigh_matches_lapack_on_a_decaying_spectrum(k):
    A = decaying(200)
    w, V = randomized_eigh(A, k, seed=3)
    ref_w, ref_V = scipy.linalg.eigh(A, subset_by_index=[200 - k, 199])
    ref_w, ref_V = ref_w[::-1], ref_V[:, ::-1]
    np.testing.assert_allclose(w, ref_w, rtol=1e-10, atol=1e-14)
    # vectors up to sign; the k-th has gap 1/2 to the next, so the subspace error is tiny
    np.testing.assert_allclose(np.abs(np.sum(V * ref_V, 0)), 1.0, atol=1e-8)
    np.testing.assert_allclose(V.T @ V, np.eye(k), atol=1e-12)


def test_power_iterations_shrink_the_range_error():
    # flat spectrum tail: the range error ||(I - QQ^T) A|| falls with the power iterations
    rng = np.random.default_rng(1)
    Q0, _ = np.linalg.qr(rng.normal(size=(300, 300)))
    A = (Q0 * np.r_[np.ones(5) * 10, 1.0 / (1 + np.arange(295))]) @ Q0.T
    errors = []
    for q in (0, 2, 6):
        Q = randomized_range(A, 8, n_iter=q, rng=np.random.default_rng(0))
        errors.append(np.linalg.norm(A - Q @ (Q.T @ A), 2))
    assert errors[0] > errors[1] > errors[2]
    # the optimal rank-8 error is the 9th singular value
    assert errors[2] < 1.5 * np.sort(np.linalg.eigvalsh(A))[::-1][8]


def test_top_eigenpairs_randomized_and_errors():
    A = decaying(120)
    out = top_eigenpairs(A, 4, method="randomized", seed=0)
    ref = top_eigenpairs(A, 4, method="full")
    assert out.method == "randomized"
    np.testing.assert_allclose(out.values.numpy(), ref.values.numpy(), rtol=1e-10)
    with pytest.raises(InputError, match="largest eigenpairs only"):
        top_eigenpairs(A, 4, method="randomized", largest=False)
    with pytest.raises(InputError, match="k: expected at most"):
        randomized_eigh(A, 121)
