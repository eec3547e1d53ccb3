r"""Row-block operations on data that lives on a Dask cluster.

The Gram engine's work decomposes over row blocks of ``X``: the block ``K(X_b, Y)`` of a
Gram matrix, the features ``phi(X_b)`` of a Nyström map, and the contributions
``K_{b m}^T (K_{b m} v)`` of one row block to the products of the Nyström-PCG solvers
(``K_nm^T K_nm v = sum_b K_bm^T K_bm v``, DESIGN.md "Falkon-class solvers").  This module
ships those per-block computations to the workers holding the blocks of a ``dask.array``
(or the partitions of a ``dask.bag`` of strings, graphs or molecules), so that no process
ever holds all of ``X``; the small results come back to the client.

Every task is a pure function of its block and of broadcast arguments, so a task that the
scheduler reruns after losing a worker returns the same bytes, and sums over blocks are
taken on the client in block order, so the result does not depend on which worker
finished first.

Dask is an optional dependency (``pip install kernelkit[dask]``): nothing here imports it
until a function is called with a Dask collection.

>>> import numpy as np, dask.array as da
>>> from kernelkit.kernels import Gaussian
>>> X = da.from_array(np.random.default_rng(0).normal(size=(10, 3)), chunks=(4, 3))
>>> gram_blocks(Gaussian(1.0), X).chunks
((4, 4, 2), (4, 4, 2))
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from kernelkit.gram._centres import uniform_centres
from kernelkit.gram._engine import gram
from kernelkit.gram._streaming import keep_budget
from kernelkit.kernels._base import Kernel
from kernelkit.utils._config import options
from kernelkit.utils._errors import InputError

__all__ = [
    "RowBlocks",
    "as_row_blocks",
    "cluster_keep_budget",
    "draw_kept_centres",
    "gram_blocks",
    "is_dask_collection",
    "map_row_blocks",
    "n_rows",
    "require_dask",
    "row_blocks",
    "run_row_blocks",
    "sum_over_row_blocks",
    "write_gram",
]


def is_dask_collection(X: Any) -> bool:
    """Whether ``X`` is a Dask array, bag or dataframe (checked without importing Dask)."""
    return type(X).__module__.split(".")[0] == "dask"


def require_dask() -> Any:
    """Import ``dask.array`` or raise an ImportError that says how to install it."""
    try:
        import dask.array as da
    except ImportError as err:  # pragma: no cover - dask is installed by `make test`
        raise ImportError(
            "Dask input needs the optional dependency dask[distributed]: "
            "pip install 'kernelkit[dask]'"
        ) from err
    return da


def as_row_blocks(X: Any, *, name: str = "X") -> Any:
    """A Dask array ``X`` rechunked to whole rows (one chunk along every other axis).

    Parameters
    ----------
    X : dask.array.Array
        ``(n, ...)`` data; only its rows may be split across chunks.
    name : str
        Argument name used in errors.

    Returns
    -------
    dask.array.Array
    """
    da = require_dask()
    if not isinstance(X, da.Array):
        raise InputError(f"{name}: expected a dask.array.Array, got {type(X).__name__}")
    if X.ndim < 1 or X.shape[0] == 0:
        raise InputError(f"{name}: expected at least one row, got shape {X.shape}")
    if any(len(c) > 1 for c in X.chunks[1:]):
        X = X.rechunk({axis: -1 for axis in range(1, X.ndim)})
    return X


def _kernel_block(kernel: Kernel, dtype: Any, A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``K(A, B)`` of two row blocks as a NumPy array (the task run on a worker)."""
    return np.asarray(gram(kernel, A, B, dtype=dtype))


