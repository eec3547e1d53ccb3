"""Blocked (tiled) evaluation of a Gram matrix into a preallocated output.

The Gram ``K(X, Y)`` is cut into tiles; each tile is written in place by
``Kernel.block_into`` (for stationary kernels: one GEMM, then the squared-distance and
profile passes fused in place on the tile while it sits in cache).  For the Gaussian the cost
is the ``exp`` pass and the first writes to fresh pages of the output, not the GEMM, so the
symmetric case computes only the tiles on and below the diagonal and mirrors them.
"""

from __future__ import annotations

from typing import Any

import torch

from kernelkit.gram._autodiff import block_whole, differentiable_gram
from kernelkit.gram._tiling import (
    batch_itemsize,
    check_tiling_args,
    is_sliceable,
    kernel_features,
    run_parallel,
    tile_size,
    tiles,
)
from kernelkit.kernels._base import Batch, Kernel, batch_dtype, check_same_width
from kernelkit.kernels._features import SparseFeatures, sparse_feature_gram
from kernelkit.utils._errors import InputError
from kernelkit.utils._memory import empty_large
from kernelkit.utils._progress import Progress
from kernelkit.utils._validation import resolve_dtype


def prepare_pair(
    kernel: Kernel,
    X: Any,
    Y: Any = None,
    *,
    dtype: Any = None,
    device: torch.device | str | None = None,
) -> tuple[Batch, Batch | None]:
    """Prepare ``X`` (and ``Y``) as the kernel's batches, on ``device`` when given.

    ``X`` is prepared as the reference set when ``Y`` is None (the symmetric case); ``Y`` is
    always the reference set and takes ``X``'s dtype.  Already-prepared batches pass through.
    """
    if not isinstance(kernel, Kernel):
        raise InputError(f"kernel: expected a kernelkit Kernel, got {type(kernel).__name__}")
    dtype = resolve_dtype(dtype)
    Xb = kernel.prepare(X, dtype=dtype, reference=Y is None)
    if device is not None and isinstance(Xb, torch.Tensor):
        Xb = Xb.to(device)
    if Y is None:
        return Xb, None
    Yb = kernel.prepare(Y, dtype=dtype or batch_dtype(Xb), reference=True)
    if device is not None and isinstance(Yb, torch.Tensor):
        Yb = Yb.to(device)
    check_same_width(Xb, Yb)
    return Xb, Yb


def _symmetrize_(tile: torch.Tensor) -> None:
    """Copy the strict lower triangle of a square tile onto its upper one (exact symmetry)."""
    if tile.shape[0] > 1:
        iu = torch.triu_indices(tile.shape[0], tile.shape[1], 1, device=tile.device)
        tile[iu[0], iu[1]] = tile[iu[1], iu[0]]


def returns_tensor(X: Any, out: Any = None) -> bool:
    """Whether :func:`gram` returns a torch tensor for input ``X``: a torch tensor, a batch
    already prepared by a kernelkit kernel (a class of ``kernelkit``) or an ``out`` buffer."""
    return (
        out is not None
        or isinstance(X, torch.Tensor)
        or type(X).__module__.startswith("kernelkit.")
    )


def gram(
    kernel: Kernel,
    X: Any,
    Y: Any = None,
    *,
    dtype: Any = None,
    device: torch.device | str | None = None,
    block_size: int | None = None,
    memory_budget: int | None = None,
    out: torch.Tensor | None = None,
    progress: bool = False,
    differentiable: bool = False,
) -> Any:
    """The Gram matrix ``K(X, Y)`` in the container of ``X``.

    A torch tensor when ``X`` is a torch tensor or a prepared kernelkit batch
    (``StringBatch``, ``GraphBatch``, ``MoleculeBatch``, ``PrecomputedBatch``...) or when
    ``out`` is given; a NumPy array for every other input (NumPy arrays, lists, pandas
    objects, raw strings, graphs or molecules).  The arguments and the computation are those
    of :func:`gram_tensor`.
    """
    K = gram_tensor(
        kernel,
        X,
        Y,
        dtype=dtype,
        device=device,
        block_size=block_size,
        memory_budget=memory_budget,
        out=out,
        progress=progress,
        differentiable=differentiable,
    )
    return K if returns_tensor(X, out) else K.detach().cpu().numpy()


