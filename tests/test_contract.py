"""The estimator contract, checked on every estimator found by introspection.

Every :class:`sklearn.base.BaseEstimator` exported by ``kernelkit`` (its lazy top-level
names) is enrolled; :data:`CASES` says how to fit a small instance of each, and
``test_every_exported_estimator_has_a_case`` fails when an estimator is added without one.

* **Seeding** (:mod:`kernelkit.utils._seeding`): ``random_state=None`` draws fresh entropy
  (two fits differ), an int reproduces (two fits are identical), and ``random_state`` is
  keyword-only.
* **Containers**: every public fitted attribute that is an array (found with ``dir``, not a
  list of names) is NumPy on NumPy input; on torch input every floating-point one is a torch
  tensor on the input's device, and integer / boolean bookkeeping (labels, classes,
  indices, counts) is NumPy in both cases.  ``X_fit_`` / ``Y_fit_`` are the kernel's
  prepared batch (``kernel_.prepare``, see :mod:`kernelkit.estimators._base`), not
  outputs, and are exempt.
* **Ownership**: overwriting the training array after ``fit`` leaves every output
  (``predict``, ``transform``, ``decision_function``, ``predict_proba``) unchanged.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from sklearn.base import BaseEstimator

import kernelkit
from kernelkit.kernels import Gaussian

OUTPUTS = ("predict", "transform", "decision_function", "predict_proba")
"""The methods whose results must not move when the caller's training array does."""

PREPARED_BATCHES = {"X_fit_", "Y_fit_"}
"""The kernel's prepared training batch (a tensor for vector kernels): not an output."""


def _exported_estimators() -> list[type]:
    classes = (getattr(kernelkit, name) for name in kernelkit.__all__ if name[0].isupper())
    return sorted(
        (c for c in classes if isinstance(c, type) and issubclass(c, BaseEstimator)),
        key=lambda c: c.__name__,
    )


