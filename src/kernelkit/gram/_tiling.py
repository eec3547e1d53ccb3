"""Tile planning shared by :func:`~kernelkit.gram.gram` and :class:`~kernelkit.gram.GramOperator`.

A tile is a ``rows x cols`` block of the Gram matrix computed in one call of
``Kernel.block_into``.  Small tiles keep the fused ``GEMM -> distances -> exp`` passes in the
L2 cache (1-2 MiB per core on current CPUs); a memory budget caps the tile further.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import torch

from kernelkit.kernels._base import Batch, Kernel, batch_dtype
from kernelkit.utils._config import deprecated_options, options
from kernelkit.utils._errors import InputError

__getattr__ = deprecated_options(__name__, {"DEFAULT_TILE_BYTES": "gram_tile_bytes"})
"""``DEFAULT_TILE_BYTES`` of the previous release, now the option ``gram_tile_bytes``
(``kernelkit.get_config``): importable with a ``FutureWarning`` for one release."""

SCRATCH_FACTOR = 4
"""Tile-sized temporaries a non-fused ``block`` may allocate (``block`` + profile + copies)."""


def check_tiling_args(block_size: Any, memory_budget: Any) -> None:
    """Validate ``block_size`` / ``memory_budget``: positive integers, not both."""
    if block_size is not None and memory_budget is not None:
        raise InputError(
            "block_size, memory_budget: expected at most one of them, got both "
            f"(block_size={block_size!r}, memory_budget={memory_budget!r})"
        )
    for name, value in (("block_size", block_size), ("memory_budget", memory_budget)):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InputError(f"{name}: expected a positive integer or None, got {value!r}")


def tile_size(
    n: int,
    itemsize: int,
    *,
    block_size: int | None = None,
    memory_budget: int | None = None,
    extra_bytes_per_row: int = 0,
) -> int:
    """Rows (and columns) ``b`` of one square ``b x b`` tile.

    Parameters
    ----------
    n : int
        Largest side of the Gram block (tiles never exceed it).
    itemsize : int
        Bytes per element of the output dtype.
    block_size : int, optional
        Explicit tile size.
    memory_budget : int, optional
        Bytes available for scratch: ``SCRATCH_FACTOR`` tiles plus ``extra_bytes_per_row``
        per tile row must fit.  Raises :class:`InputError` when not even a 1 x 1 tile fits.
    extra_bytes_per_row : int
        Bytes needed per tile row besides the tile itself (e.g. a partial product).
    """
    n = max(n, 1)
    if block_size is not None:
        return min(block_size, n)
    b = math.isqrt(options().gram_tile_bytes // itemsize)
    if memory_budget is not None:
        per_elem = SCRATCH_FACTOR * itemsize
        if memory_budget < per_elem + extra_bytes_per_row:
            raise InputError(
                f"memory_budget: expected at least {per_elem + extra_bytes_per_row} bytes "
                f"(one tile element with its scratch), got {memory_budget}"
            )
        while b > 1 and b * (b * per_elem + extra_bytes_per_row) > memory_budget:
            b = max(1, int(b * 0.9))
    return min(b, n)


def tiles(n_rows: int, n_cols: int, rows: int, cols: int, *, symmetric: bool) -> list[tuple]:
    """``(r0, r1, c0, c1)`` of every tile; only ``c0 <= r0`` tiles when ``symmetric``."""
    out = []
    for r0 in range(0, n_rows, rows):
        r1 = min(r0 + rows, n_rows)
        for c0 in range(0, r0 + 1 if symmetric else n_cols, cols):
            out.append((r0, r1, c0, min(c0 + cols, n_cols)))
    return out


def batch_itemsize(batch: Batch, dtype: torch.dtype | None) -> torch.dtype:
    """Floating dtype of the Gram computed from ``batch`` (default float64)."""
    return dtype or batch_dtype(batch) or torch.float64


def is_sliceable(batch: Batch) -> bool:
    """Whether a batch supports ``len`` and ``batch[i:j]`` (needed to tile it)."""
    return hasattr(batch, "__len__") and hasattr(batch, "__getitem__")


def kernel_features(kernel: Kernel, batch: Batch) -> Any:
    """``kernel.features(batch)`` guarded against kernels that do not implement it."""
    try:
        return kernel.features(batch)
    except NotImplementedError:
        return None


def run_parallel(fn: Callable[[Any], None], items: Sequence[Any], *, parallel: bool) -> None:
    """Call ``fn`` on every item, on ``torch.get_num_threads()`` Python threads when ``parallel``.

    Each tile is small, so splitting every one of its ~7 passes over OpenMP threads costs a
    barrier per pass; when the cores are oversubscribed a descheduled thread stalls every
    barrier (the tiled Gaussian Gram slows down several times).  Instead the tiles are
    spread over worker threads that each run torch single-threaded (``torch.set_num_threads(1)``
    for the duration of the call; torch releases the GIL inside its kernels).  ``items`` are
    taken dynamically, so callers that reduce into shared memory pass one item per worker.
    The workers run in the caller's autograd mode (``torch.no_grad`` is thread-local: a pool
    thread would otherwise record graphs, and refuse ``out=`` products, under a caller's
    ``no_grad``).
    """
    threads = torch.get_num_threads()
    workers = min(threads, len(items)) if parallel else 1
    if workers <= 1:
        for item in items:
            fn(item)
        return
    grad_mode = torch.is_grad_enabled()

    def in_callers_mode(item: Any) -> None:
        with torch.set_grad_enabled(grad_mode):
            fn(item)

    torch.set_num_threads(1)
    try:
        for _ in _worker_pool(os.getpid(), workers).map(in_callers_mode, items):
            pass
    finally:
        torch.set_num_threads(threads)


@functools.cache
def _worker_pool(pid: int, workers: int) -> ThreadPoolExecutor:
    """The pool of ``workers`` threads of process ``pid`` for :func:`run_parallel`, started
    once (a CG iteration on a kept block takes a few milliseconds, of which starting two
    threads took about a tenth); keyed by the process so that a forked child, which inherits
    the pool but not its threads, starts its own."""
    return ThreadPoolExecutor(workers, thread_name_prefix="kernelkit-tiles")


def n_workers(n_tiles: int) -> int:
    """Number of worker threads :func:`run_parallel` uses for ``n_tiles`` tiles."""
    return max(1, min(torch.get_num_threads(), n_tiles))
