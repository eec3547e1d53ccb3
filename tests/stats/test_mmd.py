"""MMD estimators, mean embeddings and the witness against brute-force sums and hyppo."""

from __future__ import annotations

import numpy as np
import pytest

from kernelkit.kernels import Gaussian, Linear, Spectrum
from kernelkit.stats import MeanEmbedding, mmd, witness
from kernelkit.stats._inputs import check_samples
from kernelkit.stats._mmd import block_statistics, linear_statistics


def _k(a, b, sigma=1.3):
    return np.exp(-np.sum((a - b) ** 2) / (2 * sigma**2))


def _brute(X, Y, k):
    n, m = len(X), len(Y)
    sxx = sum(k(X[i], X[j]) for i in range(n) for j in range(n) if i != j)
    syy = sum(k(Y[i], Y[j]) for i in range(m) for j in range(m) if i != j)
    sxy = sum(k(X[i], Y[j]) for i in range(n) for j in range(m))
    dx = sum(k(X[i], X[i]) for i in range(n))
    dy = sum(k(Y[i], Y[i]) for i in range(m))
    biased = (sxx + dx) / n**2 + (syy + dy) / m**2 - 2 * sxy / (n * m)
    unbiased = sxx / (n * (n - 1)) + syy / (m * (m - 1)) - 2 * sxy / (n * m)
    return biased, unbiased


@pytest.fixture
def samples():
    rng = np.random.default_rng(0)
    return rng.normal(size=(17, 3)), rng.normal(size=(23, 3)) + 0.4


def test_biased_and_unbiased_equal_double_sums(samples):
    X, Y = samples
    b, u = _brute(X, Y, _k)
    assert abs(mmd(X, Y, kernel=Gaussian(1.3), estimator="biased") - b) < 1e-12
    assert abs(mmd(X, Y, kernel=Gaussian(1.3), estimator="unbiased") - u) < 1e-12
    assert abs(mmd(X, Y, kernel="gaussian:sigma=1.3", estimator="unbiased") - u) < 1e-12


def test_precomputed_gram_of_the_pooled_sample(samples):
    X, Y = samples
    Z = np.vstack([X, Y])
    K = np.exp(-((Z[:, None] - Z[None]) ** 2).sum(-1) / (2 * 1.3**2))
    b, u = _brute(X, Y, _k)
    assert abs(mmd(K, len(X), kernel="precomputed", estimator="biased") - b) < 1e-12
    assert abs(mmd(K, len(X), kernel="precomputed") - u) < 1e-12


def test_strings_equal_double_sums():
    X = ["ACGTAC", "GGTACA", "TTACGA", "ACGGGT"]
    Y = ["CCCGTA", "ACGTTT", "GATTACA"]
    k = Spectrum(k=2)

    def kk(a, b):
        ca = [a[i : i + 2] for i in range(len(a) - 1)]
        cb = [b[i : i + 2] for i in range(len(b) - 1)]
        return float(sum(ca.count(w) * cb.count(w) for w in set(ca)))

    b, u = _brute(X, Y, kk)
    assert abs(mmd(X, Y, kernel=k, estimator="biased") - b) < 1e-12
    assert abs(mmd(X, Y, kernel=k) - u) < 1e-12


def test_linear_kernel_biased_is_mean_difference(samples):
    X, Y = samples
    expected = float(np.sum((X.mean(0) - Y.mean(0)) ** 2))
    assert abs(mmd(X, Y, kernel=Linear(), estimator="biased") - expected) < 1e-12


def test_linear_time_estimator_equals_loop_and_streams(samples, tmp_path):
    X, Y = samples
    p = min(len(X), len(Y)) // 2
    h = [
        _k(X[2 * i], X[2 * i + 1])
        + _k(Y[2 * i], Y[2 * i + 1])
        - _k(X[2 * i], Y[2 * i + 1])
        - _k(X[2 * i + 1], Y[2 * i])
        for i in range(p)
    ]
    assert abs(mmd(X, Y, kernel=Gaussian(1.3), estimator="linear") - np.mean(h)) < 1e-12
    # memory-mapped arrays, 3 pairs per chunk
    mx = np.lib.format.open_memmap(tmp_path / "x.npy", mode="w+", dtype=np.float64, shape=X.shape)
    mx[:] = X
    stats = linear_statistics(Gaussian(1.3), check_samples(mx, Y), chunk_size=3)
    assert stats.count == p
    assert abs(stats.mean - np.mean(h)) < 1e-12
    assert abs(stats.variance - np.var(h, ddof=1)) < 1e-12


def test_block_estimator_is_mean_of_block_u_statistics(samples):
    X, Y = samples
    B = 5
    expected = [_brute(X[i : i + B], Y[i : i + B], _k)[1] for i in range(0, 15, B)]
    got = block_statistics(Gaussian(1.3), check_samples(X, Y), B)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    assert (
        abs(mmd(X, Y, kernel=Gaussian(1.3), estimator="block", block_size=B) - np.mean(expected))
        < 1e-12
    )


def test_mean_embedding_and_witness(samples):
    X, Y = samples
    T = np.random.default_rng(1).normal(size=(4, 3))
    mu = MeanEmbedding(X, Gaussian(1.3))
    brute = [np.mean([_k(x, t) for x in X]) for t in T]
    np.testing.assert_allclose(mu(T).numpy(), brute, atol=1e-12)
    inner = np.mean([[_k(x, y) for y in Y] for x in X])
    assert abs(mu.inner(MeanEmbedding(Y, Gaussian(1.3))) - inner) < 1e-12
    b, _ = _brute(X, Y, _k)
    f = witness(X, Y, kernel=Gaussian(1.3)).numpy()
    # MMD_b = mean f*(X) - mean f*(Y) for the unit-norm witness
    assert abs(f[: len(X)].mean() - f[len(X) :].mean() - np.sqrt(b)) < 1e-12
    fT = witness(X, Y, T, kernel=Gaussian(1.3)).numpy()
    brute_w = [
        (np.mean([_k(x, t) for x in X]) - np.mean([_k(y, t) for y in Y])) / np.sqrt(b) for t in T
    ]
    np.testing.assert_allclose(fT, brute_w, atol=1e-12)


def test_default_kernel_is_median_heuristic_on_pooled(samples):
    X, Y = samples
    Z = np.vstack([X, Y])
    d = np.sqrt(((Z[:, None] - Z[None]) ** 2).sum(-1))[np.triu_indices(len(Z), 1)]
    sigma = float(np.median(d))  # np.median's middle (mean of the two middle values)
    assert abs(mmd(X, Y) - mmd(X, Y, kernel=Gaussian(sigma))) < 1e-12
