"""The loss-generic ERM back-end (:mod:`kernelkit.models._erm`) and its losses."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.optimize import minimize
from sklearn.svm import SVR

from kernelkit.gram._nystrom import nystrom_map_on_centres
from kernelkit.kernels import Gaussian
from kernelkit.models._erm import ErmOptions, erm_solver, fit_kernel_erm, select_lam, solve_erm
from kernelkit.models._logistic_path import auto_grid
from kernelkit.models._losses import EpsilonInsensitiveLoss, HuberLoss


def _data(n: int = 40, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(n)
    y[:3] += 3.0  # outliers
    K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 2)
    return X, y, K


def test_huber_loss_derivatives_match_finite_differences():
    loss = HuberLoss(0.7)
    r = torch.linspace(-2, 2, 41, dtype=torch.float64) + 1e-3
    h = 1e-6
    num = (loss.value(r + h) - loss.value(r - h)) / (2 * h)
    torch.testing.assert_close(loss.derivative(r), num, atol=1e-6, rtol=0)
    num2 = (loss.derivative(r + h) - loss.derivative(r - h)) / (2 * h)
    torch.testing.assert_close(loss.curvature(r), num2, atol=1e-6, rtol=0)


def test_epsilon_insensitive_dual_coefficients():
    dual = EpsilonInsensitiveLoss(0.1).dual(np.arange(3.0), np.ones(3))
    a = np.array([0.5, 0.0, 0.2, 0.1, 0.3, 0.0])
    np.testing.assert_allclose(dual.coefficients(a, 3), [0.4, -0.3, 0.2])


@pytest.mark.parametrize("weighted", [False, True])
def test_dual_on_the_gram_equals_libsvm(weighted):
    _, y, K = _data()
    n, lam = len(y), 1e-3
    w = np.random.default_rng(2).integers(1, 4, n).astype(float) if weighted else None
    res = solve_erm(
        EpsilonInsensitiveLoss(0.1),
        torch.as_tensor(K),
        torch.as_tensor(y),
        lam,
        gram=True,
        weights=w,
        tol=1e-8,
        max_iter=-1,
    )
    s = None if w is None else w * n / w.sum()
    sk = SVR(kernel="precomputed", C=1 / (2 * n * lam), epsilon=0.1, tol=1e-8)
    sk.fit(K, y, sample_weight=s)
    f = K @ res.coef.numpy() + res.intercept
    assert np.abs(f - sk.predict(K)).max() < 1e-4


def _huber_oracle(K: np.ndarray, y: np.ndarray, lam: float, eps: float) -> np.ndarray:
    """SciPy's L-BFGS-B on the representer coefficients (alpha, b) of the stated objective."""
    n = len(y)

    def fun(theta):
        a, b = theta[:-1], theta[-1]
        r = y - K @ a - b
        loss = np.where(np.abs(r) <= eps, r * r, 2 * eps * np.abs(r) - eps**2)
        d = 2 * np.clip(r, -eps, eps)
        grad = np.r_[-K @ d / n + 2 * lam * K @ a, -d.mean()]
        return loss.mean() + lam * a @ K @ a, grad

    opts = {"maxiter": 100000, "maxfun": 100000, "ftol": 0.0, "gtol": 1e-14, "maxcor": 50}
    res = minimize(fun, np.zeros(n + 1), jac=True, method="L-BFGS-B", options=opts)
    return K @ res.x[:-1] + res.x[-1]


def test_newton_on_the_exact_system_equals_scipy():
    _, y, K = _data()
    res = solve_erm(
        HuberLoss(0.5), torch.as_tensor(K), torch.as_tensor(y), 1e-2, gram=True, tol=1e-12
    )
    assert res.converged and isinstance(res.n_iter, int)
    f = K @ res.coef.numpy() + res.intercept
    assert np.abs(f - _huber_oracle(K, y, 1e-2, 0.5)).max() < 1e-6


@pytest.mark.parametrize("loss", [HuberLoss(0.5), EpsilonInsensitiveLoss(0.1)], ids=repr)
def test_nystrom_system_is_the_solve_on_the_features(loss):
    """fit_kernel_erm(solver="nystrom") equals solve_erm on Phi = K_nC U Lambda^-1/2 built by
    hand, mapped back to the centres."""
    X, y, _ = _data()
    kernel, C = Gaussian(1.0), X[::4]
    model = fit_kernel_erm(
        loss,
        kernel,
        torch.as_tensor(X),
        torch.as_tensor(y),
        1e-3,
        ErmOptions(tol=1e-10, max_iter=-1 if not loss.smooth else 100),
        solver="nystrom",
        centers=C,
    )
    fmap = nystrom_map_on_centres(kernel, C, np.full(len(C), -1))
    Phi = fmap.features(torch.as_tensor(X)).double()
    res = solve_erm(
        loss,
        Phi,
        torch.as_tensor(y),
        1e-3,
        gram=False,
        tol=1e-10,
        max_iter=-1 if not loss.smooth else 100,
    )
    by_hand = Phi @ res.coef + res.intercept
    f = kernel(torch.as_tensor(X), torch.as_tensor(C)).double() @ model.coef + model.intercept
    assert model.solver == "nystrom"
    torch.testing.assert_close(f, by_hand, atol=1e-8, rtol=0)


def test_weights_are_repetition():
    _, y, K = _data(30)
    w = np.random.default_rng(3).integers(1, 4, 30)
    rep = np.repeat(np.arange(30), w)
    for loss in (HuberLoss(0.5), EpsilonInsensitiveLoss(0.1)):
        a = solve_erm(
            loss,
            torch.as_tensor(K),
            torch.as_tensor(y),
            1e-2,
            gram=True,
            weights=w.astype(float),
            tol=1e-10,
            max_iter=-1 if not loss.smooth else 100,
        )
        b = solve_erm(
            loss,
            torch.as_tensor(K[np.ix_(rep, rep)]),
            torch.as_tensor(y[rep]),
            1e-2,
            gram=True,
            tol=1e-10,
            max_iter=-1 if not loss.smooth else 100,
        )
        fa = K @ a.coef.numpy() + a.intercept
        fb = K[:, rep] @ b.coef.numpy() + b.intercept
        assert np.abs(fa - fb).max() < 1e-6, loss


def test_select_lam_returns_a_grid_value_and_cv_results():
    _, y, K = _data()
    grid = auto_grid(torch.as_tensor(K).diagonal())
    lam, cv = select_lam(
        HuberLoss(0.5), torch.as_tensor(K), torch.as_tensor(y), gram=True, random_state=0
    )
    assert isinstance(lam, float) and np.isclose(grid, lam).any()
    visited = len(cv["params"])
    assert cv["mean_test_score"].shape == (visited,) and "split4_test_score" in cv
    assert cv["params"][int(np.argmin(cv["rank_test_score"]))]["lam"] == lam


def test_auto_keeps_the_exact_system_while_the_cost_model_does():
    """KernelRidge's rule (falkon.choose_solver): exact for small n, Nyström for large n."""
    assert erm_solver("auto", torch.zeros((500, 3)), 1000) == "exact"
    assert erm_solver("auto", torch.zeros((200_000, 3)), 1000) == "nystrom"
    assert erm_solver("nystrom", torch.zeros((500, 3)), 100) == "nystrom"
    with pytest.warns(UserWarning, match="more than the 50 training points"):
        assert erm_solver("nystrom", torch.zeros((50, 3)), 100) == "exact"
