"""Checks of a command line made before any heavy import (torch, scikit-learn, RDKit).

:func:`precheck` validates the option values, the ``--kernel`` spec (against
:data:`~kernelkit.cli._kernel_names.KERNEL_DEFAULTS`), the output path
(:func:`~kernelkit.cli._output.check_output`) and the head of every input file (it exists, is
not empty, is text in an encoding :mod:`kernelkit.utils._textfiles` reads), so that a usage
error exits 2, and an unreadable file 1, at once.  It also turns option text into values:
``--dims`` sorted and distinct, ``--landmarks`` a number, ``auto`` or ``None``, ``--lam`` of
``fit`` a list of floats and ``--kernel`` a list of specs (a grid, ``--cv``).
Standard library and kernelkit's light modules only.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import math
from pathlib import Path
from typing import Any

from kernelkit.cli._cluster import check_cluster_options
from kernelkit.cli._errors import UsageError
from kernelkit.cli._kernel_names import KERNEL_DEFAULTS, SKLEARN_NAMES
from kernelkit.cli._output import check_output
from kernelkit.utils._errors import DataFileError, InputError
from kernelkit.utils._spec_text import is_number, parse_spec
from kernelkit.utils._textfiles import HEAD_BYTES, delimiter, read_head

_TABLE_SUFFIXES = (".csv", ".tsv")
_TEXT_SUFFIXES = (*_TABLE_SUFFIXES, ".txt", ".smi", ".smiles", ".fa", ".fasta", ".fna", ".faa")
_TABLE = {name: params for name, (_, params) in KERNEL_DEFAULTS.items()}
_OUTPUT_KINDS = {
    "demo": "folder",
    "autoencode": "folder",
    "two-sample": "folder",
    "fit": "model",
    "predict": "file",
    "gram": "file",
    "suggest": "file",
}


def check_dims(dims: list[int]) -> list[int]:
    """The sorted distinct code widths of ``--dims`` (usage error unless all positive)."""
    if not dims or any(d < 1 for d in dims):
        raise UsageError(f"--dims: expected positive code widths such as '2 10', got {dims}")
    return sorted(set(dims))


def parse_landmarks(text: str) -> int | str | None:
    """``--landmarks``: a positive number, ``none`` (exact fit) or ``auto``."""
    value = str(text).strip().lower()
    if value in ("auto", "none"):
        return None if value == "none" else "auto"
    if value.isdigit() and int(value) > 0:
        return int(value)
    raise UsageError(f"--landmarks: expected a positive number, 'none' or 'auto', got {text!r}")


def parse_lams(text: str) -> list[float]:
    """``--lam 1e-3`` or a comma-separated list ``1e-4,1e-3`` of non-negative numbers."""
    values = []
    for item in str(text).split(","):
        try:
            value = float(item)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or value < 0:
            raise UsageError(
                f"--lam: expected non-negative numbers such as 1e-3 or 1e-4,1e-3, got {text!r}"
            )
        values.append(value)
    return values


def kernel_grid(spec: str) -> list[str]:
    """The specs of ``NAME:a=1,2,b=x``: one per combination of the listed values.

    A comma-separated item without ``=`` is one more value of the parameter before it
    (``weighted-degree:degree=3,5,8`` is three specs); each spec is checked
    (:func:`kernelkit.utils._spec_text.parse_spec`).
    """
    name, colon, rest = str(spec).strip().partition(":")
    grid: list[tuple[str, list[str | None]]] = []
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = item.partition("=")
        if eq:
            grid.append((key, [value]))
        elif grid:
            grid[-1][1].append(item)
        else:  # a value before any name=: kept, for parse_spec to name
            grid.append((item, [None]))
    specs = [
        f"{name}{colon}" + ",".join(k if v is None else f"{k}={v}" for k, v in combo)
        for combo in itertools.product(*([(k, v) for v in vs] for k, vs in grid))
    ]
    for s in specs:
        _check_spec(s)
    return specs


def _check_spec(spec: str) -> dict[str, Any]:
    if spec.strip().lower() in SKLEARN_NAMES:
        return {"name": spec.strip().lower()}
    try:
        name, values = parse_spec(spec, _TABLE, argument="--kernel")
    except InputError as exc:
        raise UsageError(str(exc)) from None
    sigma = values.get("sigma")
    if isinstance(sigma, (int, float)) and not (math.isfinite(sigma) and sigma > 0):
        raise UsageError(f"--kernel {spec}: sigma: expected a finite number > 0, got {sigma}")
    if isinstance(sigma, (int, float)) and sigma > 1e154:
        raise UsageError(
            f"--kernel {spec}: sigma={sigma:g} is too large (sigma^2 overflows float64); "
            "expected sigma <= 1e154, e.g. the median distance between records"
        )
    if isinstance(sigma, (int, float)) and sigma * sigma < 1e-300:
        raise UsageError(
            f"--kernel {spec}: sigma={sigma:g} is too small (sigma^2 underflows in float64); "
            "expected sigma >= 1e-150, e.g. the median distance between records"
        )
    return {"name": name, **values}


def _check_kernel(args: argparse.Namespace) -> None:
    spec = getattr(args, "kernel", None)
    if spec is None:
        args.kernels = [None]
        return
    args.kernels = kernel_grid(spec)
    first = args.kernels[0].strip().lower()
    kind = SKLEARN_NAMES.get(first) or KERNEL_DEFAULTS[first.partition(":")[0].strip()][0]
    if args.kind is not None and args.kind != kind and not getattr(args, "gram", False):
        name = args.kernels[0].partition(":")[0]
        others = ", ".join(n for n, (k, _) in KERNEL_DEFAULTS.items() if k == args.kind)
        raise UsageError(
            f"--kernel: {name} takes {kind}, but the input holds {args.kind}; kernels for "
            f"{args.kind}: {others}"
        )
    if len(args.kernels) > 1 and getattr(args, "cv", None) is None:
        raise UsageError(
            f"--kernel {spec}: several values of a parameter make a grid, which needs --cv K (fit)"
        )


def _check_input(path: str | None) -> None:
    """The input exists; a text input is not empty and is text (its head is read); a table
    read whole in its head holds a record besides its header (:func:`_check_table_head`)."""
    if path is None:
        return
    p = Path(path)
    if not p.exists():
        raise DataFileError(p, "no such file or folder")
    suffixes = [s.lower() for s in p.suffixes if s.lower() != ".gz"]
    if p.is_file() and suffixes and suffixes[-1] in _TEXT_SUFFIXES and p.suffix != ".gz":
        head = read_head(p)
        if suffixes[-1] in _TABLE_SUFFIXES and p.stat().st_size <= HEAD_BYTES:
            _check_table_head(p, head)


def _check_table_head(path: Path, text: str) -> None:
    """Refuse, as the table reader would after the heavy imports, a CSV / TSV whose only
    non-blank row is a header (a row not all numbers): ``FILE:LINE: a header row but no
    records``."""
    reader = csv.reader(text.splitlines(), delimiter=delimiter(text.split("\n", 1)[0], path.suffix))
    rows = []
    try:
        for fields in reader:
            if any(f.strip() for f in fields):
                rows.append((reader.line_num, fields))
            if len(rows) > 1:
                return
    except csv.Error:
        return  # the reader names the problem
    if len(rows) == 1 and not all(is_number(f.strip()) for f in rows[0][1]):
        raise DataFileError(path, "a header row but no records", line=rows[0][0])


def _positive(args: argparse.Namespace, *names: str, minimum: float = 1) -> None:
    for name in names:
        value = getattr(args, name.replace("-", "_"), None)
        if value is not None and value < minimum:
            raise UsageError(f"--{name}: expected >= {minimum:g}, got {value}")


def _check_options(args: argparse.Namespace) -> None:
    _positive(args, "threads", "max-iter", "trees", "permutations", "block-size")
    _positive(args, "top", minimum=0)
    _positive(args, "n")
    if args.command == "autoencode":
        if not 0 < args.test_size < 1:
            raise UsageError(f"--test-size: expected a fraction in (0, 1), got {args.test_size}")
        if args.lam < 0:
            raise UsageError(f"--lam: expected >= 0, got {args.lam}")
        args.landmarks = parse_landmarks(args.landmarks)
    if args.command in ("autoencode", "fit"):
        args.dims = check_dims(args.dims)
    if args.command == "two-sample" and args.gram:
        raise UsageError(
            "--gram: two-sample reads two files of records; for a Gram matrix of the pooled "
            "sample use kernelkit.stats.two_sample_test(K, n, kernel='precomputed')"
        )
    if args.command == "predict" and args.interval is not None and not 0 < args.interval < 1:
        raise UsageError(f"--interval: expected a level in (0, 1) such as 0.9, got {args.interval}")
    if args.command == "predict" and args.kernel is not None:
        raise UsageError(
            f"--kernel {args.kernel}: the model carries its kernel; predict takes no --kernel"
        )
    if args.command == "gram" and Path(args.out).suffix != ".npy":
        raise UsageError(f"--out: expected a .npy file name, got {str(args.out)!r}")
    if args.command == "gram" and (args.gram or args.kind == "gram"):
        raise UsageError("--kind gram: the input is already a Gram matrix")
    if args.command == "fit":
        _check_fit(args)
    if getattr(args, "target", None) is not None and getattr(args, "labels", None) is not None:
        raise UsageError("--target and --labels: give one of them, not both")


def _check_fit(args: argparse.Namespace) -> None:
    check_cluster_options(args)
    if args.model == "gp" and args.lam is not None:
        raise UsageError(
            f"--lam {args.lam}: a gp learns its noise variance (the lam of ridge regression "
            "is noise / (n amplitude)); drop --lam"
        )
    if args.model == "gp" and args.cv is not None:
        raise UsageError("--cv: a gp learns its hyper-parameters by marginal likelihood")
    auto = args.lam is not None and args.lam.strip().lower() == "auto"
    if auto and (args.model != "ridge" or args.cv is not None):
        raise UsageError(
            f"--lam auto: only --model ridge without --cv chooses lam, got --model {args.model}"
            + (f" with --cv {args.cv}" if args.cv is not None else "")
        )
    # ridge without --cv / --split chooses its lam by default (KernelRidge's lam="auto"; on a
    # cluster by GCV on the one-pass statistics)
    tuning = args.cv is not None or args.split is not None
    auto = auto or (args.lam is None and args.model == "ridge" and not tuning)
    args.lams = ["auto"] if auto else parse_lams("1e-3" if args.lam is None else args.lam)
    if args.model == "autoencoder" and len(args.dims) != 1:
        raise UsageError(f"--dims: a fitted autoencoder has one code width, got {args.dims}")
    if args.model != "autoencoder" and args.target is None and args.labels is None:
        raise UsageError(f"--target or --labels: a {args.model} model needs targets")
    if args.cv is not None and args.split is not None:
        raise UsageError("--cv and --split: give one of them, not both")
    if args.cv is not None and args.cv < 2:
        raise UsageError(f"--cv: expected at least 2 folds, got {args.cv}")
    if tuning and args.model == "autoencoder":
        raise UsageError("--cv / --split: only --model ridge, gp and svc are scored")
    if len(args.lams) > 1 and args.cv is None:
        raise UsageError(f"--lam {args.lam}: a list of values makes a grid, which needs --cv K")
    if tuning and (args.scheduler is not None or args.workers is not None):
        raise UsageError("--cv / --split: not with --scheduler or --workers")


def _inputs(args: argparse.Namespace) -> list[str | None]:
    if args.command == "predict":
        return [args.model, args.input, args.diag]
    if args.command == "two-sample":
        return [args.a, args.b]
    if args.command in ("autoencode", "fit", "gram", "suggest"):
        return [args.input, getattr(args, "labels", None), getattr(args, "against", None)]
    return []


def precheck(args: argparse.Namespace) -> None:
    """All checks of a parsed command line that need no data and no heavy import.

    Raises
    ------
    UsageError
        A wrong option value or ``--kernel``, or an output that may not be written (exit 2).
    DataFileError
        An input that does not exist, is empty or is not text (exit 1).
    """
    if args.command == "info":
        return
    _check_options(args)
    inputs = _inputs(args)
    if args.command != "demo":
        _check_kernel(args)
    if args.out is not None:  # suggest prints its picks without --out
        args.out = check_output(
            args.out, overwrite=args.overwrite, kind=_OUTPUT_KINDS[args.command], inputs=inputs
        )
    for path in inputs:
        _check_input(path)
