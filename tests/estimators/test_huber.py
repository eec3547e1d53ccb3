"""KernelHuberRegressor: the minimiser of its stated objective (SciPy oracle), Nyström, Dask."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.optimize import minimize

from kernelkit import KernelHuberRegressor
from kernelkit.io import load, save
from kernelkit.kernels import Gaussian
from kernelkit.utils._errors import ConvergenceWarning


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((50, 2))
    y = np.cos(X[:, 1]) + 0.1 * rng.standard_normal(50)
    y[::10] += 4.0  # outliers in the linear part of the loss
    return X, y, rng.standard_normal((20, 2))


def scipy_oracle(K, y, w, lam, eps):
    """argmin over (alpha, b) of (1/sum w) sum w_i H_eps(y_i - (K alpha)_i - b) + lam a^T K a,
    by SciPy's L-BFGS-B with the exact gradient (the representer coefficients)."""
    w = w / w.sum()

    def fun(theta):
        a, b = theta[:-1], theta[-1]
        r = y - K @ a - b
        H = np.where(np.abs(r) <= eps, r**2, 2 * eps * np.abs(r) - eps**2)
        d = w * 2 * np.clip(r, -eps, eps)
        return w @ H + lam * a @ K @ a, np.r_[-K @ d + 2 * lam * K @ a, -d.sum()]

    opts = {"maxiter": 100000, "maxfun": 100000, "ftol": 0.0, "gtol": 1e-14, "maxcor": 50}
    x = minimize(fun, np.zeros(len(y) + 1), jac=True, method="L-BFGS-B", options=opts).x
    return x[:-1], x[-1]


def objective(f, alpha, K, y, w, lam=1e-2, eps=0.5):
    r = y - f
    H = np.where(np.abs(r) <= eps, r**2, 2 * eps * np.abs(r) - eps**2)
    alpha = np.asarray(alpha)
    return float(w @ H / w.sum() + lam * alpha @ K @ alpha)


@pytest.mark.parametrize("weighted", [False, True])
def test_equals_the_scipy_minimiser_of_its_objective(data, weighted):
    X, y, _ = data
    w = np.random.default_rng(5).uniform(0.5, 2.0, len(X)) if weighted else np.ones(len(X))
    est = KernelHuberRegressor(Gaussian(1.0), lam=1e-2, epsilon=0.5, tol=1e-12)
    est.fit(X, y, sample_weight=w if weighted else None)
    K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 2)
    alpha, b = scipy_oracle(K, y, w, 1e-2, 0.5)
    assert est.solver_ == "exact" and isinstance(est.n_iter_, int)
    assert np.abs(est.predict(X) - (K @ alpha + b)).max() < 1e-6
    # and its objective is no larger than the oracle's (alpha in K's near-null directions,
    # which move f(x) off the training points, costs next to nothing and is not compared)
    a = torch.as_tensor(est.dual_coef_)
    assert objective(est.predict(X), a, K, y, w) <= objective(K @ alpha + b, alpha, K, y, w) + 1e-12


def test_integer_weights_are_repeated_rows(data):
    X, y, Xt = data
    w = np.random.default_rng(6).integers(1, 4, len(X))
    rep = np.repeat(np.arange(len(X)), w)
    a = KernelHuberRegressor(Gaussian(1.0), lam=1e-3, tol=1e-12).fit(X, y, sample_weight=w)
    b = KernelHuberRegressor(Gaussian(1.0), lam=1e-3, tol=1e-12).fit(X[rep], y[rep])
    # the two Grams' eigenvalue floors differ: equal to 1e-6 off the training points
    assert np.abs(a.predict(X) - b.predict(X)).max() < 1e-8
    assert np.abs(a.predict(Xt) - b.predict(Xt)).max() < 1e-6


def test_nystrom_and_dask_agree_on_the_same_centres(data):
    da = pytest.importorskip("dask.array")
    X, y, Xt = data
    est = KernelHuberRegressor(Gaussian(1.0), solver="nystrom", centers=X[:12], tol=1e-12)
    local = est.fit(X, y).predict(Xt)
    assert est.solver_ == "nystrom" and est.X_fit_.shape == (12, 2)
    remote = est.fit(da.from_array(X, chunks=(13, 2)), da.from_array(y, chunks=13)).predict(Xt)
    assert np.abs(remote - local).max() < 1e-6
    weighted = est.fit(da.from_array(X, chunks=(13, 2)), y, sample_weight=np.full(50, 2.0))
    assert np.abs(weighted.predict(Xt) - local).max() < 1e-8


def test_auto_solver_and_more_centres_than_points(data):
    X, y, _ = data
    assert KernelHuberRegressor().fit(X, y).solver_ == "exact"
    with pytest.warns(UserWarning, match="n_centers=80 is more than the 50"):
        est = KernelHuberRegressor(solver="nystrom", n_centers=80).fit(X, y)
    assert est.solver_ == "exact" and not hasattr(est, "center_indices_")


def test_lam_auto_cross_validates(data):
    X, y, _ = data
    est = KernelHuberRegressor(Gaussian(1.0), lam="auto", random_state=0).fit(X, y)
    cv = est.cv_results_
    assert isinstance(est.lam_, float) and est.lam_ in [p["lam"] for p in cv["params"]]
    assert {f"split{k}_test_score" for k in range(5)} <= set(cv)
    refit = KernelHuberRegressor(Gaussian(1.0), lam=est.lam_).fit(X, y)
    np.testing.assert_allclose(refit.predict(X), est.predict(X), atol=1e-10)


def test_progress_and_max_iter(data):
    X, y, _ = data
    objectives = []
    est = KernelHuberRegressor(
        Gaussian(1.0), epsilon=0.2, verbose=lambda k, J: objectives.append(J)
    )
    est.fit(X, y)
    assert len(objectives) == est.n_iter_ and objectives == sorted(objectives, reverse=True)
    with pytest.warns(ConvergenceWarning):
        assert KernelHuberRegressor(epsilon=0.2, max_iter=1, tol=1e-14).fit(X, y).n_iter_ == 1


def test_torch_input_and_roundtrip(data, tmp_path):
    X, y, Xt = data
    est = KernelHuberRegressor(Gaussian(1.0)).fit(torch.as_tensor(X), torch.as_tensor(y))
    assert isinstance(est.predict(torch.as_tensor(Xt)), torch.Tensor)
    save(est, tmp_path / "huber")
    again = load(tmp_path / "huber")
    torch.testing.assert_close(again.predict(torch.as_tensor(Xt)), est.predict(torch.as_tensor(Xt)))


def test_on_a_distributed_cluster(data, dask_client):
    """The features computed on the cluster's worker processes: the in-process model."""
    da = pytest.importorskip("dask.array")
    X, y, Xt = data
    est = KernelHuberRegressor(Gaussian(1.0), solver="nystrom", centers=X[:12], tol=1e-12)
    local = est.fit(X, y).predict(Xt)
    remote = est.fit(da.from_array(X, chunks=(13, 2)).persist(), y)
    assert np.abs(remote.predict(Xt) - local).max() < 1e-6
