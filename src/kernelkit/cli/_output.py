"""Outputs that appear whole or not at all, and never replace what kernelkit did not write.

The output path is checked before any work: its folder exists and is writable; it is not an
input, a folder holding an input, nor the current folder or one above it; it does not exist
unless ``--overwrite``, and then it is replaced only if it is what the command writes (an
output folder carrying the :data:`MARKER` file kernelkit puts in each of its output folders,
a ``.npy`` array with kernelkit's record of it (:func:`record_path`, a hidden sibling holding
the array's size and the hashes of its first and last 64 KiB, so any other ``.npy``, or one
changed since, is foreign) or a CSV of predictions or codes for a file output
(:func:`written_by_kernelkit`), a saved model (:func:`kernelkit.io._files.is_model_path`) for
a model).  Results
are written to a temporary sibling and renamed into place at the end, so a rejected input, a
crash, Ctrl-C or SIGTERM (see :func:`terminate_as_interrupt`) leaves nothing at ``--out`` nor
a temporary sibling.  Files and folders get the permissions of the user's umask.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kernelkit.cli._errors import UsageError
from kernelkit.io._files import MANIFEST, is_model_path
from kernelkit.utils._errors import KernelkitError

MARKER = ".kernelkit-output"
"""File in every output folder of kernelkit: ``--overwrite`` replaces only folders with it."""

OUTPUT_KINDS = ("folder", "file", "model")


class OutputError(KernelkitError, OSError):
    """The output path cannot be written (exit code 1)."""


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived (exit code 143 = 128 + 15)."""


def _contains(folder: Path, path: Path) -> bool:
    return folder == path or folder in path.parents


def check_output(
    path: str | Path,
    *,
    overwrite: bool,
    kind: str = "folder",
    inputs: Sequence[str | Path | None] = (),
    option: str = "--out",
) -> Path:
    """Check that ``path`` can be created or replaced before any work is done.

    Parameters
    ----------
    kind : {"folder", "file", "model"}
        What the command writes: an output folder (replaced only when it carries
        :data:`MARKER`), a file (replaces a file, never a folder) or a saved model (replaced
        as :func:`kernelkit.io.save` allows).
    inputs : paths
        Input files and folders of the command: the output may neither be one of them nor
        contain one.

    Raises
    ------
    UsageError
        The output clashes with an input, the current folder, or an existing path that
        ``--overwrite`` may not replace (exit code 2).
    OutputError
        The parent folder is missing or not writable (exit code 1).
    """
    if kind not in OUTPUT_KINDS:
        raise ValueError(f"kind: expected one of {OUTPUT_KINDS}, got {kind!r}")
    path = Path(path)
    full = path.resolve()
    if _contains(full, Path.cwd().resolve()) or path.name in ("", ".", ".."):
        raise UsageError(
            f"{option}: {str(path)!r} is the current folder or holds it; name a new path "
            "such as results/"
        )
    for item in inputs:
        if item is not None and _contains(full, Path(item).resolve()):
            raise UsageError(
                f"{option}: {str(path)!r} is or holds the input {str(item)!r}; writing there "
                "would replace it; choose another output path"
            )
    parent = path.parent
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
    if path.exists() or path.is_symlink():
        if not overwrite:
            raise UsageError(f"{option}: {str(path)!r} exists; pass --overwrite to replace it")
        _check_replaceable(path, kind, option)
    return path


def _check_replaceable(path: Path, kind: str, option: str) -> None:
    if path.is_symlink():
        raise UsageError(f"{option}: {str(path)!r} is a symbolic link; refusing to replace it")
    if kind == "folder" and not (path.is_dir() and (path / MARKER).is_file()):
        what = "a folder" if path.is_dir() else "a file"
        raise UsageError(
            f"{option}: {str(path)!r} is {what} that kernelkit did not write (no {MARKER} "
            "marker); --overwrite replaces only kernelkit's own output folders"
        )
    if (kind == "file" or path.suffix.lower() == ".zip") and not path.is_file():
        raise UsageError(
            f"{option}: {str(path)!r} is a folder; --overwrite replaces a file with a file, "
            "never a folder"
        )
    if kind == "model" and not is_model_path(path):
        what = "a folder that holds" if path.is_dir() else "a file that is"
        raise UsageError(
            f"{option}: {str(path)!r} is {what} no kernelkit model (no {MANIFEST} of a saved "
            "model); --overwrite replaces only a saved model"
        )
    if kind == "file" and not written_by_kernelkit(path):
        raise UsageError(
            f"{option}: {str(path)!r} is a file kernelkit did not write (neither a .npy array "
            f"recorded in {record_path(path).name} when kernelkit wrote it, nor a CSV of "
            "predictions or codes); --overwrite replaces only kernelkit's outputs (delete the "
            "file yourself to replace it)"
        )


