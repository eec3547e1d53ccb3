"""What a kernelkit model file is, told without reading it as a model (standard library only).

The names of the format (:data:`FORMAT`, :data:`MANIFEST`, :data:`ARRAYS`) and
:func:`is_model_path`, which the command line uses before importing torch to decide whether
``--overwrite`` may replace a path.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

FORMAT = "kernelkit-model"
"""Value of the manifest's ``format`` key."""

MANIFEST = "manifest.json"
ARRAYS = "arrays.safetensors"

MAX_MANIFEST_BYTES = 64 * 2**20
"""Largest ``manifest.json`` read (the manifest holds no array data)."""


def _declares_format(data: bytes) -> bool:
    try:
        head = json.loads(data)
    except (ValueError, RecursionError):
        return False
    return isinstance(head, dict) and head.get("format") == FORMAT


def is_model_path(path: str | Path) -> bool:
    """Whether ``path`` is a model kernelkit saved: a directory or a zip archive whose
    ``manifest.json`` declares :data:`FORMAT` (nothing else is checked)."""
    path = Path(path)
    try:
        if path.is_dir():
            with open(path / MANIFEST, "rb") as fh:
                return _declares_format(fh.read(MAX_MANIFEST_BYTES))
        with zipfile.ZipFile(path) as archive:
            info = archive.getinfo(MANIFEST)
            if info.file_size > MAX_MANIFEST_BYTES:
                return False
            return _declares_format(archive.read(MANIFEST))
    except (OSError, KeyError, zipfile.BadZipFile):
        return False


__all__ = ["is_model_path"]
