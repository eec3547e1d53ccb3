"""Precomputed Gram matrices: ``.npy`` arrays, never unpickled."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kernelkit.data.readers._common import DataFile
from kernelkit.utils._errors import DataFileError
from kernelkit.utils._kinds import InputKind


def read_gram(path: Path) -> DataFile:
    """A ``.npy`` array of Gram values: 2-D, numeric, finite; never unpickled."""
    if path.is_dir():
        raise DataFileError(path, "is a folder; expected a .npy file")
    if path.stat().st_size == 0:
        raise DataFileError(path, "empty file; expected a .npy array")
    try:
        K = np.load(path, allow_pickle=False, mmap_mode=None)
    except ValueError as exc:
        raise DataFileError(
            path, f"not a plain .npy array ({exc}); object arrays are refused"
        ) from exc
    except (OSError, EOFError) as exc:
        raise DataFileError(path, f"not a readable .npy file ({exc})") from exc
    if not isinstance(K, np.ndarray):
        raise DataFileError(path, f"expected one .npy array, got {type(K).__name__}")
    if K.ndim != 2 or K.dtype.kind not in "biuf":
        raise DataFileError(
            path, f"expected a 2-D numeric Gram matrix, got shape {K.shape} dtype {K.dtype}"
        )
    K = K.astype(np.float64)
    bad = np.argwhere(~np.isfinite(K))
    if len(bad):
        i, j = (int(v) for v in bad[0])
        raise DataFileError(path, f"entry ({i}, {j}) is {K[i, j]}; expected finite values")
    ids = [str(i) for i in range(K.shape[0])]
    return DataFile(InputKind.GRAM, K, ids, path)
