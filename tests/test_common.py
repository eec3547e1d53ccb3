"""Common checks: every kernel class and every estimator, enrolled automatically.

Kernels: every :class:`~kernelkit.kernels.Kernel` subclass defined in ``kernelkit`` is found by
walking ``Kernel.__subclasses__()`` after importing every submodule of ``kernelkit.kernels``,
and :func:`kernelkit.testing.check_kernel` runs on its example.  A new kernel needs no edit
here: default-constructible vector/Gram kernels get random input, and any other kernel
defines the classmethod ``_check_example()`` returning ``(kernel, X, Y)`` (see
:mod:`kernelkit.testing._kernels`).  Abstract template bases are skipped by
:func:`kernelkit.testing.is_abstract`.

Estimators: scikit-learn's ``parametrize_with_checks`` on every estimator with its default
kernel, plus pipelines and grid searches over ``kernel__sigma`` and ``lam``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.base import BaseEstimator, clone
from sklearn.kernel_ridge import KernelRidge as SkKernelRidge
from sklearn.model_selection import GridSearchCV, KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

import kernelkit
from kernelkit import (
    BiasFreeSVC,
    CKNClassifier,
    CKNFeatures,
    ConcatenatedKernelRegressor,
    GaussianProcessRegressor,
    GraphCKNClassifier,
    GraphCKNFeatures,
    InvariantEmbedding,
    KernelAutoencoder,
    KernelCCA,
    KernelHuberRegressor,
    KernelKMeans,
    KernelLogisticRegression,
    KernelPCA,
    KernelRidge,
    KernelSVC,
    KernelSVR,
    NystromFeatures,
    RandomFourierFeatures,
    SequenceCKNClassifier,
    SequenceCKNFeatures,
    SimpleMKL,
    SpectralClustering,
)
from kernelkit.invariance import TransformInvariance
from kernelkit.kernels import Gaussian
from kernelkit.testing import all_kernel_classes, check_kernel, kernel_examples
from kernelkit.testing._kernels import EXTRA_EXAMPLES, is_abstract
from kernelkit.testing._params import check_param_validation
from kernelkit.utils._errors import ConvergenceWarning, ParameterError


class _NamedTransform:
    """A transformation with a stable ``repr`` (a function's names its address, which would
    differ between pytest-xdist workers' test ids)."""

    def __init__(self, name, function):
        self.name, self.function = name, function

    def __call__(self, X):
        return self.function(X)

    def __repr__(self):
        return self.name


def _shift(X):
    """A transformation for the invariance estimator's checks: shift every feature by 0.1."""
    return X + 0.1


def _scale(X):
    """A second transformation for the block readings: scale every feature by 1.1."""
    return X * 1.1


_shift_inputs = _NamedTransform("shift_inputs", _shift)
_scale_inputs = _NamedTransform("scale_inputs", _scale)


KERNEL_CLASSES = [c for c in all_kernel_classes() if not is_abstract(c)]


def test_enrolment_finds_the_core_kernels():
    names = {c.__name__ for c in KERNEL_CLASSES}
    assert {"Gaussian", "Linear", "Polynomial", "Precomputed", "SumKernel"} <= names
    assert not {"Kernel", "StationaryKernel", "DotProductKernel"} & names


@pytest.mark.parametrize("cls", KERNEL_CLASSES, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_kernel_conformance(cls):
    examples = kernel_examples(cls)
    assert examples, f"{cls.__qualname__} gave no example"
    for kernel, X, Y in examples:
        check_kernel(kernel, X, Y)


@pytest.mark.parametrize("index", range(len(EXTRA_EXAMPLES)))
def test_extra_kernel_configurations(index):
    kernel, X, Y = EXTRA_EXAMPLES[index](np.random.default_rng(index))
    check_kernel(kernel, X, Y)


# ---------------------------------------------------------------------- estimators
# Iterative solvers meet check_sample_weight_equivalence_* (rtol 1e-7 between integer
# weights and repeated rows) at a tolerance finer than their default: the two fits solve the
# same problem (repetition is exact in the model) but stop at different approximations of it.
ESTIMATORS = [
    KernelRidge(),
    KernelRidge(
        solver="nystrom", nystrom_method="pcg", n_centers=20, lam=1e-3, tol=1e-12
    ),  # a float lam: PCG
    KernelPCA(),
    KernelSVC(tol=1e-8),
    KernelSVR(tol=1e-8),
    KernelSVR(solver="nystrom", n_centers=10, random_state=0, tol=1e-8),
    KernelHuberRegressor(tol=1e-10),
    KernelHuberRegressor(solver="nystrom", n_centers=10, random_state=0, tol=1e-10),
    KernelLogisticRegression(),
    KernelLogisticRegression(solver="nystrom", nystrom_method="pcg", n_centers=10, random_state=0),
    KernelLogisticRegression(lam="auto", random_state=0),
    BiasFreeSVC(),
    BiasFreeSVC(loss="squared_hinge"),
    KernelKMeans(),
    SpectralClustering(),
    KernelAutoencoder(dims=(2,), max_iter=5),
    ConcatenatedKernelRegressor(n_restarts=2, max_iter=5),
    *(NystromFeatures(centers=method) for method in ("uniform", "kmeans++", "greedy")),
    NystromFeatures(centers="kpca", rank=3),
    RandomFourierFeatures(),
    InvariantEmbedding(),
    InvariantEmbedding(invariances=[TransformInvariance([_shift_inputs])], aggregate="max"),
    *(
        InvariantEmbedding(
            invariances=[TransformInvariance([_shift_inputs, _scale_inputs])],
            aggregate="max",
            reading=reading,
        )
        for reading in ("transforms", "sum_of_max")
    ),
    *(SimpleMKL(loss=loss) for loss in ("squared", "hinge", "logistic")),
    KernelCCA(),
    GaussianProcessRegressor(),
    CKNFeatures((6,), (1,), (1,), n_patches=500),
    CKNFeatures((4, 5), (1, 1), (1, 1), kappa="inverse_polynomial", n_patches=500),
    CKNClassifier((8,), (1,), (1,), n_patches=500, lam=1e-4, max_iter=30, lr=0.05, batch_size=64),
    SequenceCKNFeatures(6, 2, gap_penalty=0.5, n_kmers=500),
    SequenceCKNClassifier(8, 1, n_kmers=500, lam=1e-4, max_iter=30, lr=0.05, batch_size=64),
    GraphCKNFeatures(6, 2, n_paths=500),
    GraphCKNFeatures((4, 5), 1, aggregation="mean", pooling="mean", normalize=True, n_paths=500),
    GraphCKNClassifier(8, 1, n_paths=500, lam=1e-4, max_iter=30, lr=0.05, batch_size=64),
]
"""Every estimator of kernelkit, in the configurations the common checks run (the CKN
classifiers with a fixed ``lam``: ``lam="auto"``'s cross-validation has its own tests and
would repeat for every fit of every check)."""


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible_estimator(estimator, check, one_torch_thread):
    check(estimator)


def test_every_estimator_is_enrolled():
    from kernelkit import estimators

    exported = {
        name
        for name in dir(kernelkit)
        if isinstance(getattr(kernelkit, name), type)
        and issubclass(getattr(kernelkit, name), BaseEstimator)
    }
    assert exported <= {type(e).__name__ for e in ESTIMATORS}, exported
    assert estimators.KernelRidge in {type(e) for e in ESTIMATORS}


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_parameters_are_validated_declaratively(estimator, one_torch_thread):
    """scikit-learn's parameter-validation check: every parameter has a constraint, and a bad
    type or value raises ``InvalidParameterError`` with ``The 'p' parameter of E must be ...
    Got ... instead.`` (ours: a ``ParameterError`` prefixed with the parameter's name)."""
    check_param_validation(type(estimator).__name__, estimator)
    bad = clone(estimator).set_params(max_iter=-7) if "max_iter" in estimator.get_params() else None
    if bad is not None:
        X = np.random.default_rng(0).standard_normal((12, 3))
        with pytest.raises(ParameterError, match=r"^max_iter: The 'max_iter' parameter of .* -7"):
            bad.fit(X, (X[:, 0] > 0).astype(int))


def _random_estimators():
    X = np.random.default_rng(3).standard_normal((40, 3))
    y = np.sin(X[:, 0]) + X[:, 1]
    return (
        X,
        y,
        [
            (KernelPCA(Gaussian(2.0), n_components=3, eigen_solver="arpack"), "transform"),
            (KernelAutoencoder(dims=(2,), init="random", n_centers=15, max_iter=5), "transform"),
            (ConcatenatedKernelRegressor(n_restarts=3, max_iter=5), "predict"),
            (InvariantEmbedding(Gaussian(2.0), n_centers=10), "transform"),
            (KernelKMeans(3, Gaussian(1.0), n_init=2), "predict"),
            (SpectralClustering(3, Gaussian(1.0), n_init=2), "predict"),
        ],
    )


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("index", range(6))
def test_random_state_accepts_every_form_and_reproduces(index, one_torch_thread):
    """``random_state`` takes None, an int, a RandomState or a Generator in every estimator
    that has one; generators in the same state (two fresh ``default_rng(0)``, or an estimator
    and its clone) give identical fits, and a generator is consumed by use."""
    X, y, cases = _random_estimators()
    estimator, method = cases[index]

    def run(state):
        est = clone(estimator).set_params(random_state=state).fit(X, y)
        return np.asarray(getattr(est, method)(X))

    first = run(np.random.default_rng(0))
    np.testing.assert_array_equal(first, run(np.random.default_rng(0)))
    np.testing.assert_array_equal(run(np.random.RandomState(1)), run(np.random.RandomState(1)))
    np.testing.assert_array_equal(run(5), run(5))
    run(None)
    template = clone(estimator).set_params(random_state=np.random.default_rng(0))
    np.testing.assert_array_equal(first, np.asarray(getattr(clone(template).fit(X, y), method)(X)))
    shared = np.random.default_rng(0)
    est = clone(estimator).set_params(random_state=shared)
    np.testing.assert_array_equal(first, np.asarray(getattr(est.fit(X, y), method)(X)))
    assert shared.bit_generator.state != np.random.default_rng(0).bit_generator.state


def _regression_data():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((60, 3)) * [1.0, 10.0, 0.1]
    y = np.sin(X[:, 0]) + 0.1 * X[:, 1] + rng.standard_normal(60) * 0.05
    return X, y


def test_grid_search_over_sigma_and_lam_matches_sklearn():
    X, y = _regression_data()
    cv = KFold(n_splits=3, shuffle=True, random_state=0)
    sigmas, lams = [0.5, 1.0, 3.0], [1e-4, 1e-2, 1.0]
    ours = GridSearchCV(
        make_pipeline(StandardScaler(), KernelRidge(Gaussian())),
        {"kernelridge__kernel__sigma": sigmas, "kernelridge__lam": lams},
        cv=cv,
    ).fit(X, y)
    n_train = len(X) * 2 // 3  # every fold trains on 40 points: alpha = n_train * lam
    ref = GridSearchCV(
        make_pipeline(StandardScaler(), SkKernelRidge(kernel="rbf")),
        {
            "kernelridge__gamma": [1 / (2 * s**2) for s in sigmas],
            "kernelridge__alpha": [n_train * lam for lam in lams],
        },
        cv=cv,
    ).fit(X, y)

    def scores(search, key_a, key_b, map_a, map_b):
        res = search.cv_results_
        return {
            (map_a(p[key_a]), map_b(p[key_b])): score
            for p, score in zip(res["params"], res["mean_test_score"], strict=True)
        }

    ours_scores = scores(ours, "kernelridge__kernel__sigma", "kernelridge__lam", float, float)
    ref_scores = scores(
        ref,
        "kernelridge__gamma",
        "kernelridge__alpha",
        lambda g: sigmas[[1 / (2 * s**2) for s in sigmas].index(g)],
        lambda a: lams[[n_train * lam for lam in lams].index(a)],
    )
    assert ours_scores.keys() == ref_scores.keys()
    for key, value in ours_scores.items():
        assert value == pytest.approx(ref_scores[key], abs=1e-8), key
    best = ours.best_params_
    assert max(ref_scores, key=ref_scores.get) == (
        best["kernelridge__kernel__sigma"],
        best["kernelridge__lam"],
    )
    assert ours.best_estimator_[-1].kernel_.sigma == best["kernelridge__kernel__sigma"]


def test_pipeline_kpca_then_svc_matches_sklearn():
    rng = np.random.default_rng(8)
    X = rng.standard_normal((80, 4))
    y = (X[:, 0] * X[:, 1] > 0).astype(int)
    ours = make_pipeline(KernelPCA(Gaussian(1.5), n_components=5), KernelSVC(Gaussian(2.0)))
    ours.fit(X, y)
    from sklearn.decomposition import KernelPCA as SkKernelPCA

    ref = make_pipeline(
        SkKernelPCA(5, kernel="rbf", gamma=1 / 4.5, eigen_solver="dense"), SVC(gamma=1 / 8)
    ).fit(X, y)
    # RBF on the codes is invariant to the sign of each code: same SVM either way
    assert np.abs(ours.decision_function(X) - ref.decision_function(X)).max() < 1e-6
    # the same grid on scikit-learn's pipeline (gamma = 1 / (2 sigma^2)) scores every
    # candidate identically on the same folds
    search = GridSearchCV(
        ours, {"kernelsvc__C": [0.1, 10.0], "kernelpca__kernel__sigma": [1.0, 2.0]}, cv=3
    ).fit(X, y)
    ref_search = GridSearchCV(
        ref, {"svc__C": [0.1, 10.0], "kernelpca__gamma": [1 / 2.0, 1 / 8.0]}, cv=3
    ).fit(X, y)
    np.testing.assert_allclose(
        search.cv_results_["mean_test_score"], ref_search.cv_results_["mean_test_score"]
    )
    assert search.best_score_ == ref_search.best_score_


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("estimator", ESTIMATORS, ids=lambda e: type(e).__name__)
def test_outputs_and_fitted_arrays_follow_the_input_container(estimator, one_torch_thread):
    """NumPy in, NumPy out; torch in, torch out: predictions, 2-D transforms and the fitted
    array attributes ending in ``_``."""
    X = np.random.default_rng(4).standard_normal((25, 3))
    y = (X[:, 0] > 0).astype(int)
    for data, container in ((X, np.ndarray), (torch.as_tensor(X), torch.Tensor)):
        est = clone(estimator).fit(data, y)
        if hasattr(est, "transform"):
            Z = est.transform(data)
            assert isinstance(Z, container) and Z.ndim == 2 and Z.shape[0] == 25
        if hasattr(est, "predict"):
            assert isinstance(est.predict(data), container)
        for name in ("dual_coef_", "eigenvalues_", "codes_", "certificates_"):
            if hasattr(est, name) and not isinstance(est, KernelSVC):  # libsvm's are NumPy
                assert isinstance(getattr(est, name), container), name


def test_optimisers_stopped_by_max_iter_warn(one_torch_thread):
    X = np.random.default_rng(5).standard_normal((30, 2))
    y = np.sin(X[:, 0])
    with pytest.warns(ConvergenceWarning, match=r"ConcatenatedKernelRegressor: .*max_iter=2 "):
        ConcatenatedKernelRegressor(n_restarts=2, max_iter=2, tol=0.0).fit(X, y)
    with pytest.warns(ConvergenceWarning, match=r"KernelAutoencoder: .*max_iter=3 iterations"):
        KernelAutoencoder(dims=(2,), max_iter=3, tol=0.0).fit(X)


def test_verbose_reports_on_stderr_only_when_asked(capsys, one_torch_thread):
    X = np.random.default_rng(6).standard_normal((20, 2))
    KernelAutoencoder(dims=(2,), max_iter=40, tol=1e-3).fit(X)
    assert capsys.readouterr() == ("", "")
    KernelAutoencoder(dims=(2,), max_iter=40, tol=1e-3, verbose=1).fit(X)
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("[KernelAutoencoder] eval 1/51 objective=")
    seen = []
    KernelAutoencoder(dims=(2,), max_iter=5, verbose=lambda i, v: seen.append((i, v))).fit(X)
    assert [i for i, _ in seen] == list(range(1, len(seen) + 1)) and len(seen) >= 5
