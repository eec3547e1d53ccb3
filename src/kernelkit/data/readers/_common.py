"""What every reader shares: the :class:`DataFile` of records, text decoding and targets."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from kernelkit.utils._errors import DataFileError, InputError
from kernelkit.utils._kinds import InputKind
from kernelkit.utils._textfiles import decode_text
from kernelkit.utils._validation import largest_entry


@dataclass
class DataFile:
    """Records read from a file.

    Attributes
    ----------
    kind : InputKind
        What one record is (``InputKind.VECTOR``, ``MOLECULE``, ``STRING``, ``GRAPH``,
        ``GRAM``).
    items : Any
        ``(n, d)`` float64 array (vectors, Gram rows), list of str (SMILES, sequences) or a
        :class:`GraphBatch`.
    ids : list of str
        An id per record (name column, FASTA id, file name, or the line number).
    path : Path
    lines : list of int or None
        Line of each record in the file (``None`` for binary or per-file records).
    columns : dict of str to list of str
        The other fields of each record (CSV columns, FASTA ``key=value``, graph attributes).
    alphabet : str or None
        The alphabet of sequences (``"dna"``, ``"rna"`` or ``"protein"``).
    feature_names : list of str
        Names of the vector columns.
    skipped : list of int
        Lines of the records left out because they did not parse (``on_error="skip"``).
    standardized : bool
        Whether the molecules were standardised (``standardize=True`` of ``read_data``).
    note : str
        How the reader read the file where it chose something: a table's column of SMILES or
        sequences found by its name, the letters of sequences (lower case read as upper case,
        unknown residues; :func:`kernelkit.data.readers._fasta.case_note`); empty otherwise.
    """

    kind: InputKind
    items: Any
    ids: list[str]
    path: Path
    lines: list[int] | None = None
    columns: dict[str, list[str]] = field(default_factory=dict)
    alphabet: str | None = None
    feature_names: list[str] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)
    standardized: bool = False
    note: str = ""

    def __len__(self) -> int:
        return len(self.ids)

    def take(self, rows: np.ndarray) -> DataFile:
        """The records ``rows`` (vectors and lists of records; not graphs or Gram matrices)."""
        if self.kind in (InputKind.GRAPH, InputKind.GRAM):
            raise InputError(f"take: selecting records of {self.kind.plural} is not supported")
        items = (
            self.items[rows]
            if isinstance(self.items, np.ndarray)
            else [self.items[i] for i in rows]
        )
        return DataFile(
            self.kind,
            items,
            [self.ids[i] for i in rows],
            self.path,
            None if self.lines is None else [self.lines[i] for i in rows],
            {k: [v[i] for i in rows] for k, v in self.columns.items()},
            self.alphabet,
            self.feature_names,
            standardized=self.standardized,
            note=self.note,
        )

    def target(self, name: str, task: str | None = None) -> Targets:
        """The column ``name`` as targets (see :func:`as_targets` for ``task``)."""
        if name not in self.columns:
            raise DataFileError(
                self.path,
                f"no column {name!r} for the target; columns: {sorted(self.columns) or 'none'}",
            )
        return as_targets(self.columns[name], self.path, self.lines, task=task, name=name)


def read_text(path: Path) -> str:
    """The file as text (UTF-8, or UTF-16/32 with a byte-order mark; see
    :mod:`kernelkit.utils._textfiles`); empty and binary files are refused."""
    if path.is_dir():
        raise DataFileError(path, "is a folder; expected a file")
    raw = path.read_bytes()
    if path.suffix.lower() == ".gz":
        import gzip

        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise DataFileError(path, f"not a valid gzip file ({exc})") from exc
    return decode_text(raw, path)


def cell(value: str, width: int = 40) -> str:
    """``repr`` of a cell for a message, cut to ``width`` characters (with its length)."""
    if len(value) <= width:
        return repr(value)
    return f"{value[:width]!r}... ({len(value)} characters)"


def text_lines(text: str) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of every line of ``text``, numbered from 1."""
    yield from enumerate(text.splitlines(), start=1)