def gram_blocks(kernel: Kernel, X: Any, Y: Any = None, *, dtype: Any = None) -> Any:
    r"""The Gram matrix ``K(X, Y)`` as a lazy Dask array, one kernel block per chunk pair.

    Block ``(i, j)`` is ``gram(kernel, X_i, Y_j)`` computed on the worker that holds the
    row block ``X_i``; with ``Y`` a NumPy array (the centres of a Nyström map, say) it is
    broadcast and the output has the row chunks of ``X`` and one column chunk.

    Parameters
    ----------
    kernel : Kernel
        Any kernel on vectors (rows of a Dask array).
    X : dask.array.Array
        ``(n, d)`` points, chunked by rows.
    Y : dask.array.Array or array-like, optional
        ``(n_Y, d)`` points (default ``X``).
    dtype : torch or NumPy dtype, optional
        Dtype of the blocks (default: that of ``X``).

    Returns
    -------
    dask.array.Array
        ``(n, n_Y)``, chunks ``(X.chunks[0], Y.chunks[0])``.
    """
    da = require_dask()
    X = as_row_blocks(X)
    out_dtype = np.dtype(str(dtype).replace("torch.", "")) if dtype is not None else X.dtype
    if Y is None:
        Y = X
    if isinstance(Y, da.Array):
        Y = as_row_blocks(Y, name="Y")
        return da.blockwise(
            _kernel_block,
            "ij",
            kernel,
            None,
            out_dtype,
            None,
            X,
            "ik",
            Y,
            "jk",
            concatenate=True,
            dtype=out_dtype,
        )
    Y = np.asarray(Y)
    return X.map_blocks(
        lambda block: _kernel_block(kernel, out_dtype, block, Y),
        chunks=(X.chunks[0], (len(Y),)),
        dtype=out_dtype,
    )


def write_gram(
    kernel: Kernel,
    X: Any,
    path: str | os.PathLike,
    *,
    Y: Any = None,
    dtype: Any = None,
    overwrite: bool = False,
) -> Any:
    """Compute ``K(X, Y)`` block by block on the workers and store it in a zarr array.

    For methods that need the exact Gram of a distributed ``X`` (the blocks are written by
    the workers that compute them; nothing is gathered on the client).

    Parameters
    ----------
    kernel, X, Y, dtype :
        As in :func:`gram_blocks`.
    path : str or path-like
        Directory of the zarr store.  An existing path is refused unless ``overwrite=True``.
    overwrite : bool
        Replace an existing store at ``path``.

    Returns
    -------
    dask.array.Array
        The stored Gram, read back lazily from ``path``.
    """
    da = require_dask()
    if os.path.exists(path) and not overwrite:
        raise FileExistsError(
            f"path: {os.fspath(path)!r} exists; pass overwrite=True to replace it"
        )
    K = gram_blocks(kernel, X, Y, dtype=dtype)
    da.to_zarr(K, os.fspath(path), overwrite=overwrite)
    return da.from_zarr(os.fspath(path))


def map_row_blocks(fn: Callable[[Any], np.ndarray], X: Any, n_columns: int, dtype: Any) -> Any:
    """Apply ``fn`` to every row block of ``X``: a Dask array ``(n, n_columns)`` chunked like ``X``.

    ``fn`` maps a block of ``b`` rows (a NumPy array, or a list of items for a Dask bag) to a
    ``(b, n_columns)`` NumPy array; it runs on the worker holding the block.
    """
    da = require_dask()
    if isinstance(X, da.Array):
        X = as_row_blocks(X)
        return X.map_blocks(
            lambda block: np.asarray(fn(block), dtype=dtype),
            chunks=(X.chunks[0], (n_columns,)),
            drop_axis=list(range(2, X.ndim)) or None,
            dtype=dtype,
        )
    import dask

    blocks, sizes = row_blocks(X)
    arrays = [
        da.from_delayed(
            dask.delayed(lambda part: np.asarray(fn(list(part)), dtype=dtype))(b),
            shape=(size, n_columns),
            dtype=dtype,
        )
        for b, size in zip(blocks, sizes, strict=True)
    ]
    return da.concatenate(arrays, axis=0)


@dataclass(frozen=True)
class RowBlocks:
    """Row blocks of a Dask array or bag as delayed objects, some of them persisted on the
    workers (:func:`draw_kept_centres`), and their row counts; :func:`row_blocks` and every
    pass over row blocks take it in place of the collection.
    """

    blocks: tuple[Any, ...]
    sizes: tuple[int, ...]


def row_blocks(X: Any) -> tuple[list[Any], list[int]]:
    """The row blocks of a Dask array or bag (or :class:`RowBlocks`) as delayed objects, and
    their row counts."""
    import dask

    if isinstance(X, RowBlocks):
        return list(X.blocks), list(X.sizes)
    da = require_dask()
    if isinstance(X, da.Array):
        X = as_row_blocks(X)
        sizes = [int(s) for s in X.chunks[0]]
        return list(X.to_delayed().ravel()), sizes
    if type(X).__module__.startswith("dask.bag"):
        blocks = list(X.to_delayed())
        return blocks, [int(s) for s in dask.compute(*[dask.delayed(len)(b) for b in blocks])]
    raise InputError(f"X: expected a dask.array.Array or dask.bag.Bag, got {type(X).__name__}")


