"""The closed-form ``lam`` path of exact KRR against brute-force refits and definitions."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.kernel_ridge import KernelRidge as SkKernelRidge
from sklearn.model_selection import KFold

from kernelkit.kernels import Gaussian
from kernelkit.models._ridge_path import (
    check_lam_grid,
    duplicate_groups,
    group_blocks,
    kfold_path_errors,
    ridge_spectrum,
)
from kernelkit.utils._errors import InputError


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
    for cv in ("loo", "gcv"):  # its gradient in lam (the log-lam refinement's)
        t = torch.tensor(lam, dtype=torch.float64, requires_grad=True)
        value = spec.criterion(t, cv)
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


def _planted(n_distinct: int = 240, seed: int = 4):
    """``n_distinct`` rows, 40 of them twice and 10 three times (n = 300), shuffled."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_distinct, 3))
    X = np.concatenate([X, X[:40], X[40:50], X[40:50]])
    perm = rng.permutation(len(X))
    X = X[perm]
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.3 * rng.normal(size=len(X))
    labels = np.unique(X, axis=0, return_inverse=True)[1].ravel()
    K = Gaussian(sigma=1.5)(torch.as_tensor(X))
    return K, torch.as_tensor(y), labels, rng


def _brute_group_loo(K, y, lam, labels, w=None):
    """Refit without each whole group at the same penalty ``n lam`` (scikit-learn's KRR)."""
    n = K.shape[0]
    Kn, yn = K.numpy(), y.numpy()
    out = np.empty_like(yn)
    for g in np.unique(labels):
        out_g = labels == g
        keep = ~out_g
        model = SkKernelRidge(alpha=n * lam, kernel="precomputed")
        model.fit(Kn[np.ix_(keep, keep)], yn[keep], sample_weight=None if w is None else w[keep])
        out[out_g] = yn[out_g] - model.predict(Kn[np.ix_(out_g, keep)])
    return out


def test_duplicate_groups_find_planted_duplicates():
    K, _, labels, _ = _planted()
    found = duplicate_groups(K)
    assert len(np.unique(found)) == 240
    # same partition: each found group is one true group
    assert len(np.unique(found * 1000 + labels)) == 240
    distinct = Gaussian(sigma=1.5)(torch.as_tensor(np.random.default_rng(0).normal(size=(5, 3))))
    assert len(np.unique(duplicate_groups(distinct))) == 5
    blocks = group_blocks(found)
    assert sorted(b.shape[1] for b in blocks) == [2, 3]
    assert sum(b.numel() for b in blocks) == 2 * 40 + 3 * 10


