"""The closed-form ``lam`` path of exact KRR against brute-force refits and definitions."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.kernel_ridge import KernelRidge as SkKernelRidge
from sklearn.model_selection import KFold

from kernelkit.kernels import Gaussian
from kernelkit.models.ridge_path import (
    check_lam_grid,
    kfold_path_errors,
    ridge_criterion,
    ridge_spectrum,
)
from kernelkit.utils.errors import InputError


def _problem(n: int, seed: int = 0, outputs: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    f = np.sin(X[:, 0]) + 0.5 * X[:, 1] ** 2
    y = f + 0.3 * rng.normal(size=n)
    if outputs:
        y = np.stack([y + k * rng.normal(size=n) for k in range(outputs)], 1)
    K = Gaussian(sigma=1.5)(torch.as_tensor(X))
    return K, torch.as_tensor(y), rng


def _brute_loo(K, y, lam, w=None):
    """Refit without each point at the same penalty ``n lam`` (scikit-learn's KRR)."""
    n = K.shape[0]
    Kn, yn = K.numpy(), y.numpy()
    out = np.empty_like(yn)
    for i in range(n):
        keep = np.arange(n) != i
        model = SkKernelRidge(alpha=n * lam, kernel="precomputed")
        model.fit(Kn[np.ix_(keep, keep)], yn[keep], sample_weight=None if w is None else w[keep])
        out[i] = yn[i] - model.predict(Kn[i : i + 1, keep])[0]
    return out


def test_loo_residuals_equal_brute_force_refits():
    K, y, _ = _problem(200)
    lam = 1e-3
    fit = ridge_spectrum(K, y).fit(lam)
    np.testing.assert_allclose(fit.loo_residuals.numpy(), _brute_loo(K, y, lam), rtol=0, atol=1e-8)
    sk = SkKernelRidge(alpha=200 * lam, kernel="precomputed").fit(K.numpy(), y.numpy())
    np.testing.assert_allclose(fit.coef.numpy(), sk.dual_coef_, rtol=0, atol=1e-8)


@pytest.mark.slow
def test_loo_residuals_equal_brute_force_refits_n500():
    K, y, _ = _problem(500, seed=3)
    fit = ridge_spectrum(K, y).fit(1e-3)
    np.testing.assert_allclose(fit.loo_residuals.numpy(), _brute_loo(K, y, 1e-3), rtol=0, atol=1e-8)


def test_weighted_loo_residuals_equal_brute_force_refits():
    K, y, rng = _problem(120, seed=1)
    w = rng.uniform(0.2, 3.0, size=120)
    w[5] = 0.0
    spec = ridge_spectrum(K, y, sample_weight=torch.as_tensor(w))
    fit = spec.fit(1e-3)
    np.testing.assert_allclose(
        fit.loo_residuals.numpy(), _brute_loo(K, y, 1e-3, w), rtol=0, atol=1e-8
    )
    sk = SkKernelRidge(alpha=120 * 1e-3, kernel="precomputed").fit(K.numpy(), y.numpy(), w)
    np.testing.assert_allclose(fit.coef.numpy(), sk.dual_coef_, rtol=0, atol=1e-8)
    loo = (w * fit.loo_residuals.numpy() ** 2).sum() / w.sum()
    assert float(spec.criterion(1e-3, "loo")) == pytest.approx(loo, rel=1e-10)


@pytest.mark.parametrize("outputs", [0, 2])
def test_gcv_and_loo_equal_their_definitions(outputs):
    K, y, _ = _problem(150, seed=2, outputs=outputs)
    n, lam = 150, 3e-3
    spec = ridge_spectrum(K, y)
    H = K.numpy() @ np.linalg.inv(K.numpy() + n * lam * np.eye(n))  # hat matrix
    resid = y.numpy() - H @ y.numpy()
    gcv = (resid**2).mean() / (1 - np.trace(H) / n) ** 2
    assert float(spec.criterion(lam, "gcv")) == pytest.approx(gcv, rel=1e-9)
    lev = np.diag(H) if resid.ndim == 1 else np.diag(H)[:, None]
    loo = ((resid / (1 - lev)) ** 2).mean()
    assert float(spec.criterion(lam, "loo")) == pytest.approx(loo, rel=1e-9)
    for cv in ("loo", "gcv"):  # the Cholesky route and its gradient in lam
        t = torch.tensor(lam, dtype=torch.float64, requires_grad=True)
        value = ridge_criterion(K, y, t, cv)
        assert float(value.detach()) == pytest.approx(float(spec.criterion(lam, cv)), rel=1e-9)
        (grad,) = torch.autograd.grad(value, t)
        h = 1e-6 * lam
        fd = (float(spec.criterion(lam + h, cv)) - float(spec.criterion(lam - h, cv))) / (2 * h)
        assert float(grad) == pytest.approx(fd, rel=1e-5)


def test_kfold_path_errors_equal_refits():
    K, y, rng = _problem(90, seed=4)
    w = rng.uniform(0.5, 2.0, size=90)
    lams = np.array([1e-3, 1e-1])
    folds = list(KFold(3, shuffle=True, random_state=0).split(np.zeros(90)))
    errors = kfold_path_errors(K, y, lams, folds, sample_weight=torch.as_tensor(w))
    Kn, yn = K.numpy(), y.numpy()
    for j, (tr, te) in enumerate(folds):
        for k, lam in enumerate(lams):
            # the fold's weights at mean 1: alpha = sum(w_train) lam
            sk = SkKernelRidge(alpha=w[tr].sum() * lam, kernel="precomputed")
            sk.fit(Kn[np.ix_(tr, tr)], yn[tr], sample_weight=w[tr])
            mse = np.average((yn[te] - sk.predict(Kn[np.ix_(te, tr)])) ** 2, weights=w[te])
            assert errors[j, k] == pytest.approx(mse, rel=1e-9)


@pytest.mark.parametrize("bad", [[], [0.1, 0.0], [np.nan], "x", [[1e-3, -1]]])
def test_lam_grid_errors_name_the_argument(bad):
    with pytest.raises(InputError, match="lam"):
        check_lam_grid(bad)
