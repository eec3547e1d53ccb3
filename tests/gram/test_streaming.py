"""Streamed products with K_nm (gram/_streaming.py) against the dense Gram of the engine."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import torch

from kernelkit.gram import gram
from kernelkit.gram._streaming import NystromOperator
from kernelkit.gram._tiles import nystrom_tile
from kernelkit.kernels import Gaussian, Spectrum
from kernelkit.utils._errors import InputError


def _data(n=97, m=13, d=3, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, d, generator=g, dtype=dtype)
    return X, X[torch.randperm(n, generator=g)[:m]]


def test_tile_gives_both_products_of_one_block():
    X, C = _data()
    K = gram(Gaussian(1.3), X, C)
    V = torch.randn(13, 2, dtype=torch.float64)
    U = torch.randn(97, 2, dtype=torch.float64)
    w = torch.rand(97, 2, dtype=torch.float64)
    KV, KtZ = nystrom_tile(Gaussian(1.3), X, C, V=V, U=U, weights=w)
    torch.testing.assert_close(KV, K @ V, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(KtZ, K.T @ (w * (K @ V) + U), rtol=1e-12, atol=1e-12)
    KV_only, none = nystrom_tile(Gaussian(1.3), X, C, V=V, transpose=False)
    assert none is None
    torch.testing.assert_close(KV_only, K @ V, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("block_size", [1, 10, 97, None])
@pytest.mark.parametrize("threads", [1, 2])
def test_operator_products_equal_the_dense_block(block_size, threads):
    X, C = _data()
    K = gram(Gaussian(0.9), X, C)
    op = NystromOperator(Gaussian(0.9), X, C, block_size=block_size)
    V = torch.randn(13, 3, dtype=torch.float64)
    U = torch.randn(97, 3, dtype=torch.float64)
    w = torch.rand(97, dtype=torch.float64)
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        torch.testing.assert_close(op.matmat(V), K @ V, rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(op.rmatmat(U[:, 0]), K.T @ U[:, 0], rtol=1e-12, atol=1e-12)
        R, KV = op.normal_matmat(V, weights=w, U=U, keep_kv=True)
        torch.testing.assert_close(R, K.T @ (w[:, None] * (K @ V) + U), rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(KV, K @ V, rtol=1e-12, atol=1e-12)
    finally:
        torch.set_num_threads(before)


@pytest.mark.parametrize("threads", [1, 2])
def test_kept_block_products_equal_the_streamed_ones(threads):
    # the first pass fills K_nm tile by tile (one worker per tile group), later passes read it
    X, C = _data(dtype=torch.float32)
    streamed = NystromOperator(Gaussian(0.9), X, C, block_size=10)
    kept = NystromOperator(Gaussian(0.9), X, C, block_size=10, memory_budget=97 * 13 * 4)
    V = torch.randn(13, 2, dtype=torch.float64)
    w = torch.rand(97, 2, dtype=torch.float64)
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        for _ in range(2):  # the filling pass, then a pass on the kept block
            for fast in (False, True):
                R, KV = kept.normal_matmat(V, weights=w, keep_kv=True, fast=fast)
                R0, KV0 = streamed.normal_matmat(V, weights=w, keep_kv=True, fast=fast)
                assert torch.equal(R, R0) and torch.equal(KV, KV0)
            assert torch.equal(kept.matmat(V), streamed.matmat(V))
    finally:
        torch.set_num_threads(before)
    assert kept.keeps_block and not streamed.keeps_block
    torch.testing.assert_close(kept._kept, gram(Gaussian(0.9), X, C), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("threads", [1, 2])
def test_keep_writes_the_tiles_of_the_first_pass(threads):
    # keep() evaluates K_nm in the tiles every pass uses, without products: the products that
    # read it equal the streamed ones bit for bit, and the kernel is not evaluated again
    X, C = _data(dtype=torch.float32)
    kernel = Gaussian(0.9)
    streamed = NystromOperator(kernel, X, C, block_size=10)
    kept = NystromOperator(kernel, X, C, block_size=10, memory_budget=97 * 13 * 4)
    V = torch.randn(13, 2, dtype=torch.float64)
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        assert kept.keep() is kept
        calls = []
        kept.kernel = type(kernel)(0.9)
        kept.kernel.block = lambda *a: calls.append(1) or kernel.block(*a)
        kept.kernel.block_into = lambda *a: calls.append(1) or kernel.block_into(*a)
        R, KV = kept.normal_matmat(V, keep_kv=True)
        R0, KV0 = streamed.normal_matmat(V, keep_kv=True)
    finally:
        torch.set_num_threads(before)
    assert torch.equal(R, R0) and torch.equal(KV, KV0) and not calls
    # its size counts the kept block (Dask's sizeof reads it to leave the block where it is)
    assert sys.getsizeof(kept) >= 97 * 13 * 4 + 97 * 3 * 4 > sys.getsizeof(streamed)
    with pytest.raises(InputError, match=r"memory_budget: expected at least 5044 bytes"):
        NystromOperator(kernel, X, C, memory_budget=5043).keep()


def test_float32_blocks_accumulate_in_float64():
    X, C = _data(n=2000, m=50, dtype=torch.float32)
    op = NystromOperator(Gaussian(1.0), X, C, block_size=128)
    V = torch.randn(50, 1, dtype=torch.float64)
    R, _ = op.normal_matmat(V)
    assert R.dtype == torch.float64 and op.matmat(V).dtype == torch.float64
    K = gram(Gaussian(1.0), X.double(), C.double())
    ref = K.T @ (K @ V)
    assert float((R - ref).norm() / ref.norm()) < 1e-5


def test_float32_blocks_multiply_in_float64():
    """The products of a float32 block are float64 products of its float32 values: a ``V``
    whose entries are large and cancel (as ``B U`` in Falkon's CG) keeps its digits."""
    X, C = _data(n=600, m=40, dtype=torch.float32)
    kernel = Gaussian(2.0)
    K32 = gram(kernel, X, C).to(torch.float64)  # the float32 values, exactly
    g = torch.Generator().manual_seed(3)
    V = 1e4 * torch.randn(40, 2, generator=g, dtype=torch.float64)
    U = torch.randn(600, 2, generator=g, dtype=torch.float64)
    op = NystromOperator(kernel, X, C, block_size=64)
    R, KV = op.normal_matmat(V, U=U, keep_kv=True)
    torch.testing.assert_close(KV, K32 @ V, rtol=1e-12, atol=1e-12 * float((K32 @ V).abs().max()))
    ref = K32.T @ (K32 @ V + U)
    torch.testing.assert_close(R, ref, rtol=1e-12, atol=1e-12 * float(ref.abs().max()))
    # fast: the float32 products of the same block, summed over tiles in float64
    R_fast, KV_fast = op.normal_matmat(V, U=U, keep_kv=True, fast=True)
    K32f = K32.float()
    torch.testing.assert_close(KV_fast, (K32f @ V.float()).double(), rtol=1e-5, atol=1e-2)
    assert float((R_fast - ref).abs().max()) > 1e-9 * float(ref.abs().max())  # not float64
    assert float((R_fast - ref).abs().max()) < 1e-5 * float(ref.abs().max())


def test_structured_inputs_are_streamed_through_gram_blocks():
    rng = np.random.default_rng(1)
    S = ["".join(rng.choice(list("ACGT"), size=int(rng.integers(5, 12)))) for _ in range(40)]
    kernel = Spectrum(k=2)
    K = torch.as_tensor(gram(kernel, S, S[:9]))
    op = NystromOperator(kernel, S, S[:9], block_size=6)
    V = torch.randn(9, 2, dtype=torch.float64)
    torch.testing.assert_close(op.matmat(V), K @ V)
    torch.testing.assert_close(op.normal_matmat(V)[0], K.T @ (K @ V))


def test_bad_shapes_are_named():
    X, C = _data()
    op = NystromOperator(Gaussian(1.0), X, C)
    with pytest.raises(ValueError, match=r"^V: expected shape \(13,\)"):
        op.matmat(torch.zeros(12))
    with pytest.raises(ValueError, match=r"^U: expected shape \(97,\)"):
        op.rmatmat(torch.zeros(96, 2))


@pytest.mark.parametrize("keep", [False, True])
def test_take_rows_equals_the_rows_of_the_block(keep):
    """``take_rows`` reads the kept block once a pass filled it, else evaluates the rows; both
    equal the dense ``K_nm`` rows, for vectors and for strings."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((90, 3))
    index = np.array([0, 7, 7, 55, 89])
    op = NystromOperator(Gaussian(1.0), X, X[:12], memory_budget=10**9 if keep else 0)
    op.matmat(np.ones(12))
    dense = torch.as_tensor(gram(Gaussian(1.0), X, X[:12]), dtype=torch.float64)
    torch.testing.assert_close(op.take_rows(index), dense[index], atol=1e-12, rtol=0)
    words = ["".join(rng.choice(list("ACGT"), 8)) for _ in range(30)]
    strings = NystromOperator(Spectrum(2), words, words[:6], memory_budget=10**9 if keep else 0)
    strings.matmat(np.ones(6))
    ref = torch.as_tensor(
        gram(Spectrum(2), [words[i] for i in (1, 29)], words[:6]), dtype=torch.float64
    )
    torch.testing.assert_close(strings.take_rows([1, 29]), ref, atol=1e-12, rtol=0)


@pytest.mark.parametrize("enabled", [False, True])
def test_parallel_workers_run_in_the_callers_autograd_mode(enabled):
    # torch.no_grad is thread-local: a pool worker ignored the caller's no_grad, recorded
    # graphs and refused the out= products of the tiles when an input required grad (the
    # Nystrom GP's hyper-parameter gradient, n = 5000: "mm(): functions with out=...")
    from kernelkit.gram._tiling import run_parallel

    A = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    out = torch.empty(2, 4, 4, dtype=torch.float64)
    modes = {}

    def work(i: int) -> None:
        modes[i] = torch.is_grad_enabled()
        if not modes[i]:
            torch.mm(A, A.T, out=out[i])

    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with torch.set_grad_enabled(enabled):
            run_parallel(work, [0, 1], parallel=True)
    finally:
        torch.set_num_threads(threads)
    assert modes == {0: enabled, 1: enabled}
    if not enabled:
        torch.testing.assert_close(out[1], (A @ A.T).detach())


def test_nystrom_operator_in_two_workers_under_no_grad_with_a_grad_input():
    # the one-pass statistics of a kernel whose width requires grad, computed under no_grad
    # (as the Nystrom GP's bound computes its value) on two worker threads
    from kernelkit.models._hyperparams import kernel_with

    X, C = _data(n=400, m=13)
    sigma = torch.tensor(1.1, dtype=torch.float64, requires_grad=True)
    op = NystromOperator(kernel_with(Gaussian(1.0), {"sigma": sigma}), X, C, block_size=50)
    U = torch.randn(400, 1, dtype=torch.float64)
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with torch.no_grad():
            H, R, _ = op.normal_equations(U)
    finally:
        torch.set_num_threads(threads)
    K = gram(Gaussian(1.1), X, C)
    torch.testing.assert_close(H[0], K.T @ K, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(R, K.T @ U, rtol=1e-10, atol=1e-10)
