r"""Gram blocks inside the autograd graph: ``gram(..., differentiable=True)``.

The kernel autoencoders and the concatenated regression evaluate kernels on latent codes
``Z`` that depend on the trainable coefficients, and differentiate the objective through
these blocks.  The blocks are needed whole (the Cholesky factor of ``K_L + n lam I`` reads all
of them), so a memory budget cannot shrink them; it bounds the *scratch* around them:

* without ``memory_budget`` and ``block_size`` the block is ``kernel.block(Z, S)`` in one
  piece, in or out of the autograd graph, bitwise the kernel's own block: the objectives are
  non-convex, and a last-bit change of a Gram can lead L-BFGS to another local minimum, so the
  default path keeps the results of the direct call.  Autograd keeps the kernel's
  intermediates for the backward pass (for a stationary kernel: the distance block before
  and after clipping, the diagonal mask of the symmetric case and the result, about four
  ``n x m`` blocks).  This is the fastest path.
* with a budget (or a tile size) the block is a :class:`CheckpointedGram`: the forward pass is
  the tiled engine writing the result in place, so no intermediate is kept; the backward pass
  recomputes each tile ``kernel.block(Z_I, S_J)`` under autograd and back-propagates the
  tile's part ``dL/dK[I, J]`` of the incoming gradient into ``dL/dZ_I`` and ``dL/dS_J``
  (gradient checkpointing: Chen, Xu, Zhang and Guestrin 2016, *Training deep nets with
  sublinear memory cost*, section 3).  The extra memory is one tile with its autograd
  intermediates, sized by the budget with :data:`BACKWARD_SCRATCH_FACTOR`; the cost is a
  second evaluation of the kernel.  In the symmetric case only the tiles on and below the
  diagonal are recomputed, an off-diagonal tile taking ``G[I, J] + G[J, I]^T``.
* a backward pass that must itself be differentiable (``create_graph=True``, e.g. the
  forward-mode ``jvp`` of :class:`~kernelkit.invariance.MixupInvariance`) recomputes the
  block whole inside the graph: exact at every order, not bounded by the budget.

A leading batch dimension (``(b, n, d)`` inputs, the random restarts of the concatenated
regression) gives a ``(b, n, m)`` stack, one Gram per slice; a 2-D operand is shared by every
slice.  With a budget, inputs that carry no gradient get the plain tiled engine.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from kernelkit.gram._tiling import SCRATCH_FACTOR, tile_size, tiles
from kernelkit.kernels._base import Kernel
from kernelkit.utils._errors import InputError

Fill = Callable[[torch.Tensor, torch.Tensor | None, torch.Tensor], torch.Tensor]
"""``fill(X, Y, out)`` writes ``K(X, Y)`` (``K(X, X)`` for ``Y`` None) into ``out``."""

BACKWARD_SCRATCH_FACTOR = 3 * SCRATCH_FACTOR
"""Tile-sized buffers one recomputed tile may hold during the backward pass (the tile, the
kernel's intermediates kept by autograd and their gradients)."""


def _stack_shapes(X: torch.Tensor, Y: torch.Tensor | None) -> tuple[int | None, int, int]:
    """Batch size (None for 2-D), rows and columns of the Gram of ``X`` and ``Y``."""
    for name, T in (("X", X), ("Y", Y)):
        if T is not None and T.dim() not in (2, 3):
            raise InputError(
                f"{name}: expected a 2-D (n, d) or 3-D (batch, n, d) tensor with "
                f"differentiable=True, got shape {tuple(T.shape)}"
            )
    dims = [T.shape[0] for T in (X, Y) if T is not None and T.dim() == 3]
    if len(set(dims)) > 1:
        raise InputError(f"X, Y: expected the same batch size, got {dims[0]} and {dims[1]}")
    Yr = X if Y is None else Y
    return (dims[0] if dims else None), X.shape[-2], Yr.shape[-2]


def _slice(T: torch.Tensor | None, r: int | None) -> torch.Tensor | None:
    """Slice ``r`` of a stack (a 2-D operand is shared by every slice)."""
    if T is None or r is None or T.dim() == 2:
        return T
    return T[r]


def block_whole(kernel: Kernel, X: torch.Tensor, Y: torch.Tensor | None) -> torch.Tensor:
    """``kernel.block`` in one piece (``Y`` None: ``block(X, X)``), over a leading batch dim.

    3-D operands go through ``torch.vmap`` (a loop for kernels whose ``block`` cannot be
    vmapped), as two operands even when ``Y`` is None.
    """
    Yr = X if Y is None else Y
    if X.dim() == 2 and Yr.dim() == 2:
        return kernel.block(X, Yr)
    b = X.shape[0] if X.dim() == 3 else Yr.shape[0]
    Xs = X.expand(b, *X.shape) if X.dim() == 2 else X
    Ys = Xs if Y is None else Yr.expand(b, *Yr.shape) if Yr.dim() == 2 else Yr
    try:  # the two operands enter vmap apart: no exact-zero diagonal of ``block(X, X)``
        return torch.vmap(kernel.block)(Xs, Ys)
    except Exception:  # pragma: no cover - kernels with data-dependent control flow
        return torch.stack([kernel.block(x, y) for x, y in zip(Xs, Ys, strict=True)])


def fill_stack(fill: Fill, X: torch.Tensor, Y: torch.Tensor | None) -> torch.Tensor:
    """The Gram (stack) of ``X`` and ``Y`` by ``fill``, without autograd."""
    batch, n, m = _stack_shapes(X, Y)
    with torch.no_grad():
        Xd = X.detach()
        Yd = None if Y is None else Y.detach()
        shape = (n, m) if batch is None else (batch, n, m)
        out = torch.empty(shape, dtype=X.dtype, device=X.device)
        for r in [None] if batch is None else range(batch):
            fill(_slice(Xd, r), _slice(Yd, r), out if r is None else out[r])
    return out


def _backward_slice(
    kernel: Kernel,
    X: torch.Tensor,
    Y: torch.Tensor | None,
    G: torch.Tensor,
    b: int,
    grads: tuple[torch.Tensor | None, torch.Tensor | None],
) -> None:
    """Accumulate ``dL/dX`` and ``dL/dY`` of one Gram tile by tile into ``grads``."""
    dX, dY = grads
    Yr = X if Y is None else Y
    n, m = X.shape[0], Yr.shape[0]
    for r0, r1, c0, c1 in tiles(n, m, b, b, symmetric=Y is None):
        Xi = X[r0:r1].detach().requires_grad_(dX is not None)
        diagonal = Y is None and r0 == c0
        if diagonal:
            Yj, g = Xi, G[r0:r1, c0:c1]
        else:
            Yj = Yr[c0:c1].detach().requires_grad_((dX if Y is None else dY) is not None)
            g = G[r0:r1, c0:c1] + G[c0:c1, r0:r1].mT if Y is None else G[r0:r1, c0:c1]
        with torch.enable_grad():
            T = kernel.block(Xi, Yj)
            wrt = [t for t in dict.fromkeys((Xi, Yj)) if t.requires_grad]
            parts = torch.autograd.grad(T, wrt, g) if wrt else ()
        for t, part in zip(wrt, parts, strict=True):
            if t is Xi:
                dX[r0:r1] += part
            elif Y is None:
                dX[c0:c1] += part
            else:
                dY[c0:c1] += part


class CheckpointedGram(torch.autograd.Function):
    """``K(X, Y)`` computed by the tiled engine, differentiated tile by tile (module docstring).

    ``apply(kernel, fill, tile, X, Y)``: ``fill`` writes a Gram without autograd, ``tile`` is
    the side of the tiles recomputed in the backward pass, ``Y`` None is the symmetric case.
    """

    @staticmethod
    def forward(  # type: ignore[override]
        ctx: torch.autograd.function.FunctionCtx,
        kernel: Kernel,
        fill: Fill,
        tile: int,
        X: torch.Tensor,
        Y: torch.Tensor | None,
    ) -> torch.Tensor:
        ctx.kernel, ctx.tile = kernel, tile  # type: ignore[attr-defined]
        ctx.save_for_backward(X, Y)
        return fill_stack(fill, X, Y)

    @staticmethod
    def backward(  # type: ignore[override]
        ctx: torch.autograd.function.FunctionCtx, G: torch.Tensor
    ) -> tuple[None, None, None, torch.Tensor | None, torch.Tensor | None]:
        X, Y = ctx.saved_tensors  # type: ignore[attr-defined]
        kernel: Kernel = ctx.kernel  # type: ignore[attr-defined]
        need_x, need_y = ctx.needs_input_grad[3:]  # type: ignore[attr-defined]
        if torch.is_grad_enabled():  # create_graph: the whole block inside the graph
            wrt = [t for t, need in ((X, need_x), (Y, need_y)) if need]
            K = block_whole(kernel, X, Y)
            parts = iter(torch.autograd.grad(K, wrt, G, create_graph=True))
            return (
                None,
                None,
                None,
                next(parts) if need_x else None,
                next(parts) if need_y else None,
            )
        dX = torch.zeros_like(X) if need_x else None
        dY = torch.zeros_like(Y) if need_y else None
        batch, _, _ = _stack_shapes(X, Y)
        for r in [None] if batch is None else range(batch):
            grads = (_slice(dX, r), _slice(dY, r))
            Gr = G if r is None else G[r]
            _backward_slice(kernel, _slice(X, r), _slice(Y, r), Gr, ctx.tile, grads)  # type: ignore[attr-defined]
        return None, None, None, dX, dY


def differentiable_gram(
    kernel: Kernel,
    X: torch.Tensor,
    Y: torch.Tensor | None,
    fill: Fill,
    *,
    block_size: int | None,
    memory_budget: int | None,
) -> torch.Tensor:
    """``K(X, Y)`` (stack) within a budget, kept in the autograd graph (module docstring)."""
    if not (torch.is_grad_enabled() and any(T is not None and T.requires_grad for T in (X, Y))):
        return fill_stack(fill, X, Y)
    _, n, m = _stack_shapes(X, Y)
    itemsize = torch.empty((), dtype=X.dtype).element_size()
    scale = BACKWARD_SCRATCH_FACTOR // SCRATCH_FACTOR
    b = tile_size(max(n, m), scale * itemsize, block_size=block_size, memory_budget=memory_budget)
    if X.dim() == 3 and Y is not None and Y.dim() == 2:
        Y = Y.expand(X.shape[0], *Y.shape)
    elif Y is not None and Y.dim() == 3 and X.dim() == 2:
        X = X.expand(Y.shape[0], *X.shape)
    return CheckpointedGram.apply(kernel, fill, b, X, Y)
