"""The numerics layer against SciPy / NumPy oracles: Cholesky (jitter ladder, batches),
general and triangular solves, the PSD check, the symmetric eigensolver, batched CG and
L-BFGS (single, batched, the training loop)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import scipy.optimize
import torch
from torch import nn

from kernelkit.solvers import (
    NonFiniteObjectiveWarning,
    check_psd,
    cholesky_factor,
    conjugate_gradient,
    lbfgs,
    symmetric_eigh,
    train_module,
)
from kernelkit.solvers._cholesky import cho_solve, solve, solve_triangular
from kernelkit.solvers._lbfgs import lbfgs_batched
from kernelkit.utils._errors import InputError, NotPSDError
from kernelkit.utils._numerics import jitter_ladder

RNG = np.random.default_rng(12)


@pytest.fixture(autouse=True)
def _fresh_rng():
    """Every test draws from ``RNG`` seeded afresh: its problems do not depend on which tests
    ran before it (a test added above another one must not change that one's data)."""
    RNG.bit_generator.state = np.random.default_rng(12).bit_generator.state


def spd(n: int, cond: float = 1e3, rng=RNG) -> np.ndarray:
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    return (Q * np.geomspace(1.0, 1.0 / cond, n)) @ Q.T


# ---------------------------------------------------------------------- Cholesky
def test_factor_matches_scipy_cho_factor():
    A = spd(30)
    fac = cholesky_factor(torch.as_tensor(A), shift=0.1)
    L = np.tril(scipy.linalg.cho_factor(A + 0.1 * np.eye(30), lower=True)[0])
    np.testing.assert_allclose(fac.factor.numpy(), L, rtol=1e-12, atol=1e-13)
    assert fac.success and fac.jitter == 0.0 and fac.shift == 0.1 and not fac.failed.any()
    B = RNG.normal(size=(30, 4))
    ref = scipy.linalg.cho_solve((L, True), B)
    np.testing.assert_allclose(fac.solve(torch.as_tensor(B)).numpy(), ref, rtol=1e-10)
    np.testing.assert_allclose(cho_solve(fac.factor, torch.as_tensor(B[:, 0])), ref[:, 0])


def test_batched_factor_and_solve_match_a_loop_of_scipy():
    A = np.stack([spd(12) for _ in range(5)])
    B = RNG.normal(size=(5, 12, 3))
    fac = cholesky_factor(torch.as_tensor(A), shift=0.5)
    X = fac.solve(torch.as_tensor(B)).numpy()
    for i in range(5):
        c = scipy.linalg.cho_factor(A[i] + 0.5 * np.eye(12), lower=True)
        np.testing.assert_allclose(fac.factor[i].numpy(), np.tril(c[0]), rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(X[i], scipy.linalg.cho_solve(c, B[i]), rtol=1e-10)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_jitter_ladder_on_a_singular_matrix(dtype):
    Z = RNG.normal(size=(40, 3))
    A = torch.as_tensor(Z @ Z.T, dtype=dtype)  # rank 3: positive semi-definite, singular
    fac = cholesky_factor(A)
    scale = float(A.diagonal().abs().mean())
    rel = fac.jitter / scale
    assert fac.success and fac.jitter > 0
    # the first rung of the ladder that factorises, as SciPy sees it
    first = None
    for r in jitter_ladder(dtype):
        try:
            scipy.linalg.cho_factor(A.double().numpy() + r * scale * np.eye(40), lower=True)
        except np.linalg.LinAlgError:
            continue
        first = r
        break
    assert first is not None and rel >= first * (1 - 1e-9)
    assert any(np.isclose(rel, j) for j in jitter_ladder(dtype))
    L = fac.factor.double()
    tol = 1e-10 if dtype == torch.float64 else 1e-3
    recon = A.double() + fac.jitter * torch.eye(40, dtype=torch.float64)
    torch.testing.assert_close(L @ L.T, recon, rtol=tol, atol=tol * scale)


def test_batch_gets_one_common_jitter_and_non_strict_reports_failures():
    good = spd(6)
    Z = RNG.normal(size=(6, 2))
    singular = Z @ Z.T
    fac = cholesky_factor(torch.as_tensor(np.stack([good, singular])))
    assert fac.success and fac.jitter > 0  # the singular member sets the common jitter
    indefinite = np.diag([1.0, -1.0, 1.0, 1.0, 1.0, 1.0])
    batch = torch.as_tensor(np.stack([good, indefinite]))
    with pytest.raises(NotPSDError, match="M: expected a positive semi-definite"):
        cholesky_factor(batch, name="M")
    loose = cholesky_factor(batch, jitter=0.0, strict=False)
    assert not loose.success and loose.failed.tolist() == [False, True]


def test_overwrite_factorises_in_place():
    A = spd(10)
    T = torch.as_tensor(A.copy())
    fac = cholesky_factor(T, shift=1.0, jitter=0.0, overwrite=True)
    assert fac.factor.data_ptr() == T.data_ptr()
    L = np.linalg.cholesky(A + np.eye(10))
    np.testing.assert_allclose(np.tril(T.numpy()), L, rtol=1e-12, atol=1e-13)
    with pytest.raises(InputError, match="jitter"):
        cholesky_factor(torch.as_tensor(A), jitter="big")
    with pytest.raises(InputError, match="square"):
        cholesky_factor(torch.zeros(3, 4))


def test_factor_is_differentiable():
    """d/dA of sum(L) through the factor, against central differences."""
    A = torch.as_tensor(spd(5, cond=10.0), dtype=torch.float64)

    def f(A: torch.Tensor) -> torch.Tensor:
        S = (A + A.mT) / 2
        return cholesky_factor(S, shift=0.2).solve(torch.ones(5, dtype=A.dtype)).sum()

    assert torch.autograd.gradcheck(f, (A.clone().requires_grad_(True),))


# ---------------------------------------------------------------------- general solves
def test_solve_matches_numpy_and_is_batched():
    A = RNG.normal(size=(4, 7, 7)) + 7 * np.eye(7)
    b = RNG.normal(size=(4, 7))
    X = solve(torch.as_tensor(A), torch.as_tensor(b)).numpy()
    np.testing.assert_allclose(X, np.linalg.solve(A, b[..., None])[..., 0], rtol=1e-12)
    B = RNG.normal(size=(7, 3))
    X2 = solve(torch.as_tensor(A[0]), torch.as_tensor(B)).numpy()
    np.testing.assert_allclose(X2, np.linalg.solve(A[0], B), rtol=1e-12)
    with pytest.raises(InputError, match="Q: expected a square"):
        solve(torch.zeros(3, 2), torch.zeros(3), name="Q")


def test_solve_gives_minimum_norm_solution_of_a_singular_system():
    A = np.stack([RNG.normal(size=(5, 5)) + 5 * np.eye(5), np.diag([1.0, 2.0, 0.0, 3.0, 4.0])])
    b = RNG.normal(size=(2, 5))
    X = solve(torch.as_tensor(A), torch.as_tensor(b)).numpy()
    np.testing.assert_allclose(X[0], np.linalg.solve(A[0], b[0]), rtol=1e-12)
    lstsq = np.linalg.lstsq(A[1], b[1], rcond=None)[0]  # minimum-norm least squares
    np.testing.assert_allclose(X[1], lstsq, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize(("upper", "left"), [(False, True), (True, True), (False, False)])
def test_solve_triangular_matches_scipy(upper, left):
    L = np.tril(RNG.normal(size=(6, 6))) + 4 * np.eye(6)
    T = L.T if upper else L
    B = RNG.normal(size=(6, 2)) if left else RNG.normal(size=(2, 6))
    X = solve_triangular(torch.as_tensor(T), torch.as_tensor(B), upper=upper, left=left)
    if left:
        ref = scipy.linalg.solve_triangular(T, B, lower=not upper)
    else:  # X T = B  <=>  T^T X^T = B^T
        ref = scipy.linalg.solve_triangular(T.T, B.T, lower=upper).T
    np.testing.assert_allclose(X.numpy(), ref, rtol=1e-12)
    # a shared right-hand side broadcast against a batch of factors
    Xb = solve_triangular(
        torch.as_tensor(np.stack([T, 2 * T])), torch.as_tensor(B), upper=upper, left=left
    )
    np.testing.assert_allclose(Xb[1].numpy(), ref / 2, rtol=1e-12)


# ---------------------------------------------------------------------- PSD check
def test_check_psd_against_numpy_eigenvalues():
    A = spd(20, cond=1e12)  # PSD, smallest eigenvalue 1e-12
    assert check_psd(torch.as_tensor(A)).is_psd
    Q, _ = np.linalg.qr(RNG.normal(size=(20, 20)))
    lam = np.linspace(1.0, 2.0, 20)
    lam[0] = -1e-3
    Bad = (Q * lam) @ Q.T
    res = check_psd(torch.as_tensor(Bad), strict=False)
    evals = np.linalg.eigvalsh(Bad)
    assert not res.is_psd
    np.testing.assert_allclose([res.min_eigenvalue, res.max_eigenvalue], evals[[0, -1]], rtol=1e-9)
    with pytest.raises(NotPSDError, match=r"K_in: expected a positive semi-definite.*-0\.001"):
        check_psd(Bad, name="K_in")
    lam[0] = -1e-10  # round-off below the float64 tolerance 1e-8 * lambda_max: accepted
    assert check_psd(torch.as_tensor((Q * lam) @ Q.T)).is_psd


# ---------------------------------------------------------------------- eigensolver
def test_symmetric_eigh_matches_numpy_with_the_sign_convention():
    A = RNG.normal(size=(15, 15))
    A = A + A.T
    res = symmetric_eigh(torch.as_tensor(A))
    w, U = np.linalg.eigh(A)
    np.testing.assert_allclose(res.values.numpy(), w, rtol=1e-12, atol=1e-12)
    V = res.vectors.numpy()
    np.testing.assert_allclose(np.abs(V.T @ U), np.eye(15), atol=1e-10)  # same vectors up to sign
    top = V[np.abs(V).argmax(0), np.arange(15)]
    assert (top > 0).all()
    desc = symmetric_eigh(torch.as_tensor(A), descending=True)
    np.testing.assert_allclose(desc.values.numpy(), w[::-1], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(desc.vectors.numpy(), V[:, ::-1], atol=1e-12)


def test_symmetric_eigh_of_a_stack_equals_each_matrix():
    A = RNG.normal(size=(2, 3, 6, 6))
    A = A + np.swapaxes(A, -1, -2)
    res = symmetric_eigh(A, descending=True)
    assert res.values.shape == (2, 3, 6) and res.vectors.shape == (2, 3, 6, 6)
    for i, j in np.ndindex(2, 3):
        one = symmetric_eigh(torch.as_tensor(A[i, j]), descending=True)
        np.testing.assert_allclose(res.values[i, j].numpy(), one.values.numpy(), atol=1e-12)
        np.testing.assert_allclose(res.vectors[i, j].numpy(), one.vectors.numpy(), atol=1e-10)
        w = np.linalg.eigvalsh(A[i, j])
        np.testing.assert_allclose(res.values[i, j].numpy(), w[::-1], atol=1e-12)
    with pytest.raises(InputError, match=r"A: expected a square matrix .*\(3, 4\)"):
        symmetric_eigh(np.zeros((3, 4)))


# ---------------------------------------------------------------------- conjugate gradient
def test_batched_cg_matches_numpy_solve():
    A = np.stack([spd(8, cond=50.0) for _ in range(6)]).reshape(2, 3, 8, 8)
    B = RNG.normal(size=(2, 3, 8))
    At = torch.as_tensor(A)
    res = conjugate_gradient(
        lambda V: (At @ V.unsqueeze(-1)).squeeze(-1), torch.as_tensor(B), tol=1e-12, vector_dims=1
    )
    assert res.converged and res.residual <= 1e-12
    np.testing.assert_allclose(
        res.solution.numpy(), np.linalg.solve(A, B[..., None])[..., 0], rtol=1e-9
    )


def test_batched_cg_on_matrix_shaped_vectors_with_a_preconditioner():
    """The random-walk layout: each system's unknown is an (n2, n1) matrix."""
    A = spd(12, cond=1e4)
    D = np.diag(A).copy()
    B = RNG.normal(size=(5, 3, 4))
    At = torch.as_tensor(A)

    def op(V: torch.Tensor) -> torch.Tensor:
        return (V.reshape(5, 12) @ At).reshape(5, 3, 4)

    Dt = torch.as_tensor(D).reshape(3, 4)
    res = conjugate_gradient(
        op, torch.as_tensor(B), preconditioner=lambda R: R / Dt, tol=1e-12, vector_dims=2, shift=0.3
    )
    ref = np.linalg.solve(A + 0.3 * np.eye(12), B.reshape(5, 12).T).T.reshape(5, 3, 4)
    assert res.converged
    np.testing.assert_allclose(res.solution.numpy(), ref, rtol=1e-8, atol=1e-10)


def test_cg_takes_any_matmul_operator():
    class Op:
        shape = (10, 10)

        def __init__(self, M):
            self.M = M

        def __matmul__(self, V):
            return self.M @ V

    A = spd(10, cond=30.0)
    B = RNG.normal(size=(10, 2))
    res = conjugate_gradient(Op(torch.as_tensor(A)), B, tol=1e-12)
    np.testing.assert_allclose(res.solution.numpy(), np.linalg.solve(A, B), rtol=1e-9)


# ---------------------------------------------------------------------- L-BFGS
def test_lbfgs_reaches_scipy_lbfgsb_on_rosenbrock():
    x0 = np.array([-1.2, 1.0, -0.5, 0.8])
    ref = scipy.optimize.minimize(
        scipy.optimize.rosen, x0, jac=scipy.optimize.rosen_der, method="L-BFGS-B", tol=1e-14
    )
    x = torch.tensor(x0, requires_grad=True)

    def rosen() -> torch.Tensor:
        return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()

    run = lbfgs(rosen, [x], max_iter=500, tolerance_grad=1e-12, tolerance_change=1e-15)
    assert run.converged and 0 < run.n_iter < 500 and run.n_eval >= run.n_iter
    np.testing.assert_allclose(x.detach().numpy(), ref.x, atol=1e-6)
    np.testing.assert_allclose(x.detach().numpy(), np.ones(4), atol=1e-8)


def test_lbfgs_batched_rows_reach_their_closed_form_minimisers():
    """Rows: independent quadratics 1/2 x^T A_i x - b_i^T x, minimisers A_i^{-1} b_i.

    A row may stop on a relative decrease below ``tol`` (1e-12 of ``|f| ~ 100`` here), so
    ``|x - x*|^2 <= 2 (f - f*) / lambda_min`` allows about 1e-6: the tolerance below.  Its own
    generator keeps the problems independent of the other tests' draws."""
    rng = np.random.default_rng(7)
    A = torch.as_tensor(np.stack([spd(5, cond=20.0, rng=rng) for _ in range(4)]))
    b = torch.as_tensor(rng.normal(size=(4, 5)))

    def fun(x: torch.Tensor):
        idx = x[:, -1].long()  # a constant last column names each row's problem
        Ax = (A[idx] @ x[:, :-1, None])[..., 0]
        f = 0.5 * (x[:, :-1] * Ax).sum(1) - (b[idx] * x[:, :-1]).sum(1)
        g = torch.cat([Ax - b[idx], torch.zeros(len(x), 1, dtype=x.dtype)], 1)
        return f, g

    x0 = torch.cat([torch.zeros(4, 5, dtype=torch.float64), torch.arange(4.0)[:, None]], 1)
    x, res = lbfgs_batched(fun, x0, max_iter=200, tol=1e-12)
    ref = np.linalg.solve(A.numpy(), b.numpy()[..., None])[..., 0]
    np.testing.assert_allclose(x[:, :-1].numpy(), ref, rtol=0, atol=1e-6)
    assert res.values.shape == (4,) and res.n_eval >= res.n_iter > 0


class _Quadratic(nn.Module):
    def __init__(self, A: torch.Tensor, b: torch.Tensor):
        super().__init__()
        self.A, self.b = A, b
        self.x = nn.Parameter(torch.zeros_like(b))

    def objective(self) -> torch.Tensor:
        return 0.5 * self.x @ self.A @ self.x - self.b @ self.x


@pytest.mark.parametrize("optimizer", ["lbfgs", "adam"])
def test_train_module_reaches_the_closed_form(optimizer):
    A = torch.as_tensor(spd(6, cond=5.0))
    b = torch.as_tensor(RNG.normal(size=6))
    m = _Quadratic(A, b)
    res = train_module(m, m.objective, optimizer=optimizer, max_iter=3000, tol=1e-12, lr=0.05)
    ref = np.linalg.solve(A.numpy(), b.numpy())
    tol = 1e-8 if optimizer == "lbfgs" else 1e-4
    np.testing.assert_allclose(m.x.detach().numpy(), ref, atol=tol)
    assert res.best == pytest.approx(-0.5 * float(b.numpy() @ ref), abs=1e-8)
    assert res.history[-1] >= res.best and len(res.history) == res.n_eval >= res.n_iter


def test_train_module_stops_on_a_non_finite_objective_at_the_best_state():
    m = _Quadratic(torch.eye(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64))
    calls = []

    def objective() -> torch.Tensor:
        calls.append(1)
        value = m.objective()
        return value if len(calls) < 4 else value * float("nan")

    with pytest.warns(NonFiniteObjectiveWarning, match="non-finite"):
        res = train_module(m, objective, optimizer="adam", max_iter=50, lr=0.1)
    assert res.stopped == "non_finite" and res.n_eval == 4 and np.isnan(res.history[-1])
    assert res.best == min(res.history[:3]) < res.history[0]
    assert float(m.objective().detach()) == pytest.approx(res.best, rel=1e-14)
