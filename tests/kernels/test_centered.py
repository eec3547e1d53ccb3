"""CenteredKernel: a vector kernel on inputs shifted by a fixed centre (kernels.centered)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel

from kernelkit.kernels import CenteredKernel, Gaussian, Linear, Polynomial, Spectrum
from kernelkit.testing import check_kernel
from kernelkit.utils._errors import InputError

RNG = np.random.default_rng(0)
X = RNG.normal(size=(30, 4))
Y = RNG.normal(size=(20, 4)) + 0.5
C = (0.4, -1.0, 2.0, 0.1)


@pytest.mark.parametrize("degree", [1, 2, 3])
def test_centered_polynomial_equals_sklearn_on_shifted_inputs(degree):
    k = CenteredKernel(Polynomial(degree=degree, offset=0.0), center=C)
    c = np.asarray(C)
    expected = polynomial_kernel(X - c, Y - c, degree=degree, gamma=1.0, coef0=0.0)
    np.testing.assert_allclose(k(X, Y).numpy(), expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(k.diag(X).numpy(), np.sum((X - c) ** 2, 1) ** degree, rtol=1e-12)


def test_centring_leaves_a_stationary_kernel_unchanged():
    k = CenteredKernel(Gaussian(sigma=1.3), center=C)
    gamma = 1 / (2 * 1.3**2)
    np.testing.assert_allclose(k(X, Y).numpy(), rbf_kernel(X, Y, gamma=gamma), atol=1e-12)
    np.testing.assert_allclose(k(X).numpy(), rbf_kernel(X, gamma=gamma), atol=1e-12)


def test_centered_kernel_passes_the_kernel_checks():
    check_kernel(CenteredKernel(Linear(), center=np.array(C)), X, Y)
    check_kernel(CenteredKernel(Polynomial(degree=2, offset=0.0), center=C), X, Y)


@pytest.mark.parametrize(
    ("kernel", "center", "match"),
    [
        (Spectrum(k=2), (0.0,), "kernel: expected a kernel on vectors, got Spectrum"),
        (Linear(), (0.0, np.nan), "center: expected a non-empty 1-D array of finite numbers"),
        (Linear(), [[0.0, 1.0]], "center: expected a non-empty 1-D array"),
        (Linear(), (), "center: expected a non-empty 1-D array"),
        (Linear(), "origin", "center: expected a non-empty 1-D array"),
        ("linear", (0.0,), "kernel: expected a kernelkit Kernel, got str"),
    ],
)
def test_bad_arguments_are_named(kernel, center, match):
    with pytest.raises(InputError, match=match):
        CenteredKernel(kernel, center=center)


def test_inputs_of_another_width_are_named():
    k = CenteredKernel(Linear(), center=(0.0, 1.0))
    with pytest.raises(InputError, match=r"X: expected 2 features \(the length of center\), got 4"):
        k(X)
