"""The max-standardised permutation test over several kernels (stats.aggregate)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from kernelkit.kernels import Gaussian
from kernelkit.stats import gaussian_width_grid, two_sample_test
from kernelkit.stats._aggregate import aggregated_permutation_null, standardise
from kernelkit.stats._mmd import mmd2_from_gram
from kernelkit.stats._nulls import permutation_indicators, pvalue
from kernelkit.utils._errors import InputError


def _gram(Z, sigma):
    Z = torch.as_tensor(Z)
    return torch.exp(-(torch.cdist(Z, Z) ** 2) / (2 * sigma**2))


def _brute_force(X, Y, sigmas, J, seed):
    """Loop over relabellings and kernels: MMD^2_u of each permuted Gram, each kernel's
    statistics standardised by their mean and sd over the J + 1 relabellings, max over
    kernels, p = (1 + #{M_j >= M_0}) / (1 + J)."""
    Z = np.vstack([X, Y])
    N, n = len(Z), len(X)
    rng = np.random.default_rng(seed)
    orders = [np.arange(N)]
    for start in range(0, J, 256):
        S = permutation_indicators(N, n, min(256, J - start), rng).numpy()
        for col in S.T:
            orders.append(np.concatenate([np.flatnonzero(col), np.flatnonzero(col == 0)]))
    T = np.empty((len(sigmas), J + 1))
    for i, sigma in enumerate(sigmas):
        K = _gram(Z, sigma)
        for j, order in enumerate(orders):
            T[i, j] = mmd2_from_gram(K[order][:, order], n)
    Zs = (T - T.mean(1, keepdims=True)) / T.std(1, keepdims=True)
    M = Zs.max(0)
    return Zs[:, 0], M, (1 + np.sum(M[1:] >= M[0])) / (1 + J)


def test_aggregated_test_equals_brute_force_loop():
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(14, 2)), rng.normal(size=(17, 2)) * 1.3
    sigmas = (0.3, 1.0, 3.0)
    J = 300
    res = two_sample_test(
        X, Y, kernel=[Gaussian(s) for s in sigmas], n_permutations=J, random_state=4
    )
    scores, M, p = _brute_force(X, Y, sigmas, J, seed=4)
    assert res.pvalue == p
    np.testing.assert_allclose(res.null_samples, M[1:], atol=1e-9)
    assert abs(res.statistic - M[0]) < 1e-9
    np.testing.assert_allclose(list(res.selection.values()), scores, atol=1e-9)
    assert res.kernel.sigma == sigmas[int(np.argmax(scores))]
    assert (res.n_x, res.n_y, res.method) == (14, 17, "permutation")


def test_one_kernel_is_the_plain_permutation_test():
    rng = np.random.default_rng(1)
    X, Y = rng.normal(size=(40, 1)), rng.normal(0.3, 1.0, size=(40, 1))
    agg = two_sample_test(X, Y, kernel=[Gaussian(1.0)], n_permutations=500, random_state=2)
    plain = two_sample_test(X, Y, kernel=Gaussian(1.0), n_permutations=500, random_state=2)
    assert agg.pvalue == plain.pvalue


def test_level_is_exact_under_the_null():
    """Under H0 the p-value is uniform on {1/(J+1), ..., 1}: P(p <= alpha) = alpha for
    alpha a multiple of 1/(J+1)."""
    rng = np.random.default_rng(2)
    draws, J, n = 300, 19, 15
    p = np.empty(draws)
    for d in range(draws):
        Z = rng.normal(size=(2 * n, 1))
        grams = (_gram(Z, s) for s in (0.25, 0.5, 1.0, 2.0, 4.0))
        agg = aggregated_permutation_null(grams, 2 * n, n, J, rng)
        p[d] = pvalue(agg.statistic, agg.null)
    for alpha in (0.05, 0.1, 0.25, 0.5):
        se = np.sqrt(alpha * (1 - alpha) / draws)
        assert abs(np.mean(p <= alpha) - alpha) < 3 * se


def test_aggregate_is_the_default_for_a_list_and_split_stays_available():
    rng = np.random.default_rng(3)
    X, Y = rng.normal(size=(30, 1)), rng.laplace(scale=1 / np.sqrt(2), size=(30, 1))
    grid = gaussian_width_grid(X, Y)
    agg = two_sample_test(X, Y, kernel=grid, n_permutations=50, random_state=0)
    split = two_sample_test(X, Y, kernel=grid, n_permutations=50, selection="split")
    assert agg.n_x == 30 and split.n_x == 15
    spectral = two_sample_test(X, Y, kernel=grid, method="spectral", n_permutations=50)
    assert spectral.n_x == 15


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"selection": "best"}, "selection: expected one of aggregate, split"),
        ({"selection": "aggregate", "method": "spectral"}, "selection: 'aggregate' needs"),
        ({"kernel": []}, "kernel: expected at least one candidate"),
        ({"Y": np.ones((1, 2))}, "X, Y: the unbiased MMD needs at least 2 points"),
    ],
)
def test_selection_errors_name_the_argument(kwargs, match):
    X = np.arange(20.0).reshape(10, 2)
    kwargs = {"Y": X + 1, "kernel": [Gaussian(1.0), Gaussian(2.0)], **kwargs}
    with pytest.raises(InputError, match=match):
        two_sample_test(X, **kwargs)


def test_standardise_centres_scales_and_zeroes_constant_rows():
    T = torch.tensor([[1.0, 2.0, 3.0, 6.0], [5.0, 5.0, 5.0, 5.0]], dtype=torch.float64)
    Z = standardise(T)
    row = T[0].numpy()
    np.testing.assert_allclose(Z[0].numpy(), (row - row.mean()) / row.std(), atol=1e-15)
    assert torch.all(Z[1] == 0)
