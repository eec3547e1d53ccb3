"""GaussianProcessRegressor against scikit-learn's (its scikit-learn conformance runs with every
estimator in ``tests/test_common.py``)."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_diabetes
from sklearn.gaussian_process import GaussianProcessRegressor as SkGPR
from sklearn.gaussian_process.kernels import RBF, WhiteKernel
from sklearn.gaussian_process.kernels import ConstantKernel as C

from kernelkit import GaussianProcessRegressor, KernelRidge
from kernelkit.kernels import Gaussian
from kernelkit.utils._errors import InputError, ParameterError

ESOL = Path(__file__).resolve().parents[3] / "shared" / "data" / "esol" / "ESOL.csv"


def _synthetic(n=60, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.2 * rng.normal(size=n) + 3.0
    return X, y


@pytest.mark.parametrize("normalize_y", [False, True])
def test_fixed_hyperparameters_equal_sklearn(normalize_y):
    X, y = _synthetic()
    Xt = _synthetic(9, seed=1)[0]
    a, sigma, noise = 1.7, 1.3, 0.05
    ours = GaussianProcessRegressor(
        Gaussian(sigma=sigma), amplitude=a, noise=noise, optimizer=None, normalize_y=normalize_y
    ).fit(X, y)
    sk = SkGPR(C(a) * RBF(sigma), alpha=noise, optimizer=None, normalize_y=normalize_y).fit(X, y)
    white = SkGPR(
        C(a) * RBF(sigma) + WhiteKernel(noise), alpha=0.0, optimizer=None, normalize_y=normalize_y
    ).fit(X, y)
    assert ours.log_marginal_likelihood_value_ == pytest.approx(
        sk.log_marginal_likelihood_value_, abs=1e-8
    )
    assert ours.log_marginal_likelihood_value_ == pytest.approx(
        white.log_marginal_likelihood_value_, abs=1e-8
    )
    mean, std = ours.predict(Xt, return_std=True)
    sk_mean, sk_std = sk.predict(Xt, return_std=True)
    np.testing.assert_allclose(mean, sk_mean, atol=1e-8)
    np.testing.assert_allclose(std, sk_std, atol=1e-8)
    w_mean, w_std = white.predict(Xt, return_std=True)
    np.testing.assert_allclose(mean, w_mean, atol=1e-8)
    scale = y.std() if normalize_y else 1.0
    np.testing.assert_allclose(np.sqrt(std**2 + noise * scale**2), w_std, atol=1e-8)
    _, cov = ours.predict(Xt, return_cov=True)
    np.testing.assert_allclose(cov, sk.predict(Xt, return_cov=True)[1], atol=1e-8)
    ridge = KernelRidge(Gaussian(sigma=sigma), lam=noise / (a * len(y))).fit(X, y)
    if not normalize_y:  # the posterior mean is KRR with n lam = noise / amplitude
        np.testing.assert_allclose(mean, ridge.predict(Xt), atol=1e-8)


def _esol_descriptors(n=250):
    if not ESOL.exists():
        pytest.skip(f"shared data not found at {ESOL}")
    with ESOL.open() as fh:
        rows = list(csv.reader(fh))
    data = np.array([[float(v) for v in r[2:9]] for r in rows[1 : n + 1]])
    X, y = data[:, :6], data[:, 6]
    return (X - X.mean(0)) / X.std(0), y


def _diabetes():
    X, y = load_diabetes(return_X_y=True)
    return X[:250] / X.std(0), y[:250]


@pytest.mark.parametrize("dataset", ["synthetic", "diabetes", "esol_descriptors"])
def test_optimised_likelihood_reaches_sklearn(dataset):
    X, y = {
        "synthetic": lambda: _synthetic(120),
        "diabetes": _diabetes,
        "esol_descriptors": _esol_descriptors,
    }[dataset]()
    sk = SkGPR(
        C(1.0) * RBF(1.0) + WhiteKernel(0.1),
        normalize_y=True,
        n_restarts_optimizer=2,
        random_state=0,
    ).fit(X, y)
    ours = GaussianProcessRegressor(
        Gaussian(sigma=1.0), normalize_y=True, n_restarts_optimizer=2, random_state=0
    ).fit(X, y)
    assert ours.log_marginal_likelihood_value_ >= sk.log_marginal_likelihood_value_ - 1e-6
    assert ours.kernel_.kernel.sigma > 0 and ours.noise_ > 0


def test_sample_y_follows_the_posterior():
    X, y = _synthetic(30)
    Xt = _synthetic(4, seed=2)[0]
    gp = GaussianProcessRegressor(Gaussian(sigma=1.0), amplitude=1.0, noise=0.1, optimizer=None)
    gp.fit(X, y)
    mean, cov = gp.predict(Xt, return_cov=True)
    draws = gp.sample_y(Xt, n_samples=20000, random_state=0)
    assert draws.shape == (4, 20000)
    sd = np.sqrt(np.diag(cov))
    assert np.all(np.abs(draws.mean(1) - mean) < 5 * sd / np.sqrt(20000))
    np.testing.assert_allclose(np.cov(draws), cov, atol=0.05 * cov.diagonal().max())


def test_gp_intervals_cover():
    X, y = _synthetic(1200, seed=7)
    gp = GaussianProcessRegressor(Gaussian(sigma=1.0), normalize_y=True, random_state=0)
    gp.fit(X[:250], y[:250])
    for method in ("jackknife+", "split"):
        iv = gp.predict_interval(X[250:], alpha=0.1, method=method)
        cover = np.mean((iv[:, 0] <= y[250:]) & (y[250:] <= iv[:, 1]))
        assert 0.85 <= cover <= 0.95, (method, cover)  # 950 test points: +-0.05 is ~5 sd


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"noise": -1.0}, "noise"),
        ({"noise": "learn"}, "noise"),
        ({"amplitude": 0.0}, "amplitude"),
        ({"optimizer": "adam"}, "optimizer"),
        ({"n_restarts_optimizer": -1}, "n_restarts_optimizer"),
        ({"normalize_y": "yes"}, "normalize_y"),
    ],
)
def test_bad_parameters_are_named(params, match):
    X, y = _synthetic(10)
    with pytest.raises(ParameterError, match=match):
        GaussianProcessRegressor(**params).fit(X, y)


def test_bad_prediction_arguments_are_named():
    X, y = _synthetic(10)
    gp = GaussianProcessRegressor(optimizer=None).fit(X, y)
    with pytest.raises(InputError, match="return_std, return_cov"):
        gp.predict(X, return_std=True, return_cov=True)
    with pytest.raises(InputError, match="n_samples"):
        gp.sample_y(X, n_samples=0)


def test_fingerprint_gp_learns_amplitude_and_noise_at_a_stationary_point():
    pytest.importorskip("rdkit")
    from kernelkit.data._molecule_datasets import load_esol
    from kernelkit.kernels import Precomputed, Tanimoto

    esol = load_esol()
    smiles, y = esol.smiles[:80], esol.target[:80]
    gp = GaussianProcessRegressor(Tanimoto(), normalize_y=True).fit(smiles, y)
    K = Tanimoto()(smiles).numpy()
    same = GaussianProcessRegressor(Precomputed(), normalize_y=True).fit(K, y)
    assert gp.log_marginal_likelihood_value_ == pytest.approx(
        same.log_marginal_likelihood_value_, abs=1e-6
    )
    for amp, noise in [(1.02, 1.0), (0.98, 1.0), (1.0, 1.02), (1.0, 0.98)]:
        moved = GaussianProcessRegressor(
            Tanimoto(),
            amplitude=gp.amplitude_ * amp,
            noise=gp.noise_ * noise,
            optimizer=None,
            normalize_y=True,
        ).fit(smiles, y)
        assert moved.log_marginal_likelihood_value_ <= gp.log_marginal_likelihood_value_ + 1e-9


def test_save_and_load_round_trip(tmp_path):
    from kernelkit.io import load, save

    X, y = _synthetic(40)
    gp = GaussianProcessRegressor(normalize_y=True).fit(X, y)
    save(gp, tmp_path / "gp")
    back = load(tmp_path / "gp")
    ours, theirs = gp.predict(X[:5], return_std=True), back.predict(X[:5], return_std=True)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(gp.predict_interval(X[:5]), back.predict_interval(X[:5]))
