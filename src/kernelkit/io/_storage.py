"""Reading and writing model files: the manifest, the arrays, atomic writes and all checks.

See :mod:`kernelkit.io` for the format.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import torch

from kernelkit.io._codec import TORCH_DTYPES, dtype_name
from kernelkit.io._decoder import Decoder
from kernelkit.io._encoder import Encoder
from kernelkit.io._errors import ModelFileError
from kernelkit.io._files import ARRAYS, FORMAT, MANIFEST, MAX_MANIFEST_BYTES, is_model_path
from kernelkit.io._registry import class_table
from kernelkit.utils._optional import require

FORMAT_VERSION = 1
"""Version of the file format written; files with a larger version are refused."""

_HEADER = ("format", "format_version", "kernelkit_version", "arrays")
_MANIFEST_DIGEST = "manifest_sha256"
"""Key of the manifest's sha256 in the metadata of ``arrays.safetensors``."""
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _safetensors() -> Any:
    return require("safetensors.torch", purpose="saving and loading models")


def _digest(tensor: torch.Tensor) -> str:
    """sha256 of the array's bytes in row-major order (no copy for a contiguous array)."""
    same_width = tensor.view(torch.int16) if tensor.dtype == torch.bfloat16 else tensor
    return hashlib.sha256(np.ascontiguousarray(same_width.numpy()).data).hexdigest()


# ---------------------------------------------------------------------- save
def save(estimator: Any, path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
    """Save a (fitted) estimator as a model directory or, for a ``.zip`` path, one zip file.

    The model is written next to ``path`` under a temporary name and renamed into place, so a
    reader never sees a half-written model.

    Parameters
    ----------
    estimator : object
        A kernelkit estimator (or any instance of a registered class, e.g. a kernel).
    path : str or path-like
        Output path: ending in ``.zip`` writes one zip archive, anything else a directory
        holding ``manifest.json`` and ``arrays.safetensors``.  Missing parent directories are
        created.
    overwrite : bool, default False
        Replace an existing model at ``path``.  Only a file (for ``.zip``) or a directory
        holding a kernelkit ``manifest.json`` is ever replaced.

    Returns
    -------
    pathlib.Path
        The path written.

    Raises
    ------
    ModelFileError
        ``path`` exists and ``overwrite`` is False, is not writable, or the estimator holds a
        value of a type that cannot be saved.
    """
    target = Path(path)
    as_zip = target.suffix.lower() == ".zip"
    _check_target(target, overwrite=overwrite, as_zip=as_zip)
    manifest, arrays = _encode(estimator)
    manifest_bytes = json.dumps(manifest, indent=1, allow_nan=False).encode("utf-8")
    digest = hashlib.sha256(manifest_bytes).hexdigest()
    arrays_bytes = _safetensors().save(
        arrays, metadata={"format": FORMAT, _MANIFEST_DIGEST: digest}
    )
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if as_zip:
            _write_zip(target, manifest_bytes, arrays_bytes)
        else:
            _write_directory(target, manifest_bytes, arrays_bytes)
    except OSError as exc:
        raise ModelFileError(
            f"{target}: cannot write the model ({exc.strerror or exc}); choose a writable path"
        ) from exc
    return target


def _encode(estimator: Any) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    encoder = Encoder(class_table())
    root = encoder.encode(estimator, "")
    if not (isinstance(root, dict) and root.get("type") == "object"):
        kind = type(estimator)
        raise ModelFileError(
            f"estimator: expected a kernelkit estimator (an instance of a registered class), "
            f"got {kind.__module__}.{kind.__qualname__}"
        )
    from kernelkit import __version__

    manifest: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "kernelkit_version": __version__,
    }
    manifest.update((k, v) for k, v in root.items() if k != "type")
    manifest["arrays"] = [
        {
            "name": name,
            "dtype": dtype_name(tensor),
            "shape": list(tensor.shape),
            "sha256": _digest(tensor),
        }
        for name, tensor in encoder.arrays.items()
    ]
    return manifest, encoder.arrays


def _check_target(target: Path, *, overwrite: bool, as_zip: bool) -> None:
    if not (target.exists() or target.is_symlink()):
        return
    if not overwrite:
        raise ModelFileError(f"{target}: the path exists; pass overwrite=True to replace it")
    if as_zip and not target.is_file():
        raise ModelFileError(f"{target}: expected a file to replace, got a directory or other")
    if target.is_dir() == as_zip or not is_model_path(target):
        what = "zip file" if as_zip else "directory"
        raise ModelFileError(
            f"{target}: refusing to replace it: not a kernelkit model {what} (no {MANIFEST} "
            f"of format {FORMAT!r})"
        )


def _default_mode(full: int) -> int:
    """``full`` (0o666 files, 0o777 directories) under the process umask: the permissions an
    ordinary ``open`` / ``mkdir`` would give (``mkstemp`` / ``mkdtemp`` use owner-only ones)."""
    umask = os.umask(0o022)
    os.umask(umask)
    return full & ~umask


