"""Random Fourier features: Monte-Carlo convergence to the kernel, scale, seeding, errors.

Oracle: the exact Gram of each kernel; the measured error must fall as ``p^{-1/2}`` (the
Monte-Carlo rate) over ``p = 10^2 .. 10^5``.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.base import clone

from kernelkit import RandomFourierFeatures
from kernelkit.gram import gram, random_fourier_map
from kernelkit.kernels import Gaussian, Laplacian, Linear, Matern, Spectrum
from kernelkit.utils._errors import InputError

P_GRID = np.logspace(2, 5, 7).astype(int)


@pytest.fixture(autouse=True)
def _one_thread(one_torch_thread):
    """Tiny problems: one torch thread."""


def _X(n=40, d=3, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d))


def _errors(kernel, X, seeds=(0, 1, 2)):
    """Max and mean absolute Gram errors, averaged over ``seeds``, for every p of the grid."""
    Xt = torch.as_tensor(X)
    K = gram(kernel, Xt)
    out = []
    for p in P_GRID:
        errs = []
        for s in seeds:
            Z = random_fourier_map(kernel, X.shape[1], int(p), random_state=s).features(Xt)
            E = (Z @ Z.T - K).abs()
            errs.append((float(E.max()), float(E.mean())))
        out.append(np.mean(errs, axis=0))
    return np.array(out)


@pytest.mark.parametrize(
    "kernel",
    [Gaussian(1.5), Laplacian(2.0), Matern(nu=1.5, sigma=1.5), Matern(nu=0.7, sigma=2.0)],
    ids=repr,
)
def test_gram_error_decreases_at_the_monte_carlo_rate(kernel):
    err = _errors(kernel, _X())
    for column in (0, 1):  # max and mean error
        slope = np.polyfit(np.log(P_GRID), np.log(err[:, column]), 1)[0]
        assert -0.65 <= slope <= -0.35, (column, slope)
    # at p = 1e5 the mean error is of order 1/sqrt(p): no bias and the sqrt(2/p) scale
    assert err[-1, 1] < 3 / np.sqrt(P_GRID[-1])


def test_feature_norm_is_one_on_average():
    """||z(x)||^2 = (2/p) sum cos^2 -> 1 = k(x, x): the scale is sqrt(2/p), not sqrt(2/d)."""
    X = _X(n=5, d=10)
    Z = RandomFourierFeatures(Gaussian(1.0), n_components=20000, random_state=0).fit_transform(X)
    np.testing.assert_allclose((Z**2).sum(1), 1.0, atol=0.03)


@pytest.mark.parametrize(
    "make", [lambda: 0, lambda: np.random.RandomState(0), lambda: np.random.default_rng(0)]
)
def test_random_state_kinds_give_identical_fits(make):
    X = _X()
    a = RandomFourierFeatures(n_components=50, random_state=make()).fit_transform(X)
    b = RandomFourierFeatures(n_components=50, random_state=make()).fit_transform(X)
    np.testing.assert_array_equal(a, b)
    est = RandomFourierFeatures(n_components=50, random_state=make())
    np.testing.assert_array_equal(clone(est).fit_transform(X), clone(est).fit_transform(X))


def test_same_draws_for_float32_and_tensors():
    X = _X()
    est = RandomFourierFeatures(Laplacian(1.0), 64, random_state=3)
    Z64 = est.fit_transform(X)
    Z32 = est.fit(torch.as_tensor(X, dtype=torch.float32)).transform(
        torch.as_tensor(X, dtype=torch.float32)
    )
    assert isinstance(Z32, torch.Tensor) and Z32.dtype == torch.float32
    np.testing.assert_allclose(Z32.numpy(), Z64, atol=1e-5)
    assert est.map_.weights.shape == (64, 3) and est.n_components_ == 64


@pytest.mark.parametrize("kernel", [Linear(), 2.0 * Gaussian(1.0), Spectrum(k=2)], ids=repr)
def test_other_kernels_are_refused(kernel):
    with pytest.raises(InputError, match="kernel: random Fourier features need"):
        RandomFourierFeatures(kernel).fit(_X())


def test_bad_n_components_names_the_argument():
    with pytest.raises(InputError, match="n_components"):
        RandomFourierFeatures(n_components=0).fit(_X())
