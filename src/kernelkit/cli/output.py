"""Outputs that appear whole or not at all.

The output path is checked before any work (its folder exists and is writable, it does not
exist unless ``--overwrite``), results are written to a temporary sibling and renamed into
place at the end, so a rejected input or a crash leaves nothing at ``--out``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from kernelkit.cli.errors import UsageError
from kernelkit.utils.errors import KernelkitError


class OutputError(KernelkitError, OSError):
    """The output path cannot be written (exit code 1)."""


def check_output(path: str | Path, *, overwrite: bool, option: str = "--out") -> Path:
    """Check that ``path`` can be created: a writable parent folder, no clash unless allowed."""
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.exists():
        raise OutputError(
            f"{option}: cannot write {str(path)!r}: folder {str(parent)!r} does not exist"
        )
    if not parent.is_dir():
        raise OutputError(f"{option}: cannot write {str(path)!r}: {str(parent)!r} is not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(
            f"{option}: cannot write {str(path)!r}: folder {str(parent)!r} is not writable"
        )
    if path.exists() and not overwrite:
        raise UsageError(f"{option}: {str(path)!r} exists; pass --overwrite to replace it")
    return path


def _replace(tmp: Path, path: Path) -> None:
    """Move ``tmp`` to ``path``, replacing a previous output only once the new one is whole."""
    old = None
    if path.exists():
        old = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.old-"))
        os.replace(path, old / path.name)
    os.replace(tmp, path)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _temporary(path: Path, *, folder: bool) -> Path:
    try:
        if folder:
            return Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.tmp-"))
        fd, name = tempfile.mkstemp(
            dir=path.parent, prefix=f".{path.name}.tmp-", suffix=path.suffix
        )
        os.close(fd)
        return Path(name)
    except OSError as exc:
        raise OutputError(f"--out: cannot write in {str(path.parent)!r} ({exc.strerror})") from exc


@contextmanager
def staged(path: Path, *, folder: bool) -> Iterator[Path]:
    """A temporary folder (or file, same suffix) next to ``path``, renamed to ``path`` when
    the block succeeds and removed when it fails."""
    tmp = _temporary(path, folder=folder)
    try:
        yield tmp
        _replace(tmp, path)
    finally:
        if tmp.is_dir():
            shutil.rmtree(tmp, ignore_errors=True)
        elif tmp.exists():
            tmp.unlink()
