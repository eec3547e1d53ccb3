"""The course's remaining vector and permutation kernels against independent oracles:
NumPy series, brute-force loops, SciPy's Bernoulli numbers and quadrature, SciPy's Kendall
tau and the Cayley graph of S_4."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np
import pytest
import scipy.integrate
import scipy.special
import scipy.stats
import torch

from kernelkit import KernelRidge
from kernelkit.kernels import (
    Brownian,
    Exponentiated,
    Gaussian,
    Kendall,
    LaplaceTransform,
    Linear,
    PeriodicSobolev,
)
from kernelkit.testing import check_kernel
from kernelkit.utils._errors import InputError

RNG = np.random.default_rng(0)


def test_exponentiated_is_the_series_of_schur_powers_and_gives_the_gaussian():
    X = RNG.normal(size=(7, 3)) / 2
    K = X @ X.T
    series = sum(K**i / math.factorial(i) for i in range(40))
    E = Exponentiated(Linear(), scale=1.0)(torch.as_tensor(X)).numpy()
    np.testing.assert_allclose(E, series, rtol=1e-12)
    sigma = 1.3
    n2 = (X**2).sum(1)
    G = Exponentiated(Linear(), scale=1 / sigma**2)(torch.as_tensor(X)).numpy()
    G = G * np.exp(-n2[:, None] / (2 * sigma**2)) * np.exp(-n2[None, :] / (2 * sigma**2))
    np.testing.assert_allclose(G, Gaussian(sigma)(torch.as_tensor(X)).numpy(), rtol=1e-12)
    check_kernel(Exponentiated(Gaussian(0.8), scale=2.0), torch.as_tensor(X))


def test_brownian_is_min_and_krr_interpolates_piecewise_linearly():
    x = np.sort(RNG.uniform(0.1, 1.0, size=6))
    K = Brownian()(torch.as_tensor(x[:, None])).numpy()
    np.testing.assert_allclose(K, [[min(a, b) for b in x] for a in x], rtol=0, atol=0)
    y = RNG.normal(size=6)
    model = KernelRidge(kernel=Brownian(), lam=1e-12).fit(x[:, None], y)
    grid = np.linspace(0, 1.2, 50)
    expected = np.interp(grid, np.r_[0.0, x], np.r_[0.0, y])  # f(0) = 0, flat after max x
    np.testing.assert_allclose(model.predict(grid[:, None]), expected, atol=1e-6)
    with pytest.raises(InputError, match="R_\\+"):
        Brownian()(torch.tensor([[-1.0]]))


def _bernoulli_poly(n: int, u: np.ndarray) -> np.ndarray:
    numbers = scipy.special.bernoulli(n)  # B_0..B_n, B_1 = -1/2
    return sum(math.comb(n, k) * numbers[k] * u ** (n - k) for k in range(n + 1))


@pytest.mark.parametrize("order", [1, 2, 3])
def test_periodic_sobolev_equals_bernoulli_polynomials_and_is_psd(order):
    x, t = RNG.uniform(-2, 2, size=9), RNG.uniform(0, 1, size=5)
    K = PeriodicSobolev(order)(torch.as_tensor(x[:, None]), torch.as_tensor(t[:, None])).numpy()
    u = np.mod(x[:, None] - t[None, :], 1.0)
    sign = (-1) ** (order + 1)
    expected = sign * _bernoulli_poly(2 * order, u) / math.factorial(2 * order)
    np.testing.assert_allclose(K, expected, rtol=1e-10, atol=1e-14)
    Kxx = PeriodicSobolev(order)(torch.as_tensor(x[:, None])).numpy()
    assert np.all(np.diag(Kxx) > 0)
    eig = np.linalg.eigvalsh(Kxx)
    assert eig.min() >= -1e-10 * eig.max()


def test_periodic_sobolev_equals_its_fourier_series():
    x = RNG.uniform(0, 1, size=6)
    n = np.arange(1, 3001)
    d = x[:, None] - x[None, :]
    series = 2 * (np.cos(2 * np.pi * n * d[..., None]) / (2 * np.pi * n) ** 4).sum(-1)
    K = PeriodicSobolev(2)(torch.as_tensor(x[:, None])).numpy()
    np.testing.assert_allclose(K, series, atol=1e-12)


def test_laplace_transform_equals_quadrature_of_the_gamma_measure():
    shape, rate = 1.7, 0.6
    x = RNG.uniform(0, 2, size=(5, 2))
    K = LaplaceTransform(shape=shape, rate=rate)(torch.as_tensor(x)).numpy()
    density = scipy.stats.gamma(a=shape, scale=1 / rate).pdf
    s = x.sum(1)
    expected = np.array(
        [
            [
                scipy.integrate.quad(lambda a, v=si + sj: np.exp(-a * v) * density(a), 0, np.inf)[0]
                for sj in s
            ]
            for si in s
        ]
    )
    np.testing.assert_allclose(K, expected, rtol=1e-8)
    with pytest.raises(InputError, match="R_\\+"):
        LaplaceTransform()(torch.tensor([[0.5, -0.1]]))


def _concordance(a, b):
    nc = nd = 0
    for i, j in itertools.combinations(range(len(a)), 2):
        s = np.sign(a[i] - a[j]) * np.sign(b[i] - b[j])
        nc += s > 0
        nd += s < 0
    return nc, nd


def test_kendall_counts_concordant_minus_discordant_pairs():
    perms = np.array([RNG.permutation(6) for _ in range(8)], dtype=float)
    K = Kendall(normalize=False)(torch.as_tensor(perms)).numpy()
    brute = np.array([[np.subtract(*_concordance(a, b)) for b in perms] for a in perms])
    np.testing.assert_array_equal(K, brute)
    tau = Kendall()(torch.as_tensor(perms)).numpy()
    scipy_tau = [[scipy.stats.kendalltau(a, b).statistic for b in perms] for a in perms]
    np.testing.assert_allclose(tau, scipy_tau, rtol=1e-12)
    scores = RNG.normal(size=(9, 5)).round(1)  # real scores with ties: ties count 0
    check_kernel(Kendall(), torch.as_tensor(scores))


def test_kendall_discordant_pairs_are_the_cayley_graph_distance():
    perms = list(itertools.permutations(range(4)))
    G = nx.Graph()
    for p in perms:
        for r in range(3):  # exchange the items ranked r and r + 1 (adjacent transposition)
            G.add_edge(p, tuple(r + 1 if v == r else r if v == r + 1 else v for v in p))
    dist = dict(nx.all_pairs_shortest_path_length(G))
    K = Kendall()(torch.as_tensor(np.array(perms, dtype=float))).numpy()
    n_d = (1 - K) * math.comb(4, 2) / 2
    expected = np.array([[dist[p][q] for q in perms] for p in perms])
    np.testing.assert_allclose(n_d, expected, atol=1e-12)
