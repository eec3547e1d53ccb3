"""``KernelLogisticRegression(solver="nystrom" / "auto")`` with ``nystrom_method="pcg"`` /
``"onepass"``: Falkon's Newton-PCG and the one-pass Newton behind the KLR estimator."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.kernel_approximation import Nystroem
from sklearn.linear_model import LogisticRegression

from kernelkit import KernelLogisticRegression
from kernelkit.kernels import Gaussian


@pytest.fixture
def blobs():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(240, 3))
    y = np.where(np.sin(2 * X[:, 0]) + X[:, 1] > 0, "pos", "neg")
    return X, y


@pytest.mark.parametrize("method", ["pcg", "onepass"])
def test_all_points_as_centres_equal_the_exact_fit(blobs, method):
    X, y = blobs
    exact = KernelLogisticRegression(Gaussian(1.5), lam=1e-2, tol=1e-12, solver="exact").fit(X, y)
    nystrom = KernelLogisticRegression(
        Gaussian(1.5),
        lam=1e-2,
        solver="nystrom",
        nystrom_method=method,
        n_centers=len(X),
        tol=1e-12,
        random_state=0,
    ).fit(X, y)
    assert nystrom.solver_ == "nystrom" and nystrom.nystrom_method_ == method
    np.testing.assert_array_equal(np.sort(nystrom.center_indices_), np.arange(len(X)))
    np.testing.assert_allclose(nystrom.predict_proba(X), exact.predict_proba(X), rtol=0, atol=1e-6)
    assert list(nystrom.classes_) == ["neg", "pos"]


@pytest.mark.parametrize("method", ["pcg", "onepass"])
def test_matches_logistic_regression_on_the_same_nystrom_features(blobs, method):
    X, y = blobs
    lam, m = 1e-2, 40
    model = KernelLogisticRegression(
        Gaussian(1.5),
        lam=lam,
        solver="nystrom",
        nystrom_method=method,
        n_centers=m,
        tol=1e-12,
        random_state=3,
    ).fit(X, y)
    centres = X[model.center_indices_]
    # f = K_nC alpha with penalty alpha^T K_CC alpha = ||w||^2 for the features Z = K_nC K_CC^-1/2
    features = Nystroem(kernel="rbf", gamma=1 / (2 * 1.5**2), n_components=m)
    features.fit(centres)
    Z = features.transform(X)
    reference = LogisticRegression(C=1 / (2 * len(X) * lam), fit_intercept=False, tol=1e-12)
    reference.fit(Z, y)
    np.testing.assert_allclose(
        model.predict_proba(X), reference.predict_proba(Z), rtol=0, atol=1e-5
    )


def test_multiclass_one_vs_rest_and_named_errors(blobs):
    X, _ = blobs
    y = np.digitize(X[:, 0], [-0.5, 0.5])
    model = KernelLogisticRegression(
        Gaussian(1.5),
        lam=5e-3,
        solver="nystrom",
        nystrom_method="pcg",
        n_centers=60,
        random_state=0,
    ).fit(X, y)
    proba = model.predict_proba(X)
    assert proba.shape == (len(X), 3)
    np.testing.assert_allclose(proba.sum(1), 1.0)
    assert (model.predict(X) == y).mean() > 0.9
    for method in ("pcg", "onepass"):  # more centres than points: the exact fit, warned
        with pytest.warns(UserWarning, match="is more than the"):
            big = KernelLogisticRegression(
                Gaussian(1.0), solver="nystrom", nystrom_method=method, n_centers=len(X) + 1
            )
            big.fit(X, y)
        assert big.solver_ == "exact"


def test_auto_records_its_choice_and_streams_predictions(blobs):
    X, y = blobs
    small = KernelLogisticRegression(Gaussian(1.5), lam=1e-2).fit(X, y)
    assert small.solver_ == "exact"  # n <= n_centers
    rng = np.random.default_rng(1)
    Xl = rng.normal(size=(6000, 3))
    yl = (Xl[:, 0] + 0.3 * rng.normal(size=6000) > 0).astype(int)
    kw = dict(lam=1e-3, n_centers=100, tol=1e-6, random_state=0)
    auto = KernelLogisticRegression(Gaussian(1.5), **kw).fit(Xl, yl)
    assert auto.solver_ == "nystrom" and auto.nystrom_method_ == "onepass"
    pcg = KernelLogisticRegression(Gaussian(1.5), solver="nystrom", nystrom_method="pcg", **kw).fit(
        Xl, yl
    )
    np.testing.assert_allclose(
        auto.decision_function(Xl[:500]), pcg.decision_function(Xl[:500]), rtol=0, atol=1e-3
    )