def _data(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((40, 3))
    y = (X[:, 0] + 0.5 * rng.standard_normal(40) > 0).astype(int)
    return X, y


def _second_view(X: Any) -> Any:
    """KernelCCA's ``Y``: a fixed nonlinear view of ``X`` (same container)."""
    return X[:, :2] ** 2 + X[:, 1:]


CKN_IMAGES = {"n_filters": (6,), "patch_sizes": (1,), "subsamplings": (1,), "n_patches": 200}
# 30 of the 80 training 2-mers: with all of them, k-means from two seeds reached the same
# anchors in 3 of 40 fits, and the random_state=None test could not tell the fits apart
CKN_SEQ = {"n_filters": 6, "k": 2, "n_kmers": 30}
# the (40, 3) rows are read as one-node graphs: 30 of the 40 nodes for k-means
CKN_GRAPH = {"n_filters": 6, "max_length": 1, "n_paths": 30}

CASES: dict[str, Callable[[], BaseEstimator]] = {
    "BiasFreeSVC": lambda: kernelkit.BiasFreeSVC(Gaussian(1.0)),
    "CKNClassifier": lambda: kernelkit.CKNClassifier(**CKN_IMAGES, lam=1e-4, max_iter=5),
    "CKNFeatures": lambda: kernelkit.CKNFeatures(**CKN_IMAGES),
    "ConcatenatedKernelRegressor": lambda: kernelkit.ConcatenatedKernelRegressor(
        n_restarts=2, max_iter=5
    ),
    "GraphCKNClassifier": lambda: kernelkit.GraphCKNClassifier(**CKN_GRAPH, lam=1e-4, max_iter=5),
    "GraphCKNFeatures": lambda: kernelkit.GraphCKNFeatures(**CKN_GRAPH),
    "GaussianProcessRegressor": lambda: kernelkit.GaussianProcessRegressor(
        Gaussian(1.0), n_restarts_optimizer=1, solver="nystrom", n_centers=10
    ),
    "InvariantEmbedding": lambda: kernelkit.InvariantEmbedding(Gaussian(2.0), n_centers=10),
    "KernelAutoencoder": lambda: kernelkit.KernelAutoencoder(
        dims=(2,), init="random", n_centers=15, max_iter=5
    ),
    "KernelCCA": lambda: kernelkit.KernelCCA(),
    "KernelKMeans": lambda: kernelkit.KernelKMeans(5, Gaussian(1.0), n_init=1),
    "KernelLogisticRegression": lambda: kernelkit.KernelLogisticRegression(
        Gaussian(1.0), solver="nystrom", nystrom_method="pcg", n_centers=10
    ),
    "KernelPCA": lambda: kernelkit.KernelPCA(
        Gaussian(2.0), n_components=3, eigen_solver="arpack", fit_inverse_transform=True
    ),
    "KernelRidge": lambda: kernelkit.KernelRidge(  # a float lam: Falkon's PCG, with progress
        Gaussian(1.0), lam=1e-3, solver="nystrom", nystrom_method="pcg", n_centers=10
    ),
    "KernelSVC": lambda: kernelkit.KernelSVC(Gaussian(1.0), probability=True),
    "KernelSVR": lambda: kernelkit.KernelSVR(Gaussian(1.0), solver="nystrom", n_centers=10),
    "KernelHuberRegressor": lambda: kernelkit.KernelHuberRegressor(
        Gaussian(1.0), solver="nystrom", n_centers=10
    ),
    "NystromFeatures": lambda: kernelkit.NystromFeatures(Gaussian(1.0), n_centers=10),
    "RandomFourierFeatures": lambda: kernelkit.RandomFourierFeatures(
        Gaussian(1.0), n_components=10
    ),
    "SequenceCKNClassifier": lambda: kernelkit.SequenceCKNClassifier(
        **CKN_SEQ, lam=1e-4, max_iter=5
    ),
    "SequenceCKNFeatures": lambda: kernelkit.SequenceCKNFeatures(**CKN_SEQ),
    "SimpleMKL": lambda: kernelkit.SimpleMKL(),
    "SpectralClustering": lambda: kernelkit.SpectralClustering(5, Gaussian(1.0), n_init=1),
}
"""A small fit of every estimator; the random ones in a configuration that draws."""

ESTIMATORS = _exported_estimators()
RANDOM = [c for c in ESTIMATORS if "random_state" in inspect.signature(c).parameters]


def _fit(est: BaseEstimator, X: Any, y: Any) -> BaseEstimator:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # max_iter is kept tiny on purpose
        if isinstance(est, kernelkit.KernelCCA):
            return est.fit(X, _second_view(X))
        return est.fit(X, y)


def _returned_outputs(est: BaseEstimator, X: Any) -> dict[str, Any]:
    """Every output of ``est`` on ``X`` as the estimator returns it (tensors on their device)."""
    out = {}
    for name in OUTPUTS:
        if hasattr(est, name):
            arg = (X, _second_view(X)) if isinstance(est, kernelkit.KernelCCA) else (X,)
            value = getattr(est, name)(*arg)
            for i, part in enumerate(value if isinstance(value, tuple) else (value,)):
                out[f"{name}[{i}]"] = part
    assert out, f"{type(est).__name__} has none of {OUTPUTS}"
    return out


def _outputs(est: BaseEstimator, X: Any) -> dict[str, np.ndarray]:
    """:func:`_returned_outputs` as NumPy copies."""
    return {
        key: np.array(part.detach().cpu().numpy() if isinstance(part, torch.Tensor) else part)
        for key, part in _returned_outputs(est, X).items()
    }


def _fitted_arrays(est: BaseEstimator) -> dict[str, Any]:
    """Every public fitted attribute (``name_``) that is an array, found with ``dir``."""
    found = {}
    for name in dir(est):
        if not name.endswith("_") or name.startswith("_") or name in PREPARED_BATCHES:
            continue
        try:
            value = getattr(est, name)
        except AttributeError:
            continue
        if isinstance(value, np.ndarray | torch.Tensor):
            found[name] = value
    return found


def test_every_exported_estimator_has_a_case():
    names = {c.__name__ for c in ESTIMATORS}
    assert len(names) >= 18 and names == set(CASES), names ^ set(CASES)


@pytest.mark.parametrize("cls", RANDOM, ids=lambda c: c.__name__)
def test_random_state_is_keyword_only(cls):
    assert inspect.signature(cls).parameters["random_state"].kind is inspect.Parameter.KEYWORD_ONLY


@pytest.mark.parametrize("cls", RANDOM, ids=lambda c: c.__name__)
def test_none_draws_fresh_entropy_and_an_int_reproduces(cls, one_torch_thread):
    """``None``: two fits differ (scikit-learn's meaning; no estimator rewrites it to a fixed
    seed).  The same int: two fits are identical, bit for bit."""
    X, y = _data()

    def run(state: Any) -> dict[str, np.ndarray]:
        return _outputs(_fit(CASES[cls.__name__]().set_params(random_state=state), X, y), X)

    a, b = run(7), run(7)
    assert a.keys() == b.keys()
    for key in a:
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)
    c, d = run(None), run(None)
    assert any(not np.array_equal(c[key], d[key]) for key in c), (
        f"{cls.__name__}: two fits with random_state=None gave the same outputs"
    )


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_every_fitted_array_follows_the_input_container(cls, one_torch_thread):
    X, y = _data()
    counts = []
    for data, labels in ((X, y), (torch.as_tensor(X), torch.as_tensor(y))):
        est = _fit(CASES[cls.__name__](), data, labels)
        arrays = _fitted_arrays(est)
        counts.append(len(arrays))
        for name, value in arrays.items():
            floating = (
                value.dtype.is_floating_point
                if isinstance(value, torch.Tensor)
                else (np.issubdtype(value.dtype, np.floating))
            )
            want = torch.Tensor if floating and isinstance(data, torch.Tensor) else np.ndarray
            assert isinstance(value, want), (
                f"{cls.__name__}.{name}: {type(value).__name__} ({value.dtype}) on "
                f"{type(data).__name__} input, expected {want.__name__}"
            )
            if isinstance(value, torch.Tensor):
                assert value.device == data.device, name
    print(f"{cls.__name__}: {counts[0]} fitted arrays (NumPy input), {counts[1]} (torch input)")
    assert counts[0] == counts[1]