def run_row_blocks(
    fn: Callable[..., Any],
    blocks: Sequence[Any],
    *,
    rows: Sequence[Sequence[Any]] = (),
    shared: Sequence[Any] = (),
    client: Any = None,
) -> list[Any]:
    """``[fn(X_b, *rows_b, *shared) for b]`` run as one task per block, results in block order.

    Parameters
    ----------
    fn : callable
        Pure function of a block, its rows of the per-row arguments and the shared ones.
    blocks : sequence of delayed
        The row blocks (:func:`row_blocks`).
    rows : sequence of sequences
        Per-row arguments already cut into the blocks' rows (one entry per block each).
    shared : sequence
        Arguments every task receives (sent once per call).
    client : distributed.Client, optional
        Run on this client (default: the Dask scheduler in scope).
    """
    import dask

    shared_d = [dask.delayed(a) for a in shared]
    tasks = [
        dask.delayed(fn, pure=True)(block, *(arg[b] for arg in rows), *shared_d)
        for b, block in enumerate(blocks)
    ]
    if client is not None:
        return list(client.gather(client.compute(tasks)))
    return list(dask.compute(*tasks))


def sum_over_row_blocks(
    fn: Callable[..., Sequence[np.ndarray]], X: Any, *args: Any, client: Any = None
) -> list[np.ndarray]:
    r"""``sum_b fn(X_b, *args)`` over the row blocks ``X_b`` of ``X``, run where the blocks live.

    ``fn`` returns a tuple of arrays (e.g. ``K_bm^T K_bm v`` and ``K_bm^T y_b``); the sums are
    formed on the client in block order, in float64, so the result is the same whichever
    worker ran which task, and whether a task was rerun.

    Parameters
    ----------
    fn : callable
        Pure function ``fn(block, *args) -> tuple of ndarray``.
    X : dask.array.Array or dask.bag.Bag
        The distributed rows (persist it first to keep its blocks on the workers between
        calls).
    *args :
        Broadcast arguments (small: centres, current vectors).
    client : distributed.Client, optional
        Run on this client (default: the Dask scheduler in scope).

    Returns
    -------
    list of ndarray
    """
    blocks, _ = row_blocks(X)
    parts = run_row_blocks(fn, blocks, shared=args, client=client)
    total = [np.asarray(p, dtype=np.float64).copy() for p in parts[0]]
    for part in parts[1:]:
        for acc, value in zip(total, part, strict=True):
            acc += value
    return total


def n_rows(X: Any) -> int:
    """Number of rows of a Dask array (known shape) or bag (counted on the workers)."""
    da = require_dask()
    if isinstance(X, da.Array):
        n = X.shape[0]
        if not isinstance(n, int | np.integer):  # unknown chunk sizes give NaN
            raise InputError(
                "X: expected a Dask array with known chunk sizes, got unknown ones "
                "(call X.compute_chunk_sizes())"
            )
        return n
    return int(X.count().compute())


def cluster_keep_budget(client: Any = None) -> int:
    """Default ``memory_budget`` (bytes) of a ``K_nm`` kept on a Dask cluster
    (:class:`~kernelkit.gram._distributed_nystrom.DistributedNystromOperator`):
    the option ``keep_fraction`` (:func:`kernelkit.get_config`, read on the client) of the
    memory the workers may use:
    of the workers' ``memory_limit`` summed, plus, for the workers without one, their host's
    :func:`~kernelkit.gram._streaming.keep_budget` (the same fraction of its available memory),
    run on the host and counted once per host (its workers share its memory).
    ``client`` defaults to the distributed client in scope; without one, the in-process default
    (:func:`~kernelkit.gram._streaming.keep_budget`)."""
    if client is None:
        try:
            from distributed import default_client

            client = default_client()
        except (ImportError, ValueError):  # no distributed client: the local scheduler
            return keep_budget()
    fraction = options().keep_fraction
    workers = client.scheduler_info()["workers"]
    limits = sum(w["memory_limit"] for w in workers.values() if w.get("memory_limit"))
    unlimited = [address for address, w in workers.items() if not w.get("memory_limit")]
    host_budgets: dict[str, int] = {}
    if unlimited:
        budgets = client.run(partial(keep_budget, fraction=fraction), workers=unlimited)
        host_budgets = {workers[a].get("host", a): budgets[a] for a in unlimited}
    return int(fraction * limits) + sum(host_budgets.values())


