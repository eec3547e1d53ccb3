"""Handler of ``kernelkit suggest``: the next records to measure, by Bayesian optimisation.

The input is a library of records (SMILES in a CSV column, any kind ``fit`` reads) whose
``--target`` column holds the measured values and is empty (or ``nan`` / ``NA``) where a
record is not measured yet.  A Gaussian process (``GaussianProcessRegressor(kernel,
normalize_y=True)``, amplitude and noise learned) is fitted on the measured records and
:func:`kernelkit.bo.suggest` ranks the others by the acquisition (expected improvement by
default); the picks are printed and, with ``--out``, written as CSV (rank, id, record,
posterior mean and standard deviation of the target).
"""

from __future__ import annotations

import argparse
import csv
from typing import Any

import numpy as np

from kernelkit.cli._commands import input_kernel, read_input
from kernelkit.cli._output import staged
from kernelkit.cli._progress import stage
from kernelkit.data.readers import DataFile
from kernelkit.utils._errors import DataFileError, InputError

_MISSING = ("", "nan", "na", "n/a", "none", "?")
"""Target cells that mark a record not measured yet (case-insensitive, stripped)."""


def measured_targets(data: DataFile, column: str) -> tuple[np.ndarray, np.ndarray]:
    """The target column as floats (NaN where not measured) and the measured mask; a cell
    that is neither a number nor empty is a :class:`DataFileError` naming its line."""
    if column not in data.columns:
        raise DataFileError(
            data.path,
            f"no column {column!r} for the target; columns: {sorted(data.columns) or 'none'}",
        )
    values = np.full(len(data), np.nan)
    for i, cell in enumerate(data.columns[column]):
        text = str(cell).strip()
        if text.lower() in _MISSING:
            continue
        try:
            values[i] = float(text)
        except ValueError:
            raise DataFileError(
                data.path,
                f"target {column!r}: expected a number, or an empty cell for a record not "
                f"measured yet, got {text!r}",
                line=_line(data, i),
            ) from None
        if not np.isfinite(values[i]):
            raise DataFileError(
                data.path,
                f"target {column!r}: expected a finite number, got {text!r}",
                line=_line(data, i),
            )
    return values, ~np.isnan(values)


def _line(data: DataFile, i: int) -> int | None:
    return data.lines[i] if data.lines else None


def _take(items: Any, rows: np.ndarray) -> Any:
    """The records at ``rows`` (a list of SMILES or sequences, an array, a batch)."""
    return [items[i] for i in rows] if isinstance(items, list) else items[rows]


def _check_counts(data: DataFile, column: str, known: np.ndarray, y: np.ndarray) -> None:
    if known.sum() < 2 or len(np.unique(y[known])) < 2:
        raise DataFileError(
            data.path,
            f"target {column!r}: {int(known.sum())} measured records with "
            f"{len(np.unique(y[known]))} distinct values; the model needs at least two "
            "distinct measured values",
        )
    if known.all():
        raise DataFileError(
            data.path,
            f"target {column!r}: every record is measured, none left to suggest (leave the "
            "target cell empty for the candidates)",
        )


def run_suggest_command(args: argparse.Namespace) -> int:
    """``kernelkit suggest LIBRARY --target COLUMN [--n N] [--acquisition ei] [--out FILE]``."""
    from kernelkit import GaussianProcessRegressor
    from kernelkit.bo import suggest

    data = read_input(args)
    kernel = input_kernel(args.kernels[0], data)
    y, known = measured_targets(data, args.target)
    _check_counts(data, args.target, known, y)
    measured = np.flatnonzero(known)
    n = min(args.n, len(data) - len(measured))
    stage(args, f"fitting a GP on {len(measured)} measured records")
    items: Any = data.items
    try:
        gp = GaussianProcessRegressor(kernel, normalize_y=True, random_state=args.seed)
        gp.fit(_take(items, measured), y[measured])
        stage(args, f"ranking {len(data) - len(measured)} candidates")
        picks = suggest(
            gp,
            items,
            n=n,
            acquisition=args.acquisition,
            maximize=not args.minimize,
            exclude=measured,
            random_state=args.seed,
        )
        mean, std = gp.predict(_take(items, picks), return_std=True)
    except InputError as exc:
        raise DataFileError(data.path, str(exc)) from exc
    records = items if isinstance(items, list) else [None] * len(data)
    rows = [
        [rank, data.ids[i], records[i], repr(float(m)), repr(float(s))]
        for rank, (i, m, s) in enumerate(
            zip(picks, np.asarray(mean), np.asarray(std), strict=True), 1
        )
    ]
    header = ["rank", "id", "record", f"{args.target}_mean", f"{args.target}_std"]
    if args.out is not None:
        with staged(args.out, folder=False) as tmp:
            with tmp.open("w", newline="", encoding="utf-8") as fh:
                writer = csv.writer(fh)
                writer.writerow(header)
                writer.writerows(rows)
    if not args.quiet:
        goal = "lowest" if args.minimize else "highest"
        print(
            f"{len(rows)} of {len(data) - len(measured)} candidates by {args.acquisition} "
            f"({goal} {args.target}; GP on {len(measured)} measured records):"
        )
        for rank, ident, record, m, s in rows:
            text = "" if record is None else f" {record}"
            print(f"{rank:>4} {ident}{text}  mean {float(m):.4g} ± {float(s):.3g}")
        if args.out is not None:
            print(f"wrote {len(rows)} rows to {args.out}")
    return 0