def gram_tensor(
    kernel: Kernel,
    X: Any,
    Y: Any = None,
    *,
    dtype: Any = None,
    device: torch.device | str | None = None,
    block_size: int | None = None,
    memory_budget: int | None = None,
    out: torch.Tensor | None = None,
    progress: bool = False,
    differentiable: bool = False,
) -> torch.Tensor:
    """The Gram matrix ``K(X, Y)`` (``K(X, X)`` when ``Y`` is None) as a torch tensor, computed
    tile by tile.

    Parameters
    ----------
    kernel : Kernel
        Any kernelkit kernel.
    X, Y : array-like, tensor or structured batch
        Raw inputs or batches already prepared by ``kernel.prepare``.
    dtype : torch.dtype or str, optional
        Floating dtype of vector inputs and of the output (default: the input's, else float64).
    device : torch.device or str, optional
        Device of the computation (default: the input's).
    block_size : int, optional
        Rows (and columns) per tile.  Exclusive with ``memory_budget``.
    memory_budget : int, optional
        Bytes of scratch memory allowed besides the output; the tile size is derived from it.
    out : torch.Tensor, optional
        Preallocated output of shape ``(len(X), len(Y))`` and the Gram's dtype.
    progress : bool
        Report the tiles done on stderr (:class:`kernelkit.utils._progress.Progress`: a bar on
        a terminal, else ``[gram] tile k/N`` lines).
    differentiable : bool
        Keep the result in the autograd graph of tensor inputs ``X`` and ``Y``, which may also
        be ``(batch, n, d)`` stacks (one Gram per slice).  Without ``block_size`` and
        ``memory_budget`` the block is ``kernel.block`` of the prepared inputs in one piece,
        bitwise the direct call, in or out of the graph, for any input; with them, inputs that
        are not tensors take the usual path, and for tensors the tiled engine computes it and
        the backward pass recomputes it tile by tile within the budget
        (:mod:`kernelkit.gram._autodiff`).  ``out`` and ``progress`` are not used, nor are
        ``dtype`` and ``device`` for tensors (their own are kept).

    Returns
    -------
    torch.Tensor
        ``K`` of shape ``(len(X), len(Y))``.

    Notes
    -----
    Each tile is written in place by ``kernel.block_into`` (fused GEMM, distance and profile
    passes for stationary kernels); on CPU, tiles of vector inputs are spread over worker
    threads running torch single-threaded (see :func:`~kernelkit.gram._tiling.run_parallel`).
    With ``Y`` None only tiles on or below the diagonal are
    computed and mirrored (the result is exactly symmetric), and diagonal tiles are evaluated
    as ``block_into(Xi, Xi, ...)`` so the squared distances on the diagonal are exactly zero.
    Kernels whose ``features`` returns
    :class:`~kernelkit.kernels._features.SparseFeatures` are computed as
    ``Phi(X) Phi(Y)^T`` by one sparse product; batches that cannot be sliced fall back to one
    ``kernel.block`` call.
    """
    check_tiling_args(block_size, memory_budget)
    tensors = all(isinstance(T, torch.Tensor) for T in (X, Y) if T is not None)
    if differentiable and block_size is None and memory_budget is None:
        if tensors:
            return block_whole(kernel, X, Y)
        Xb, Yb = prepare_pair(kernel, X, Y, dtype=dtype, device=device)
        return kernel.block(Xb, Xb if Yb is None else Yb)
    if differentiable and tensors:
        return _differentiable(kernel, X, Y, block_size=block_size, memory_budget=memory_budget)
    Xb, Yb = prepare_pair(kernel, X, Y, dtype=dtype, device=device)
    symmetric = Yb is None
    Yb_ = Xb if symmetric else Yb
    out_dtype = batch_itemsize(Xb, resolve_dtype(dtype))
    n, m = len(Xb), len(Yb_)
    if out is not None:
        if not isinstance(out, torch.Tensor) or tuple(out.shape) != (n, m):
            shape = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
            raise InputError(f"out: expected a tensor of shape {(n, m)}, got {shape}")
        if out.dtype != out_dtype:
            raise InputError(f"out: expected dtype {out_dtype}, got {out.dtype}")

    fx = kernel_features(kernel, Xb)
    if isinstance(fx, SparseFeatures):
        fy = fx if symmetric else kernel_features(kernel, Yb_)
        K = sparse_feature_gram(fx, fy, dtype=out_dtype)
        return K if out is None else out.copy_(K)

    if not (is_sliceable(Xb) and is_sliceable(Yb_)):
        K = kernel.block(Xb, Yb_).to(out_dtype)
        return K if out is None else out.copy_(K)

    dev = Xb.device if isinstance(Xb, torch.Tensor) else torch.device(device or "cpu")
    if out is None:
        out = empty_large((n, m), dtype=out_dtype, device=dev)
    if n == 0 or m == 0:
        return out
    itemsize = torch.empty((), dtype=out_dtype).element_size()
    b = tile_size(max(n, m), itemsize, block_size=block_size, memory_budget=memory_budget)
    plan = tiles(n, m, b, b, symmetric=symmetric)
    bar = Progress("gram", len(plan), progress, unit="tile")

    def work(tile: tuple[int, int, int, int]) -> None:
        r0, r1, c0, c1 = tile
        Xi = Xb[r0:r1]
        view = out[r0:r1, c0:c1]
        if symmetric and r0 == c0:
            kernel.block_into(Xi, Xi, view)
            _symmetrize_(view)
        else:
            kernel.block_into(Xi, Yb_[c0:c1], view)
            if symmetric:
                out[c0:c1, r0:r1].copy_(view.T)
        bar.update()

    with torch.no_grad():
        run_parallel(work, plan, parallel=isinstance(Xb, torch.Tensor) and dev.type == "cpu")
    bar.close()
    return out


def _differentiable(
    kernel: Kernel, X: Any, Y: Any, *, block_size: int | None, memory_budget: int | None
) -> torch.Tensor:
    """``gram(..., differentiable=True)`` on tensors (see :mod:`kernelkit.gram._autodiff`)."""

    def fill(A: torch.Tensor, B: torch.Tensor | None, out: torch.Tensor) -> torch.Tensor:
        return gram(kernel, A, B, block_size=block_size, memory_budget=memory_budget, out=out)

    return differentiable_gram(
        kernel, X, Y, fill, block_size=block_size, memory_budget=memory_budget
    )
