"""The error of :mod:`kernelkit.io`."""

from __future__ import annotations

from kernelkit.utils._errors import KernelkitError


class ModelFileError(KernelkitError, ValueError):
    """A model file cannot be written or is refused on reading.

    The message is one line: it names the file and says why (unknown class, missing or extra
    array, checksum / shape / dtype mismatch, newer format version, truncated or corrupt file,
    not a kernelkit model, existing or unwritable output path).
    """
