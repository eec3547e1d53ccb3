"""Concatenated kernel regression engine: objectives against the paper's long forms (brute
force), autograd gradients against finite differences, the batched L-BFGS against separate
runs and SciPy."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.optimize import minimize
from torch.func import functional_call

from kernelkit.kernels import Gaussian, Polynomial, TensorMatern
from kernelkit.models._concatenated import (
    Mixture,
    build_concatenated,
    coth_penalty,
    fit_concatenated,
    lbfgs_batched,
)

DT = torch.float64


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    """Batches of small matrices: one thread avoids OpenMP spinning on the shared machine."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _data(n: int = 12, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, 2, generator=g, dtype=DT) * 2 - 1
    y = 1.0 / (0.1 + (X[:, 0] - X[:, 1]).abs())
    return X, y


def _inner_brute(X: torch.Tensor, coef: torch.Tensor, kernels: list, w: torch.Tensor):
    """g(x_i) = sum_j K(x_j, x_i) c_j and N(c) = sum_jk c_j^T K(x_j, x_k) c_k by loops."""
    n, D = coef.shape
    Z = torch.zeros(n, D, dtype=DT)
    N = torch.zeros((), dtype=DT)
    for i in range(n):
        for j in range(n):
            Kji = torch.diag(
                torch.stack([w[c] * kernels[c](X[j : j + 1], X[i : i + 1])[0, 0] for c in range(D)])
            )
            Z[i] += Kji @ coef[j]
            N = N + coef[j] @ Kji @ coef[i]
    return Z, N


@pytest.mark.parametrize("mixture", [False, True])
def test_regression_objective_equals_paper_long_form(mixture: bool) -> None:
    X, y = _data()
    n = len(y)
    lam, mu = 0.01, 0.003
    if mixture:
        kernels = [Gaussian(0.5), Polynomial(1), Polynomial(2)]
        inner, D, w = Mixture(kernels), 3, torch.tensor([1.0, 0.5, 2.0], dtype=DT)
    else:
        kernels, inner, D, w = (
            [Polynomial(2)] * 2,
            Polynomial(2),
            2,
            torch.tensor([1.0, 3.0], dtype=DT),
        )
    outer = TensorMatern(1.0, sigma=0.7)
    model, data = build_concatenated(
        X, y, [inner], [D], outer, lam=lam, mu=[mu], weights=[w], n_restarts=2, random_state=1
    )
    values, _ = model.objective_batch(data)
    for b in range(2):
        coef = model.inner_layers[0].coef[b].detach()
        Z, N = _inner_brute(X, coef, kernels, w)
        Q = torch.tensor(
            [[float(outer(Z[i : i + 1], Z[j : j + 1])[0, 0]) for j in range(n)] for i in range(n)],
            dtype=DT,
        )
        lp, mp = n * lam, n * mu  # the paper's lambda, mu (unnormalised sum of squares)
        A = torch.linalg.inv(Q + lp * torch.eye(n, dtype=DT))
        R = (torch.eye(n, dtype=DT) - Q @ A) @ y
        paper = lp * y @ A @ Q @ A @ y + mp * N + R @ R  # eq. 19 / (Reg)
        torch.testing.assert_close(n * values[b].detach(), paper, rtol=1e-9, atol=1e-12)


def test_interpolation_objective_equals_paper_int() -> None:
    X, y = _data(10, seed=3)
    n = len(y)
    outer = TensorMatern(1.0)
    model, data = build_concatenated(
        X, y, [Polynomial(1)], [2], outer, lam=0.0, mu=[1.0 / n], interpolate=True, random_state=2
    )
    value = model.objective_batch(data)[0][0]
    coef = model.inner_layers[0].coef[0].detach()
    Z, N = _inner_brute(X, coef, [Polynomial(1)] * 2, torch.ones(2, dtype=DT))
    Q = outer(Z)
    paper = y @ torch.linalg.solve(Q, y) + N  # (Int): y^T Q^-1 y + N(c)
    torch.testing.assert_close(n * value.detach(), paper, rtol=1e-8, atol=0)


def test_coth_penalty_brute_force() -> None:
    Z = torch.randn(3, 7, 2, dtype=DT)
    got = coth_penalty(Z)
    for b in range(3):
        ref = sum(
            1.0 / np.tanh(float(((Z[b, i] - Z[b, j]) ** 2).sum()))
            for i in range(7)
            for j in range(i + 1, 7)
        )
        assert abs(float(got[b]) - ref) < 1e-10 * abs(ref)


