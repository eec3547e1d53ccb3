"""``GramOperator`` products and entries equal the dense Gram (issue 2)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.sparse.linalg import LinearOperator

from kernelkit.gram import GramOperator, gram
from kernelkit.kernels import (
    FeatureSpaceGaussian,
    Gaussian,
    Kernel,
    Laplacian,
    Linear,
    Matern,
    Polynomial,
    Precomputed,
)
from kernelkit.kernels._features import SparseFeatures
from kernelkit.utils._errors import InputError

RNG = np.random.default_rng(1)
X = torch.as_tensor(RNG.normal(size=(61, 3)))
Y = torch.as_tensor(RNG.normal(size=(23, 3)))

KERNELS = [Gaussian(1.0), Laplacian(1.5), Matern(1.5, 1.0), Polynomial(3) + Linear()]


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: type(k).__name__)
@pytest.mark.parametrize("block_size", [8, 13, None])
def test_matmat_equals_dense_product(kernel, block_size):
    K = kernel(X)
    op = GramOperator(kernel, X, block_size=block_size)
    V = torch.as_tensor(RNG.normal(size=(61, 4)))
    torch.testing.assert_close(op.matmat(V), K @ V, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(op @ V[:, 0], K @ V[:, 0], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(op.rmatmat(V), K.T @ V, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: type(k).__name__)
def test_rectangular_products_and_transpose(kernel):
    K = kernel(X, Y)
    op = GramOperator(kernel, X, Y, block_size=9)
    assert op.shape == (61, 23)
    V = torch.as_tensor(RNG.normal(size=(23, 2)))
    W = torch.as_tensor(RNG.normal(size=(61, 2)))
    torch.testing.assert_close(op.matmat(V), K @ V, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(op.rmatmat(W), K.T @ W, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(op.T @ W, K.T @ W, rtol=1e-12, atol=1e-12)
    assert op.T.T is op
    torch.testing.assert_close(op.to_dense(), K, rtol=1e-12, atol=1e-12)


def test_float32_operator():
    X32 = X.float()
    op = GramOperator(Gaussian(1.0), X32, block_size=10)
    assert op.dtype == torch.float32
    V = torch.ones(61, 2, dtype=torch.float32)
    out = op @ V
    assert out.dtype == torch.float32
    torch.testing.assert_close(out, Gaussian(1.0)(X32) @ V, rtol=1e-5, atol=1e-5)


def test_diag_and_rows():
    k = Gaussian(0.7) + Linear()
    K = k(X)
    op = GramOperator(k, X, block_size=7)
    torch.testing.assert_close(op.diag(), K.diagonal(), rtol=1e-12, atol=1e-12)
    idx = [0, 5, 60, 17]
    torch.testing.assert_close(op.rows(idx), K[idx], rtol=1e-12, atol=1e-12)
    rect = GramOperator(k, X, Y, block_size=7)
    torch.testing.assert_close(rect.diag(), k(X, Y).diagonal(), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(rect.rows([3, 4]), k(X, Y)[[3, 4]], rtol=1e-12, atol=1e-12)
    with pytest.raises(InputError, match="idx"):
        op.rows([61])


def test_as_linear_operator_matches_numpy():
    k = Gaussian(1.0)
    lin = GramOperator(k, X, Y, block_size=11).as_linear_operator()
    assert isinstance(lin, LinearOperator)
    K = k(X, Y).numpy()
    v = RNG.normal(size=23)
    np.testing.assert_allclose(lin.matvec(v), K @ v, rtol=1e-12)
    w = RNG.normal(size=(61, 3))
    np.testing.assert_allclose(lin.rmatmat(w), K.T @ w, rtol=1e-12)


def test_precomputed_and_feature_space_operator():
    K0 = Polynomial(2)(X)
    k = FeatureSpaceGaussian(Precomputed(), sigma=2.0)
    op = GramOperator(k, K0, block_size=10)
    V = torch.as_tensor(RNG.normal(size=(61, 2)))
    ref = FeatureSpaceGaussian(Polynomial(2), sigma=2.0)(X)
    torch.testing.assert_close(op @ V, ref @ V, rtol=1e-11, atol=1e-11)
    torch.testing.assert_close(op.rows([2, 3]), ref[[2, 3]], rtol=1e-11, atol=1e-11)


class Bag(Kernel):
    """Bag-of-letters kernel with sparse keyed features."""

    input_kind = "string"

    def __init__(self):
        super().__init__()

    def prepare(self, X, *, dtype=None, reference=False):
        return list(X)

    def block(self, A, B):
        return torch.tensor(
            [[float(sum(s.count(c) * t.count(c) for c in set(s))) for t in B] for s in A],
            dtype=torch.float64,
        ).reshape(len(A), len(B))

    def features(self, A):
        return SparseFeatures.from_rows(
            [(np.array([ord(c) for c in s]), np.ones(len(s))) for s in A]
        )


def test_sparse_feature_operator():
    words = ["gram", "operator", "kernel", "tile", "aa"]
    op = GramOperator(Bag(), words)
    K = Bag().block(words, words)
    V = torch.as_tensor(RNG.normal(size=(5, 2)))
    torch.testing.assert_close(op @ V, K @ V, rtol=1e-12, atol=1e-12)


class Recording(Gaussian):
    def __init__(self, sigma=1.0):
        super().__init__(sigma)
        self.sizes: list[int] = []

    def block_into(self, A, B, out):
        self.sizes.append(out.numel())
        return super().block_into(A, B, out)


def test_memory_budget_tiles_one_triangle():
    # the memory itself is measured in test_gram_memory.py
    k = Recording(1.0)
    op = GramOperator(k, X, memory_budget=20_000)
    b = op.tile(3)
    assert b < 61
    V = torch.as_tensor(RNG.normal(size=(61, 3)))
    torch.testing.assert_close(op @ V, Gaussian(1.0)(X) @ V, rtol=1e-12, atol=1e-12)
    assert max(k.sizes) <= b * b
    assert len(k.sizes) == sum(range(1, -(-61 // b) + 1))  # one triangle of tiles


def test_bad_inputs():
    op = GramOperator(Gaussian(1.0), X, Y)
    with pytest.raises(InputError, match="V: expected shape"):
        op.matmat(torch.ones(61))
    with pytest.raises(InputError, match="block_size, memory_budget"):
        GramOperator(Gaussian(1.0), X, block_size=4, memory_budget=10_000)


def test_gram_and_operator_agree_on_large_tiles():
    Z = torch.as_tensor(RNG.normal(size=(300, 5)))
    op = GramOperator(Gaussian(2.0), Z)
    v = torch.ones(300, dtype=torch.float64)
    torch.testing.assert_close(op @ v, gram(Gaussian(2.0), Z) @ v, rtol=1e-12, atol=1e-12)


def test_parallel_products_are_reproducible_and_match_serial():
    Z = torch.as_tensor(RNG.normal(size=(200, 3)))
    V = torch.as_tensor(RNG.normal(size=(200, 2)))
    op = GramOperator(Gaussian(1.0), Z, block_size=16)
    first = op @ V
    assert torch.equal(first, op @ V)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        serial = op @ V
    finally:
        torch.set_num_threads(threads)
    torch.testing.assert_close(first, serial, rtol=1e-12, atol=1e-12)
