r"""Streamed products with the ``n x m`` Nyström block ``K_nm = K(X, C)``, or with it kept.

Falkon (Rudi, Carratino and Rosasco, NeurIPS 2017, Algorithm 1, ``KnM_times_vector``) needs
``K_nm^T (K_nm v + u)`` at every CG iteration.  The rows of ``X`` are cut into tiles
``X_b``; each tile's kernel block ``K_b = K(X_b, C)`` is computed once (in the dtype of the
data: float32 blocks for float32 data) and used for both products,

.. math:: K_{nm}^T W (K_{nm} V) + K_{nm}^T U = \sum_b K_b^T \big(w_b \odot (K_b V) + U_b\big).

Only the kernel evaluation (the ``b m`` volume) runs in the block dtype; the products run in
float64 on a float64 copy of the tile, as the ``m x m`` algebra does (Meanti et al., "Kernel
methods through the roof", NeurIPS 2020, section 4: low precision where the ``n x m`` volume
is, the rest numerically safe).  The vectors ``V = B U`` of Falkon's CG carry the factor
``T^{-1}`` of an ill-conditioned ``K_mm``: their entries are large and ``K_b V`` cancels, so a
float32 product loses digits that CG cannot recover (measured: test MSE 0.01183 with float32
products against 0.01132 with float64 products of the same float32 blocks, n = 2e4,
m = 1000, benchmarks/bench_falkon.py's problem; the float64 fit is 0.01132).  The
per-tile work is one kernel block (for the Gaussian: the ``exp`` pass over ``b m`` entries),
its float64 copy and two float64 GEMMs with ``c`` columns; memory is one tile (and its copy)
per worker thread plus its ``m x c`` float64 accumulator.

The per-tile functions (:func:`~kernelkit.gram.nystrom_tile`,
:func:`~kernelkit.gram._tiles.nystrom_normal_tile`) are pure, so the tile loop of
:class:`NystromOperator` here and a distributed map-reduce over row blocks are the same
computation with two executors.  A :class:`NystromOperator` whose ``memory_budget`` holds
``K_nm`` keeps the tiles of its first pass and reads them in every later pass instead of
evaluating the kernel again (the iterative solvers: one kernel pass per fit instead of one
per CG iteration).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np
import psutil
import torch

from kernelkit.gram._centres import take
from kernelkit.gram._engine import prepare_pair
from kernelkit.gram._tiles import (
    RowsFn,
    _check_rhs,
    nystrom_normal_tile,
    nystrom_tile,
)
from kernelkit.gram._tiling import is_sliceable, n_workers, run_parallel
from kernelkit.kernels._base import Batch, Kernel
from kernelkit.solvers._nystrom_normal import symmetric_from_upper
from kernelkit.utils._config import deprecated_options, options
from kernelkit.utils._errors import InputError
from kernelkit.utils._threads import blas_threads
from kernelkit.utils._validation import check_int

__getattr__ = deprecated_options(
    __name__,
    {
        name: name.lower()
        for name in (
            "DEVICE_TILE_BYTES",
            "KEEP_FRACTION",
            "NYSTROM_TILE_BYTES",
            "SHARED_BLAS_CENTRES",
        )
    },
)
"""The tiling constants of the previous release, now options (``kernelkit.get_config``):
importable with a ``FutureWarning`` for one release."""


def kept_block_bytes(Xb: Batch, m: int) -> int:
    """Bytes of the ``n x m`` block of prepared rows ``Xb`` against ``m`` centres, in the block
    dtype (the rows' for vectors, float64 for items)."""
    itemsize = Xb.element_size() if isinstance(Xb, torch.Tensor) else 8
    return len(Xb) * m * itemsize


def keep_budget(device: Any = None, *, fraction: float | None = None) -> int:
    """Default ``memory_budget`` (bytes) of a kept ``K_nm``: ``fraction`` (default: the option
    ``keep_fraction``, :func:`kernelkit.get_config`) of the memory available now, the free
    memory of a CUDA ``device`` (``torch.cuda.mem_get_info``), else the host's available
    memory (``psutil.virtual_memory().available``)."""
    device = torch.device("cpu" if device is None else device)
    share = options().keep_fraction if fraction is None else fraction
    if device.type == "cuda":
        return int(share * torch.cuda.mem_get_info(device)[0])
    return int(share * psutil.virtual_memory().available)


class StreamedProducts(ABC):
    """The products of ``K_nm`` built on one streaming pass ``_stream`` (row tiles here, row
    blocks on a cluster in :mod:`kernelkit.gram._distributed_nystrom`).

    ``_stream(V, U, weights, keep_kv=..., transpose=...)`` returns ``K_nm V`` (when
    ``keep_kv``) and ``K_nm^T (w K_nm V + U)`` (when ``transpose``), float64.
    """

    shape: tuple[int, int]

    @property
    def device(self) -> torch.device:
        """The device of the products: the data's (the CPU for a cluster's row blocks)."""
        return torch.device("cpu")

    @abstractmethod
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
        """One pass: ``(K_nm V or None, K_nm^T (w K_nm V + U) or None)`` (``fast``: products
        in the block dtype, :func:`nystrom_tile`)."""

    @abstractmethod
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
        r"""``H = K_nm^T W K_nm`` (one per weight column), ``R = K_nm^T U`` in ONE pass.

        ``U`` has shape ``(n, c)``, ``weights`` ``(n,)`` or ``(n, groups)``; ``V`` of shape
        ``(m, q)`` returns ``K_nm V`` too; ``rows`` computes each tile's weights and ``U``
        from its ``K_b V`` and its rows of the ``(n, ...)`` arrays ``row_data``
        (:data:`RowsFn`; then ``U`` and ``weights`` are unused, ``groups`` is the number of
        weight columns and ``columns`` that of ``U``, default ``groups``);
        ``basis`` (``L``, ``L L^T = K_mm + jitter I``): every output in the coordinates of the
        Nyström features ``K_nm L^{-T}`` (:func:`nystrom_normal_tile`).  Returns
        ``(H, R, KV)``: ``H`` of shape ``(groups, m, m)`` and ``R`` float64 on the data's
        device, ``KV`` or None.
        """

    def _columns(self, T: Any, size: int, name: str) -> tuple[torch.Tensor, bool]:
        """``T`` as columns on :attr:`device`, checked to have ``size`` rows."""
        T = torch.as_tensor(T, device=self.device)
        vector = T.ndim == 1
        T = T[:, None] if vector else T
        if T.ndim != 2 or T.shape[0] != size:
            raise InputError(
                f"{name}: expected shape ({size},) or ({size}, c), got {tuple(T.shape)}"
            )
        return T, vector

    def matmat(self, V: Any) -> torch.Tensor:
        """``K_nm V`` (float64, shape ``(n, c)``), one tile of rows at a time (predictions)."""
        V, vector = self._columns(V, self.shape[1], "V")
        KV, _ = self._stream(V, None, None, keep_kv=True, transpose=False)
        assert KV is not None
        return KV[:, 0] if vector else KV

    def rmatmat(self, U: Any) -> torch.Tensor:
        """``K_nm^T U`` (float64, shape ``(m, c)``)."""
        U, vector = self._columns(U, self.shape[0], "U")
        _, R = self._stream(None, U, None, keep_kv=False, transpose=True)
        assert R is not None
        return R[:, 0] if vector else R

    def normal_matmat(
        self,
        V: torch.Tensor,
        *,
        weights: torch.Tensor | None = None,
        U: torch.Tensor | None = None,
        keep_kv: bool = False,
        fast: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        r"""``K_nm^T (w K_nm V + U)`` in one pass over the tiles, and ``K_nm V`` if ``keep_kv``.

        ``V`` has shape ``(m, c)``, ``weights`` ``(n,)`` or ``(n, c)``, ``U`` ``(n, c)``;
        ``fast``: products in the block dtype (:func:`nystrom_tile`).
        """
        V, _ = self._columns(V, self.shape[1], "V")
        KV, R = self._stream(V, U, weights, keep_kv=keep_kv, transpose=True, fast=fast)
        assert R is not None
        return R, KV


class NystromOperator(StreamedProducts):
    r"""The block ``K_nm = K(X, C)`` as a streamed operator (module docstring).

    Parameters
    ----------
    kernel : Kernel
        Any kernelkit kernel.
    X : array-like, tensor or batch
        The ``n`` rows (raw or prepared).
    centres : array-like, tensor or batch
        The ``m`` centres (raw or prepared; same kind as ``X``).
    block_size : int, optional
        Rows per tile (default: the options ``nystrom_tile_bytes`` of block on the CPU,
        ``device_tile_bytes`` on an accelerator, at least 1 row).
    dtype : torch.dtype, optional
        Dtype of vector inputs and of the blocks (default: the input's, else float64).
    memory_budget : int, default 0
        Bytes the operator may keep ``K_nm`` in: when ``n m`` entries of the block dtype fit
        (``keeps_block``), the first pass of the streamed products (:meth:`matmat`,
        :meth:`rmatmat`, :meth:`normal_matmat`) writes each tile's kernel block into one
        ``n x m`` tensor on the data's device, and every later pass reads its tiles from it
        instead of evaluating the kernel: the products are those of the same tiles, so the
        results equal the streamed ones bit for bit.  A CG pass then costs two
        memory-bound ``b x m`` products per tile instead of ``b m`` kernel values (Falkon,
        ``KnM_times_vector`` with a precomputed ``K_nm``, Rudi et al. 2017, section 4).  0:
        stream every pass (predictions, one-pass solvers).  :meth:`normal_equations` always
        streams.
    """

    def __init__(
        self,
        kernel: Kernel,
        X: Any,
        centres: Any,
        *,
        block_size: int | None = None,
        dtype: Any = None,
        memory_budget: int = 0,
    ) -> None:
        self.kernel = kernel
        self.Xb, Cb = prepare_pair(kernel, X, centres, dtype=dtype)
        assert Cb is not None
        self.centres = Cb
        self.shape: tuple[int, int] = (len(self.Xb), len(Cb))
        self.block_size = None if block_size is None else check_int(block_size, name="block_size")
        self.memory_budget = check_int(memory_budget, name="memory_budget", minimum=0)
        self._kept: torch.Tensor | None = None
        self._kept_full = False

    @property
    def device(self) -> torch.device:
        """The data's device (vectors; the CPU for other batches): every tile, product and
        accumulator of the passes lives there."""
        return self.Xb.device if isinstance(self.Xb, torch.Tensor) else torch.device("cpu")

    @property
    def keeps_block(self) -> bool:
        """Whether ``K_nm`` (``n m`` entries of the block dtype) fits ``memory_budget``."""
        return kept_block_bytes(self.Xb, self.shape[1]) <= self.memory_budget

    def _kept_rows(self, r0: int, r1: int, Xi: Batch, sliceable: bool) -> torch.Tensor | None:
        """Rows ``r0:r1`` of the kept ``K_nm`` (evaluated into it on the first pass), or None
        when the operator streams."""
        if self._kept is None:
            return None
        K = self._kept[r0:r1]
        if not self._kept_full:
            if isinstance(Xi, torch.Tensor) and sliceable:
                self.kernel.block_into(Xi, self.centres, K)
            else:
                K.copy_(self.kernel.block(Xi, self.centres))
        return K

    def __sizeof__(self) -> int:
        """Bytes held, the kept block and the vector rows included (what Dask's ``sizeof``
        reads, so that its scheduler runs a kept block's products where the block lives
        rather than moving it)."""
        held = [T for T in (self._kept, self.Xb, self.centres) if isinstance(T, torch.Tensor)]
        return object.__sizeof__(self) + sum(T.element_size() * T.nelement() for T in held)

    def keep(self) -> NystromOperator:
        """Evaluate ``K_nm`` into the kept block now, in the tiles of every pass and without
        products (what the first streamed pass would write), so that every pass reads it;
        returns ``self``.  A Dask row block's operator is kept this way on its worker
        (:class:`~kernelkit.gram._distributed_nystrom.DistributedNystromOperator`)."""
        if not self.keeps_block:
            raise InputError(
                f"memory_budget: expected at least {kept_block_bytes(self.Xb, self.shape[1])} "
                f"bytes to keep K_nm, got {self.memory_budget}"
            )
        if self._kept_full:
            return self
        n, m = self.shape
        sliceable, _, device, b, starts, workers, block_dtype = self._plan()
        self._kept = torch.empty(n, m, dtype=block_dtype, device=device)

        def work(w: int) -> None:
            for r0 in starts[w::workers]:
                r1 = min(r0 + b, n)
                self._kept_rows(r0, r1, self.Xb[r0:r1] if sliceable else self.Xb, sliceable)

        with torch.no_grad():
            run_parallel(work, list(range(workers)), parallel=workers > 1)
        self._kept_full = True
        return self

    def take_rows(self, index: Any) -> torch.Tensor:
        """Rows ``index`` of ``K_nm`` (float64, shape ``(len(index), m)``): read from the kept
        block once a pass has filled it, else evaluated."""
        index = np.asarray(index, dtype=np.int64)
        if self._kept is not None and self._kept_full:
            return self._kept[torch.as_tensor(index, device=self._kept.device)].double()
        return self.kernel.block(take(self.Xb, index), self.centres).to(torch.float64)

    def rows_per_tile(self, itemsize: int = 4) -> int:
        """Rows ``b`` of one tile: ``block_size``, else the option ``nystrom_tile_bytes``
        over ``m itemsize`` (``device_tile_bytes`` on an accelerator)."""
        n, m = self.shape
        if self.block_size is not None:
            return max(1, min(self.block_size, n))
        opt = options()
        tile = opt.nystrom_tile_bytes if self.device.type == "cpu" else opt.device_tile_bytes
        return max(1, min(n, tile // max(1, m * itemsize)))

    def _plan(self, *, min_rows: int = 1) -> tuple:
        """The tile loop of every pass: ``(sliceable, vector, device, b, starts, workers,
        block_dtype)``, ``b`` rows per tile (at least ``min(n, min_rows)`` unless
        ``block_size`` is set; all ``n`` when the batch cannot be sliced) and one worker
        thread per tile group on the CPU."""
        n, _ = self.shape
        sliceable = is_sliceable(self.Xb)
        vector = isinstance(self.Xb, torch.Tensor)
        device = self.device
        b = self.rows_per_tile(self.Xb.element_size() if vector else 8)
        if self.block_size is None:
            b = max(b, min(n, min_rows))
        b = b if sliceable else n
        starts = list(range(0, n, b))
        workers = n_workers(len(starts)) if vector and device.type == "cpu" else 1
        block_dtype = self.Xb.dtype if vector else torch.float64
        return sliceable, vector, device, b, starts, workers, block_dtype

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
        n, m = self.shape
        cols = (V if V is not None else U).shape[1]  # type: ignore[union-attr]
        sliceable, vector, device, b, starts, workers, block_dtype = self._plan()
        if self._kept is None and self.keeps_block:
            self._kept = torch.empty(n, m, dtype=block_dtype, device=device)
        f64 = {"dtype": torch.float64, "device": device}
        V, U, weights = (None if T is None else T.to(device) for T in (V, U, weights))
        KV = torch.empty(n, cols, **f64) if keep_kv else None
        acc = [torch.zeros(m, cols, **f64) for _ in range(workers)]

        def work(w: int) -> None:
            kept = self._kept is not None
            scratch = (
                torch.empty(b * m, dtype=block_dtype, device=device)
                if vector and not kept
                else None
            )
            low = vector and block_dtype != torch.float64 and not fast
            scratch64 = torch.empty(b * m, **f64) if low else None
            for r0 in starts[w::workers]:
                r1 = min(r0 + b, n)
                Xi = self.Xb[r0:r1] if sliceable else self.Xb
                kv, ktz = nystrom_tile(
                    self.kernel,
                    Xi,
                    self.centres,
                    V=V,
                    U=None if U is None else U[r0:r1],
                    weights=None if weights is None else weights[r0:r1],
                    transpose=transpose,
                    out=scratch,
                    out64=scratch64,
                    fast=fast,
                    block=self._kept_rows(r0, r1, Xi, sliceable),
                )
                if KV is not None and kv is not None:
                    KV[r0:r1] = kv
                if ktz is not None:
                    acc[w] += ktz

        with torch.no_grad():
            run_parallel(work, list(range(workers)), parallel=workers > 1)
        self._kept_full = self._kept is not None
        total = acc[0]
        for other in acc[1:]:
            total += other
        return KV, (total if transpose else None)

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
        fast: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """One pass of :func:`nystrom_normal_tile` over tiles of ``max(b, m)`` rows (see
        :meth:`StreamedProducts.normal_equations`; ``fast``: float32 tile products,
        :func:`nystrom_normal_tile`): one worker thread per core with a single-threaded BLAS
        each, or, from the option ``shared_blas_centres`` centres, one worker whose BLAS uses
        every thread."""
        n, m = self.shape
        sliceable, vector, device, b, starts, workers, block_dtype = self._plan(min_rows=m)
        shared_blas = m >= options().shared_blas_centres
        workers = 1 if shared_blas else workers
        _check_rhs(U, rows)
        if rows is None:
            U, _ = self._columns(U, n, "U")
            cols = U.shape[1]
            if weights is not None:
                weights = torch.as_tensor(weights, device=device)
                groups = 1 if weights.ndim == 1 else int(weights.shape[1])
        else:
            cols = groups if columns is None else columns
        f64 = {"dtype": torch.float64, "device": device}
        acc = [
            (torch.zeros(groups, m, m, **f64), torch.zeros(m, cols, **f64)) for _ in range(workers)
        ]
        KV = None if V is None else torch.empty(n, V.shape[1], **f64)
        Vd = None if V is None else V.to(**f64)
        Ld = None if basis is None else basis.to(**f64)

        def work(w: int) -> None:
            scratch = torch.empty(b * m, dtype=block_dtype, device=device) if vector else None
            scratch64 = torch.empty(b * m, **f64)
            for r0 in starts[w::workers]:
                r1 = min(r0 + b, n)
                kv = nystrom_normal_tile(
                    self.kernel,
                    self.Xb[r0:r1] if sliceable else self.Xb,
                    self.centres,
                    *acc[w],
                    U=None if U is None or rows is not None else U[r0:r1].to(device),
                    weights=None if weights is None else weights[r0:r1].to(device),
                    V=Vd,
                    rows=rows,
                    row_data=[T[r0:r1].to(device) for T in row_data],
                    basis=Ld,
                    out=scratch,
                    out64=scratch64,
                    fast=fast,
                )
                if KV is not None and kv is not None:
                    KV[r0:r1] = kv

        # one BLAS thread per worker thread (spinning BLAS threads stall a loaded machine),
        # or one worker with every BLAS thread from shared_blas_centres centres
        n_blas = torch.get_num_threads() if shared_blas else 1
        with torch.no_grad(), blas_threads(n_blas):
            run_parallel(work, list(range(workers)), parallel=workers > 1)
        H, R = acc[0]
        for H_w, R_w in acc[1:]:
            H += H_w
            R += R_w
        return symmetric_from_upper(H), R, KV

    def __repr__(self) -> str:
        return f"NystromOperator({self.kernel!r}, shape={self.shape})"


__all__ = [
    "NystromOperator",
    "keep_budget",
    "kept_block_bytes",
]