@pytest.mark.parametrize(
    "interpolate, inner, dims, gamma",
    [
        (False, [Polynomial(1)], [2], 0.0),  # (uR-X)
        (True, [Polynomial(2)], [2], 0.0),  # (Int)
        (True, [Polynomial(1)], [2], 1e-3),  # (Int) + eq. 15
        (False, [Mixture([Gaussian(1.0), Polynomial(1), Polynomial(2)])], [3], 0.0),
        (False, [Polynomial(1), Gaussian(1.0)], [2, 2], 0.0),  # three-layer chain
    ],
)
def test_gradients_match_finite_differences(interpolate, inner, dims, gamma) -> None:
    X, y = _data(9, seed=5)
    outer = TensorMatern(1.0) if interpolate else Gaussian(0.5)
    model, data = build_concatenated(
        X,
        y,
        inner,
        dims,
        outer,
        lam=0.02,
        mu=[0.01] * len(dims),
        gamma=gamma,
        interpolate=interpolate,
        n_restarts=2,
        random_state=0,
    )
    names = [f"chain.layers.{i}.coef" for i in range(len(dims))]
    coefs = tuple(
        model.inner_layers[i].coef.detach().clone().requires_grad_(True) for i in range(len(dims))
    )

    def f(*cs: torch.Tensor) -> torch.Tensor:
        return functional_call(model, dict(zip(names, cs, strict=True)), (data,))

    assert torch.autograd.gradcheck(f, coefs, eps=1e-6, atol=1e-5, rtol=1e-4)


def test_batched_lbfgs_equals_separate_runs_and_scipy() -> None:
    def rosen(x: torch.Tensor):
        x = x.detach().requires_grad_(True)
        v = (1 - x[:, 0]) ** 2 + 100 * (x[:, 1] - x[:, 0] ** 2) ** 2 + (x[:, 2:] ** 2).sum(1)
        v.sum().backward()
        return v.detach(), x.grad

    x0 = torch.tensor([[-1.2, 1.0, 0.3], [0.5, -0.5, 1.0], [2.0, 2.0, -1.0]], dtype=DT)
    xb, res = lbfgs_batched(rosen, x0, max_iter=500, tol=1e-12)
    for i in range(3):
        xi, _ = lbfgs_batched(rosen, x0[i : i + 1], max_iter=500, tol=1e-12)
        torch.testing.assert_close(xb[i], xi[0], rtol=0, atol=1e-12)
        ref = minimize(
            lambda v: float(rosen(torch.tensor(v)[None])[0][0]),
            x0[i].numpy(),
            method="BFGS",
            tol=1e-12,
        ).x
        np.testing.assert_allclose(xb[i].numpy(), ref, atol=1e-5)
    assert float(res.values.max()) < 1e-10
    # converged rows leave the batch and only rejected steps are retried
    assert res.n_rows < 3 * res.n_eval


def test_restarts_are_independent_and_best_is_kept() -> None:
    X, y = _data(15, seed=7)
    kw = dict(lam=1e-3, mu=[1e-3], random_state=4)
    model, data = build_concatenated(X, y, [Polynomial(1)], [2], Gaussian(0.3), n_restarts=4, **kw)
    start = model.inner_layers[0].coef.detach().clone()
    best, res = fit_concatenated(model, data, max_iter=30)
    assert best == int(np.argmin(res.values.numpy()))
    kept = model.inner_layers[0].coef.detach()
    # the same restart run alone ends at the same coefficients
    single, data1 = build_concatenated(
        X, y, [Polynomial(1)], [2], Gaussian(0.3), n_restarts=1, **kw
    )
    with torch.no_grad():
        single.inner_layers[0].coef.copy_(start[best : best + 1])
    fit_concatenated(single, data1, max_iter=30)
    torch.testing.assert_close(kept, single.inner_layers[0].coef.detach(), rtol=1e-7, atol=1e-9)
    with torch.no_grad():
        assert float(model.objective(data)[0]) == pytest.approx(float(res.values.min()), rel=1e-10)
        assert float(res.values.min()) < float(
            build_concatenated(X, y, [Polynomial(1)], [2], Gaussian(0.3), n_restarts=4, **kw)[0]
            .objective_batch(data)[0]
            .min()
        )
