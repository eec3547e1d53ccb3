"""The Nyström ``lam`` path against brute force: dense features, n refits for leave-one-out."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from kernelkit import KernelRidge
from kernelkit.kernels import Gaussian
from kernelkit.models._falkon import nystrom_ridge_onepass, nystrom_system
from kernelkit.models._nystrom_path import nystrom_path
from kernelkit.utils._errors import InputError

LAMS = [1e-6, 1e-4, 1e-2, 1.0]


def _problem(n=70, m=15, c=1, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, 2, generator=g, dtype=torch.float64)
    Y = torch.sin(2 * X[:, :1] + torch.arange(c)) + 0.1 * torch.randn(n, c, generator=g)
    kernel = Gaussian(1.0)
    system = nystrom_system(kernel, X, np.arange(0, n, n // m)[:m], lam=min(LAMS))
    return kernel, X, (Y[:, 0] if c == 1 else Y).to(torch.float64), system


def _dense_features(kernel, X, system):
    K_nm = kernel.block(X, system.op.centres)
    return torch.linalg.solve_triangular(system.factor.L, K_nm.mT, upper=False).mT


@pytest.mark.parametrize("c", [1, 3])
def test_gcv_and_coefficients_equal_their_dense_definitions(c):
    kernel, X, Y, system = _problem(c=c)
    path = nystrom_path(system, Y)
    Phi = _dense_features(kernel, X, system)
    Yc = Y.reshape(len(X), -1)
    n = len(X)
    for lam, gcv in zip(LAMS, path.gcv(LAMS), strict=True):
        S = Phi @ torch.linalg.solve(Phi.mT @ Phi + n * lam * torch.eye(Phi.shape[1]), Phi.mT)
        resid = Yc - S @ Yc
        expected = n * (resid**2).sum(0).mean() / (n - torch.trace(S)) ** 2
        assert float(gcv) == pytest.approx(float(expected), rel=1e-8)
        onepass = nystrom_ridge_onepass(system, Y, lam).coef
        torch.testing.assert_close(path.coef(lam), onepass, rtol=1e-7, atol=1e-9)


def test_loo_equals_n_refits_with_the_same_centres():
    kernel, X, Y, system = _problem(n=40, m=10)
    path = nystrom_path(system, Y)
    Phi = _dense_features(kernel, X, system)
    ours = path.loo(LAMS, kernel, X, system.op.centres, Y)
    n = len(X)
    for lam, value in zip(LAMS, ours, strict=True):
        errors = []
        for i in range(n):
            keep = torch.arange(n) != i
            A, b = Phi[keep], Y[keep]
            # the left-out model keeps the full model's mu = n lam (the shortcut's convention)
            beta = torch.linalg.solve(A.mT @ A + n * lam * torch.eye(A.shape[1]), A.mT @ b)
            errors.append(float((Y[i] - Phi[i] @ beta) ** 2))
        assert value == pytest.approx(np.mean(errors), rel=1e-8)


def _unit_mean_weights(n, seed=1):
    w = torch.rand(n, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * 2
    w[3] = 0.0  # a zero weight: the row counts for nothing
    return w * n / w.sum()


def test_weighted_gcv_and_coefficients_equal_their_dense_definitions():
    kernel, X, Y, system = _problem(c=2)
    n = len(X)
    w = _unit_mean_weights(n)
    path = nystrom_path(system, Y, sample_weight=w)
    Phi = _dense_features(kernel, X, system) * w.sqrt()[:, None]  # W^{1/2} Phi
    Yw = Y * w.sqrt()[:, None]
    for lam, gcv in zip(LAMS, path.gcv(LAMS), strict=True):
        S = Phi @ torch.linalg.solve(Phi.mT @ Phi + n * lam * torch.eye(Phi.shape[1]), Phi.mT)
        resid = Yw - S @ Yw
        expected = n * (resid**2).sum(0).mean() / (n - torch.trace(S)) ** 2
        assert float(gcv) == pytest.approx(float(expected), rel=1e-8)
        onepass = nystrom_ridge_onepass(system, Y, lam, sample_weight=w).coef
        torch.testing.assert_close(path.coef(lam), onepass, rtol=1e-7, atol=1e-9)


def test_weighted_loo_equals_n_weighted_refits():
    kernel, X, Y, system = _problem(n=40, m=10)
    n = len(X)
    w = _unit_mean_weights(n)
    path = nystrom_path(system, Y, sample_weight=w)
    Phi = _dense_features(kernel, X, system)
    ours = path.loo(LAMS, kernel, X, system.op.centres, Y, sample_weight=w)
    for lam, value in zip(LAMS, ours, strict=True):
        errors = []
        for i in range(n):
            wi = w.clone()
            wi[i] = 0.0  # point i left out; the model keeps mu = n lam
            A = Phi.mT * wi
            beta = torch.linalg.solve(A @ Phi + n * lam * torch.eye(Phi.shape[1]), A @ Y)
            errors.append(float(w[i] * (Y[i] - Phi[i] @ beta) ** 2))
        assert value == pytest.approx(np.sum(errors) / float(w.sum()), rel=1e-8)


def test_kernel_ridge_selects_lam_on_the_nystrom_path():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=400)
    grid = [1e-7, 1e-5, 1e-3, 1e-1]
    for cv in ("loo", "gcv"):
        est = KernelRidge(
            Gaussian(1.0),
            lam=grid,
            cv=cv,
            solver="nystrom",
            nystrom_method="onepass",
            n_centers=40,
            random_state=0,
        ).fit(X, y)
        assert est.nystrom_method_ == "onepass" and len(est.center_indices_) == 40
        scores = -est.cv_results_["mean_test_score"]
        assert est.lam_ == grid[int(np.argmin(scores))]
        plain = KernelRidge(
            Gaussian(1.0),
            lam=est.lam_,
            solver="nystrom",
            nystrom_method="onepass",
            n_centers=40,
            random_state=0,
        ).fit(X, y)
        np.testing.assert_allclose(est.predict(X[:20]), plain.predict(X[:20]), atol=1e-8)
    kw = dict(cv="gcv", solver="nystrom", nystrom_method="onepass", n_centers=40, random_state=0)
    auto = KernelRidge(Gaussian(1.0), lam="auto", **kw).fit(X, y)
    at_choice = KernelRidge(Gaussian(1.0), lam=[auto.lam_], **kw).fit(X, y)
    best_on_grid = -auto.cv_results_["mean_test_score"].min()
    assert -at_choice.cv_results_["mean_test_score"][0] <= best_on_grid * (1 + 1e-12)
    with pytest.raises(InputError, match="cv=None, 'loo' or 'gcv'"):
        KernelRidge(
            Gaussian(1.0), lam=grid, cv=3, solver="nystrom", nystrom_method="onepass", n_centers=40
        ).fit(X, y)
