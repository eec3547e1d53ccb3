"""GaussianProcessRegressor's per-point noise, constant mean, multi-output ICM and spectral
amplitude/noise fit, each against an independent oracle (scikit-learn, SciPy, NumPy)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import cho_factor, cho_solve
from scipy.optimize import minimize, minimize_scalar
from scipy.stats import multivariate_normal
from sklearn.gaussian_process import GaussianProcessRegressor as SkGPR
from sklearn.gaussian_process.kernels import RBF
from sklearn.gaussian_process.kernels import ConstantKernel as C

from kernelkit import GaussianProcessRegressor
from kernelkit.kernels import Gaussian, Precomputed
from kernelkit.utils._errors import InputError


def _data(n=50, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.sin(2 * X[:, 0]) + 0.3 * X[:, 1] + 0.1 * rng.normal(size=n) + 2.0
    return X, y


def _rbf(A, B, sigma):
    d2 = ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)
    return np.exp(-d2 / (2 * sigma**2))


def _lml(K, y, a, s2, m=0.0):
    """Full-Cholesky log marginal likelihood (NumPy; Rasmussen and Williams eq. 2.30)."""
    return multivariate_normal(np.full(len(y), m), a * K + s2 * np.eye(len(y))).logpdf(y)


@pytest.mark.parametrize("normalize_y", [False, True])
def test_point_noise_equals_sklearn_alpha_array(normalize_y):
    X, y = _data()
    Xt = _data(7, seed=1)[0]
    noise = np.random.default_rng(2).uniform(0.01, 0.3, size=len(y))
    a, sigma = 1.4, 0.9
    ours = GaussianProcessRegressor(
        Gaussian(sigma), amplitude=a, noise=noise, optimizer=None, normalize_y=normalize_y
    ).fit(X, y)
    sk = SkGPR(C(a) * RBF(sigma), alpha=noise, optimizer=None, normalize_y=normalize_y).fit(X, y)
    mean, std = ours.predict(Xt, return_std=True)
    sk_mean, sk_std = sk.predict(Xt, return_std=True)
    np.testing.assert_allclose(mean, sk_mean, atol=1e-8)
    np.testing.assert_allclose(std, sk_std, atol=1e-8)
    np.testing.assert_allclose(
        ours.predict(Xt, return_cov=True)[1], sk.predict(Xt, return_cov=True)[1], atol=1e-8
    )
    assert ours.log_marginal_likelihood_value_ == pytest.approx(
        sk.log_marginal_likelihood_value_, abs=1e-8
    )
    np.testing.assert_array_equal(ours.noise_, noise)
    # a learned amplitude with the noise array fixed: the optimum of the NumPy likelihood
    K = _rbf(X, X, sigma)
    learned = GaussianProcessRegressor(Precomputed(), noise=noise).fit(K, y)
    res = minimize_scalar(
        lambda t: -multivariate_normal(np.zeros(len(y)), np.exp(t) * K + np.diag(noise)).logpdf(y),
        bounds=(-5, 8),
        method="bounded",
        options={"xatol": 1e-10},
    )
    assert np.log(learned.amplitude_) == pytest.approx(res.x, abs=1e-5)


def test_point_noise_errors_are_named():
    X, y = _data(20)
    with pytest.raises(InputError, match=r"noise: .*shape \(20,\)"):
        GaussianProcessRegressor(noise=np.ones(5)).fit(X, y)
    with pytest.raises(InputError, match="noise: expected positive finite"):
        GaussianProcessRegressor(noise=-np.ones(20)).fit(X, y)
    with pytest.raises(InputError, match="solver"):
        GaussianProcessRegressor(noise=np.ones(20), solver="nystrom").fit(X, y)
    gp = GaussianProcessRegressor(noise=np.full(20, 0.1), optimizer=None).fit(X, y)
    with pytest.raises(InputError, match="predict_interval"):
        gp.predict_interval(X[:3])


def test_constant_mean_is_the_likelihood_maximiser():
    X, y = _data()
    Xt = _data(6, seed=3)[0]
    a, sigma, s2 = 0.8, 1.1, 0.05
    gp = GaussianProcessRegressor(
        Gaussian(sigma), amplitude=a, noise=s2, mean="constant", optimizer=None
    ).fit(X, y)
    K = _rbf(X, X, sigma)
    best = minimize_scalar(
        lambda m: -_lml(K, y, a, s2, m),
        bounds=(-10, 10),
        method="bounded",
        options={"xatol": 1e-12},
    )
    assert float(gp.mean_) == pytest.approx(best.x, abs=1e-6)
    assert gp.log_marginal_likelihood_value_ == pytest.approx(-best.fun, abs=1e-8)
    sk = SkGPR(C(a) * RBF(sigma), alpha=s2, optimizer=None).fit(X, y - gp.mean_)
    mean, std = gp.predict(Xt, return_std=True)
    sk_mean, sk_std = sk.predict(Xt, return_std=True)
    np.testing.assert_allclose(mean, sk_mean + gp.mean_, atol=1e-8)
    np.testing.assert_allclose(std, sk_std, atol=1e-8)


def _brute_icm(K, Ks, Kss, B, Y, a, s2):
    """Observed-entry conditional Gaussian of the ICM, from the full Kronecker covariance."""
    p = Y.shape[1]
    full = a * np.kron(K, B)  # index i * p + j
    obs = ~np.isnan(Y.ravel())
    Sig = full[np.ix_(obs, obs)] + s2 * np.eye(obs.sum())
    lml = multivariate_normal(np.zeros(obs.sum()), Sig).logpdf(Y.ravel()[obs])
    cross = a * np.kron(Ks, B)[:, obs]  # rows: test point t * p + task j
    cf = cho_factor(Sig, lower=True)
    mean = (cross @ cho_solve(cf, Y.ravel()[obs])).reshape(len(Ks), p)
    cov = a * np.kron(Kss, B) - cross @ cho_solve(cf, cross.T)
    covs = np.stack([cov[j::p, j::p] for j in range(p)], -1)
    return lml, mean, covs


def _tasks_data(n=30, p=3, seed=0, missing=0.3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    base = np.sin(X[:, 0])[:, None]
    Y = base * np.array([1.0, -0.5, 2.0])[:p] + 0.2 * rng.normal(size=(n, p))
    Y[rng.uniform(size=Y.shape) < missing] = np.nan
    return X, Y


def test_icm_with_identity_equals_independent_gps_on_observed_rows():
    X, Y = _tasks_data()
    Xt = _tasks_data(5, seed=1)[0]
    a, sigma, s2 = 1.3, 0.8, 0.04
    gp = GaussianProcessRegressor(
        Gaussian(sigma), amplitude=a, noise=s2, optimizer=None, task_covariance=np.eye(3)
    ).fit(X, Y)
    mean, std = gp.predict(Xt, return_std=True)
    _, cov = gp.predict(Xt, return_cov=True)
    total = 0.0
    for j in range(3):
        seen = ~np.isnan(Y[:, j])
        sk = SkGPR(C(a) * RBF(sigma), alpha=s2, optimizer=None).fit(X[seen], Y[seen, j])
        m, s = sk.predict(Xt, return_std=True)
        np.testing.assert_allclose(mean[:, j], m, atol=1e-8)
        np.testing.assert_allclose(std[:, j], s, atol=1e-8)
        np.testing.assert_allclose(cov[:, :, j], sk.predict(Xt, return_cov=True)[1], atol=1e-8)
        total += sk.log_marginal_likelihood_value_
    assert gp.log_marginal_likelihood_value_ == pytest.approx(total, abs=1e-8)
    # complete data and B = I: the shared-kernel independent fit (task_covariance=None)
    Yc = np.nan_to_num(Y, nan=0.5)
    kw = {"amplitude": a, "noise": s2, "optimizer": None}
    icm = GaussianProcessRegressor(Gaussian(sigma), task_covariance=np.eye(3), **kw).fit(X, Yc)
    ind = GaussianProcessRegressor(Gaussian(sigma), **kw).fit(X, Yc)
    for u, v in zip(
        icm.predict(Xt, return_std=True), ind.predict(Xt, return_std=True), strict=True
    ):
        np.testing.assert_allclose(u, v, atol=1e-8)


def test_icm_with_a_fixed_task_covariance_equals_the_kronecker_gaussian():
    X, Y = _tasks_data(seed=4)
    Xt = _tasks_data(4, seed=5)[0]
    W = np.array([[1.0], [-0.4], [1.5]])
    B = W @ W.T + np.diag([0.2, 0.1, 0.3])
    a, sigma, s2 = 0.7, 1.2, 0.03
    gp = GaussianProcessRegressor(
        Gaussian(sigma), amplitude=a, noise=s2, optimizer=None, task_covariance=B
    ).fit(X, Y)
    lml, mean, covs = _brute_icm(
        _rbf(X, X, sigma), _rbf(Xt, X, sigma), _rbf(Xt, Xt, sigma), B, Y, a, s2
    )
    assert gp.log_marginal_likelihood_value_ == pytest.approx(lml, abs=1e-8)
    ours_mean, ours_cov = gp.predict(Xt, return_cov=True)
    np.testing.assert_allclose(ours_mean, mean, atol=1e-8)
    np.testing.assert_allclose(ours_cov, covs, atol=1e-8)
    _, std = gp.predict(Xt, return_std=True)
    np.testing.assert_allclose(std, np.sqrt(np.einsum("iij->ij", covs)), atol=1e-8)


def test_learned_icm_is_a_stationary_point_of_the_kronecker_likelihood(tmp_path):
    from kernelkit.io import load, save

    X, Y = _tasks_data(seed=6, missing=0.2)
    K = _rbf(X, X, 1.0)
    gp = GaussianProcessRegressor(
        Precomputed(), task_covariance="icm", task_rank=1, normalize_y=True
    ).fit(K, Y)
    B, s2 = gp.task_covariance_, gp.noise_
    Yn = (Y - np.nanmean(Y, 0)) / np.nanstd(Y, 0)
    assert gp.amplitude_ == 1.0

    def lml(B_, s2_):
        return _brute_icm(K, K[:1], K[:1, :1], B_, Yn, 1.0, s2_)[0]

    top = lml(B, s2)
    assert top == pytest.approx(gp.log_marginal_likelihood_value_, abs=1e-8)
    # the tasks are correlated: the learned B beats independent tasks at the same noise
    assert top > lml(np.diag(np.diag(B)), s2) + 1.0
    for f in (0.98, 1.02):  # no better value nearby along B's scale or the noise
        assert lml(B * f, s2) <= top + 1e-7 and lml(B, s2 * f) <= top + 1e-7
    save(gp, tmp_path / "icm")
    back = load(tmp_path / "icm")
    np.testing.assert_array_equal(gp.predict(K[:4]), back.predict(K[:4]))
    np.testing.assert_array_equal(gp.task_covariance_, back.task_covariance_)


def test_task_covariance_errors_are_named():
    X, Y = _tasks_data(12)
    with pytest.raises(InputError, match=r"task_covariance: expected .* 3 x 3"):
        GaussianProcessRegressor(task_covariance=np.eye(2)).fit(X, Y)
    with pytest.raises(InputError, match="task_covariance: expected a positive semi-definite"):
        GaussianProcessRegressor(task_covariance=-np.eye(3)).fit(X, Y)
    with pytest.raises(InputError, match="y: every entry is missing"):
        GaussianProcessRegressor(task_covariance="icm").fit(X, np.full((12, 3), np.nan))


def _fingerprint_gram(n=120, bits=12, seed=0):
    """A Tanimoto Gram of random bit vectors (NumPy; few bits, so repeated fingerprints make
    the noise identifiable) and targets that depend on the bits."""
    rng = np.random.default_rng(seed)
    F = (rng.uniform(size=(n, bits)) < 0.3).astype(float)
    inter = F @ F.T
    cnt = F.sum(1)
    K = inter / np.maximum(cnt[:, None] + cnt[None, :] - inter, 1.0)
    y = F[:, :8] @ rng.normal(size=8) + 0.3 * rng.normal(size=n) + 1.5
    return K, y


def _scipy_optimum(K, y, constant):
    """argmax over (log a, log s2) of the full-Cholesky likelihood (R&W eq. 2.30, gradient eq.
    5.9), the constant mean profiled out by GLS; SciPy BFGS."""
    n = len(y)

    def neg(t):
        a, s2 = np.exp(t)
        Ky = a * K + s2 * np.eye(n)
        cf = cho_factor(Ky, lower=True)
        r = y
        if constant:
            one = np.ones(n)
            r = y - (one @ cho_solve(cf, y)) / (one @ cho_solve(cf, one))
        al = cho_solve(cf, r)
        Kinv = cho_solve(cf, np.eye(n))
        f = 0.5 * r @ al + np.log(np.diag(cf[0])).sum() + 0.5 * n * np.log(2 * np.pi)
        M = np.outer(al, al) - Kinv
        g = -0.5 * np.array([np.sum(M * (a * K)), s2 * np.trace(M)])
        return f, g

    res = minimize(neg, np.log([1.0, 0.1]), jac=True, method="BFGS", options={"gtol": 1e-11})
    return res.x, -res.fun


@pytest.mark.parametrize("mean", ["zero", "constant"])
def test_spectral_amplitude_noise_fit_equals_the_cholesky_optimum(mean):
    K, y = _fingerprint_gram()
    gp = GaussianProcessRegressor(Precomputed(), mean=mean).fit(K, y)
    t, lml = _scipy_optimum(K, y, mean == "constant")
    np.testing.assert_allclose(np.log([gp.amplitude_, gp.noise_]), t, atol=1e-6)
    assert gp.log_marginal_likelihood_value_ == pytest.approx(lml, abs=1e-8)


def test_tridiagonal_rotation_gives_the_cholesky_likelihood():
    """n >= 1000: the spectral problem through dsytrd / dstemr (no eigenvectors of K formed)."""
    import torch

    from kernelkit.models._gp_eigen import (
        _TRIDIAGONAL_MIN_N,
        spectral_gp,
        spectral_log_marginal_likelihood,
    )

    rng = np.random.default_rng(0)
    n = _TRIDIAGONAL_MIN_N
    X = rng.normal(size=(n, 3))
    K = _rbf(X, X, np.sqrt(2.0))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)
    Y = np.c_[y, np.cos(X[:, 1])]
    problem = spectral_gp(torch.as_tensor(K), torch.as_tensor(Y))
    for a, s2 in [(1.0, 0.1), (0.3, 0.01)]:
        cf = cho_factor(a * K + s2 * np.eye(n), lower=True)
        logdet = 2 * np.log(np.diag(cf[0])).sum()
        ref = -0.5 * np.sum(Y * cho_solve(cf, Y)) - logdet - n * np.log(2 * np.pi)
        lml = float(spectral_log_marginal_likelihood(problem, a, s2))
        assert lml == pytest.approx(ref, abs=1e-8)
