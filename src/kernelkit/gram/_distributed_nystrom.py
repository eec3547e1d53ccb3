r"""The streamed Nyström block ``K_nm`` of points that live on a Dask cluster.

:class:`DistributedNystromOperator` has the interface of
:class:`~kernelkit.gram.NystromOperator` (``shape``, ``kernel``, ``centres``,
``matmat``, ``rmatmat``, ``normal_matmat``), so the Falkon solvers of
:mod:`kernelkit.models._falkon` and :mod:`kernelkit.models._falkon_logistic` run on it
unchanged.  Each product is one task per row block of ``X``, run on the worker that holds the
block: the task streams that block through the in-process
:class:`~kernelkit.gram.NystromOperator` (each tile's kernel block computed once and
used for ``K_b V`` and ``K_b^T(w_b K_b V + U_b)``, :func:`~kernelkit.gram.nystrom_tile`),
and the client adds the ``m x c`` contributions in block order (DESIGN.md, "Falkon-class
solvers": the products are sums over row blocks, so the map-reduce is exact).

What moves per CG iteration: the ``m x c`` vectors ``V`` to every task (the centres once per
product), and one ``m x c`` float64 contribution back per block; per-row arrays (weights,
``U``) are cut into the blocks' rows on the client and sent with their block's task.
``X`` itself never leaves the workers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from kernelkit.gram._distributed import row_blocks, run_row_blocks
from kernelkit.gram._engine import prepare_pair
from kernelkit.gram._streaming import NystromOperator, StreamedProducts
from kernelkit.gram._tiles import RowsFn, _check_rhs
from kernelkit.kernels._base import Batch, Kernel
from kernelkit.utils._errors import InputError
from kernelkit.utils._validation import check_int

__all__ = ["DistributedNystromOperator"]


def _as_tensor(A: np.ndarray | None) -> torch.Tensor | None:
    return None if A is None else torch.from_numpy(A)


def _block_operator(
    kernel: Kernel, block: Any, centres: Batch, memory_budget: int = 0
) -> NystromOperator:
    """The in-process operator of a row block (on a worker), in the dtype of the centres."""
    dtype = centres.dtype if torch.is_tensor(centres) else None
    return NystromOperator(kernel, block, centres, dtype=dtype, memory_budget=memory_budget)


def _kept_operator(
    block: Any, kernel: Kernel, centres: Batch, memory_budget: int
) -> NystromOperator:
    """A row block's operator with its ``K_b`` evaluated and kept (run on a worker, persisted
    there: :meth:`~kernelkit.gram.NystromOperator.keep`)."""
    return _block_operator(kernel, block, centres, memory_budget).keep()


def _block_task(
    block: Any,
    U: np.ndarray | None,
    weights: np.ndarray | None,
    V: np.ndarray | None,
    kernel: Kernel,
    centres: Batch,
    transpose: bool,
    keep_kv: bool,
    fast: bool = False,
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """One row block's ``K_b V`` and ``K_b^T (w_b K_b V + U_b)`` (run on a worker).

    The block is streamed in tiles by the in-process
    :class:`~kernelkit.gram.NystromOperator`, so a worker holds one tile of
    ``K_b`` at a time whatever the block size; a kept block's operator
    (:func:`_kept_operator`) reads its tiles from ``K_b`` instead.
    """
    op = block if isinstance(block, NystromOperator) else _block_operator(kernel, block, centres)
    if not transpose:
        return op.matmat(_as_tensor(V)).numpy(), None
    if V is None:
        return None, op.rmatmat(_as_tensor(U)).numpy()
    R, KV = op.normal_matmat(
        _as_tensor(V), weights=_as_tensor(weights), U=_as_tensor(U), keep_kv=keep_kv, fast=fast
    )
    return (None if KV is None else KV.numpy()), R.numpy()


def _normal_task(
    block: Any,
    U: np.ndarray | None,
    weights: np.ndarray | None,
    *rest: Any,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """One row block's ``K_b^T W_b K_b``, ``K_b^T U_b`` and ``K_b V`` (run on a worker, in
    tiles; in the feature coordinates of ``basis`` when given).

    ``rest`` is the block's rows of the ``row_data`` arrays, then the shared ``kernel``,
    ``centres``, ``basis``, ``V``, ``rows``, ``groups`` and ``columns`` of
    :meth:`~kernelkit.gram._streaming.StreamedProducts.normal_equations`.
    """
    *data, kernel, centres, basis, V, rows, groups, columns = rest
    op = _block_operator(kernel, block, centres)
    H, R, KV = op.normal_equations(
        _as_tensor(U),
        _as_tensor(weights),
        V=_as_tensor(V),
        rows=rows,
        row_data=[torch.from_numpy(T) for T in data],
        groups=groups,
        columns=columns,
        basis=_as_tensor(basis),
    )
    return H.numpy(), R.numpy(), None if KV is None else KV.numpy()


class DistributedNystromOperator(StreamedProducts):
    r"""``K_nm = K(X, C)`` for a Dask array or bag ``X``, streamed by row blocks on the workers.

    Parameters
    ----------
    kernel : Kernel
        Any kernelkit kernel.
    X : dask.array.Array, dask.bag.Bag or RowBlocks
        The ``n`` rows; persist it (``X.persist()``) to keep the blocks in the workers'
        memory between iterations (a :class:`~kernelkit.gram._distributed.RowBlocks` of
        :func:`~kernelkit.gram._distributed.draw_kept_centres` keeps those that hold a
        centre).
    centres : array-like or batch
        The ``m`` centres, in the client's memory.
    client : distributed.Client, optional
        The client to run on (default: the Dask scheduler in scope).
    memory_budget : int, default 0
        Bytes the workers may keep ``K_nm`` in, all blocks together (``n m`` entries of the
        centres' dtype, float64 for items; :func:`~kernelkit.gram._distributed.cluster_keep_budget`
        is the default of :func:`~kernelkit.models._falkon_distributed.distributed_nystrom_system`).
        When it fits (``keeps_block``), the first of :meth:`matmat`, :meth:`rmatmat`,
        :meth:`normal_matmat` evaluates each block's ``K_b`` into an in-process operator
        persisted on its worker (:meth:`~kernelkit.gram.NystromOperator.keep`, the
        tiles every pass computes), and every product runs on those: ``X`` is read once and
        a CG pass costs two memory-bound products per tile instead of its kernel values, as
        in memory.  0: every product streams the blocks.  :meth:`normal_equations` always
        streams (one pass).
    """

    def __init__(
        self,
        kernel: Kernel,
        X: Any,
        centres: Any,
        *,
        client: Any = None,
        memory_budget: int = 0,
    ) -> None:
        self.kernel = kernel
        self.centres, _ = prepare_pair(kernel, centres)
        self.blocks, self.sizes = row_blocks(X)
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes)])
        self.shape: tuple[int, int] = (int(self.offsets[-1]), len(self.centres))
        self.client = client
        self.memory_budget = check_int(memory_budget, name="memory_budget", minimum=0)
        self._kept: list[Any] | None = None

    @property
    def keeps_block(self) -> bool:
        """Whether ``K_nm`` fits ``memory_budget`` (``n m`` entries of the block dtype)."""
        itemsize = self.centres.element_size() if torch.is_tensor(self.centres) else 8
        return self.shape[0] * self.shape[1] * itemsize <= self.memory_budget

    def _product_blocks(self) -> list[Any]:
        """What the product tasks run on: the row blocks, or with ``keeps_block`` their kept
        operators (persisted on the workers on the first call, :func:`_kept_operator`)."""
        if not self.keeps_block:
            return self.blocks
        if self._kept is None:
            import dask

            shared = [dask.delayed(a) for a in (self.kernel, self.centres, self.memory_budget)]
            tasks = [dask.delayed(_kept_operator, pure=True)(b, *shared) for b in self.blocks]
            kept = self.client.persist(tasks) if self.client is not None else dask.persist(*tasks)
            self._kept = list(kept)
        return self._kept

    def _split(self, T: Any, name: str) -> list[np.ndarray | None]:
        """Cut an ``(n, ...)`` array into the blocks' rows (``[None] * blocks`` for None)."""
        if T is None:
            return [None] * len(self.blocks)
        A = np.ascontiguousarray(torch.as_tensor(T).detach().cpu().numpy())
        if A.shape[0] != self.shape[0]:
            raise InputError(f"{name}: expected {self.shape[0]} rows, got {A.shape[0]}")
        return [A[a:b] for a, b in zip(self.offsets[:-1], self.offsets[1:], strict=True)]

    def _stream(
        self,
        V: torch.Tensor | None,
        U: torch.Tensor | None,
        weights: torch.Tensor | None,
        *,
        keep_kv: bool,
        transpose: bool,
        fast: bool = False,
    ) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        V_np = None if V is None else V.detach().cpu().numpy()
        parts = run_row_blocks(
            _block_task,
            self._product_blocks(),
            rows=[self._split(U, "U"), self._split(weights, "weights")],
            shared=[V_np, self.kernel, self.centres, transpose, keep_kv, fast],
            client=self.client,
        )
        KV = torch.from_numpy(np.concatenate([kv for kv, _ in parts], axis=0)) if keep_kv else None
        if not transpose:
            return KV, None
        total = np.zeros_like(parts[0][1], dtype=np.float64)
        for _, ktz in parts:
            total += ktz
        return KV, torch.from_numpy(total)

    def normal_equations(
        self,
        U: torch.Tensor | None,
        weights: torch.Tensor | None = None,
        *,
        V: torch.Tensor | None = None,
        rows: RowsFn | None = None,
        row_data: Sequence[torch.Tensor] = (),
        groups: int = 1,
        columns: int | None = None,
        basis: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """``K_nm^T W K_nm``, ``K_nm^T U`` (and ``K_nm V``) as ONE map-reduce over the row
        blocks: each block read once, its task runs the in-process pass
        (:meth:`NystromOperator.normal_equations`) on its rows of ``U``, ``weights`` and
        ``row_data`` (``rows`` and ``V`` sent to every task), ``m^2 g + m c`` floats and its
        rows of ``K_nm V`` come back."""
        _check_rhs(U, rows)
        data = [self._split(T, "row_data") for T in row_data]
        shared = [None if T is None else T.detach().cpu().numpy() for T in (basis, V)]
        parts = run_row_blocks(
            _normal_task,
            self.blocks,
            rows=[self._split(U, "U"), self._split(weights, "weights"), *data],
            shared=[self.kernel, self.centres, *shared, rows, groups, columns],
            client=self.client,
        )
        H = np.zeros_like(parts[0][0], dtype=np.float64)
        R = np.zeros_like(parts[0][1], dtype=np.float64)
        for H_b, R_b, _ in parts:
            H += H_b
            R += R_b
        KV = None if V is None else torch.from_numpy(np.concatenate([p[2] for p in parts]))
        return torch.from_numpy(H), torch.from_numpy(R), KV

    def __repr__(self) -> str:
        return f"DistributedNystromOperator({self.kernel!r}, shape={self.shape})"
