"""Tiled Gram evaluation equals the one-block evaluation ``kernel.block`` (issue 2)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.metrics.pairwise import rbf_kernel

from kernelkit.gram import gram
from kernelkit.kernels import (
    FeatureSpaceGaussian,
    Gaussian,
    Kernel,
    Laplacian,
    Linear,
    Matern,
    Polynomial,
    Precomputed,
    PrecomputedBatch,
    Spectrum,
    TensorMatern,
)
from kernelkit.kernels._features import SparseFeatures
from kernelkit.utils._errors import InputError

RNG = np.random.default_rng(0)
XN = RNG.normal(size=(53, 4))
YN = RNG.normal(size=(29, 4)) + 0.5

VECTOR_KERNELS = {
    "linear": Linear(),
    "poly3": Polynomial(degree=3, scale=0.5, offset=1.0),
    "gauss": Gaussian(sigma=1.3),
    "laplace": Laplacian(sigma=2.0),
    "matern05": Matern(nu=0.5, sigma=1.0),
    "matern15": Matern(nu=1.5, sigma=1.5),
    "matern25": Matern(nu=2.5, sigma=0.8),
    "matern07": Matern(nu=0.7, sigma=1.2),
    "tensor_matern": TensorMatern(s=1.5, sigma=1.0),
    "sum": Gaussian(1.0) + 0.5 * Linear(),
    "product": Gaussian(2.0) * Polynomial(degree=2),
    "power": Linear() ** 2,
    "normalized": Polynomial(degree=2).normalized(),
    "feature_gauss": FeatureSpaceGaussian(Polynomial(degree=2), sigma=3.0),
}


def tol(dtype: torch.dtype) -> float:
    return 1e-12 if dtype == torch.float64 else 2e-5


def rel_err(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).abs().max() / b.abs().max().clamp_min(1e-300))


@pytest.mark.parametrize("name", sorted(VECTOR_KERNELS))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("block_size", [7, 16, None])
def test_tiled_equals_full_block(name, dtype, block_size):
    k = VECTOR_KERNELS[name]
    X = torch.as_tensor(XN, dtype=dtype)
    Y = torch.as_tensor(YN, dtype=dtype)
    full_sym = k.block(X, X)
    full_rect = k.block(X, Y)
    K = gram(k, X, block_size=block_size)
    assert K.dtype == dtype and K.shape == (53, 53)
    assert rel_err(K, full_sym) < tol(dtype)
    assert torch.equal(K, K.T)  # mirrored triangle
    R = gram(k, X, Y, block_size=block_size)
    assert R.shape == (53, 29)
    assert rel_err(R, full_rect) < tol(dtype)


def test_gaussian_matches_sklearn_rbf_float32():
    X = RNG.normal(size=(300, 16)).astype(np.float32)
    K = gram(Gaussian(sigma=2.0), X, block_size=64)
    ref = rbf_kernel(X.astype(np.float64), gamma=1.0 / 8.0)
    assert isinstance(K, np.ndarray) and K.dtype == np.float32  # NumPy in, NumPy out
    assert np.abs(K - ref).max() < 1e-5


def test_dtype_argument_casts_numpy_input():
    K = gram(Gaussian(1.0), XN, dtype="float32", block_size=10)
    assert isinstance(K, np.ndarray) and K.dtype == np.float32
    assert rel_err(torch.as_tensor(K).double(), Gaussian(1.0)(XN)) < 1e-5


def test_output_follows_the_input_container():
    Xt = torch.as_tensor(XN)
    K_np, K_t = gram(Gaussian(1.0), XN), gram(Gaussian(1.0), Xt)
    assert isinstance(K_np, np.ndarray) and isinstance(K_t, torch.Tensor)
    np.testing.assert_array_equal(K_np, K_t.numpy())
    assert isinstance(gram(Gaussian(1.0), XN.tolist()), np.ndarray)
    assert isinstance(gram(CharCount(sparse=False), WORDS), np.ndarray)  # raw structured input
    spectrum = Spectrum(k=1)
    K_raw, K_batch = gram(spectrum, WORDS), gram(spectrum, spectrum.prepare(WORDS))
    assert isinstance(K_raw, np.ndarray) and isinstance(K_batch, torch.Tensor)  # prepared batch
    np.testing.assert_array_equal(K_raw, K_batch.numpy())


def test_diagonal_is_exact_for_nonsmooth_kernel():
    X = torch.as_tensor(RNG.normal(size=(40, 3)) * 100)
    K = gram(Laplacian(sigma=0.5), X, block_size=9)
    assert torch.equal(K.diagonal(), torch.ones(40, dtype=torch.float64))


def test_out_is_filled_and_returned():
    out = torch.full((53, 29), float("nan"), dtype=torch.float64)
    res = gram(Gaussian(1.0), XN, YN, out=out, block_size=11)
    assert res is out
    assert rel_err(out, Gaussian(1.0)(XN, YN)) < 1e-12


def test_out_wrong_shape_or_dtype_raises():
    with pytest.raises(InputError, match="out: expected a tensor of shape"):
        gram(Gaussian(1.0), XN, YN, out=torch.empty(29, 53, dtype=torch.float64))
    with pytest.raises(InputError, match="out: expected dtype"):
        gram(Gaussian(1.0), XN, YN, out=torch.empty(53, 29, dtype=torch.float32))


def test_block_size_and_memory_budget_are_exclusive():
    with pytest.raises(InputError, match="block_size, memory_budget"):
        gram(Gaussian(1.0), XN, block_size=8, memory_budget=1 << 20)
    with pytest.raises(InputError, match="block_size"):
        gram(Gaussian(1.0), XN, block_size=0)
    with pytest.raises(InputError, match="memory_budget"):
        gram(Gaussian(1.0), XN, memory_budget=3)


def test_mismatched_feature_counts_raise():
    with pytest.raises(InputError, match="features"):
        gram(Gaussian(1.0), XN, YN[:, :3])


class RecordingGaussian(Gaussian):
    """Gaussian that records the tiles it is asked to fill."""

    def __init__(self, sigma: float = 1.0):
        super().__init__(sigma)
        self.tile_sizes: list[int] = []

    def block_into(self, X, Y, out):
        self.tile_sizes.append(out.numel())
        return super().block_into(X, Y, out)


def test_small_memory_budget_tiles_and_matches():
    # the memory itself is measured in test_gram_memory.py
    k = RecordingGaussian(1.0)
    K = torch.as_tensor(gram(k, XN, memory_budget=4 * 8 * 100))
    assert len(k.tile_sizes) > 1
    assert rel_err(K, Gaussian(1.0)(XN)) < 1e-12


def test_symmetric_case_computes_one_triangle():
    k = RecordingGaussian(1.0)
    gram(k, XN, block_size=10)  # 6 row blocks -> 21 tiles on or below the diagonal
    assert len(k.tile_sizes) == 21


def test_progress_bar_runs(capsys):
    K = gram(Gaussian(1.0), torch.as_tensor(XN), block_size=20, progress=True)
    assert rel_err(K, Gaussian(1.0)(XN)) < 1e-12
    assert "gram" in capsys.readouterr().err


# ---------------------------------------------------------------- Gram-only input
def test_feature_space_gaussian_on_precomputed():
    base = Polynomial(degree=2)
    k_ref = FeatureSpaceGaussian(base, sigma=3.0)
    k_pre = FeatureSpaceGaussian(Precomputed(), sigma=3.0)
    K0 = base(XN)
    K = gram(k_pre, K0, block_size=8)
    assert rel_err(K, k_ref(XN)) < 1e-12
    test = PrecomputedBatch(base(YN, XN), diag=base.diag(YN))
    R = gram(k_pre, test, K0, block_size=8)
    assert rel_err(R, k_ref(YN, XN)) < 1e-12


def test_precomputed_passthrough():
    K0 = Gaussian(1.0)(XN)
    assert rel_err(gram(Precomputed(), K0, block_size=6), K0) < 1e-15


# ---------------------------------------------------------------- structured batches
class CharCount(Kernel):
    """Bag-of-characters kernel on lists of strings, with sparse keyed features."""

    input_kind = "string"
    differentiable = False

    def __init__(self, sparse: bool = True):
        super().__init__()
        self.sparse = sparse

    def prepare(self, X, *, dtype=None, reference=False):
        return list(X)

    def block(self, X, Y):
        out = torch.zeros(len(X), len(Y), dtype=torch.float64)
        for i, s in enumerate(X):
            for j, t in enumerate(Y):
                out[i, j] = float(sum(s.count(c) * t.count(c) for c in set(s)))
        return out

    def features(self, X):
        if not self.sparse:
            return None
        rows = []
        for s in X:
            chars = sorted(set(s))
            rows.append((np.array([ord(c) for c in chars]), np.array([s.count(c) for c in chars])))
        return SparseFeatures.from_rows(rows)


WORDS = ["kernel", "methods", "gram", "matrix", "tile", "banana", "a", "zz", "kernelkit"]


@pytest.mark.parametrize("sparse", [True, False])
def test_structured_batches(sparse):
    k = CharCount(sparse=sparse)
    brute = np.array([[sum(s.count(c) * t.count(c) for c in set(s)) for t in WORDS] for s in WORDS])
    K = gram(k, WORDS, block_size=4)
    np.testing.assert_allclose(K, brute)
    R = gram(k, WORDS[:5], WORDS[3:], block_size=2)
    np.testing.assert_allclose(R, brute[:5, 3:])


class Unsliceable:
    def __init__(self, items):
        self.items = items

    def __len__(self):
        return len(self.items)


class UnsliceableKernel(CharCount):
    def prepare(self, X, *, dtype=None, reference=False):
        return X if isinstance(X, Unsliceable) else Unsliceable(list(X))

    def block(self, X, Y):
        return super().block(X.items, Y.items)

    def features(self, X):
        return None


def test_unsliceable_batch_falls_back_to_block():
    K = gram(UnsliceableKernel(), WORDS, block_size=3)
    np.testing.assert_allclose(K, CharCount(sparse=False).block(WORDS, WORDS).numpy())