_CHUNK = 65536
"""Bytes hashed at each end of a ``.npy`` output for its record (:func:`fingerprint`)."""


def record_path(path: Path) -> Path:
    """The hidden sibling ``.NAME.kernelkit`` recording a ``.npy`` output kernelkit wrote."""
    return path.with_name(f".{path.name}.kernelkit")


def fingerprint(path: Path) -> dict[str, Any]:
    """Size and SHA-256 of the first and last 64 KiB of a file (cheap for any size)."""
    size = path.stat().st_size
    with open(path, "rb") as fh:
        head = fh.read(_CHUNK)
        fh.seek(max(0, size - _CHUNK))
        tail = fh.read(_CHUNK)
    return {
        "size": size,
        "head": hashlib.sha256(head).hexdigest(),
        "tail": hashlib.sha256(tail).hexdigest(),
    }


def record_output(path: Path) -> None:
    """Write the record of a ``.npy`` output, so ``--overwrite`` may replace it later."""
    record = record_path(path)
    try:
        record.write_text(
            json.dumps({"written_by": "kernelkit", **fingerprint(path)}) + "\n", encoding="utf-8"
        )
    except OSError as exc:
        raise OutputError(f"--out: cannot write {str(record)!r} ({exc.strerror})") from exc


def _recorded(path: Path) -> bool:
    try:
        record = json.loads(record_path(path).read_text(encoding="utf-8"))
        return bool(record == {"written_by": "kernelkit", **fingerprint(path)})
    except (OSError, ValueError):
        return False


def written_by_kernelkit(path: Path) -> bool:
    """Whether a file is one a kernelkit command wrote: a ``.npy`` array (``gram``) whose
    record (:func:`record_path`) matches its size and hashed ends, or a CSV whose header is
    ``id`` then ``prediction...`` or ``code_...`` columns (``predict``)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError:
        return False
    if path.suffix.lower() == ".npy":
        return head.startswith(b"\x93NUMPY") and _recorded(path)
    first = head.split(b"\n", 1)[0].strip().split(b",")
    return (
        len(first) >= 2
        and first[0] == b"id"
        and all(c.startswith((b"prediction", b"code_")) for c in first[1:])
    )


def default_mode(full: int) -> int:
    """``full`` (0o666 for files, 0o777 for folders) under the process umask."""
    umask = os.umask(0o022)
    os.umask(umask)
    return full & ~umask


def _replace(tmp: Path, path: Path) -> None:
    """Move ``tmp`` to ``path``, replacing a previous output only once the new one is whole."""
    old = None
    if path.exists():
        old = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.old-"))
        os.replace(path, old / path.name)
    try:
        os.replace(tmp, path)
    except BaseException:
        if old is not None:
            os.replace(old / path.name, path)
        raise
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


def _temporary(path: Path, *, folder: bool) -> Path:
    """A temporary sibling of ``path`` with the umask's permissions (not owner-only)."""
    try:
        if folder:
            tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.tmp-"))
            os.chmod(tmp, default_mode(0o777))
            (tmp / MARKER).write_text(
                "written by kernelkit; kernelkit --overwrite may replace this folder\n",
                encoding="utf-8",
            )
            return tmp
        fd, name = tempfile.mkstemp(
            dir=path.parent, prefix=f".{path.name}.tmp-", suffix=path.suffix
        )
        os.fchmod(fd, default_mode(0o666))
        os.close(fd)
        return Path(name)
    except OSError as exc:
        raise OutputError(f"--out: cannot write in {str(path.parent)!r} ({exc.strerror})") from exc


@contextmanager
def staged(path: Path, *, folder: bool) -> Iterator[Path]:
    """A temporary folder (with :data:`MARKER`) or file (same suffix) next to ``path``,
    renamed to ``path`` when the block succeeds and removed when it fails or is interrupted;
    a ``.npy`` file gets its record (:func:`record_output`)."""
    tmp = _temporary(path, folder=folder)
    try:
        yield tmp
        _replace(tmp, path)
        if not folder and path.suffix.lower() == ".npy":
            record_output(path)
    finally:
        if tmp.is_dir():
            shutil.rmtree(tmp, ignore_errors=True)
        elif tmp.exists():
            tmp.unlink()


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`Terminated`, a :class:`KeyboardInterrupt` (as
    Ctrl-C does), so the ``finally`` clauses of :func:`staged` remove temporary outputs.
    Outside the main thread (where handlers cannot be set) the block runs unchanged."""

    def interrupt(signum: int, frame: Any) -> None:
        raise Terminated(f"signal {signum}")

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
