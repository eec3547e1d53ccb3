"""Arc-cosine and ReLU NTK kernels against Monte Carlo over their random-feature definitions."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
import torch

from kernelkit.kernels import ArcCosine, ReLUNTK
from kernelkit.testing import check_kernel
from kernelkit.utils._errors import InputError

SIZES = [(10**5, 4.0), pytest.param(10**6, 3.0, marks=pytest.mark.slow)]
"""(Monte Carlo draws, bound in standard errors): 10^6 draws within 3 standard errors on
every one of the 20 pairs is the acceptance check; the fast check with 10^5 draws allows 4
(a family of 20 correlated comparisons)."""


def _pairs():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((4, 3)) * [[1.0], [0.5], [2.0], [1.3]]
    Y = np.vstack([rng.standard_normal((3, 3)), -X[0], 2.0 * X[1]])  # + opposite, parallel
    return X, Y


@functools.cache
def _projections(size):
    """``w^T x`` and ``w^T y`` for ``size`` draws ``w ~ N(0, I_3)``, shared by the tests."""
    X, Y = _pairs()
    W = np.random.default_rng(42).standard_normal((size, 3))
    return W @ X.T, W @ Y.T  # (N, 4), (N, 5)


def _monte_carlo(features, size):
    """Mean and standard error of ``features(w)`` over the draws, for every pair."""
    X, Y = _pairs()
    A, B = _projections(size)
    means, errors = np.empty((4, 5)), np.empty((4, 5))
    for i in range(4):
        vals = features(A[:, i : i + 1], B, X[i] @ Y.T)
        means[i] = vals.mean(0)
        errors[i] = vals.std(0, ddof=1) / math.sqrt(size)
    return means, errors


@pytest.mark.parametrize(("size", "z"), SIZES)
@pytest.mark.parametrize("order", [0, 1, 2])
def test_arccos_equals_monte_carlo_of_its_features(order, size, z):
    def sigma(u):  # sqrt(2) u^n 1[u > 0]: note the sqrt(2) (course part 3, erratum 3)
        return math.sqrt(2.0) * np.where(u > 0, u**order, 0.0)

    mean, err = _monte_carlo(lambda a, b, _: sigma(a) * sigma(b), size)
    X, Y = _pairs()
    K = ArcCosine(order)(torch.as_tensor(X), torch.as_tensor(Y)).numpy()
    assert np.all(np.abs(K - mean) <= z * err + 1e-12), (K - mean) / err


@pytest.mark.parametrize(("size", "z"), SIZES)
def test_relu_kernel_is_twice_the_relu_expectation(size, z):
    mean, err = _monte_carlo(lambda a, b, _: np.maximum(a, 0) * np.maximum(b, 0), size)
    X, Y = _pairs()
    K = ArcCosine(1)(torch.as_tensor(X), torch.as_tensor(Y)).numpy()
    assert np.all(np.abs(K / 2 - mean) <= z * err + 1e-12)


@pytest.mark.parametrize(("size", "z"), SIZES)
def test_ntk_equals_monte_carlo_of_its_definition(size, z):
    def ntk(a, b, dots):
        return np.maximum(a, 0) * np.maximum(b, 0) + dots * ((a > 0) & (b > 0))

    mean, err = _monte_carlo(ntk, size)
    X, Y = _pairs()
    K = ReLUNTK()(torch.as_tensor(X), torch.as_tensor(Y)).numpy()
    assert np.all(np.abs(K - mean) <= z * err + 1e-12), (K - mean) / err


def test_ntk_is_the_gradient_inner_product_of_a_wide_network():
    """``<grad f(x), grad f(y)>`` of one wide random network (m = 200000) is close."""
    g = torch.Generator().manual_seed(3)
    m = 200_000
    W = torch.randn(m, 3, generator=g, dtype=torch.float64)
    v = torch.randn(m, generator=g, dtype=torch.float64)
    X, Y = (torch.as_tensor(a) for a in _pairs())

    def grads(x):
        pre = W @ x
        dv = torch.relu(pre) / math.sqrt(m)
        dW = (v * (pre > 0))[:, None] * x[None, :] / math.sqrt(m)
        return torch.cat([dv, dW.ravel()])

    emp = torch.stack([torch.stack([grads(x) @ grads(y) for y in Y]) for x in X])
    np.testing.assert_allclose(emp.numpy(), ReLUNTK()(X, Y).numpy(), rtol=0.05, atol=0.02)


def test_closed_forms_and_checks():
    x = torch.tensor([[1.0, 0.0]], dtype=torch.float64)
    y = torch.tensor([[0.0, 2.0]], dtype=torch.float64)
    assert float(ArcCosine(0)(x, y)) == pytest.approx(0.5)
    assert float(ArcCosine(1)(x, y)) == pytest.approx(2.0 / math.pi)
    assert float(ArcCosine(2)(x, x)) == pytest.approx(3.0)  # (1/pi) * 1 * J_2(0) = 3
    assert float(ArcCosine(1)(x, -x)) == pytest.approx(0.0, abs=1e-15)
    assert float(ArcCosine(0)(torch.zeros(1, 2, dtype=torch.float64), x)) == pytest.approx(0.5)
    for kernel_cls in (ArcCosine, ReLUNTK):
        for kernel, X, Y in (
            kernel_cls._check_example()
            if kernel_cls is ArcCosine
            else [kernel_cls._check_example()]
        ):
            check_kernel(kernel, X, Y)
    with pytest.raises(InputError, match="order: expected 0, 1 or 2, got 3"):
        ArcCosine(3)