def _write_file(path: Path, data: bytes) -> None:
    with open(path, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def _write_zip(target: Path, manifest: bytes, arrays: bytes) -> None:
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as fh:
            os.chmod(fh.fileno(), _default_mode(0o666))
            with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED) as archive:
                archive.writestr(MANIFEST, manifest)
                archive.writestr(ARRAYS, arrays)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _write_directory(target: Path, manifest: bytes, arrays: bytes) -> None:
    """Write into a temporary directory, then rename it into place.  An old model at
    ``target`` is first renamed aside and removed only after the new one is in place (for an
    instant the path is absent, never half-written)."""
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    old = None
    try:
        os.chmod(tmp, _default_mode(0o777))
        _write_file(tmp / ARRAYS, arrays)
        _write_file(tmp / MANIFEST, manifest)
        if target.exists():  # checked by _check_target: a model directory we may replace
            old = Path(
                tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent)
            )
            os.replace(target, old / "model")
        try:
            os.replace(tmp, target)
        except BaseException:
            if old is not None:
                os.replace(old / "model", target)
            raise
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


# ---------------------------------------------------------------------- load
def load(path: str | os.PathLike[str]) -> Any:
    """Load a model written by :func:`save`, refusing anything that is not exactly one.

    Nothing from the file is unpickled or imported: classes come only from the registry of
    :mod:`kernelkit.io._codec`, arrays only from ``arrays.safetensors``.  Arrays are loaded on
    the CPU.

    Parameters
    ----------
    path : str or path-like
        A model directory or ``.zip`` file.

    Returns
    -------
    object
        The estimator, fitted as it was saved.

    Raises
    ------
    ModelFileError
        With a one-line reason naming the file: not a model, truncated or corrupt, written by
        a newer format version, unknown class, missing or extra arrays, checksum, shape or
        dtype mismatch.
    """
    source = Path(path)
    manifest_bytes, arrays_bytes = _read(source)
    _check_manifest_digest(manifest_bytes, arrays_bytes, source)
    manifest = _parse_manifest(manifest_bytes, source)
    arrays = _parse_arrays(arrays_bytes, manifest["arrays"], source)
    decoder = Decoder(class_table(), arrays, str(source))
    root = {"type": "object", **{k: v for k, v in manifest.items() if k not in _HEADER}}
    try:
        value = decoder.decode(root, "")
    except RecursionError as exc:
        raise _refuse(source, f"{MANIFEST} is nested too deeply to be a model") from exc
    unused = sorted(set(arrays) - decoder.used)
    if unused:
        raise _refuse(source, f"extra array(s) {unused[:5]} not used by the model")
    return value


def _refuse(source: Path, reason: str) -> ModelFileError:
    return ModelFileError(" ".join(f"{source}: {reason}".split()))


def _read(source: Path) -> tuple[bytes, bytes]:
    if source.is_dir():
        if not (source / MANIFEST).is_file():
            raise _refuse(source, f"not a kernelkit model: the directory has no {MANIFEST}")
        if not (source / ARRAYS).is_file():
            raise _refuse(source, f"incomplete model: {ARRAYS} is missing")
        try:
            with open(source / MANIFEST, "rb") as fh:
                manifest = fh.read(MAX_MANIFEST_BYTES + 1)
            return manifest, (source / ARRAYS).read_bytes()
        except OSError as exc:
            raise _refuse(source, f"cannot read the model ({exc.strerror or exc})") from exc
    if not source.exists():
        raise _refuse(source, "no such model file or directory")
    try:
        with zipfile.ZipFile(source) as archive:
            infos = {info.filename: info for info in archive.infolist()}
            if set(infos) != {MANIFEST, ARRAYS}:
                raise _refuse(
                    source,
                    f"not a kernelkit model: expected a zip of {MANIFEST} and {ARRAYS}, got "
                    f"members {sorted(infos)[:5]}",
                )
            packed = [n for n, i in infos.items() if i.compress_type != zipfile.ZIP_STORED]
            if packed:  # compressed members could expand without bound (zip bombs)
                raise _refuse(
                    source,
                    f"expected uncompressed zip members, as kernelkit.io.save writes them; "
                    f"{packed} are compressed",
                )
            if infos[MANIFEST].file_size > MAX_MANIFEST_BYTES:
                raise _refuse(source, f"{MANIFEST} is larger than {MAX_MANIFEST_BYTES} bytes")
            return archive.read(MANIFEST), archive.read(ARRAYS)
    except zipfile.BadZipFile as exc:
        raise _refuse(
            source, f"not a kernelkit model, or a truncated or corrupt one (bad zip: {exc})"
        ) from exc
    except OSError as exc:
        raise _refuse(source, f"cannot read the model ({exc.strerror or exc})") from exc


