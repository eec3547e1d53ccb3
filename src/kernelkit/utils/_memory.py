"""Allocation of large output buffers.

A Gram matrix is written once into fresh pages, and on Linux the kernel's page-fault path
(4 KiB zeroed pages) costs as much as the ``exp`` pass itself (measured:
``docs/measurements.md``).  :func:`empty_large` asks for huge pages with
``madvise(MADV_HUGEPAGE)`` on an anonymous mapping, and falls back to ``torch.empty``
elsewhere (other platforms, other devices, small buffers).
"""

from __future__ import annotations

import math
import mmap

import torch

HUGEPAGE_THRESHOLD = 64 * 2**20
"""Buffers at least this large (bytes) are allocated on an anonymous huge-page mapping."""


def empty_large(
    shape: tuple[int, ...], *, dtype: torch.dtype, device: torch.device | str = "cpu"
) -> torch.Tensor:
    """An uninitialised tensor, backed by transparent huge pages when large, on CPU, Linux."""
    nbytes = math.prod(shape) * torch.empty((), dtype=dtype).element_size()
    advice = getattr(mmap, "MADV_HUGEPAGE", None)
    if torch.device(device).type != "cpu" or nbytes < HUGEPAGE_THRESHOLD or advice is None:
        return torch.empty(shape, dtype=dtype, device=device)
    buffer = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    try:
        buffer.madvise(advice)
    except OSError:  # huge pages disabled: the mapping still works with normal pages
        pass
    # the tensor holds a reference to the mapping, which is unmapped when the tensor dies
    return torch.frombuffer(buffer, dtype=dtype).view(shape)
