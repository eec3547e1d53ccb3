"""KernelSVC against sklearn.svm.SVC: gamma "scale"/"auto", support_vectors_, coef_,
decision_function_shape and break_ties."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_iris
from sklearn.svm import SVC

from kernelkit import KernelSVC
from kernelkit.kernels import Gaussian, Precomputed


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True)
    return X, y


CASES = [
    {"kernel": "rbf"},
    {"kernel": "rbf", "gamma": "auto"},
    {"kernel": "rbf", "gamma": 0.7, "C": 3.0},
    {"kernel": "poly", "gamma": "scale"},
    {"kernel": "poly", "degree": 2, "coef0": 1.0},
    {"kernel": "linear"},
    {"kernel": "rbf", "decision_function_shape": "ovo"},
    {"kernel": "rbf", "break_ties": True, "C": 0.1},
]


@pytest.mark.parametrize("params", CASES, ids=str)
def test_matches_svc(iris, params):
    X, y = iris
    ours, ref = KernelSVC(**params).fit(X, y), SVC(**params).fit(X, y)
    np.testing.assert_allclose(
        ours.decision_function(X), ref.decision_function(X), rtol=0, atol=1e-9
    )
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    np.testing.assert_array_equal(ours.support_, ref.support_)
    np.testing.assert_array_equal(ours.support_vectors_, ref.support_vectors_)
    np.testing.assert_allclose(ours.dual_coef_, ref.dual_coef_, rtol=0, atol=1e-9)


def test_gamma_scale_on_sparse_input_matches_svc(iris):
    X, y = iris
    Xs = sp.csr_matrix(X * (X > 2.0))
    ours, ref = KernelSVC(kernel="rbf").fit(Xs, y), SVC(kernel="rbf").fit(Xs, y)
    np.testing.assert_allclose(
        ours.decision_function(Xs), ref.decision_function(Xs), rtol=0, atol=1e-9
    )
    assert sp.issparse(ours.support_vectors_)
    np.testing.assert_array_equal(ours.support_vectors_.toarray(), ref.support_vectors_.toarray())


@pytest.mark.parametrize("binary", [True, False])
def test_linear_coef_matches_svc_and_the_decision(iris, binary):
    X, y = iris
    y = y > 0 if binary else y
    ours, ref = KernelSVC(kernel="linear").fit(X, y), SVC(kernel="linear").fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=0, atol=1e-10)
    if binary:
        np.testing.assert_allclose(
            X @ ours.coef_[0] + ours.intercept_[0], ours.decision_function(X), atol=1e-9
        )


def test_coef_needs_a_linear_kernel_and_precomputed_has_no_vectors(iris):
    X, y = iris
    with pytest.raises(AttributeError, match="linear kernel"):
        _ = KernelSVC(Gaussian(1.0)).fit(X, y).coef_
    K = X @ X.T
    model = KernelSVC(Precomputed()).fit(K, y)
    assert (
        model.support_vectors_.shape == SVC(kernel="precomputed").fit(K, y).support_vectors_.shape
    )
