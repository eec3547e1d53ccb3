"""Callable kernels (scikit-learn's ``kernel=f``): detection, kernel_params, the estimators."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.kernel_ridge import KernelRidge as SkKernelRidge
from sklearn.metrics.pairwise import pairwise_kernels

from kernelkit import KernelPCA, KernelRidge, NystromFeatures
from kernelkit.gram import gram
from kernelkit.kernels._callable import CallableKernel
from kernelkit.testing import check_kernel
from kernelkit.utils._errors import InputError, ParameterError


def rbf_rows(x, y):
    return np.exp(-np.sum((x - y) ** 2))


def rbf_blocks(A, B, gamma=1.0):
    return np.exp(-gamma * ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    return rng.normal(size=(25, 3)), rng.normal(size=(7, 3)), rng.normal(size=25)


def test_krr_callable_equals_rbf_and_sklearn(data):
    X, Xt, y = data
    n = len(X)
    ours = KernelRidge(kernel=lambda x, y: np.exp(-np.sum((x - y) ** 2)), lam=0.1 / n).fit(X, y)
    rbf = KernelRidge(kernel="rbf", gamma=1.0, lam=0.1 / n).fit(X, y)
    sk = SkKernelRidge(kernel=rbf_rows, alpha=0.1).fit(X, y)
    assert ours.kernel_.mode_ == "pairwise"
    np.testing.assert_allclose(ours.predict(Xt), rbf.predict(Xt), rtol=0, atol=1e-10)
    np.testing.assert_allclose(ours.predict(Xt), sk.predict(Xt), rtol=0, atol=1e-10)


@pytest.mark.parametrize("gamma", [0.3, 2.0])
def test_kernel_params_reach_the_callable(data, gamma):
    X, Xt, _ = data
    blocks = KernelPCA(kernel=rbf_blocks, kernel_params={"gamma": gamma}, n_components=3)
    blocks.fit(X)
    assert blocks.kernel_.mode_ == "block"
    rbf = KernelPCA(kernel="rbf", gamma=gamma, n_components=3).fit(X)
    np.testing.assert_allclose(blocks.transform(Xt), rbf.transform(Xt), rtol=0, atol=1e-10)


def test_gram_equals_sklearn_pairwise_kernels(data):
    X, Xt, _ = data
    k = CallableKernel(rbf_blocks, {"gamma": 0.5})

    def rows(x, y, gamma):
        return np.exp(-gamma * np.sum((x - y) ** 2))

    expected = pairwise_kernels(Xt, X, metric=rows, gamma=0.5)
    np.testing.assert_allclose(gram(k, Xt, X, block_size=4), expected, rtol=0, atol=1e-14)


def test_block_shaped_by_accident_is_evaluated_pairwise():
    # np.dot on two 3x3 blocks returns a 3x3 array that is not the Gram: detected as pairwise
    X = np.random.default_rng(1).normal(size=(6, 3))
    k = CallableKernel(np.dot)
    np.testing.assert_allclose(gram(k, X), X @ X.T, rtol=0, atol=1e-13)
    assert k.mode_ == "pairwise"


def test_check_kernel_accepts_a_pd_callable(data):
    X, Xt, _ = data
    check_kernel(CallableKernel(rbf_blocks, {"gamma": 0.5}), X[:10], Xt)


def test_bad_callable_and_kernel_params_are_named_errors(data):
    X, _, y = data
    with pytest.raises(InputError, match="kernel: the callable"):
        KernelRidge(kernel=lambda x, y: "text").fit(X, y)
    with pytest.raises(InputError, match="kernel_params: only used with a callable"):
        KernelPCA(kernel="rbf", kernel_params={"gamma": 1.0}).fit(X)
    with pytest.raises(ParameterError, match="kernel_params"):
        KernelPCA(kernel=rbf_rows, kernel_params=[1]).fit(X)


def test_pairwise_calls_as_many_as_sklearn_and_params_not_copied(data):
    """A pairwise function sees rows only, as often as scikit-learn calls it: once per pair
    i <= j of a symmetric block (no probe calls), and kernel_params are the caller's dict."""
    from sklearn.kernel_approximation import Nystroem

    X = np.abs(data[0][:12])  # histogram intersection: PD on non-negative vectors

    def logged(x, y, log):
        assert x.ndim == 1 and y.ndim == 1
        log.append(1)
        return float(np.minimum(x, y).sum())

    ours, theirs = [], []
    NystromFeatures(kernel=logged, kernel_params={"log": ours}, n_centers=9).fit(X)
    Nystroem(kernel=logged, kernel_params={"log": theirs}, n_components=9).fit(X)
    assert len(ours) == len(theirs) == 9 * 10 // 2
    ours.clear()
    k = CallableKernel(logged, {"log": ours})
    K = gram(k, X[:5], X[5:])
    assert len(ours) == 5 * 7
    np.testing.assert_allclose(K, [[np.minimum(a, b).sum() for b in X[5:]] for a in X[:5]])
