"""SMILES files (``.smi``: one ``SMILES [name]`` per line, ``#`` comments, an optional header
line such as ``SMILES Name``), checked by RDKit."""

from __future__ import annotations

from pathlib import Path

from kernelkit.data._molecules import invalid_smiles
from kernelkit.data.readers._common import DataFile, text_lines
from kernelkit.utils._errors import DataFileError
from kernelkit.utils._kinds import InputKind

ON_ERROR = ("raise", "skip")
"""What a reader does with records that do not parse: stop with an error naming them, or
leave them out (listed in :attr:`DataFile.skipped`)."""

_SHOWN = 5


def check_smiles(
    path: Path, smiles: list[str], lines: list[int], on_error: str = "raise"
) -> list[int]:
    """The positions of the SMILES RDKit parses (with at least one atom).

    ``on_error="raise"``: any invalid one is an error giving their count and the first
    :data:`_SHOWN` with their lines; ``"skip"``: they are left out.
    """
    bad = invalid_smiles(smiles)
    if bad and on_error != "skip":
        if len(bad) == 1:
            problem = f"invalid SMILES {smiles[bad[0]]!r} (1 of {len(smiles)} records)"
        else:
            first = f" (first {_SHOWN} shown)" if len(bad) > _SHOWN else ""
            shown = "; ".join(f"line {lines[i]}: {smiles[i]!r}" for i in bad[:_SHOWN])
            problem = f"{len(bad)} of {len(smiles)} records are not valid SMILES{first}: {shown}"
        raise DataFileError(
            path,
            f"{problem}; fix them, or leave them out with --skip-invalid",
            line=lines[bad[0]] if len(bad) == 1 else None,
        )
    failed = set(bad)
    return [i for i in range(len(smiles)) if i not in failed]


def _is_header(fields: list[str]) -> bool:
    """A first line naming columns (``SMILES``, ``smiles name``...) rather than a molecule."""
    return fields[0].lower() in ("smiles", "canonical_smiles", "smi")


def read_smi(path: Path, text: str, on_error: str = "raise") -> DataFile:
    """A ``.smi`` file; a first line whose first word is ``SMILES`` is a header."""
    smiles: list[str] = []
    ids: list[str] = []
    lines: list[int] = []
    first = True
    for number, line in text_lines(text):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        parts = stripped.split(maxsplit=1)
        if first and _is_header(parts):
            first = False
            continue
        first = False
        smiles.append(parts[0])
        ids.append(parts[1] if len(parts) > 1 else str(number))
        lines.append(number)
    if not smiles:
        raise DataFileError(path, "no molecules (only a header, comments or blank lines)")
    keep = check_smiles(path, smiles, lines, on_error)
    data = DataFile(InputKind.MOLECULE, smiles, ids, path, lines)
    return skip_records(data, keep)


def skip_records(data: DataFile, keep: list[int]) -> DataFile:
    """``data`` without the records not in ``keep``, their lines in ``skipped``."""
    if len(keep) == len(data):
        return data
    kept = set(keep)
    skipped = [data.lines[i] if data.lines else i for i in range(len(data)) if i not in kept]
    if not keep:
        raise DataFileError(data.path, f"no valid record left ({len(data)} skipped)")
    out = data.take(keep)
    out.skipped = skipped
    return out
