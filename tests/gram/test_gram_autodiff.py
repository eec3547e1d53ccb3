"""``gram(..., differentiable=True)``: values and gradients against the direct ``kernel.block``."""

from __future__ import annotations

import pytest
import torch

from kernelkit.gram import gram
from kernelkit.kernels import Gaussian, Laplacian, Matern, Polynomial
from kernelkit.kernels._strings import Spectrum
from kernelkit.utils._errors import InputError

KERNELS = [Gaussian(1.3), Laplacian(2.0), Matern(nu=1.5, sigma=1.0), Polynomial(degree=2)]


def _grads(K, inputs, G):
    return torch.autograd.grad(K, inputs, G)


@pytest.mark.parametrize("kernel", KERNELS, ids=lambda k: type(k).__name__)
@pytest.mark.parametrize("symmetric", [True, False])
@pytest.mark.parametrize("tiling", [{"block_size": 7}, {"memory_budget": 40_000}])
def test_tiled_gradients_equal_direct_block(kernel, symmetric, tiling):
    gen = torch.Generator().manual_seed(0)
    Z = torch.randn(41, 3, dtype=torch.float64, generator=gen, requires_grad=True)
    S = None if symmetric else torch.randn(29, 3, dtype=torch.float64, generator=gen)
    if S is not None:
        S.requires_grad_(True)
    inputs = [Z] if S is None else [Z, S]
    ref = kernel.block(Z, Z if S is None else S)
    G = torch.randn(ref.shape, dtype=torch.float64, generator=gen)
    K = gram(kernel, Z, S, differentiable=True, **tiling)
    torch.testing.assert_close(K, ref, rtol=1e-12, atol=1e-12)
    for got, want in zip(_grads(K, inputs, G), _grads(ref, inputs, G), strict=True):
        assert float((got - want).abs().max()) <= 1e-10 * float(want.abs().max())


@pytest.mark.parametrize("kernel", KERNELS[:2], ids=lambda k: type(k).__name__)
def test_gradcheck_and_second_order(kernel):
    Z = torch.randn(6, 2, dtype=torch.float64, requires_grad=True)
    S = torch.randn(4, 2, dtype=torch.float64, requires_grad=True)

    def sym(A):
        return gram(kernel, A, block_size=4, differentiable=True)

    def cross(A, B):
        return gram(kernel, A, B, block_size=3, differentiable=True)

    assert torch.autograd.gradcheck(sym, (Z,))
    assert torch.autograd.gradcheck(cross, (Z, S))
    # double backward (create_graph) recomputes the block whole inside the graph
    assert torch.autograd.gradgradcheck(sym, (Z,))
    assert torch.autograd.gradgradcheck(cross, (Z, S))


def test_batched_stacks_and_shared_operand():
    k = Gaussian(0.9)
    Z = torch.randn(3, 8, 2, dtype=torch.float64, requires_grad=True)
    S = torch.randn(5, 2, dtype=torch.float64, requires_grad=True)
    K = gram(k, Z, S, block_size=3, differentiable=True)
    ref = torch.stack([k.block(z, S) for z in Z])
    torch.testing.assert_close(K, ref, rtol=1e-12, atol=1e-12)
    G = torch.randn(K.shape, dtype=torch.float64)
    for got, want in zip(_grads(K, [Z, S], G), _grads(ref, [Z, S], G), strict=True):
        torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)
    z, s = Z[:2, :3].detach().requires_grad_(True), S[:2].detach().requires_grad_(True)
    assert torch.autograd.gradcheck(
        lambda A, B: gram(k, A, B, block_size=2, differentiable=True), (z, s)
    )
    assert torch.autograd.gradcheck(lambda A: gram(k, A, block_size=2, differentiable=True), (z,))


def test_without_budget_is_bitwise_the_direct_block():
    k = Laplacian(1.0)
    Z = torch.randn(30, 4, dtype=torch.float64, requires_grad=True)
    assert torch.equal(gram(k, Z, differentiable=True), k.block(Z, Z))
    with torch.no_grad():
        assert torch.equal(gram(k, Z, differentiable=True), k.block(Z, Z))
    Z3 = torch.randn(2, 30, 4, dtype=torch.float64)
    assert torch.equal(gram(k, Z3, differentiable=True), torch.vmap(k.block)(Z3, Z3))


def test_structured_input_without_budget_is_the_direct_block():
    k = Spectrum(2)
    seqs = ["ACGTAC", "GGTA", "ACGGA", "TTAC"]
    Xb = k.prepare(seqs, reference=True)
    assert torch.equal(gram(k, Xb, differentiable=True), k.block(Xb, Xb))
    assert torch.equal(gram(k, Xb, memory_budget=1 << 16, differentiable=True), gram(k, Xb))


def test_no_gradient_needed_uses_the_tiled_engine():
    k = Gaussian(1.0)
    Z = torch.randn(30, 4, dtype=torch.float64)
    K = gram(k, Z, memory_budget=4 * 8 * 50, differentiable=True)
    assert not K.requires_grad
    assert torch.equal(K, gram(k, Z, memory_budget=4 * 8 * 50))


def test_bad_shapes_raise():
    with pytest.raises(InputError, match="X: expected a 2-D"):
        gram(Gaussian(1.0), torch.zeros(2, 2, 2, 2), block_size=2, differentiable=True)
    with pytest.raises(InputError, match="X, Y: expected the same batch size"):
        gram(
            Gaussian(1.0),
            torch.zeros(2, 3, 2),
            torch.zeros(3, 3, 2),
            block_size=2,
            differentiable=True,
        )
