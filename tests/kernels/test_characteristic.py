"""The ball-spectrum kernel: Bochner's expectation, and an MMD blind spot the Gaussian sees."""

from __future__ import annotations

import math

import numpy as np
import torch

from kernelkit.kernels import BallSpectrum, Gaussian
from kernelkit.testing import check_kernel


def test_equals_monte_carlo_over_the_uniform_ball():
    rng = np.random.default_rng(0)
    n, d, sigma = 200_000, 3, 0.7
    w = rng.standard_normal((n, d))
    radius = rng.random(n) ** (1 / d) / sigma  # uniform in the ball of radius 1 / sigma
    w *= (radius / np.linalg.norm(w, axis=1))[:, None]
    X, Y = rng.standard_normal((4, d)), rng.standard_normal((3, d))
    K = BallSpectrum(sigma)(torch.as_tensor(X), torch.as_tensor(Y)).numpy()
    for i in range(4):
        vals = np.cos((X[i] - Y) @ w.T)  # (3, n)
        err = vals.std(1, ddof=1) / math.sqrt(n)
        assert np.all(np.abs(K[i] - vals.mean(1)) <= 4 * err)


def test_one_dimension_is_sinc_and_checks():
    z = torch.tensor([[0.0], [0.5], [2.0], [7.0]], dtype=torch.float64)
    K = BallSpectrum(1.0)(z[:1], z).numpy()[0]
    np.testing.assert_allclose(K, [1.0, *(np.sin(r) / r for r in (0.5, 2.0, 7.0))], atol=1e-14)
    for kernel, X, Y in BallSpectrum._check_example():
        check_kernel(kernel, X, Y)


def test_not_characteristic_where_the_gaussian_is():
    """p = N(0, 3^2) and q = p (1 + 0.9 cos 3x) have characteristic functions that differ
    only near +-3 (by at most e^{-18} on [-1, 1]): MMD^2 = int int k (p - q)(p - q) is 0 for
    the sinc kernel (spectrum [-1, 1]) and not for a Gaussian (full spectrum)."""
    x = np.arange(-20.0, 20.0, 0.05)
    p = np.exp(-(x**2) / 18.0) / math.sqrt(18.0 * math.pi)
    h = -0.9 * p * np.cos(3.0 * x) * 0.05  # (p - q) dx
    grid = torch.as_tensor(x[:, None])
    mmd_ball = h @ BallSpectrum(1.0)(grid).numpy() @ h
    mmd_gauss = h @ Gaussian(0.3)(grid).numpy() @ h
    assert abs(mmd_ball) < 1e-12
    assert mmd_gauss > 1e-3
