r"""The per-tile functions of the streamed Nyström products (:mod:`kernelkit.gram._streaming`).

:func:`nystrom_tile` is the per-tile function of Falkon's products: pure (its inputs are a
row block of ``X``, the centres, the vectors and the row blocks of the weights and of ``U``;
its outputs are that tile's rows of ``K_nm V`` and its contribution to
``K_nm^T (w K_nm V + U)``), so the tile loop of
:class:`~kernelkit.gram.NystromOperator` and a distributed map-reduce over row
blocks are the same computation with two executors.

:func:`nystrom_normal_tile` is the per-tile function of the one-pass normal equations
(:mod:`kernelkit.solvers._nystrom_normal`): it adds ``K_b^T W_b K_b`` (a symmetric rank-``b``
update, :func:`~kernelkit.solvers._nystrom_normal.syrk_`) and ``K_b^T U_b`` to float64
accumulators and returns ``K_b V``;
:meth:`~kernelkit.gram._streaming.StreamedProducts.normal_equations` runs it over tiles of
``max(b, m)`` rows (the tile is at most the size of the ``m x m`` accumulator, and the update
runs at the speed of a large matrix product), on the device of the data, one accumulator per
worker thread.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from kernelkit.gram._tiling import is_sliceable
from kernelkit.kernels._base import Batch, Kernel
from kernelkit.solvers._nystrom_normal import features_, syrk_
from kernelkit.utils._errors import InputError


def _kernel_tile(
    kernel: Kernel, X_block: Batch, centres: Batch, out: torch.Tensor | None
) -> torch.Tensor:
    """The tile's kernel block ``K(X_block, centres)``: written into the scratch ``out`` when
    given and the rows can be sliced, else a new tensor."""
    b, m = len(X_block), len(centres)
    if out is None or not is_sliceable(X_block):
        return kernel.block(X_block, centres)
    K = out[: b * m].view(b, m)
    kernel.block_into(X_block, centres, K)
    return K


def nystrom_tile(
    kernel: Kernel,
    X_block: Batch,
    centres: Batch,
    *,
    V: torch.Tensor | None = None,
    U: torch.Tensor | None = None,
    weights: torch.Tensor | None = None,
    transpose: bool = True,
    out: torch.Tensor | None = None,
    out64: torch.Tensor | None = None,
    fast: bool = False,
    block: torch.Tensor | None = None,
) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    r"""One row tile of the streamed products: ``K_b V`` and ``K_b^T (w_b (K_b V) + U_b)``.

    Parameters
    ----------
    kernel : Kernel
        The kernel.
    X_block : batch
        ``b`` rows of the prepared data.
    centres : batch
        The ``m`` prepared centres.
    V : torch.Tensor, optional
        Shape ``(m, c)``; the products run in float64.
    U : torch.Tensor, optional
        This tile's rows of ``U``, shape ``(b, c)``.
    weights : torch.Tensor, optional
        This tile's weights, shape ``(b,)`` or ``(b, c)`` (one per column).
    transpose : bool
        Whether to compute the second output (``False``: only ``K_b V``, for predictions).
    out : torch.Tensor, optional
        Scratch of at least ``b m`` elements of the block dtype for ``K_b`` (reused across
        tiles; a new tensor is allocated when None).
    out64 : torch.Tensor, optional
        Scratch of at least ``b m`` float64 elements for the copy of a lower-precision
        ``K_b`` (a new tensor is allocated when None).
    fast : bool
        Run the products in the block dtype (float32 blocks: float32 products, still summed
        over tiles in float64): less time per pass (``docs/measurements.md``), for products
        whose rounding the caller tolerates (the Hessian products of an inexact Newton step).
    block : torch.Tensor, optional
        ``K_b`` already computed, shape ``(b, m)`` in the block dtype (the rows of a kept
        ``K_nm``, :class:`NystromOperator`): used instead of evaluating the kernel, never
        written to.

    Returns
    -------
    (KV, KtZ) : tuple of tensors or None
        ``K_b V`` of shape ``(b, c)`` (None without ``V``) in float64, and
        ``K_b^T (w_b K_b V + U_b)`` of shape ``(m, c)`` in float64 (None when not
        ``transpose``).
    """
    b, m = len(X_block), len(centres)
    K = block if block is not None else _kernel_tile(kernel, X_block, centres, out)
    if K.dtype != torch.float64 and not fast:
        K = K.to(torch.float64) if out64 is None else out64[: b * m].view(b, m).copy_(K)
    KV = None if V is None else K @ V.to(K.dtype)
    KV64 = None if KV is None else KV.to(torch.float64)
    if not transpose:
        return KV64, None
    Z = KV
    if Z is not None and weights is not None:
        w = weights.to(Z.dtype)
        Z = Z * (w[:, None] if w.ndim == 1 else w)
    if U is not None:
        Z = U.to(K.dtype) if Z is None else Z + U.to(K.dtype)
    if Z is None:
        raise InputError("V, U: expected at least one of them, got neither")
    return KV64, (K.T @ Z).to(torch.float64)


RowsFn = Callable[..., tuple["torch.Tensor | None", torch.Tensor]]
"""``rows(KV_b, *data_b) -> (weights_b, U_b)``: a tile's weights and right-hand-side rows
computed from its ``K_b V`` and its rows ``data_b`` of the per-row arrays ``row_data`` (a
Newton step's weights at the trial point).  A module-level function of its arguments only, so
that a cluster can ship it to the row blocks with their rows of ``row_data``."""


def _check_rhs(U: torch.Tensor | None, rows: RowsFn | None) -> None:
    """Raise :class:`~kernelkit.utils.InputError` when the normal equations get
    neither the right-hand-side rows ``U`` nor a ``rows`` function computing them."""
    if U is None and rows is None:
        raise InputError("U: expected the right-hand-side rows (n, c), got None")


def nystrom_normal_tile(
    kernel: Kernel,
    X_block: Batch,
    centres: Batch,
    H: torch.Tensor,
    R: torch.Tensor,
    *,
    U: torch.Tensor | None,
    weights: torch.Tensor | None = None,
    V: torch.Tensor | None = None,
    rows: RowsFn | None = None,
    row_data: Sequence[torch.Tensor] = (),
    basis: torch.Tensor | None = None,
    out: torch.Tensor | None = None,
    out64: torch.Tensor | None = None,
    fast: bool = False,
) -> torch.Tensor | None:
    r"""One row tile of the normal equations: ``H_g += K_b^T W_{b,g} K_b``, ``R += K_b^T U_b``.

    Parameters
    ----------
    kernel : Kernel
        The kernel.
    X_block : batch
        ``b`` rows of the prepared data.
    centres : batch
        The ``m`` prepared centres.
    H : torch.Tensor, shape (g, m, m)
        Float64 accumulators (upper triangles updated by
        :func:`~kernelkit.solvers._nystrom_normal.syrk_`).
    R : torch.Tensor, shape (m, c)
        Float64 accumulator of ``K_b^T U_b``.
    U : torch.Tensor, shape (b, c)
        This tile's right-hand-side rows (``w y`` for weighted ridge).
    weights : torch.Tensor, optional
        This tile's weights ``w >= 0``, shape ``(b,)`` or ``(b, g)`` (default: ones).
    V : torch.Tensor, optional
        Shape ``(m, q)``: ``K_b V`` is computed first and returned (float64).
    rows : callable, optional
        ``rows(K_b V, *row_data) -> (weights, U)`` replacing ``weights`` and ``U``
        (:data:`RowsFn`).
    row_data : sequence of torch.Tensor
        This tile's rows of the per-row arrays ``rows`` takes.
    basis : torch.Tensor, optional
        Lower factor ``L`` of ``K_mm + jitter I``: the tile is first mapped to the Nyström
        features ``Phi_b = K_b L^{-T}`` (a triangular solve, ``b m^2`` flops), and every
        output is in their coordinates (``Phi_b^T W_b Phi_b``, ``Phi_b^T U_b``, ``Phi_b V``).
    out, out64 : torch.Tensor, optional
        Scratch of at least ``b m`` elements of the block dtype and of float64.
    fast : bool
        Float32 blocks: the feature map and the tile's products in float32 (half the time of
        float64 BLAS), only their sums over tiles in float64.  The triangular solve is
        backward stable, so the float32 features are the exact features of a block perturbed
        by about ``sqrt(m) eps_32 max k(x, x)``; for statistics that tolerate it (kernel PCA).

    Returns
    -------
    torch.Tensor or None
        ``K_b V`` of shape ``(b, q)`` (None without ``V``).
    """
    b, m = len(X_block), len(centres)
    K = _kernel_tile(kernel, X_block, centres, out)
    if fast and K.dtype == torch.float32:
        K64 = K  # the products in float32 (``fast``), the accumulators float64
    elif out64 is None:
        K64 = K.to(torch.float64)
    else:
        K64 = out64[: b * m].view(b, m).copy_(K)
    if basis is not None:  # in place on a scratch tile; never on the kernel's own block
        scratch = K64 is not K or (out is not None and is_sliceable(X_block))
        K64 = features_(K64 if scratch else K64.clone(), basis)
    KV = None if V is None else K64 @ V.to(K64)
    if rows is not None:
        weights, U = rows(KV, *row_data)
    if U is None:
        raise InputError("U: expected the right-hand-side rows of the tile, got None")
    R.add_(K64.mT @ U.to(K64))
    if weights is None:
        syrk_(H[0], K64)
        return KV
    w = weights.to(K64)
    w = w[:, None] if w.ndim == 1 else w
    if w.shape != (b, H.shape[0]):
        raise InputError(
            f"weights: expected shape ({b},) or ({b}, {H.shape[0]}), got {tuple(w.shape)}"
        )
    g = H.shape[0]
    for j in range(g):  # the last column scales the tile in place
        syrk_(H[j], (K64 if j == g - 1 else K64.clone()).mul_(w[:, j : j + 1].sqrt()))
    return KV


__all__ = ["RowsFn", "nystrom_normal_tile", "nystrom_tile"]
