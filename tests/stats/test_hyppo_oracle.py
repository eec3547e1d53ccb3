"""kernelkit.stats against hyppo 0.5.2's MMD: the statistic after its conversion, and
permutation p-values within Monte-Carlo error (slow: hyppo's numba start-up takes ~6 s)."""

from __future__ import annotations

import numpy as np
import pytest

from kernelkit.kernels import Gaussian
from kernelkit.stats import mmd, two_sample_test

pytestmark = pytest.mark.slow


def _hyppo_u_center(A):
    N = A.shape[0]
    C = A - A.sum(0)[None] / (N - 2) - A.sum(1)[:, None] / (N - 2) + A.sum() / ((N - 1) * (N - 2))
    np.fill_diagonal(C, 0)
    return C


def test_hyppo_mmd_statistic_after_conversion():
    """hyppo's MMD is 2 n^2 m^2 / N^4 times its two-sample Hsic, a distance correlation of
    ``1 - K / max K`` with the label distances.  Biased: its square times ``||HKH||_F N / (nm)``
    is MMD_b^2.  Unbiased (U-centring U(.)): it equals ``<U(S0), K0> / (||U(K0)|| ||U(S0)||)``
    with ``<U(S0), K0> = -nm U(S0)_xy MMD_u^2`` (S0: same-sample indicator, K0: zero diagonal).
    """
    hyppo = pytest.importorskip("hyppo.ksample")
    rng = np.random.default_rng(3)
    n, m = 20, 27
    N = n + m
    X, Y = rng.normal(size=(n, 2)), rng.normal(size=(m, 2)) + 0.5
    gamma = 0.3
    sigma = 1 / np.sqrt(2 * gamma)
    scale = 2 * n**2 * m**2 / N**4
    Z = np.vstack([X, Y])
    K = np.exp(-gamma * ((Z[:, None] - Z[None]) ** 2).sum(-1))
    H = np.eye(N) - 1.0 / N
    s_b = hyppo.MMD(compute_kernel="rbf", gamma=gamma, bias=True).statistic(X, Y)
    ours_b = mmd(X, Y, kernel=Gaussian(sigma), estimator="biased")
    assert abs((s_b / scale) ** 2 * np.linalg.norm(H @ K @ H) * N / (n * m) - ours_b) < 1e-12
    s_u = hyppo.MMD(compute_kernel="rbf", gamma=gamma, bias=False).statistic(X, Y)
    S0 = np.zeros((N, N))
    S0[:n, :n] = S0[n:, n:] = 1
    np.fill_diagonal(S0, 0)
    K0 = K - np.diag(np.diag(K))
    US, UK = _hyppo_u_center(S0), _hyppo_u_center(K0)
    c = -n * m * US[0, n]
    converted = s_u / scale * np.linalg.norm(UK) * np.linalg.norm(US) / c
    assert abs(converted - mmd(X, Y, kernel=Gaussian(sigma))) < 1e-12


def test_permutation_pvalues_agree_with_hyppo():
    hyppo = pytest.importorskip("hyppo.ksample")
    rng = np.random.default_rng(2)
    X, Y = rng.normal(size=(25, 2)), rng.normal(size=(25, 2)) + 0.45
    gamma = 0.25
    J = 1000
    ours = two_sample_test(
        X, Y, kernel=Gaussian(1 / np.sqrt(2 * gamma)), n_permutations=J, random_state=0
    ).pvalue
    _, theirs = hyppo.MMD(compute_kernel="rbf", gamma=gamma).test(
        X, Y, reps=J, auto=False, random_state=0
    )
    p = (ours + theirs) / 2
    assert 0.01 < p < 0.9  # a p-value that Monte-Carlo error can move
    assert abs(ours - theirs) <= 4 * np.sqrt(2 * p * (1 - p) / J) + 2 / J
