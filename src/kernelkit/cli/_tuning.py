"""``kernelkit fit --cv K`` and ``--split COLUMN``: scores of a grid of ``--lam`` and kernel
parameters, and of a given train/test split.

``--cv K``: every cell of the grid (each ``--kernel`` spec of
:func:`~kernelkit.cli._precheck.kernel_grid` times each ``--lam``) is scored by K-fold
cross-validation (scikit-learn's ``cross_val_score`` with shuffled ``KFold``, stratified for
classes, seeded by ``--seed``); R² for ridge, accuracy for an SVC.  The cell with the best
mean score is refitted on all records (Hastie, Tibshirani & Friedman, *The Elements of
Statistical Learning*, 2nd ed., section 7.10).  ``--split COLUMN``: the records marked
``train`` fit the model, those marked ``test`` score it.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

import numpy as np

from kernelkit.cli._kernels import describe_kernel
from kernelkit.cli._progress import stage
from kernelkit.data.readers import DataFile
from kernelkit.kernels import Kernel
from kernelkit.utils._errors import DataFileError
from kernelkit.utils._kinds import InputKind


@dataclass
class Cell:
    """One cell of the grid and its cross-validated scores."""

    kernel: Kernel
    lam: float
    scores: np.ndarray

    def line(self, what: str) -> str:
        return (
            f"{describe_kernel(self.kernel)}, lam={self.lam:g}: {what} "
            f"{self.scores.mean():.4f} ± {self.scores.std():.4f} ({len(self.scores)} folds)"
        )


def cross_validate(
    args: argparse.Namespace, kernels: list[Kernel], X: Any, y: np.ndarray, make: Any
) -> list[Cell]:
    """Scores of every (kernel, lam) cell; ``make(kernel, lam)`` builds the estimator."""
    from sklearn.model_selection import KFold, StratifiedKFold, cross_val_score

    splitter = StratifiedKFold if args.model == "svc" else KFold
    folds = splitter(n_splits=args.cv, shuffle=True, random_state=args.seed)
    cells = []
    for kernel in kernels:
        for lam in args.lams:
            stage(
                args, f"{args.cv}-fold cross-validation of {describe_kernel(kernel)}, lam={lam:g}"
            )
            scores = cross_val_score(make(kernel, lam), X, y, cv=folds)
            cells.append(Cell(kernel, lam, np.asarray(scores, dtype=float)))
    return cells


def split_rows(data: DataFile, column: str) -> tuple[np.ndarray, np.ndarray]:
    """The positions of the records marked ``train`` and ``test`` in ``column``."""
    if column not in data.columns:
        raise DataFileError(
            data.path, f"--split: no column {column!r}; columns: {sorted(data.columns)}"
        )
    marks = [v.strip().lower() for v in data.columns[column]]
    for i, mark in enumerate(marks):
        if mark not in ("train", "test"):
            line = None if data.lines is None else data.lines[i]
            raise DataFileError(
                data.path,
                f"--split column {column!r}: expected 'train' or 'test', got "
                f"{data.columns[column][i]!r}",
                line=line,
            )
    train = np.flatnonzero(np.asarray(marks) == "train")
    test = np.flatnonzero(np.asarray(marks) == "test")
    if len(train) < 2 or len(test) < 1:
        raise DataFileError(
            data.path,
            f"--split column {column!r}: expected at least 2 'train' and 1 'test' records, got "
            f"{len(train)} and {len(test)}",
        )
    return train, test


def check_tunable(args: argparse.Namespace, data: DataFile) -> None:
    """``--cv`` and ``--split`` need records that can be subset (not a Gram matrix)."""
    if (args.cv is not None or args.split is not None) and data.kind in (
        InputKind.GRAM,
        InputKind.GRAPH,
    ):
        raise DataFileError(
            data.path, f"--cv / --split: not supported for {data.kind.plural} input"
        )
    if args.cv is not None and args.cv > len(data):
        raise DataFileError(data.path, f"--cv {args.cv}: more folds than the {len(data)} records")
