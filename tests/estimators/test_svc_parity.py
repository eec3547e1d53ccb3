"""KernelSVC against sklearn.svm.SVC: gamma "scale"/"auto", support_vectors_, coef_,
decision_function_shape, break_ties, probability (Platt), sample weights <= 0, callables on
strings."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import load_iris
from sklearn.svm import SVC

from kernelkit import KernelSVC
from kernelkit.kernels import Gaussian, Precomputed
from kernelkit.utils._errors import InputError, NotFittedError, SparseInputError


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


# ---------------------------------------------------------------------- probability (Platt)
def _svc(**kw):
    """scikit-learn's SVC, its FutureWarning of ``probability`` (1.9+) silenced."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return SVC(**kw)


@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.parametrize("binary", [False, True])
def test_probability_matches_svc(iris, binary):
    X, y = iris
    if binary:
        X, y = X[y > 0], y[y > 0]
    ours = KernelSVC(kernel="rbf", gamma=0.3, probability=True, random_state=0).fit(X, y)
    ref = _svc(kernel="rbf", gamma=0.3, probability=True, random_state=0).fit(X, y)
    np.testing.assert_allclose(ours.probA_, ref.probA_, rtol=1e-6)
    np.testing.assert_allclose(ours.probB_, ref.probB_, rtol=1e-6, atol=1e-9)
    proba = ours.predict_proba(X)
    np.testing.assert_allclose(proba, ref.predict_proba(X), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(proba.sum(1), 1.0)
    np.testing.assert_allclose(ours.predict_log_proba(X), np.log(proba))


def test_predict_proba_only_with_probability(iris):
    X, y = iris
    est = KernelSVC(kernel="rbf").fit(X, y)
    assert not hasattr(est, "predict_proba")
    est.probability = True
    assert hasattr(est, "predict_proba")
    with pytest.raises(NotFittedError, match="fitted with probability=False"):
        est.predict_proba(X)
    with pytest.raises(InputError, match="probability"):
        KernelSVC(probability="yes").fit(X, y)


def test_probability_is_deprecated_as_svcs(iris):
    """scikit-learn 1.9's deprecation of SVC's probability, mirrored: unset (the sentinel,
    kept by get_params and clone) is silent; any value given warns once, naming KernelSVC."""
    X, y = iris
    est = KernelSVC(kernel="rbf")
    assert clone(est).get_params()["probability"] == "deprecated"
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        est.fit(X, y)
    for value in (False, True):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            KernelSVC(kernel="rbf", probability=value, random_state=0).fit(X, y)
        messages = [str(w.message) for w in caught if w.category is FutureWarning]
        assert len(messages) == 1, messages
        assert "CalibratedClassifierCV(KernelSVC(...), ensemble=False)" in messages[0]


def test_calibrated_route_matches_svcs(iris):
    """The lasting route, CalibratedClassifierCV(..., ensemble=False), equals SVC's."""
    X, y = iris
    ours = CalibratedClassifierCV(KernelSVC(kernel="rbf", gamma=0.3), ensemble=False)
    ref = CalibratedClassifierCV(SVC(kernel="rbf", gamma=0.3), ensemble=False)
    np.testing.assert_allclose(
        ours.fit(X, y).predict_proba(X), ref.fit(X, y).predict_proba(X), rtol=0, atol=1e-9
    )


# ---------------------------------------------------------------------- sample weights <= 0
TOY_X = np.array([[-2, -1], [-1, -1], [-1, -2], [1, 1], [1, 2], [2, 1]], dtype=float)
TOY_Y = np.array([1, 1, 1, 2, 2, 2])


@pytest.mark.parametrize("w", [[1, -0.5, 1, 1, 1, 1], [1, 1, 1, 0, 1, 1], [2, 0, -3, 1, 1, 0.5]])
def test_non_positive_weights_leave_samples_out_as_svc(w):
    ours = KernelSVC(kernel="linear").fit(TOY_X, TOY_Y, sample_weight=w)
    ref = SVC(kernel="linear").fit(TOY_X, TOY_Y, sample_weight=w)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-10)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=1e-10)
    # the same support vectors; support_ indexes the rows given (scikit-learn's, the rows left)
    np.testing.assert_array_equal(ours.support_vectors_, ref.support_vectors_)
    dropped = np.asarray(w) > 0
    same = KernelSVC(kernel="linear").fit(TOY_X[dropped], TOY_Y[dropped], np.asarray(w)[dropped])
    np.testing.assert_allclose(ours.decision_function(TOY_X), same.decision_function(TOY_X))


@pytest.mark.parametrize(
    ("w", "message"),
    [
        ([0, -0.5, 0, 1, 1, 1], "all samples with positive weights belong to the same class"),
        ([-0.3] * 6, "all samples have zero or negative weights"),
    ],
)
def test_non_positive_weights_errors_as_svc(w, message):
    with pytest.raises(InputError, match=f"sample_weight: Invalid input - {message}"):
        KernelSVC(kernel="linear").fit(TOY_X, TOY_Y, sample_weight=w)
    with pytest.raises(ValueError, match=f"Invalid input - {message}"):
        SVC(kernel="linear").fit(TOY_X, TOY_Y, sample_weight=w)


def test_sparse_precomputed_gram_is_a_named_type_error():
    with pytest.raises(SparseInputError, match="X: Sparse precomputed kernels are not supported"):
        KernelSVC(kernel="precomputed").fit(sp.csr_matrix(np.eye(2)), [0, 1])
    with pytest.raises(TypeError, match="Sparse precomputed"):
        SVC(kernel="precomputed").fit(sp.csr_matrix(np.eye(2)), [0, 1])


# ---------------------------------------------------------------------- callables on items
def _count_kernel(A, B):
    """Inner product of the counts of "A" and "B" in two lists of strings."""
    counts = [np.array([[s.count("A"), s.count("B")] for s in S], dtype=float) for S in (A, B)]
    return counts[0] @ counts[1].T


def test_callable_on_strings_equals_linear_on_counts():
    data = ["A A", "A", "B", "B B", "A B", "A A B", "B B B", "A"]
    X = np.array([[s.count("A"), s.count("B")] for s in data], dtype=float)
    y = np.array([1, 1, 2, 2, 1, 1, 2, 1])
    ours = KernelSVC(kernel=_count_kernel).fit(data, y)
    ref = SVC(kernel=_count_kernel).fit(data, y)
    linear = SVC(kernel="linear").fit(X, y)
    np.testing.assert_allclose(ours.decision_function(data), ref.decision_function(data))
    np.testing.assert_allclose(ours.decision_function(data), linear.decision_function(X))
    np.testing.assert_array_equal(ours.predict(["A B B", "A"]), linear.predict([[1, 2], [1, 0]]))
