"""CSV / TSV tables: vectors, or a column of SMILES or sequences.

Comma-, semicolon- or tab-separated (:func:`kernelkit.utils._textfiles.delimiter`); a header
row when the first row is not all numbers; an id column (:func:`is_id_column`) names the
records and is never a feature.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np

from kernelkit.data.readers._common import LARGEST_VALUE, DataFile, cell, is_number
from kernelkit.data.readers._fasta import case_note, check_sequences
from kernelkit.data.readers._smiles import check_smiles, skip_records
from kernelkit.utils._errors import DataFileError
from kernelkit.utils._kinds import InputKind
from kernelkit.utils._textfiles import delimiter

_ID_COLUMNS = ("id", "name", "compound id", "compound", "identifier", "title", "mol_id")
_RECORD_COLUMNS = {
    "smiles": InputKind.MOLECULE,
    "canonical_smiles": InputKind.MOLECULE,
    "sequence": InputKind.STRING,
    "seq": InputKind.STRING,
}
"""Header names (any case) that make a table of detected kind hold molecules or sequences."""


def is_id_column(name: str) -> bool:
    """Whether a column named ``name`` holds record ids (``id``, ``name``, ``Compound ID``,
    ``mol_id``, any name ending in ``_id`` or `` id``), not features."""
    low = name.strip().lower()
    return low in _ID_COLUMNS or low.endswith(("_id", " id", "-id"))


def read_table(
    path: Path,
    text: str,
    kind: InputKind,
    column: str | None,
    columns: list[str] | None,
    target: str | None,
    alphabet: str | None,
    on_error: str = "raise",
    detected: bool = False,
) -> DataFile:
    """A CSV / TSV file: vectors, or a column of SMILES or sequences.

    ``detected`` (the kind came from the extension): a table without ``columns`` whose header
    has a column of :data:`_RECORD_COLUMNS` (``smiles``, ``sequence``...) holds the molecules
    or sequences of that column, said in the file's ``note``.
    """
    reader = csv.reader(text.splitlines(), delimiter=delimiter(text.split("\n", 1)[0], path.suffix))
    rows: list[tuple[int, list[str]]] = []
    limit = csv.field_size_limit()
    try:
        csv.field_size_limit(max(limit, len(text)))
        for fields in reader:
            if any(f.strip() for f in fields):
                rows.append((reader.line_num, [f.strip() for f in fields]))
    except csv.Error as exc:
        raise DataFileError(path, f"not a readable table ({exc})", line=reader.line_num) from None
    finally:
        csv.field_size_limit(limit)
    if not rows:
        raise DataFileError(path, "no records: every line is blank or only separators")
    header_line, first = rows[0]
    header = not all(is_number(f) for f in first)
    if header:
        names = first
        rows = rows[1:]
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise DataFileError(path, f"repeated column names {dup} in the header", line=1)
    else:
        names = [str(j) for j in range(len(first))]
    if not rows:
        raise DataFileError(path, "a header row but no records", line=header_line)
    width = len(names)
    for number, fields in rows:
        if len(fields) != width:
            raise DataFileError(
                path,
                f"expected {width} fields (as in the {'header' if header else 'first row'}), "
                f"got {len(fields)}",
                line=number,
            )
    table = {name: [fields[j] for _, fields in rows] for j, name in enumerate(names)}
    lines = [number for number, _ in rows]
    id_column = next((n for n in names if is_id_column(n) and n != target), None)
    ids = table[id_column] if id_column else [str(number) for number in lines]
    named = next((n for n in names if n.lower() in _RECORD_COLUMNS and n != target), None)
    detected_note = ""
    if detected and kind is InputKind.VECTOR and columns is None and named is not None:
        kind, column = _RECORD_COLUMNS[named.lower()], named
        detected_note = (
            f"column {named!r} read as {kind.plural} (--kind vectors --columns reads numbers)"
        )
    if kind is InputKind.VECTOR:
        return _vectors(path, table, names, lines, ids, columns, target)
    if column is None and kind is InputKind.MOLECULE:
        column = next((n for n in names if n.lower() == "smiles"), None)
    if column is None or column not in table:
        raise DataFileError(
            path,
            f"no column {column!r} holding {kind.plural}; pass --column (one of {names})"
            if column is not None
            else f"which column holds the {kind.plural}? pass --column (one of {names})",
        )
    values = table[column]
    if kind is InputKind.MOLECULE:
        keep = check_smiles(path, values, lines, on_error)
        data = DataFile(kind, values, ids, path, lines, table, note=detected_note)
        return skip_records(data, keep)
    seqs, alpha = check_sequences(path, values, lines, alphabet)
    note = "; ".join(n for n in (detected_note, case_note(values, seqs, alpha)) if n)
    return DataFile(kind, seqs, ids, path, lines, table, alphabet=alpha, note=note)


def _vectors(
    path: Path,
    table: dict[str, list[str]],
    names: list[str],
    lines: list[int],
    ids: list[str],
    columns: list[str] | None,
    target: str | None,
) -> DataFile:
    if columns is None:
        columns = [n for n in names if n != target and not is_id_column(n)]
    missing = [c for c in columns if c not in table]
    if missing:
        raise DataFileError(path, f"no column(s) {missing}; columns: {names}")
    if not columns:
        raise DataFileError(path, "no feature columns left (all columns are the target)")
    X = np.empty((len(lines), len(columns)))
    for j, name in enumerate(columns):
        for i, value in enumerate(table[name]):
            try:
                number = float(value)
            except ValueError:
                raise DataFileError(
                    path,
                    f"column {name!r}: expected a number, got {cell(value)}; pick the numeric "
                    "columns with --columns",
                    line=lines[i],
                ) from None
            if not math.isfinite(number):
                raise DataFileError(
                    path,
                    f"column {name!r}: expected a finite number, got {cell(value)}",
                    line=lines[i],
                )
            if abs(number) > LARGEST_VALUE:
                raise DataFileError(
                    path,
                    f"column {name!r}: {cell(value)} overflows: kernels square differences "
                    f"and products of values, which exceed float64 above |value| = "
                    f"{LARGEST_VALUE:.2g}; rescale the column",
                    line=lines[i],
                )
            X[i, j] = number
    return DataFile(InputKind.VECTOR, X, ids, path, lines, table, feature_names=list(columns))
