"""Cholesky solves with the jitter ladder against torch.linalg / SciPy (issue 2)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import torch

from kernelkit.kernels import Gaussian, Linear
from kernelkit.solvers import cholesky_solve
from kernelkit.solvers._cholesky import CholeskyResult
from kernelkit.utils._errors import InputError, NotPSDError
from kernelkit.utils._numerics import jitter_ladder

RNG = np.random.default_rng(3)
X = RNG.normal(size=(80, 3))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_krr_system_matches_torch_solve(dtype):
    K = Gaussian(1.0)(X).to(dtype)
    y = torch.as_tensor(RNG.normal(size=(80, 2)), dtype=dtype)
    lam = 1e-2
    res = cholesky_solve(K, y, shift=80 * lam)
    assert isinstance(res, CholeskyResult)
    ref = torch.linalg.solve(K.double() + 80 * lam * torch.eye(80, dtype=torch.float64), y.double())
    tol = 1e-10 if dtype == torch.float64 else 1e-4
    torch.testing.assert_close(res.solution.double(), ref, rtol=tol, atol=tol)
    assert res.solution.dtype == dtype and res.jitter == 0.0 and res.shift == 0.8
    L = res.factor.double()
    torch.testing.assert_close(
        L @ L.T, K.double() + 0.8 * torch.eye(80, dtype=torch.float64), rtol=tol, atol=tol
    )


def test_vector_rhs_matches_scipy():
    K = Gaussian(2.0)(X).numpy()
    y = RNG.normal(size=80)
    res = cholesky_solve(K, y, shift=0.5)
    ref = scipy.linalg.solve(K + 0.5 * np.eye(80), y, assume_a="pos")
    assert res.solution.shape == (80,)
    np.testing.assert_allclose(res.solution.numpy(), ref, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_duplicated_points_need_jitter_and_give_finite_solution(dtype):
    Xd = np.vstack([X[:30], X[:30]])  # rank-deficient Gram, shift 0
    K = Linear()(Xd).to(dtype)  # rank 3
    y = torch.as_tensor(Xd @ np.array([1.0, -2.0, 0.5]), dtype=dtype)
    res = cholesky_solve(K, y)
    assert torch.isfinite(res.solution).all()
    mean_diag = float(K.diagonal().mean())
    rel = res.jitter / mean_diag
    assert res.jitter > 0 and any(np.isclose(rel, j) for j in jitter_ladder(dtype))
    # the jittered system is solved: (K + jitter I) x = y
    resid = (K.double() + res.jitter * torch.eye(60, dtype=torch.float64)) @ res.solution.double()
    assert float((resid - y.double()).norm() / y.double().norm()) < (
        1e-6 if dtype == torch.float64 else 1e-2
    )


def test_fixed_jitter_and_not_psd():
    K = -np.eye(5)
    with pytest.raises(NotPSDError, match="positive semi-definite"):
        cholesky_solve(K, np.ones(5))
    res = cholesky_solve(np.eye(5), np.ones(5), jitter=0.5)
    np.testing.assert_allclose(res.solution.numpy(), np.full(5, 1 / 1.5))
    assert res.jitter == 0.5


def test_bad_inputs():
    with pytest.raises(InputError, match="K: expected a square"):
        cholesky_solve(np.ones((3, 4)), np.ones(3))
    with pytest.raises(InputError, match="B: expected shape"):
        cholesky_solve(np.eye(3), np.ones(4))
    with pytest.raises(InputError, match="shift"):
        cholesky_solve(np.eye(3), np.ones(3), shift=-1.0)
    with pytest.raises(InputError, match="jitter"):
        cholesky_solve(np.eye(3), np.ones(3), jitter="big")


def test_factor_inverse_matches_scipy_inv():
    """``CholeskyFactor.inverse`` (the leave-one-out formulas' ``(K + s I)^{-1}``) against
    SciPy's dense inverse, batched too."""
    from kernelkit.solvers import cholesky_factor

    K = Gaussian(1.5)(X).double()
    fac = cholesky_factor(K, shift=0.3)
    ref = scipy.linalg.inv(K.numpy() + 0.3 * np.eye(80))
    np.testing.assert_allclose(fac.inverse().numpy(), ref, rtol=1e-9, atol=1e-9)
    batch = torch.stack([K, Linear()(X).double() + torch.eye(80, dtype=torch.float64)])
    inv = cholesky_factor(batch, shift=0.3).inverse()
    for A, B in zip(batch.numpy(), inv.numpy(), strict=True):
        np.testing.assert_allclose(B, scipy.linalg.inv(A + 0.3 * np.eye(80)), rtol=1e-8, atol=1e-8)


def test_factor_logdet_matches_numpy_slogdet():
    """``CholeskyFactor.logdet`` (the multiscale Laplacian's FLG determinants) against NumPy's
    LU-based ``slogdet``, on a batch."""
    from kernelkit.solvers import cholesky_factor

    K = Gaussian(1.5)(X).double()
    batch = torch.stack([K, Linear()(X).double() + torch.eye(80, dtype=torch.float64)])
    logdet = cholesky_factor(batch, shift=0.3, jitter=0.0).logdet()
    sign, ref = np.linalg.slogdet(batch.numpy() + 0.3 * np.eye(80))
    assert (sign > 0).all()
    np.testing.assert_allclose(logdet.numpy(), ref, rtol=1e-12)


def test_right_triangular_solve_matches_scipy():
    """``solve_triangular(U, B, upper=True, left=False)``: ``X U = B`` (the streamed Nyström
    map ``K_nm R^{-1}``), against SciPy."""
    from kernelkit.solvers._cholesky import solve_triangular

    U = np.triu(RNG.normal(size=(6, 6))) + 6 * np.eye(6)
    B = RNG.normal(size=(9, 6))
    got = solve_triangular(torch.as_tensor(U), torch.as_tensor(B), upper=True, left=False)
    ref = scipy.linalg.solve_triangular(U.T, B.T, lower=True).T
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-12, atol=1e-12)