def test_duplicate_groups_screen_keeps_every_twin_of_a_varying_diagonal():
    """A linear Gram (diagonal ``|x|^2`` varies): ``x`` and a copy of ``x`` are twins,
    ``x`` and ``2 x`` are not; the labels equal a pair-by-pair check of the definition."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 4)) * rng.uniform(0.1, 5.0, size=(30, 1))
    X = np.vstack([X, X[:5], 2.0 * X[5:10]])
    K = torch.as_tensor(X @ X.T)
    found = duplicate_groups(K)
    d = np.diag(X @ X.T)
    tol = np.finfo(float).eps ** (2 / 3)
    twin = d[:, None] + d[None, :] - 2 * (X @ X.T) <= tol * np.maximum(d[:, None], d[None, :])
    assert np.array_equal(found[:, None] == found[None, :], twin)
    assert len(np.unique(found)) == 35


@pytest.mark.parametrize("lam", [1e-5, 1e-3, 1e-1])
def test_group_loo_residuals_equal_brute_force_group_refits(lam):
    K, y, labels, _ = _planted()
    spec = ridge_spectrum(K, y, groups=duplicate_groups(K))
    fit = spec.fit(lam)
    brute = _brute_group_loo(K, y, lam, labels)
    np.testing.assert_allclose(fit.loo_residuals.numpy(), brute, rtol=0, atol=1e-8)
    assert float(spec.criterion(lam, "loo")) == pytest.approx(np.mean(brute**2), rel=1e-10)
    plain = ridge_spectrum(K, y).fit(lam).loo_residuals.numpy()
    assert np.abs(plain - brute).max() > 1e-3  # the plain LOO is not the group refit


def test_weighted_multi_output_group_loo_equals_brute_force_group_refits():
    K, y, labels, rng = _planted(seed=5)
    Y = torch.stack([y, y + torch.as_tensor(rng.normal(size=len(y)))], 1)
    w = rng.uniform(0.2, 3.0, size=len(y))
    twin = np.flatnonzero(labels == labels[np.bincount(labels)[labels] == 2][0])
    w[twin[0]] = 0.0  # a zero-weight twin: the group's left-out prediction
    spec = ridge_spectrum(K, Y, sample_weight=torch.as_tensor(w), groups=duplicate_groups(K))
    fit = spec.fit(1e-3)
    for j in range(2):
        brute = _brute_group_loo(K, Y[:, j], 1e-3, labels, w)
        np.testing.assert_allclose(fit.loo_residuals[:, j].numpy(), brute, rtol=0, atol=1e-8)


def test_distinct_rows_give_the_plain_loo_exactly():
    K, y, _ = _problem(150, seed=6)
    labels = duplicate_groups(K)
    assert len(np.unique(labels)) == 150 and group_blocks(labels) == ()
    grouped, plain = ridge_spectrum(K, y, groups=labels), ridge_spectrum(K, y)
    for lam in (1e-6, 1e-3):
        assert torch.equal(grouped.fit(lam).loo_residuals, plain.fit(lam).loo_residuals)
        assert float(grouped.criterion(lam)) == float(plain.criterion(lam))
    np.testing.assert_allclose(
        grouped.fit(1e-3).loo_residuals.numpy(), _brute_loo(K, y, 1e-3), rtol=0, atol=1e-8
    )


@pytest.mark.parametrize("outputs", [0, 3])
@pytest.mark.parametrize("weighted", [False, True])
def test_the_batched_path_equals_the_criterion_at_each_lam(outputs, weighted):
    """``RidgeSpectrum.path`` (two products for the whole grid) against the hat-matrix
    definitions of LOO and GCV at each ``lam`` (checked above for ``criterion``)."""
    K, y, rng = _problem(80, seed=4, outputs=outputs)
    w = torch.as_tensor(rng.uniform(0.5, 2.0, size=80)) if weighted else None
    spec = ridge_spectrum(K, y, sample_weight=w)
    grid = np.logspace(-9, -1, 17)
    for cv in ("loo", "gcv"):
        one_by_one = np.array([float(spec.criterion(v, cv)) for v in grid])
        np.testing.assert_allclose(spec.path(grid, cv), one_by_one, rtol=1e-10)


def test_one_lam_lattice_holds_every_auto_grid():
    # the grids of lam="auto" are windows of one lattice (half decades 1e-9 .. 10); the
    # options move them all, a coarser window is a sub-lattice
    from kernelkit import config_context
    from kernelkit.estimators._autoencoder_lam import ae_lam_grid
    from kernelkit.models._ckn_head import lam_cv_grid
    from kernelkit.models._logistic_path import relative_grid
    from kernelkit.models._ridge_path import lam_grid

    np.testing.assert_array_equal(lam_grid(), np.logspace(-9, 1, 21))
    np.testing.assert_array_equal(relative_grid(), np.logspace(-1, -9, 17))
    np.testing.assert_allclose(lam_cv_grid(), [10.0**e for e in range(-7, 0)], rtol=1e-15)
    assert set(lam_cv_grid()) <= set(lam_grid())
    assert ae_lam_grid() == (1e-5, 1e-4, 1e-3, 1e-2, 1e-1)
    with config_context(lam_grid_low=1e-4, lam_grid_per_decade=1):
        np.testing.assert_allclose(lam_grid(), np.logspace(-4, 1, 6))
        np.testing.assert_allclose(relative_grid(), [1e-1, 1e-2, 1e-3, 1e-4])
    with (
        config_context(lam_grid_high=1e-12, lam_grid_low=1e-13),
        pytest.raises(InputError, match="no value in"),
    ):
        lam_grid(1e-7, 1e-1)


@pytest.mark.parametrize("weighted", [False, True])
def test_the_batched_path_with_twin_groups_is_the_brute_force_group_loo(weighted):
    """``path`` forms and solves the blocks ``(B_mu)_GG`` for every ``lam`` at once: the
    mean squared leave-group-out residual of scikit-learn refits without each whole group."""
    K, y, labels, rng = _planted(60)
    w = rng.uniform(0.5, 2.0, size=len(y)) if weighted else None
    spec = ridge_spectrum(
        K, y, sample_weight=None if w is None else torch.as_tensor(w), groups=labels
    )
    grid = np.array([1e-6, 1e-3, 1e-1])
    brute = []
    for lam in grid:
        r = _brute_group_loo(K, y, lam, labels, w)
        weights = np.ones(len(y)) if w is None else w
        brute.append(float((weights * r**2).sum() / weights.sum()))
    np.testing.assert_allclose(spec.path(grid), brute, rtol=1e-8)
