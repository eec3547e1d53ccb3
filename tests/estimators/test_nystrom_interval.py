"""Intervals of a Nyström KernelRidge, and the one announcement of solver="auto"'s switch.

Oracles: leave-one-out Nyström refits with the same centres, solved one by one with NumPy
(jackknife+, Barber et al. 2021, eq. 6), and the split-conformal recipe written out
(Lei et al. 2018, Algorithm 2)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.linalg

import kernelkit
from kernelkit import GaussianProcessRegressor, KernelLogisticRegression, KernelRidge
from kernelkit.estimators import _solver_choice
from kernelkit.kernels import Gaussian


def _data(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    return X, np.sin(X[:, 0]) + 0.2 * rng.normal(size=n)


def _features(model, X):
    """``Phi = K_nc L^{-T}``, ``L L^T = K_cc + jitter I``, in NumPy."""
    k = model.kernel_
    C = np.asarray(model.X_fit_)
    K_cc = np.asarray(k(C, C)) + model.jitter_ * np.eye(len(C))
    L = np.linalg.cholesky(K_cc)
    return scipy.linalg.solve_triangular(L, np.asarray(k(X, C)).T, lower=True).T


def _ridge(Phi, y, w, mu):
    return np.linalg.solve((Phi * w[:, None]).T @ Phi + mu * np.eye(Phi.shape[1]), Phi.T @ (w * y))


@pytest.mark.parametrize("weighted", [False, True])
def test_nystrom_jackknife_plus_uses_the_brute_force_leave_one_out_models(weighted):
    X, y = _data(60, 0)
    Xt = _data(6, 1)[0]
    w = np.random.default_rng(2).uniform(0.3, 2.0, size=60) if weighted else np.ones(60)
    if weighted:
        w[4] = 0.0  # a zero weight: left out of the residuals
    lam, alpha = 1e-2, 0.2
    model = KernelRidge(
        Gaussian(sigma=1.0), lam=lam, solver="nystrom", nystrom_method="onepass",
        n_centers=15, random_state=0,
    ).fit(X, y, sample_weight=w if weighted else None)  # fmt: skip
    out = model.predict_interval(Xt, alpha=alpha)
    wn = w / w.mean()
    Phi, Phi_t = _features(model, X), _features(model, Xt)
    mu = 60 * lam
    np.testing.assert_allclose(model.predict(Xt), Phi_t @ _ridge(Phi, y, wn, mu), atol=1e-8)
    lows, highs = [], []
    for i in np.flatnonzero(wn > 0):
        keep = np.arange(60) != i
        beta = _ridge(Phi[keep], y[keep], wn[keep], mu)
        R = abs(y[i] - Phi[i] @ beta)
        lows.append(Phi_t @ beta - R)
        highs.append(Phi_t @ beta + R)
    n = len(lows)
    lo = np.sort(np.array(lows).T, 1)[:, math.floor(alpha * (n + 1)) - 1]
    hi = np.sort(np.array(highs).T, 1)[:, math.ceil((1 - alpha) * (n + 1)) - 1]
    np.testing.assert_allclose(out, np.c_[lo, hi], atol=1e-8)


def test_nystrom_split_conformal_is_the_half_fit_calibrated_on_the_other_half():
    X, y = _data(80, 3)
    Xt = _data(5, 4)[0]
    lam, alpha = 1e-3, 0.1
    model = KernelRidge(
        Gaussian(sigma=1.0), lam=lam, solver="nystrom", n_centers=20, random_state=7
    ).fit(X, y)
    out = model.predict_interval(Xt, alpha=alpha, method="split")
    perm = np.random.default_rng(7).permutation(80)
    train, cal = perm[:40], perm[40:]
    Phi, Phi_t = _features(model, X), _features(model, Xt)
    beta = _ridge(Phi[train], y[train], np.ones(40), 40 * lam)
    R = np.sort(np.abs(y[cal] - Phi[cal] @ beta))
    q = R[math.ceil((1 - alpha) * 41) - 1]
    np.testing.assert_allclose(out, np.c_[Phi_t @ beta - q, Phi_t @ beta + q], atol=1e-8)


def test_auto_switch_keeps_intervals_and_is_announced_once(monkeypatch):
    """Past the exact budget ``solver="auto"`` fits Nyström, says so once per class, and
    its jackknife+ intervals cover held-out targets at about the nominal 90% (1000 test
    points: binomial sd 0.01, plus the spread over training sets; +-0.05 is about 3 sd)."""
    monkeypatch.setattr(_solver_choice, "_ANNOUNCED", set())
    X, y = _data(1500, 5)
    Xt, yt = _data(1000, 6)
    y_class = (y > 0).astype(int)
    with kernelkit.config_context(exact_flops=0.0), warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        first = KernelRidge(n_centers=100, random_state=0).fit(X, y)
        KernelRidge(n_centers=100, lam=1e-3, random_state=0).fit(X, y)
        KernelRidge(solver="nystrom", n_centers=100).fit(X, y)  # asked for: not announced
        gp = GaussianProcessRegressor(n_centers=100, random_state=0).fit(X, y)
        KernelLogisticRegression(n_centers=100).fit(X, y_class)
    said = [str(w.message) for w in seen if "solver='auto' fits the Nyström" in str(w.message)]
    assert [s.split(":")[0] for s in said] == [
        "KernelRidge",
        "GaussianProcessRegressor",
        "KernelLogisticRegression",
    ]
    assert first.solver_ == gp.solver_ == "nystrom"
    band = first.predict_interval(Xt, alpha=0.1)
    assert abs(np.mean((band[:, 0] <= yt) & (yt <= band[:, 1])) - 0.9) < 0.05
    mean, std = gp.predict(Xt, return_std=True)  # the sparse GP keeps its variance
    assert np.all(std > 0)
    assert abs(np.mean(np.abs(yt - mean) <= 1.645 * np.sqrt(std**2 + gp.noise_)) - 0.9) < 0.05
