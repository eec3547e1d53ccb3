"""width_and_moment_grid: Gaussian widths plus the mean and covariance tests (stats.selection)."""

from __future__ import annotations

import numpy as np
import pytest

from kernelkit.kernels import CenteredKernel, Gaussian, Linear
from kernelkit.stats import gaussian_width_grid, mmd, two_sample_test, width_and_moment_grid
from kernelkit.utils._errors import InputError


def _samples(seed, n=25, m=32, d=3):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)), rng.standard_t(5, size=(m, d)) * 1.4 + 0.3


def test_grid_is_the_width_grid_then_the_moment_kernels():
    X, Y = _samples(0)
    grid = width_and_moment_grid(X, Y, factors=(0.5, 1.0, 2.0), moments=(1, 2, 3))
    widths = gaussian_width_grid(X, Y, (0.5, 1.0, 2.0))
    assert [repr(k) for k in grid[:3]] == [repr(k) for k in widths]
    assert all(isinstance(k, Gaussian) for k in grid[:3])
    assert isinstance(grid[3], Linear)
    assert [k.kernel.degree for k in grid[4:]] == [2, 3]
    pooled_mean = np.vstack([X, Y]).mean(0)
    for k in grid[4:]:
        assert isinstance(k, CenteredKernel) and k.kernel.offset == 0.0
        np.testing.assert_allclose(k.center, pooled_mean, rtol=0, atol=1e-15)


def test_linear_kernel_mmd_is_the_mean_difference():
    """Biased: ||xbar - ybar||^2; unbiased: that minus tr(S_x)/n + tr(S_y)/m (S: ddof 1)."""
    X, Y = _samples(1)
    linear = width_and_moment_grid(X, Y, moments=(1,))[-1]
    gap = np.sum((X.mean(0) - Y.mean(0)) ** 2)
    assert abs(mmd(X, Y, kernel=linear, estimator="biased") - gap) < 1e-12
    unbiased = gap - np.trace(np.cov(X.T)) / len(X) - np.trace(np.cov(Y.T)) / len(Y)
    assert abs(mmd(X, Y, kernel=linear) - unbiased) < 1e-12


def test_centred_quadratic_mmd_is_the_second_moment_frobenius_distance():
    X, Y = _samples(2)
    quadratic = width_and_moment_grid(X, Y, moments=(2,))[-1]
    c = np.vstack([X, Y]).mean(0)
    A, B = (X - c).T @ (X - c) / len(X), (Y - c).T @ (Y - c) / len(Y)
    assert abs(mmd(X, Y, kernel=quadratic, estimator="biased") - np.sum((A - B) ** 2)) < 1e-12


def test_equal_sizes_make_it_the_covariance_distance():
    """With n = m the mean terms about the pooled mean cancel: ||Cov_X - Cov_Y||_F^2."""
    X, Y = _samples(3, n=30, m=30)
    quadratic = width_and_moment_grid(X, Y, moments=(2,))[-1]
    cov = np.cov(X.T, ddof=0) - np.cov(Y.T, ddof=0)
    assert abs(mmd(X, Y, kernel=quadratic, estimator="biased") - np.sum(cov**2)) < 1e-12


def test_level_is_exact_under_the_null():
    """The pooled median and mean are relabelling-invariant, so the aggregated test over the
    grid has a uniform p-value on {1/(J+1), ..., 1} under H0."""
    rng = np.random.default_rng(4)
    draws, J, n = 300, 19, 15
    p = np.empty(draws)
    for d in range(draws):
        X, Y = rng.exponential(size=(n, 2)), rng.exponential(size=(n, 2))
        grid = width_and_moment_grid(X, Y)
        p[d] = two_sample_test(X, Y, kernel=grid, n_permutations=J, random_state=rng).pvalue
    for alpha in (0.05, 0.1, 0.25, 0.5):
        se = np.sqrt(alpha * (1 - alpha) / draws)
        assert abs(np.mean(p <= alpha) - alpha) < 3 * se


def test_the_moment_kernels_take_part_in_the_aggregated_test():
    rng = np.random.default_rng(5)
    X, Y = rng.normal(size=(40, 1)), rng.normal(0.0, 2.0, size=(40, 1))
    res = two_sample_test(X, Y, kernel=width_and_moment_grid(X, Y), n_permutations=99)
    assert len(res.selection) == 7
    assert "Linear()" in res.selection
    assert any(key.startswith("CenteredKernel(kernel=Polynomial(degree=2") for key in res.selection)


@pytest.mark.parametrize(
    ("X", "kwargs", "match"),
    [
        (["ACGT", "ACGA"], {}, "X: a width and moment grid needs vectors, got sequences"),
        (np.ones((4, 2)), {"moments": (1, 0)}, r"moments: expected an integer >= 1, got 0"),
        (np.ones((4, 2)), {"moments": (2.0,)}, r"moments: expected an integer >= 1, got 2.0"),
        (np.ones((4, 2)), {"moments": (2, 2)}, r"moments: expected distinct degrees"),
    ],
)
def test_errors_name_the_argument(X, kwargs, match):
    Y = ["ACGG", "TCGT"] if isinstance(X, list) else X + 1
    with pytest.raises(InputError, match=match):
        width_and_moment_grid(X, Y, **kwargs)