@pytest.mark.parametrize("container", ["numpy", "torch"])
@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_overwriting_the_training_array_changes_no_output(cls, container, one_torch_thread):
    """A fitted model owns its data (scikit-learn's ``copy_X``): the caller may reuse the
    array it trained on."""
    X, y = _data()
    Xt = _data(seed=1)[0]
    train = torch.as_tensor(X.copy()) if container == "torch" else X.copy()
    query = torch.as_tensor(Xt) if container == "torch" else Xt
    est = _fit(CASES[cls.__name__]().set_params(**_seed(cls)), train, y)
    before = _outputs(est, query)
    noise = 7.0 * _data(seed=2)[0]
    train[:] = torch.as_tensor(noise) if container == "torch" else noise
    after = _outputs(est, query)
    for key in before:
        np.testing.assert_array_equal(before[key], after[key], err_msg=f"{cls.__name__} {key}")


def _seed(cls: type) -> dict[str, int]:
    return {"random_state": 0} if cls in RANDOM else {}


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_n_iter_is_an_int_wherever_it_exists(cls, one_torch_thread):
    """``n_iter_`` is a Python int in every estimator (one-vs-rest and one-vs-one fits report
    the most iterations of any binary problem), also with three classes."""
    X, y = _data()
    three = np.digitize(X[:, 1], [-0.4, 0.4])
    for labels in (y, three):
        est = _fit(CASES[cls.__name__](), X, labels)
        if hasattr(est, "n_iter_"):
            assert type(est.n_iter_) is int, f"{cls.__name__}.n_iter_: {type(est.n_iter_)}"


@pytest.mark.parametrize(
    "cls",
    [c for c in ESTIMATORS if "lam" in inspect.signature(c).parameters],
    ids=lambda c: c.__name__,
)
def test_every_lam_takes_auto_and_records_a_float_lam_(cls, one_torch_thread):
    """``lam="auto"`` is accepted wherever there is a ``lam``, and ``lam_`` is a float (the
    chosen value, or ``lam`` itself when it was given)."""
    X, y = _data()
    auto = _fit(CASES[cls.__name__]().set_params(lam="auto"), X, y)
    assert type(auto.lam_) is float and auto.lam_ > 0, cls.__name__
    fixed = _fit(CASES[cls.__name__]().set_params(lam=0.01), X, y)
    assert fixed.lam_ == 0.01, cls.__name__


def _supervised(cls: type) -> bool:
    from sklearn.base import is_classifier, is_regressor

    est = CASES[cls.__name__]()
    return is_classifier(est) or is_regressor(est) or cls is kernelkit.SimpleMKL


SUPERVISED = [c for c in ESTIMATORS if _supervised(c)]


def test_every_supervised_estimator_accepts_on_error():
    assert len(SUPERVISED) >= 12
    for cls in SUPERVISED:
        assert CASES[cls.__name__]().get_params()["on_error"] == "raise", cls.__name__


@pytest.mark.parametrize(
    "cls",
    [c for c in SUPERVISED if c is not kernelkit.SequenceCKNClassifier],
    ids=lambda c: c.__name__,
)
def test_on_error_skip_leaves_out_non_finite_rows_with_their_targets(cls, one_torch_thread):
    """The shared route (``drop_invalid_records``): ``"skip"`` fits what the finite rows fit,
    naming the rows left out; ``"raise"`` refuses the input."""
    X, y = _data()
    bad_X = np.insert(X, [3, 17], [[np.nan, 0.0, 1.0], [0.0, np.inf, 1.0]], axis=0)
    bad_y = np.insert(y, [3, 17], [1, 0])

    def make(**params: Any) -> BaseEstimator:
        est = CASES[cls.__name__]().set_params(**params)
        if "random_state" in est.get_params():
            est.set_params(random_state=0)
        return est

    with pytest.raises((ValueError, RuntimeError)):
        _fit(make(), bad_X, bad_y)
    with pytest.warns(UserWarning, match=r"left out 2 of 42 rows with a NaN .*X\[3\]"):
        skipped = make(on_error="skip").fit(bad_X, bad_y)
    clean = _fit(make(), X, y)
    for method in OUTPUTS[:1]:
        np.testing.assert_allclose(
            getattr(skipped, method)(X[:10]), getattr(clean, method)(X[:10]), rtol=1e-8
        )
