"""HSIC against the trace formula and the order-4 U-statistic; the permutation test."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from kernelkit.gram import center_gram
from kernelkit.kernels import Gaussian, Linear
from kernelkit.stats import hsic, independence_test
from kernelkit.stats._hsic import hsic_permutation_null
from kernelkit.stats._nulls import order_batches
from kernelkit.utils._errors import InputError


def _grams(X, Y, sx=1.0):
    K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / (2 * sx**2))
    L = Y @ Y.T
    return K, L


def test_biased_hsic_is_the_trace_formula():
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(15, 2)), rng.normal(size=(15, 3))
    K, L = _grams(X, Y)
    H = np.eye(15) - 1 / 15
    expected = np.trace(K @ H @ L @ H) / 15**2
    assert abs(hsic(X, Y, kernel_x=Gaussian(1.0), kernel_y=Linear()) - expected) < 1e-12


def test_unbiased_hsic_is_the_order_four_u_statistic():
    rng = np.random.default_rng(1)
    N = 7
    X, Y = rng.normal(size=(N, 2)), rng.normal(size=(N, 1))
    K, L = _grams(X, Y)
    total = 0.0
    for i, j, q, r in itertools.permutations(range(N), 4):
        total += K[i, j] * L[i, j] + K[i, j] * L[q, r] - 2 * K[i, j] * L[i, q]
    expected = total / (N * (N - 1) * (N - 2) * (N - 3))
    got = hsic(X, Y, kernel_x=Gaussian(1.0), kernel_y=Linear(), estimator="unbiased")
    assert abs(got - expected) < 1e-12


def test_independence_test_detects_dependence_and_keeps_independence():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(120, 1))
    dep = independence_test(
        X, X**2 + 0.3 * rng.normal(size=X.shape), n_permutations=200, random_state=0
    )
    assert dep.pvalue < 0.01 and dep.null_samples.shape == (200,)
    ind = independence_test(X, rng.normal(size=(120, 1)), n_permutations=200, random_state=0)
    assert ind.pvalue > 0.01
    assert dep.pvalue == (1 + np.sum(dep.null_samples >= dep.statistic)) / 201


@pytest.mark.parametrize(
    ("method", "batch", "full_rank"),
    [("gather", 1, False), ("gather", 3, False), ("gather", 8, True), ("spectral", 4, False),
     ("spectral", 4, True), ("auto", 4, False), ("auto", 4, True)],
)  # fmt: skip
def test_batched_permutation_null_equals_the_permutation_loop(method, batch, full_rank):
    # the J statistics equal <HKH, L[p][:, p]> / N^2 over the same draws, one at a time,
    # by either route: low-rank Grams (rank 4 and 2) and full-rank ones (Gaussian, small
    # bandwidth)
    gen = torch.Generator().manual_seed(0)
    A, B = (
        torch.rand(30, 4, generator=gen, dtype=torch.float64),
        torch.rand(30, 2, generator=gen, dtype=torch.float64),
    )
    if full_rank:
        K = torch.exp(-(torch.cdist(A, A) ** 2) / 0.02)
        L = torch.exp(-(torch.cdist(B, B) ** 2) / 0.01)
    else:
        K, L = A @ A.T, B @ B.T
    Kc = center_gram(K)
    null = hsic_permutation_null(Kc, L, 300, np.random.default_rng(1), batch=batch, method=method)
    orders = np.concatenate(list(order_batches(30, 300, np.random.default_rng(1))))
    loop = np.array([float((Kc * L[o][:, o]).sum() / 900) for o in orders])
    scale = float(torch.linalg.matrix_norm(Kc, "nuc") * torch.linalg.matrix_norm(L, 2)) / 900
    np.testing.assert_allclose(null, loop, rtol=0, atol=1e-13 * scale)


def test_permutation_null_method_is_validated():
    with pytest.raises(InputError, match="method: expected"):
        hsic_permutation_null(
            torch.eye(4), torch.eye(4), 5, np.random.default_rng(0), method="loop"
        )
