"""Dot-product kernels on the sphere against closed forms (course part 3, section 6)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from kernelkit.kernels import (
    Gaussian,
    SphereExponential,
    SphereInversePolynomial,
    SpherePolynomial,
    SphereVovk,
)
from kernelkit.kernels._dot_product import KAPPAS, kappa_function, kappa_taylor_coefficients
from kernelkit.testing import check_kernel
from kernelkit.utils._errors import InputError

PARAMS = {"exp": {"alpha": 1.7}, "polynomial": {"degree": 3, "offset": 0.5}, "vovk": {"degree": 4}}


def _vectors(n=7, d=4, seed=0):
    return torch.as_tensor(np.random.default_rng(seed).standard_normal((n, d)))


def test_exponential_on_the_sphere_is_the_gaussian():
    X = _vectors()
    U = X / X.norm(dim=1, keepdim=True)
    alpha = 2.5
    torch.testing.assert_close(SphereExponential(alpha)(X), Gaussian(alpha**-0.5)(U))


@pytest.mark.parametrize("name", sorted(KAPPAS))
def test_taylor_coefficients_are_nonnegative_and_sum_to_kappa(name):
    params = PARAMS.get(name, {})
    b = kappa_taylor_coefficients(name, 80, **params)
    assert min(b) >= 0
    u = torch.linspace(-0.9, 0.9, 7, dtype=torch.float64)
    series = sum(c * u**j for j, c in enumerate(b))
    torch.testing.assert_close(series, kappa_function(name, **params)(u), rtol=1e-10, atol=1e-12)
    assert float(kappa_function(name, **params)(torch.tensor(1.0))) == pytest.approx(1.0)


@pytest.mark.parametrize(
    "kernel",
    [SphereExponential(0.8, homogeneous=True), SphereInversePolynomial(homogeneous=True),
     SpherePolynomial(2, 1.0, homogeneous=True), SphereVovk(3, homogeneous=True)],
    ids=repr,
)  # fmt: skip
def test_homogeneous_kernels(kernel):
    X, Y = _vectors(), _vectors(4, seed=1)
    check_kernel(kernel, X, Y)
    nx, ny = X.norm(dim=1), Y.norm(dim=1)
    cos = (X @ Y.T) / (nx[:, None] * ny[None, :])
    torch.testing.assert_close(kernel(X, Y), nx[:, None] * ny[None, :] * kernel.kappa(cos))
    torch.testing.assert_close(kernel.diag(X), nx**2)


def test_vovk3_closed_form_and_unknown_kappa():
    u = torch.tensor([-0.5, 0.0, 0.3], dtype=torch.float64)
    torch.testing.assert_close(SphereVovk(3).kappa(u), (1 + u + u**2) / 3)
    with pytest.raises(InputError, match="kappa: expected one of"):
        kappa_function("arccos")
