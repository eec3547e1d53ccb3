"""A zarr store that records every read, for counting the passes a distributed fit makes.

:class:`CountingStore` wraps a zarr (v3) store and appends one line ``key<TAB>nbytes`` per
read (the bytes the wrapped store returned) to a per-process file in a log directory, so the
reads of Dask worker processes are counted as well as the client's: a store opened with it
and passed to ``dask.array.from_zarr`` is pickled into the tasks, and every process that
reads a chunk writes its own line.  :func:`read_log` sums the files.

>>> import tempfile, numpy as np, zarr
>>> from zarr.storage import LocalStore
>>> root, log = tempfile.mkdtemp(), tempfile.mkdtemp()
>>> z = zarr.create_array(LocalStore(root), shape=(4, 2), chunks=(2, 2), dtype="f8",
...                       compressors=None)
>>> z[:] = np.arange(8.0).reshape(4, 2)
>>> a = zarr.open_array(CountingStore(LocalStore(root, read_only=True), log), mode="r")
>>> _ = a[:2]
>>> reads = read_log(log)
>>> reads.chunk_reads, reads.chunk_bytes
({'c/0/0': 1}, 32)
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zarr.abc.store import ByteRequest
from zarr.core.buffer import Buffer, BufferPrototype
from zarr.storage import WrapperStore

__all__ = ["CountingStore", "StoreReads", "read_log"]


class CountingStore(WrapperStore[Any]):
    """A zarr store that logs the key and size of every value it returns.

    Parameters
    ----------
    store : zarr.abc.store.Store
        The store read (e.g. ``LocalStore(path, read_only=True)``).
    log_dir : str or path-like
        Existing directory; process ``pid`` appends to ``<log_dir>/<pid>.log``.
    """

    def __init__(self, store: Any, log_dir: str | os.PathLike[str]) -> None:
        super().__init__(store)
        self.log_dir = os.fspath(log_dir)

    def _with_store(self, store: Any) -> CountingStore:
        return type(self)(store, self.log_dir)

    def _record(self, key: str, value: Buffer | None) -> None:
        if value is None:
            return
        with open(os.path.join(self.log_dir, f"{os.getpid()}.log"), "a") as fh:
            fh.write(f"{key}\t{len(value)}\n")

    async def get(
        self, key: str, prototype: BufferPrototype, byte_range: ByteRequest | None = None
    ) -> Buffer | None:
        value = await self._store.get(key, prototype, byte_range)
        self._record(key, value)
        return value

    async def get_partial_values(
        self,
        prototype: BufferPrototype,
        key_ranges: Iterable[tuple[str, ByteRequest | None]],
    ) -> list[Buffer | None]:
        key_ranges = list(key_ranges)
        values = await self._store.get_partial_values(prototype, key_ranges)
        for (key, _), value in zip(key_ranges, values, strict=True):
            self._record(key, value)
        return values


@dataclass
class StoreReads:
    """The reads logged by :class:`CountingStore`: chunk keys (``c/...``) and metadata apart."""

    chunk_reads: dict[str, int] = field(default_factory=dict)
    chunk_bytes: int = 0
    metadata_bytes: int = 0


def read_log(log_dir: str | os.PathLike[str]) -> StoreReads:
    """Sum the logs of every process in ``log_dir``: reads per chunk key and bytes read."""
    counts: Counter[str] = Counter()
    out = StoreReads()
    for path in sorted(Path(log_dir).glob("*.log")):
        for line in path.read_text().splitlines():
            key, nbytes = line.rsplit("\t", 1)
            if key.rsplit("/", 1)[-1] == "zarr.json":
                out.metadata_bytes += int(nbytes)
            else:
                counts[key] += 1
                out.chunk_bytes += int(nbytes)
    out.chunk_reads = dict(sorted(counts.items()))
    return out
