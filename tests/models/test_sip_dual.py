"""Dual RRM (section 3, appendix D): gradient through the polar problem, training.

Oracles: central finite differences of the certified polar solver's values, the closed-form
quadratic case ``J = 1 / (a^T M^{-1} a)``, and Nyström kernel ridge regression for ``s -> 0``.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize
import scipy.special
import torch

from kernelkit.models._sip_dual import dual_rrm, polar_value_and_map
from kernelkit.models._sip_polar import embed_max


@pytest.fixture
def problem():
    gen = torch.Generator().manual_seed(0)
    K_train = torch.randn(8, 6, generator=gen, dtype=torch.float64)
    G = torch.randn(10, 6, generator=gen, dtype=torch.float64) * 0.6
    y = torch.sign(torch.randn(8, generator=gen, dtype=torch.float64))
    return K_train, G, y


def _certified_J(a, G, groups, strength):
    sol = embed_max(
        G @ G.T,
        a[None] @ G.T,
        (a * a)[None].sum(1),
        groups=groups,
        strength=strength,
        tol=1e-13,
        max_iter=200,
    )
    return float(sol.primal[0])


@pytest.mark.parametrize("grouping", ["one", "points", "sum"])
def test_gradient_matches_finite_differences_of_the_certified_solver(problem, grouping):
    _, G, _ = problem
    m = G.shape[0]
    groups = {
        "one": torch.zeros(m, dtype=torch.long),
        "points": torch.arange(m) // 3,
        "sum": torch.arange(m),
    }[grouping]
    one_sided = torch.zeros(int(groups.max()) + 1, dtype=torch.bool)
    a = torch.randn(6, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    a.requires_grad_(True)
    J, iota = polar_value_and_map(a, G, groups, one_sided, 1.5)
    J_value = J.detach()
    assert float(J_value) == pytest.approx(_certified_J(a.detach(), G, groups, 1.5), rel=1e-10)
    (grad,) = torch.autograd.grad(1.0 / J, a)
    h = 1e-6
    for i in range(6):
        e = torch.zeros(6, dtype=torch.float64)
        e[i] = h
        fd = (
            1 / _certified_J(a.detach() + e, G, groups, 1.5)
            - 1 / _certified_J(a.detach() - e, G, groups, 1.5)
        ) / (2 * h)
        assert float(grad[i]) == pytest.approx(fd, rel=1e-5, abs=1e-8)
    # 1/J = ||f||_B^2 is the squared dual norm, and iota(f) is half its gradient
    np.testing.assert_allclose(iota.detach().numpy(), grad.numpy() / 2, atol=1e-8)


def test_sum_case_is_the_closed_form(problem):
    _, G, _ = problem
    a = torch.randn(6, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    J, iota = polar_value_and_map(a, G, torch.arange(10), torch.zeros(10, dtype=torch.bool), 2.0)
    M = torch.eye(6, dtype=torch.float64) + 2.0 * G.T @ G
    Minv_a = torch.linalg.solve(M, a)
    assert float(J) == pytest.approx(1.0 / float(a @ Minv_a), rel=1e-10)
    np.testing.assert_allclose(iota.numpy(), Minv_a.numpy(), atol=1e-10)


def test_dual_rrm_sum_case_is_the_convex_problem_in_w(problem, one_torch_thread):
    """Sum grouping: ||f||_B^2 = a^T M^{-1} a with a = K^T c and M = I + s G^T G; with
    w = M^{-1} a the objective is (1/n) sum log(1 + exp(-y_i <k_i, w>)) + lam w^T M w, convex in
    w (K has full column rank), minimised here by SciPy's BFGS."""
    K_train, G, y = problem
    m, lam = G.shape[0], 0.05
    result = dual_rrm(
        K_train,
        y,
        G,
        groups=torch.arange(m),
        one_sided=torch.zeros(m, dtype=torch.bool),
        strength=1.0,
        lam=lam,
        loss="logistic",
        max_iter=200,
        tol=1e-12,
    )
    Phi, t = K_train.numpy(), y.numpy()
    M = np.eye(Phi.shape[1]) + G.numpy().T @ G.numpy()

    def objective(w):
        z = -t * (Phi @ w)
        grad = Phi.T @ (-t * scipy.special.expit(z)) / len(t) + 2 * lam * M @ w
        return np.logaddexp(0.0, z).mean() + lam * w @ M @ w, grad

    opt = scipy.optimize.minimize(
        objective, np.zeros(M.shape[0]), jac=True, method="BFGS", options={"gtol": 1e-13}
    )
    assert min(result.objective) == pytest.approx(opt.fun, rel=1e-12)
    np.testing.assert_allclose((K_train @ result.iota).numpy(), Phi @ opt.x, atol=1e-6)


@pytest.mark.slow
def test_dual_rrm_max_reaches_derivative_free_optimum_and_tends_to_kernel_ridge(
    problem, one_torch_thread
):
    K_train, G, y = problem
    lam, groups, one_sided = 0.05, torch.zeros(10, dtype=torch.long), torch.zeros(1, dtype=bool)
    result = dual_rrm(K_train, y, G, strength=1.0, lam=lam, loss="logistic", max_iter=30)

    def objective(a):  # the objective as a function of a = K^T c (K^T is onto R^6)
        with torch.no_grad():
            J, iota = polar_value_and_map(torch.as_tensor(a), G, groups, one_sided, 1.0)
            f = K_train @ iota
            return float(torch.nn.functional.softplus(-y * f).mean() + lam / J)

    start = K_train.T @ torch.linalg.solve(K_train @ K_train.T + 8 * lam * torch.eye(8).double(), y)
    powell = scipy.optimize.minimize(
        objective, start.numpy(), method="Powell", options={"xtol": 1e-8, "ftol": 1e-13}
    )
    # the max makes the objective non-smooth: measured 2.5e-6 above Powell's optimum
    assert min(result.objective) == pytest.approx(powell.fun, rel=1e-5)
    assert min(result.objective) < objective(start.numpy()) - 1e-2
    weak = dual_rrm(
        K_train, y, G, strength=1e-10, lam=0.05, loss="squared", max_iter=100, tol=1e-10
    )
    K = K_train @ K_train.T
    # (1/n) sum (y - f)^2 / 2 + lam c^T K c  =>  (K + 2 n lam I) c = y
    c = torch.linalg.solve(K + 2 * 8 * 0.05 * torch.eye(8, dtype=torch.float64), y)
    np.testing.assert_allclose((K_train @ weak.iota).numpy(), (K @ c).numpy(), atol=1e-6)
