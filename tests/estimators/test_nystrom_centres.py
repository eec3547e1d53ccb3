"""One Nyström vocabulary and one behaviour for every estimator that approximates by centres.

Every Nyström-using estimator takes ``n_centers`` and ``centers=`` (a method name or the
centres as points), chooses its centres through the one dispatcher
(:func:`kernelkit.gram._nystrom.centre_indices`), and with more centres than points fits its
exact method with the one warning.  Oracles: the dispatcher itself for the chosen rows, the
given points, and the exact estimators (brute-force Gram) for ``n_centers > n``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from kernelkit import (
    InvariantEmbedding,
    KernelAutoencoder,
    KernelKMeans,
    KernelLogisticRegression,
    KernelPCA,
    KernelRidge,
    NystromFeatures,
)
from kernelkit.gram._centres import weighted_centres
from kernelkit.gram._nystrom import CENTRE_METHODS, centre_indices
from kernelkit.kernels import Gaussian, Linear

KERNEL = Gaussian(1.5)
N, M = 60, 12


def _data(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, 3))
    return X, X[:, 0] + np.sin(X[:, 1]), (X[:, 0] > 0).astype(int)


def _krr(**kw):
    return KernelRidge(
        KERNEL, lam=1e-3, solver="nystrom", nystrom_method="onepass", random_state=0, **kw
    )


def _klr(**kw):
    return KernelLogisticRegression(
        KERNEL, lam=1e-3, solver="nystrom", nystrom_method="onepass", random_state=0, **kw
    )


def _features(**kw):
    return NystromFeatures(KERNEL, random_state=0, **kw)


def _kae(**kw):
    return KernelAutoencoder((2,), init="random", max_iter=3, lam=1e-3, random_state=0, **kw)


def _inv(**kw):
    return InvariantEmbedding(KERNEL, random_state=0, **kw)


def _kpca(**kw):
    return KernelPCA(KERNEL, 3, solver="nystrom", eigen_solver="full", random_state=0, **kw)


def _kkmeans(**kw):
    return KernelKMeans(3, KERNEL, solver="nystrom", random_state=0, **kw)


# estimator factory, the kernel its centres are chosen with, fit target, fitted centres,
# their indices among the training points
CASES = {
    "KernelRidge": (_krr, KERNEL, "reg", lambda e: e.X_fit_, lambda e: e.center_indices_),
    "KernelLogisticRegression": (
        _klr,
        KERNEL,
        "clf",
        lambda e: e.X_fit_,
        lambda e: e.center_indices_,
    ),
    "NystromFeatures": (
        _features,
        KERNEL,
        None,
        lambda e: e.map_.centres,
        lambda e: e.component_indices_,
    ),
    "KernelAutoencoder": (_kae, Linear(), None, None, lambda e: e.landmark_indices_),
    "InvariantEmbedding": (_inv, KERNEL, None, lambda e: e.landmarks_, None),
    "KernelPCA": (_kpca, KERNEL, None, lambda e: e._nystrom.codes.centres, None),
    "KernelKMeans": (_kkmeans, KERNEL, None, lambda e: e._nystrom.centres, None),
}


def _fit(name, **kw):
    make, _, target, _, _ = CASES[name]
    X, y, labels = _data()
    est = make(**kw)
    return est.fit(X, {"reg": y, "clf": labels, None: None}[target]), X


def _rows(value):
    return np.asarray(value.detach().cpu() if isinstance(value, torch.Tensor) else value)


WEIGHTED = {"KernelRidge", "KernelLogisticRegression"}
"""Estimators whose ``"uniform"`` centres are drawn among distinct points in proportion to
their weight (``choose_centres(distinct=True)``), so that weights equal repeated rows."""


@pytest.mark.parametrize("method", CENTRE_METHODS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_each_centre_method_goes_through_the_one_dispatcher(name, method):
    est, X = _fit(name, n_centers=M, centers=method)
    _, kernel, _, centres, indices = CASES[name]
    expected = centre_indices(kernel, torch.as_tensor(X), M, method, 0)
    if method == "uniform" and name in WEIGHTED:  # the distinct-point draw of choose_centres
        expected = weighted_centres(torch.as_tensor(X), M, None, 0)
    chosen = expected if indices is None else indices(est)  # greedy: in pivot order
    np.testing.assert_array_equal(np.sort(chosen), expected)
    if centres is not None:
        np.testing.assert_allclose(_rows(centres(est)), X[chosen], rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", sorted(CASES))
def test_given_centres_are_used_as_given(name):
    points = np.random.default_rng(7).normal(size=(9, 3))  # not training rows
    est, _ = _fit(name, n_centers=M, centers=points)
    _, _, _, centres, indices = CASES[name]
    if centres is not None:
        np.testing.assert_allclose(_rows(centres(est)), points, rtol=0, atol=1e-12)
    if indices is not None and indices(est) is not None:
        np.testing.assert_array_equal(indices(est), np.full(9, -1))


@pytest.mark.parametrize("name", sorted(CASES))
def test_more_centres_than_points_fit_the_exact_method_with_the_one_warning(name):
    with pytest.warns(UserWarning, match=rf"n_centers={N + 5} is more than the {N} training"):
        est, X = _fit(name, n_centers=N + 5)
    if name == "KernelRidge":
        assert est.solver_ == "exact"
        exact = KernelRidge(KERNEL, lam=1e-3, solver="exact").fit(X, _data()[1])
        np.testing.assert_allclose(est.predict(X), exact.predict(X), rtol=1e-10, atol=1e-12)
    elif name == "KernelLogisticRegression":
        assert est.solver_ == "exact"
        labels = _data()[2]
        exact = KernelLogisticRegression(KERNEL, lam=1e-3, solver="exact").fit(X, labels)
        np.testing.assert_allclose(
            est.decision_function(X), exact.decision_function(X), rtol=1e-10, atol=1e-12
        )
    elif name == "NystromFeatures":  # every point a centre: Z Z^T is the Gram
        Z = est.transform(X)
        np.testing.assert_allclose(Z @ Z.T, KERNEL(X).numpy(), atol=1e-8)
    elif name == "KernelAutoencoder":
        assert est.landmark_indices_ is None
    elif name == "KernelPCA":
        assert est.solver_ == "exact"
        exact = KernelPCA(KERNEL, 3, eigen_solver="full").fit(X)
        np.testing.assert_allclose(est.transform(X), exact.transform(X), rtol=1e-10, atol=1e-12)
    elif name == "KernelKMeans":
        assert est.solver_ == "exact"
        exact = KernelKMeans(3, KERNEL, random_state=0).fit(X)
        np.testing.assert_array_equal(est.labels_, exact.labels_)
    else:
        np.testing.assert_array_equal(_rows(est.landmarks_), X)


@pytest.mark.parametrize(
    ("name", "old", "new"),
    [
        ("NystromFeatures", {"n_components": M, "method": "greedy"}, {"centers": "greedy"}),
        (
            "KernelAutoencoder",
            {"landmarks": M, "landmark_method": "kmeans"},
            {"centers": "kmeans++"},
        ),
        ("InvariantEmbedding", {"n_landmarks": M}, {}),
    ],
)
def test_old_names_are_deprecated_aliases(name, old, new):
    with pytest.warns(FutureWarning, match="deprecated"):
        est_old, X = _fit(name, **old)
    est_new, _ = _fit(name, n_centers=M, **new)
    np.testing.assert_allclose(
        np.asarray(est_old.transform(X)), np.asarray(est_new.transform(X)), rtol=1e-12, atol=1e-12
    )


def test_given_centres_give_the_same_solution_by_pcg_and_by_one_pass():
    """Given centres have no training index (no centre weights for Falkon's
    preconditioner): PCG still reaches the one-pass solution, weighted ridge and logistic."""
    X, y, labels = _data()
    rng = np.random.default_rng(3)
    C, w = rng.normal(size=(15, 3)), rng.uniform(0.5, 2.0, N)
    kw = {"lam": 1e-3, "centers": C}
    pcg = KernelRidge(KERNEL, solver="nystrom", nystrom_method="pcg", tol=1e-12, max_iter=500, **kw)
    one = KernelRidge(KERNEL, solver="nystrom", nystrom_method="onepass", **kw)
    np.testing.assert_allclose(
        pcg.fit(X, y, sample_weight=w).predict(X),
        one.fit(X, y, sample_weight=w).predict(X),
        atol=1e-8,
    )
    pcg = KernelLogisticRegression(
        KERNEL, solver="nystrom", nystrom_method="pcg", tol=1e-12, **kw
    ).fit(X, labels)
    one = KernelLogisticRegression(
        KERNEL, solver="nystrom", nystrom_method="onepass", tol=1e-12, **kw
    ).fit(X, labels)
    np.testing.assert_allclose(pcg.decision_function(X), one.decision_function(X), atol=1e-6)