def _arrays_metadata(data: bytes) -> dict[str, Any]:
    """The ``__metadata__`` of a safetensors file: an 8-byte little-endian header length,
    then the JSON header (safetensors format, "Format" section); empty when unreadable (the
    arrays' own checks then name the problem)."""
    if len(data) < 8:
        return {}
    size = int.from_bytes(data[:8], "little")
    try:
        header = json.loads(data[8 : 8 + size]) if size <= min(len(data), 100 * 2**20) else {}
    except (UnicodeDecodeError, ValueError, RecursionError):
        return {}
    meta = header.get("__metadata__") if isinstance(header, dict) else None
    return meta if isinstance(meta, dict) else {}


def _check_manifest_digest(manifest: bytes, arrays: bytes, source: Path) -> None:
    """The manifest's sha256 equals the one ``save`` recorded in the arrays' metadata (files
    written before the digest was recorded have none and are read as before)."""
    recorded = _arrays_metadata(arrays).get(_MANIFEST_DIGEST)
    if recorded is not None and recorded != hashlib.sha256(manifest).hexdigest():
        raise _refuse(
            source,
            f"{MANIFEST} was edited or is corrupt: its sha256 differs from the one recorded in "
            f"{ARRAYS} when the model was saved",
        )


def _parse_manifest(data: bytes, source: Path) -> dict[str, Any]:
    if len(data) > MAX_MANIFEST_BYTES:
        raise _refuse(source, f"{MANIFEST} is larger than {MAX_MANIFEST_BYTES} bytes")
    try:
        manifest = json.loads(data.decode("utf-8"))
    except RecursionError as exc:
        raise _refuse(source, f"{MANIFEST} is nested too deeply to be a model") from exc
    except (UnicodeDecodeError, ValueError) as exc:
        raise _refuse(
            source, f"{MANIFEST} is not valid JSON (truncated or corrupt?): {exc}"
        ) from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise _refuse(
            source, f"not a kernelkit model: {MANIFEST} does not declare format {FORMAT!r}"
        )
    version = manifest.get("format_version")
    if type(version) is not int or version < 1:
        raise _refuse(source, f"expected a positive integer format_version, got {version!r:.40}")
    if version > FORMAT_VERSION:
        raise _refuse(
            source,
            f"written with model format version {version}, newer than this kernelkit reads "
            f"({FORMAT_VERSION}); upgrade kernelkit to load it",
        )
    entries = manifest.get("arrays")
    if not isinstance(entries, list):
        raise _refuse(source, f"{MANIFEST}: expected an 'arrays' list")
    names = set()
    for entry in entries:
        ok = (
            isinstance(entry, dict)
            and isinstance(entry.get("name"), str)
            and entry.get("dtype") in TORCH_DTYPES
            and isinstance(entry.get("shape"), list)
            and all(type(d) is int and d >= 0 for d in entry["shape"])
            and isinstance(entry.get("sha256"), str)
            and _SHA256.fullmatch(entry["sha256"]) is not None
        )
        if not ok:
            raise _refuse(source, f"{MANIFEST}: malformed array entry {entry!r:.80}")
        if entry["name"] in names:
            raise _refuse(source, f"{MANIFEST}: array {entry['name']!r} is listed twice")
        names.add(entry["name"])
    return manifest


def _parse_arrays(
    data: bytes, entries: list[dict[str, Any]], source: Path
) -> dict[str, torch.Tensor]:
    reader = _safetensors()
    try:
        arrays = reader.load(data)
    except Exception as exc:  # safetensors raises its own error types on malformed input
        raise _refuse(source, f"{ARRAYS} is truncated or corrupt ({exc})") from exc
    listed = {entry["name"]: entry for entry in entries}
    missing = sorted(set(listed) - set(arrays))
    if missing:
        raise _refuse(
            source, f"array(s) {missing[:5]} listed in {MANIFEST} are missing from {ARRAYS}"
        )
    extra = sorted(set(arrays) - set(listed))
    if extra:
        raise _refuse(source, f"extra array(s) {extra[:5]} in {ARRAYS} not listed in {MANIFEST}")
    for name, entry in listed.items():
        tensor = arrays[name]
        if dtype_name(tensor) != entry["dtype"]:
            raise _refuse(
                source,
                f"array {name!r}: dtype mismatch, manifest says {entry['dtype']}, file has "
                f"{dtype_name(tensor)}",
            )
        if list(tensor.shape) != entry["shape"]:
            raise _refuse(
                source,
                f"array {name!r}: shape mismatch, manifest says {entry['shape']}, file has "
                f"{list(tensor.shape)}",
            )
        if _digest(tensor) != entry["sha256"]:
            raise _refuse(source, f"array {name!r}: sha256 checksum mismatch (tampered or corrupt)")
    return arrays