def draw_kept_centres(
    X: Any,
    n_components: int,
    random_state: Any = None,
    sample_weight: np.ndarray | None = None,
    *,
    client: Any = None,
) -> tuple[np.ndarray, Any, RowBlocks]:
    r"""Centres drawn among the rows of distributed points, reading only the row blocks that
    hold them and keeping those blocks for the passes: ``(indices, rows, blocks)``.

    The draw is over row positions: :func:`~kernelkit.gram._centres.uniform_centres`, i.e.
    ``min(m, n)`` rows without replacement with probabilities proportional to
    ``sample_weight`` (uniform when ``None``; rows of weight 0 never drawn), Efraimidis and
    Spirakis' algorithm A with the uniforms drawn in row order: the rows the in-memory
    ``"uniform"`` draw of the same ``n`` and ``random_state`` gives.  It needs ``n`` only (a
    Dask array's shape), so no block is read before the indices are known; the in-memory
    draw among *distinct* vectors of the estimators that take ``sample_weight`` would need
    the content keys of every row, a pass over ``X`` of its own.  Rows repeated in ``X`` can
    therefore both be drawn (the jitter of ``K_mm``,
    :func:`~kernelkit.solvers._nystrom_pcg.centre_jitter`, keeps the systems definite).

    The blocks holding a drawn row are computed (read from their store) once and persisted:
    kept in the workers' memory (the client's, without a distributed scheduler) as long as
    the returned ``blocks`` is referenced; the ``m`` rows are cut from them on the workers.
    ``blocks`` has these persisted blocks in place of their graphs, so a pass over it reads
    every other block once and these not again: a one-pass fit reads every block of ``X``
    exactly once in all.  Memory: the blocks that hold a centre, at most ``min(m, B)`` of
    the ``B`` blocks; for ``m`` uniform rows of ``B`` equal blocks all but about
    ``B (1 - 1/B)^m``, i.e. all of ``X``, spread over the workers, once ``m >= 5 B``.
    A bag has no stored length: its partitions are counted by one pass first.

    Parameters
    ----------
    X : dask.array.Array or dask.bag.Bag
        The ``n`` rows (an array: chunked by rows, known chunk sizes).
    n_components : int
        Number ``m`` of centres.
    random_state : None, int, RandomState or Generator
        Seed of the draw.
    sample_weight : ndarray of shape (n,), optional
        Draw probabilities up to a factor.
    client : distributed.Client, optional
        Run on this client (default: the Dask scheduler in scope).

    Returns
    -------
    indices : ndarray of int
        The drawn rows, sorted.
    rows : ndarray or list
        Those rows, in the order of ``indices``.
    blocks : RowBlocks
        The row blocks of ``X``, the ones read here persisted.
    """
    import dask

    blocks, sizes = row_blocks(X)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    n = int(offsets[-1])
    index = uniform_centres(n, n_components, random_state, sample_weight=sample_weight)
    owner = np.searchsorted(offsets, index, side="right") - 1
    held = [int(b) for b in np.unique(owner)]
    wanted = [blocks[b] for b in held]
    kept = client.persist(wanted) if client is not None else dask.persist(*wanted)
    for b, block in zip(held, kept, strict=True):
        blocks[b] = block
    local = [index[owner == b] - offsets[b] for b in held]
    parts = run_row_blocks(_take_rows, kept, rows=[local], client=client)
    rows = (
        np.concatenate(parts)
        if isinstance(parts[0], np.ndarray)
        else [item for part in parts for item in part]
    )
    return index, rows, RowBlocks(tuple(blocks), tuple(sizes))


def _take_rows(block: Any, local: np.ndarray) -> Any:
    """Rows ``local`` of one block (an array, or a bag partition's items as a list)."""
    if isinstance(block, np.ndarray):
        return block[local]
    items = list(block)
    return [items[i] for i in local]