def is_number(value: str) -> bool:
    """Whether ``value`` parses as a float."""
    try:
        float(value)
    except ValueError:
        return False
    return True


LARGEST_VALUE = largest_entry(torch.float64)
"""Largest magnitude of a number read from a file (1.3e150,
:func:`kernelkit.utils._validation.largest_entry` of float64): squares of larger values
overflow."""

TASKS = ("regression", "classification")
"""Values of ``task``: numbers to predict, or class names."""

MAX_INTEGER_CLASSES = 10
"""A target of integers with at most this many distinct values is taken as classes."""


@dataclass
class Targets:
    """Targets of the records: floats (regression), or class indices and class names.

    Attributes
    ----------
    values : ndarray
        Floats, or the index in ``classes`` of each record's class.
    classes : list of str or None
        Class names (numbers sorted by value, text alphabetically); ``None`` for regression.
    note : str
        Why integer values were taken as classes (empty otherwise), for a warning.
    """

    values: np.ndarray
    classes: list[str] | None = None
    note: str = ""


def as_targets(
    values: list[str],
    path: Path,
    lines: list[int] | None,
    *,
    task: str | None = None,
    name: str = "target",
) -> Targets:
    """Targets from text cells.

    ``task="regression"``: every cell must be a finite number. ``task="classification"``:
    the cells are class names. ``task=None`` decides: a column of numbers is a regression
    target, except integers with at most :data:`MAX_INTEGER_CLASSES` distinct values, which
    are classes (with a ``note``); a column that is mostly numbers with some text is an error
    naming the first text cell and its line (a typo must not turn a regression into a
    classification); a column that is mostly text holds class names.

    Raises
    ------
    DataFileError
        ``FILE:LINE: problem`` of the first bad cell.
    InputError
        ``task`` not one of :data:`TASKS`.
    """
    if task is not None and task not in TASKS:
        raise InputError(f"--task: expected one of {', '.join(TASKS)}, got {task!r}")
    numeric = [is_number(v) for v in values]
    as_classes = task == "classification" or (task is None and sum(numeric) * 2 <= len(values))
    if as_classes:
        return _classes(values, all(numeric))
    for i, v in enumerate(values):
        line = None if lines is None else lines[i]
        if not numeric[i]:
            share = f"{sum(numeric)} of {len(values)} cells are numbers"
            raise DataFileError(
                path,
                f"{name}: expected a number, got {cell(v)} ({share}); fix the cell, or pass "
                "--task classification to take the values as class names",
                line=line,
            )
        if not math.isfinite(float(v)):
            raise DataFileError(path, f"{name}: expected a finite number, got {cell(v)}", line=line)
        if abs(float(v)) > LARGEST_VALUE:
            raise DataFileError(
                path,
                f"{name}: {cell(v)} overflows: squared errors of targets exceed float64 above "
                f"|value| = {LARGEST_VALUE:.2g}; rescale the target",
                line=line,
            )
    numbers = np.asarray([float(v) for v in values])
    distinct = np.unique(numbers)
    integers = bool(np.all(distinct == np.round(distinct)))
    if task is None and integers and len(distinct) <= MAX_INTEGER_CLASSES:
        note = (
            f"{name}: {len(distinct)} distinct integer values, taken as classes "
            "(pass --task regression to predict numbers)"
        )
        return _classes(values, True, note=note)
    return Targets(numbers)


def _classes(values: list[str], numeric: bool, *, note: str = "") -> Targets:
    """Class indices and names; numeric names keep their text and are sorted by value."""
    if numeric:
        # "1", "1.0" and "01" are one class, named by its first spelling
        spelling: dict[float, str] = {}
        for v in values:
            spelling.setdefault(float(v), v)
        keys = sorted(spelling)
        index = {k: i for i, k in enumerate(keys)}
        codes = [index[float(v)] for v in values]
        return Targets(np.array(codes, dtype=np.int64), [spelling[k] for k in keys], note)
    classes = sorted(set(values))
    lookup = {c: k for k, c in enumerate(classes)}
    return Targets(np.array([lookup[v] for v in values], dtype=np.int64), classes, note)
