"""Two-sample tests: permutation statistics by one product, nulls, p-values, hyppo, errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from kernelkit.kernels import Gaussian, Polynomial
from kernelkit.stats import gaussian_width_grid, select_kernel, two_sample_test
from kernelkit.stats._mmd import mmd2_from_gram
from kernelkit.stats._nulls import (
    centred_gram_eigenvalues,
    permutation_indicators,
    permutation_null,
    spectral_null,
    split_statistics,
)
from kernelkit.stats._selection import power_criterion
from kernelkit.utils._errors import InputError


def _gram(Z, sigma=1.0):
    Z = torch.as_tensor(Z)
    return torch.exp(-(torch.cdist(Z, Z) ** 2) / (2 * sigma**2))


def test_split_statistics_equal_recomputation():
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(23, 2))
    K = _gram(Z)
    n = 9
    S = permutation_indicators(23, n, 7, rng)
    assert torch.all(S.sum(0) == n)
    for unbiased in (True, False):
        got = split_statistics(K, S, unbiased=unbiased)
        for j in range(7):
            idx = torch.cat([torch.nonzero(S[:, j]).ravel(), torch.nonzero(S[:, j] == 0).ravel()])
            Kp = K[idx][:, idx]
            assert abs(float(got[j]) - mmd2_from_gram(Kp, n, unbiased=unbiased)) < 1e-12


def test_pvalue_formula_and_reproducibility():
    rng = np.random.default_rng(1)
    X, Y = rng.normal(size=(30, 2)), rng.normal(size=(30, 2)) + 0.3
    r1 = two_sample_test(X, Y, kernel=Gaussian(1.0), n_permutations=99, random_state=5)
    r2 = two_sample_test(X, Y, kernel=Gaussian(1.0), n_permutations=99, random_state=5)
    assert r1.pvalue == r2.pvalue
    assert r1.null_samples.shape == (99,)
    assert r1.pvalue == (1 + np.sum(r1.null_samples >= r1.statistic)) / 100
    assert r1.kernel.sigma == 1.0 and r1.method == "permutation"


def test_spectral_null_matches_the_eigenvalue_series_and_the_permutation_null():
    rng = np.random.default_rng(3)
    Z = rng.normal(size=(160, 2))
    K = _gram(Z, 1.0)
    n = 70
    N = 160
    lam = centred_gram_eigenvalues(K) / N
    Hc = torch.eye(N, dtype=torch.float64) - 1.0 / N
    np.testing.assert_allclose(
        np.sort(lam)[::-1][:5],
        np.sort(np.linalg.eigvalsh((Hc @ K @ Hc).numpy()))[::-1][:5] / N,
        atol=1e-12,
    )
    spec = spectral_null(K, n, 4000, np.random.default_rng(0))
    perm = permutation_null(K, n, 4000, np.random.default_rng(0))
    c = 1 / n + 1 / (N - n)
    assert abs(spec.var() - 2 * c**2 * np.sum(lam**2)) < 0.1 * 2 * c**2 * np.sum(lam**2)
    assert abs(np.quantile(spec, 0.95) - np.quantile(perm, 0.95)) < 0.2 * np.quantile(perm, 0.95)


def test_linear_and_block_tests_detect_a_shift():
    rng = np.random.default_rng(4)
    X, Y = rng.normal(size=(20000, 2)), rng.normal(size=(20000, 2)) + 0.3
    lin = two_sample_test(X, Y, kernel=Gaussian(1.0), method="linear", random_state=0)
    assert lin.pvalue < 1e-3 and lin.null_samples.shape == (1000,)
    blk = two_sample_test(X, Y, kernel=Gaussian(1.0), method="block", random_state=0)
    assert blk.pvalue < 1e-3
    same = two_sample_test(X, rng.normal(size=(20000, 2)), kernel=Gaussian(1.0), method="linear")
    assert same.pvalue > 1e-3


def test_power_criterion_equals_formula_and_selection_picks_the_best():
    rng = np.random.default_rng(5)
    m = 30
    X, Y = rng.normal(size=(m, 1)), rng.laplace(scale=1 / np.sqrt(2), size=(m, 1))
    K = _gram(np.vstack([X, Y]), 0.7)
    Kn = K.numpy()
    H = Kn[:m, :m] + Kn[m:, m:] - Kn[:m, m:] - Kn[m:, :m]
    mmd2 = (H.sum() - np.trace(H)) / (m * (m - 1))
    var = 4 / m**3 * sum(H[i].sum() ** 2 for i in range(m)) - 4 / m**4 * H.sum() ** 2
    assert abs(power_criterion(K, m) - mmd2 / np.sqrt(var + 1e-8)) < 1e-10
    grid = gaussian_width_grid(X, Y)
    choice = select_kernel(X, Y, grid)
    assert choice.scores[repr(choice.kernel)] == max(choice.scores.values())
    res = two_sample_test(X, Y, kernel=grid, n_permutations=50, random_state=0, selection="split")
    assert res.n_x == m // 2 and len(res.selection) == len(grid)


def test_selection_among_string_kernel_specs():
    X = ["ACGTACGTAC", "ACGTTCGAAC", "ACGAACGTAA", "TCGTACGAAC"] * 4
    Y = ["ACGTACGTCC", "ACGTTCGACC", "ACGAACGTCA", "TCGTACGACC"] * 4
    res = two_sample_test(X, Y, kernel=["spectrum:k=1", "spectrum:k=3"], n_permutations=50)
    assert sorted(res.selection) == ["Spectrum(k=1, alphabet=None)", "Spectrum(k=3, alphabet=None)"]
    assert repr(res.kernel) == max(res.selection, key=res.selection.get)
    with pytest.raises(InputError, match="not a precomputed Gram"):
        two_sample_test(X, Y, kernel=["precomputed"])


def test_structured_samples_and_precomputed():
    X = ["ACGTACGT", "ACGTTCGA", "ACGAACGT", "TCGTACGA"] * 3
    Y = ["GGGCCCGG", "GGCCGGCC", "CCGGGCCC", "GCGCGCGG"] * 3
    res = two_sample_test(X, Y, kernel="spectrum:k=2", n_permutations=200, random_state=0)
    assert res.pvalue < 0.01
    rng = np.random.default_rng(6)
    Z = rng.normal(size=(40, 2))
    K = _gram(Z).numpy()
    r1 = two_sample_test(K, 20, kernel="precomputed", n_permutations=50, random_state=0)
    r2 = two_sample_test(Z[:20], Z[20:], kernel=Gaussian(1.0), n_permutations=50, random_state=0)
    assert abs(r1.statistic - r2.statistic) < 1e-12 and r1.pvalue == r2.pvalue


@pytest.mark.parametrize(
    ("X", "Y", "kwargs", "match"),
    [
        (np.zeros((0, 2)), np.zeros((3, 2)), {}, "X: expected a non-empty sample"),
        (np.ones((3, 2)), [], {}, "Y: expected a non-empty sample"),
        (np.ones((3, 2)), ["ACGT", "ACGA"], {}, "Y: expected the same kind of input as X"),
        (np.ones((3, 2)), np.ones((3, 3)), {}, "Y: expected vectors of X's width 2"),
        (np.ones((3, 2)), np.ones((3, 2)), {"method": "exact"}, "method: expected one of"),
        (np.ones((3, 2)), np.ones((3, 2)), {"kernel": "spectrum:k=3"}, "kernel: spectrum takes"),
        (np.ones((3, 2)), np.ones((3, 2)), {"n_permutations": 0}, "n_permutations"),
        (np.eye(4), 7, {"kernel": "precomputed"}, "Y: with a precomputed Gram"),
        (np.array([[1.0, np.nan]]), np.ones((3, 2)), {}, "X: expected finite values"),
    ],
)
def test_errors_name_the_argument(X, Y, kwargs, match):
    with pytest.raises(InputError, match=match):
        two_sample_test(X, Y, **kwargs)


def test_quadratic_kernel_misses_gaussian_vs_laplace_that_gaussian_sees():
    rng = np.random.default_rng(0)
    n = 500
    X = rng.normal(size=(n, 1))
    Y = rng.laplace(scale=1 / np.sqrt(2), size=(n, 1))
    quad = two_sample_test(X, Y, kernel=Polynomial(degree=2, offset=0.0), random_state=0)
    gauss = two_sample_test(X, Y, kernel=Gaussian(0.5), random_state=0)
    assert gauss.pvalue < 0.01
    assert quad.pvalue > 0.05


def test_permutation_null_is_one_product_per_batch(monkeypatch):
    """1000 permutations in batches of 256: four ``K @ S`` products (counted, not timed), and
    every null statistic equals the MMD of its relabelled sample (brute force)."""
    import kernelkit.stats._nulls as nulls

    rng = np.random.default_rng(8)
    K = _gram(rng.normal(size=(60, 2)))
    widths = []

    def counting(K, S, **kw):
        widths.append(S.shape[1])
        return split_statistics(K, S, **kw)

    monkeypatch.setattr(nulls, "split_statistics", counting)
    null = permutation_null(K, 30, 1000, np.random.default_rng(1))
    assert widths == [256, 256, 256, 232]
    assert null.shape == (1000,)
    replay = torch.cat(list(nulls.permutation_batches(60, 30, 1000, np.random.default_rng(1))), 1)
    for j in (0, 255, 256, 999):
        first = torch.nonzero(replay[:, j]).ravel()
        rest = torch.nonzero(replay[:, j] == 0).ravel()
        idx = torch.cat([first, rest])
        assert null[j] == pytest.approx(mmd2_from_gram(K[idx][:, idx], 30), rel=1e-10, abs=1e-14)
