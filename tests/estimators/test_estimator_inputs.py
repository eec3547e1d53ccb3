"""Bad input gets a named error; containers, dtypes and the kernel parameter are handled."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from scipy.spatial.distance import pdist
from sklearn.metrics.pairwise import rbf_kernel

from kernelkit import KernelPCA, KernelRidge, KernelSVC
from kernelkit.kernels import Gaussian, Precomputed
from kernelkit.kernels._specs import KernelSpecError
from kernelkit.utils._errors import InputError, NotPSDError, ParameterError

ESTIMATORS = [KernelRidge, KernelPCA, KernelSVC]


@pytest.fixture
def data():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((20, 3))
    y = (X[:, 0] > 0).astype(int)
    return X, y


def _fit(cls, X, y, **kwargs):
    est = cls(**kwargs)
    return est.fit(X) if cls is KernelPCA else est.fit(X, y)


def _predict(est, X):
    return est.transform(X) if isinstance(est, KernelPCA) else est.predict(X)


@pytest.mark.parametrize("cls", ESTIMATORS)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nan_inf(cls, data, bad):
    X, y = data
    Xb = X.copy()
    Xb[3, 1] = bad
    with pytest.raises(InputError, match="X"):
        _fit(cls, Xb, y)
    est = _fit(cls, X, y)
    with pytest.raises(InputError, match="X"):
        _predict(est, Xb)
    with pytest.raises(InputError, match="X"):
        _predict(est, torch.as_tensor(Xb))


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_zero_samples(cls, data):
    X, y = data
    with pytest.raises(InputError, match="0 sample"):
        _fit(cls, X[:0], y[:0])
    with pytest.raises(InputError, match="0"):
        _fit(cls, torch.as_tensor(X[:0]), y[:0])


@pytest.mark.parametrize("cls", ESTIMATORS)
@pytest.mark.parametrize("container", [np.asarray, torch.as_tensor])
def test_mismatched_feature_counts(cls, data, container):
    X, y = data
    est = _fit(cls, container(X), y)
    with pytest.raises(InputError, match=r"X has 2 features, but \w+ is expecting 3 features"):
        _predict(est, container(X[:, :2]))


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_precomputed_gram_checks(cls, data):
    X, y = data
    K = rbf_kernel(X)
    with pytest.raises(InputError, match="square"):
        _fit(cls, K[:, :10], y, kernel=Precomputed())
    asym = K.copy()
    asym[0, 1] += 0.1
    with pytest.raises(InputError, match="symmetric"):
        _fit(cls, asym, y, kernel=Precomputed())
    not_psd = K - 2.0 * np.eye(len(K))
    with pytest.raises(NotPSDError, match="positive semi-definite"):
        _fit(cls, not_psd, y, kernel=Precomputed())
    est = _fit(cls, K, y, kernel=Precomputed())
    with pytest.raises(InputError, match="20 training points"):
        _predict(est, K[:, :7])


@pytest.mark.parametrize(
    ("cls", "param", "value"),
    [
        (KernelRidge, "lam", -1.0),
        (KernelSVC, "C", -1.0),
        (KernelSVC, "C", 0.0),
        (KernelSVC, "tol", -1e-3),
        (KernelSVC, "max_iter", -5),
        (KernelPCA, "n_components", 0),
        (KernelPCA, "inverse_lam", -1.0),
        (KernelPCA, "eigen_solver", "magic"),
    ],
)
def test_bad_hyperparameters_raise_in_fit(cls, data, param, value):
    X, y = data
    est = cls(**{param: value})  # __init__ only stores
    message = rf"^{param}: The '{param}' parameter of {cls.__name__} must be .* Got .* instead"
    with pytest.raises(ParameterError, match=message):
        _fit(cls, X, y, **{param: value})
    assert getattr(est, param) == value


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_negative_sigma_and_bad_kernel(cls, data):
    X, y = data
    with pytest.raises(InputError, match="sigma"):
        cls(kernel=Gaussian(1.0)).set_params(kernel__sigma=-1.0)
    with pytest.raises(ParameterError, match=r"^kernel: The 'kernel' parameter"):
        _fit(cls, X, y, kernel=3.0)
    with pytest.raises(KernelSpecError, match=r"^kernel: unknown kernel 'gausian'"):
        _fit(cls, X, y, kernel="gausian")


def test_n_components_larger_than_samples(data):
    X, _ = data
    with pytest.raises(InputError, match=r"n_components.*n_samples=20"):
        KernelPCA(n_components=21).fit(X)


@pytest.mark.parametrize("cls", [KernelRidge, KernelSVC])
def test_y_length_mismatch(cls, data):
    X, y = data
    with pytest.raises(InputError, match="y: expected 20"):
        cls().fit(X, y[:-3])
    with pytest.raises(InputError, match="y"):
        cls().fit(X, None)


def test_y_nan_and_one_d_X(data):
    X, y = data
    yb = y.astype(float)
    yb[2] = np.nan
    with pytest.raises(InputError, match="y"):
        KernelRidge().fit(X, yb)
    with pytest.raises(InputError, match=r"2D|2-D"):
        KernelRidge().fit(X[:, 0], y)
    with pytest.raises(InputError, match="2-D"):
        KernelRidge().fit(torch.as_tensor(X[:, 0]), y)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_kernel_is_cloned_and_default_is_median_gaussian(cls, data):
    X, y = data
    kernel = Gaussian(0.7)
    est = _fit(cls, X, y, kernel=kernel)
    assert est.kernel_ is not kernel and est.kernel_.sigma == 0.7
    before = _predict(est, X)
    kernel.set_params(sigma=5.0)  # later changes do not leak into the fitted model
    assert np.array_equal(_predict(est, X), before)
    default = _fit(cls, X, y)
    # the median heuristic: np.median of the 190 pairwise distances (mean of the two middles);
    # KernelSVC: SVC()'s rbf with gamma="scale", 1 / (2 sigma^2) = 1 / (n_features X.var())
    assert isinstance(default.kernel_, Gaussian)
    sigma = np.sqrt(X.shape[1] * X.var() / 2) if cls is KernelSVC else np.median(pdist(X))
    assert default.kernel_.sigma == pytest.approx(sigma, rel=1e-12)
    assert default.kernel is None
    assert torch.equal(default.X_fit_, torch.as_tensor(X))
    assert default.n_features_in_ == 3


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_pandas_input_and_feature_names(cls, data):
    X, y = data
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    est = _fit(cls, df, y)
    assert list(est.feature_names_in_) == ["a", "b", "c"]
    assert np.allclose(_predict(est, df), _predict(_fit(cls, X, y), X))


def test_precomputed_tags():
    assert KernelRidge(Precomputed()).__sklearn_tags__().input_tags.pairwise
    assert not KernelRidge().__sklearn_tags__().input_tags.pairwise
    assert KernelSVC(Precomputed()).__sklearn_tags__().input_tags.pairwise


@pytest.mark.parametrize("cls", ESTIMATORS)
@pytest.mark.parametrize("kernel", [None, "gaussian:sigma=1", "linear"])
def test_entries_whose_squares_overflow_blame_X_not_sigma(cls, data, kernel):
    X, y = data
    with pytest.raises(InputError, match=r"X: entry .* at index \(0, 0\) is too large") as err:
        _fit(cls, X * 1e200, y, kernel=kernel)
    assert "sigma" not in str(err.value) and "1.3e+150" in str(err.value)


@pytest.mark.parametrize("container", [np.asarray, torch.as_tensor])
def test_targets_whose_squares_overflow_are_named(data, container):
    X, _ = data
    y = X[:, 0].copy()
    y[3] = 1e308
    with pytest.raises(InputError, match=r"y: entry 1e\+308 at index \(3,\) is too large"):
        KernelRidge(lam=1e-3).fit(X, container(y))


@pytest.mark.parametrize("half", [torch.float16, torch.bfloat16])
def test_half_precision_torch_input_is_computed_in_float32(data, half):
    X, y = data
    Xh, yh = torch.as_tensor(X, dtype=half), torch.as_tensor(y, dtype=half)
    est = KernelRidge(kernel=Gaussian(1.5), lam=1e-2).fit(Xh, yh)
    pred = est.predict(Xh)
    assert pred.dtype == torch.float32
    ref = (
        KernelRidge(kernel=Gaussian(1.5), lam=1e-2).fit(Xh.float(), yh.float()).predict(Xh.float())
    )
    torch.testing.assert_close(pred, ref)
    assert KernelPCA(n_components=2).fit(Xh).transform(Xh).dtype == torch.float32


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_a_non_numeric_pandas_column_is_named(cls, data):
    X, y = data
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    df["colour"] = pd.Categorical(["red", "green"] * 10)
    with pytest.raises(InputError, match="X: column 'colour' has dtype category") as err:
        _fit(cls, df, y)
    assert "'red'" in str(err.value) or "'green'" in str(err.value)
    df["colour"] = pd.Categorical([1.5, 2.0] * 10)  # numeric categories are numbers
    _fit(cls, df, y)
