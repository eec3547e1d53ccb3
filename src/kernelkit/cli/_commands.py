"""Reading the input of a command, and the handlers of ``kernelkit autoencode`` and ``gram``.

Each handler reads and checks all its input, and checks that the output can be written,
before it computes anything or creates the output (written to a temporary sibling, then
renamed into place).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch

from kernelkit.cli._autoencode import AutoencodeSettings, Target, require_plotting, run_autoencode
from kernelkit.cli._errors import UsageError
from kernelkit.cli._kernels import build_kernel, describe_kernel, kernel_kind
from kernelkit.cli._output import staged
from kernelkit.cli._progress import progress_bar, stage, warn
from kernelkit.data.readers import DataFile, read_data, read_labels
from kernelkit.kernels import Kernel
from kernelkit.utils._errors import DataFileError, InputError
from kernelkit.utils._kinds import InputKind


# ---------------------------------------------------------------------- shared helpers
def read_input(
    args: argparse.Namespace,
    *,
    kind: InputKind | str | None = None,
    columns: list[str] | None = None,
) -> DataFile:
    """Read ``args.input`` with the reader options of the command line."""
    if getattr(args, "gram", False):
        kind = InputKind.GRAM
    kind = kind or args.kind
    spec = (getattr(args, "kernels", None) or [None])[0]
    if kind is None and spec is not None:
        kind = kernel_kind(spec)
    if columns is None and getattr(args, "columns", None):
        columns = args.columns.split(",")
    stage(args, f"reading {args.input}")
    try:
        data = read_data(
            args.input,
            kind=kind,
            column=args.column,
            columns=columns,
            target=getattr(args, "target", None),
            alphabet=args.alphabet,
            node_label=None if args.node_label.lower() == "none" else args.node_label,
            on_error="skip" if getattr(args, "skip_invalid", False) else "raise",
            standardize=getattr(args, "standardize", False),
        )
    except DataFileError:
        raise
    except InputError as exc:  # an option that does not fit the file (--kind, --column)
        raise UsageError(str(exc)) from None
    report_letters(args, data)
    if data.skipped:
        shown = ", ".join(str(line) for line in data.skipped[:10])
        warn(
            args,
            f"--skip-invalid: left out {len(data.skipped)} records that did not parse (lines "
            f"{shown}{', ...' if len(data.skipped) > 10 else ''}); {len(data)} records kept",
        )
    return data


def report_letters(args: argparse.Namespace, data: DataFile) -> None:
    """A stage line saying how the reader treated the letters of sequences (lower case read
    as upper case, unknown residues; :attr:`DataFile.note`), when it did anything."""
    if data.note:
        stage(args, f"{data.path}: {data.note}")


def input_kernel(spec: str | None, data: DataFile) -> Kernel:
    """The kernel of ``--kernel`` for the data, checked against what the data carry."""
    kernel = build_kernel(
        spec,
        data.kind,
        sigma_from=data.items if data.kind is InputKind.VECTOR else None,
        alphabet=data.alphabet,
    )
    if data.kind is InputKind.GRAPH:
        needs = getattr(kernel, "node_label", None)
        if needs is not None and data.items.node_labels is None:
            raise DataFileError(
                data.path,
                f"graph {data.ids[0]!r}: nodes have no attribute {needs!r}, which the kernel "
                f"{type(kernel).__name__} needs (name the attribute with --node-label, or "
                "ignore labels with --kernel wl:node_label=none)",
            )
    if hasattr(kernel, "check_training"):
        kernel.check_training(kernel.prepare(data.items, reference=True))
    if data.kind in (InputKind.VECTOR, InputKind.STRING, InputKind.MOLECULE, InputKind.GRAPH):
        check_not_constant(kernel, data)
    if data.kind is InputKind.GRAM:
        K = data.items
        if K.shape[0] != K.shape[1]:
            raise DataFileError(
                data.path, f"expected a square training Gram matrix, got shape {K.shape}"
            )
        try:
            kernel.prepare(K, reference=True)
        except ValueError as exc:  # InputError, NotPSDError
            raise DataFileError(data.path, str(exc).removeprefix("X: ")) from exc
    return kernel


_SAMPLE = 200
"""Records on which :func:`check_not_constant` computes the Gram."""


def check_not_constant(kernel: Kernel, data: DataFile) -> None:
    """Refuse a kernel whose Gram on (an evenly spaced sample of) the records is all zero or
    constant while the records differ: it cannot tell them apart (a ``k`` longer than the
    sequences, a width far larger than the distances).

    The rule of every command: vectors, sequences and molecules that are all equal are let
    through here (``fit`` warns that the model predicts one value, ``autoencode`` refuses
    them); graphs have no equality test, so a constant Gram of graphs is always refused
    (graphs the kernel cannot tell apart: identical, or differing only in what it ignores).
    A precomputed Gram is not checked here: a constant one has equal rows, which ``fit``
    reports as equal records."""
    from kernelkit.gram import gram

    rows = np.unique(np.linspace(0, len(data) - 1, min(len(data), _SAMPLE)).astype(int))
    if data.kind is InputKind.GRAPH:
        X = kernel.prepare(data.items, reference=True)[rows]
        distinct = len(rows)
    else:
        sample = data.take(rows)
        distinct = (
            len(np.unique(sample.items, axis=0))
            if isinstance(sample.items, np.ndarray)
            else len(set(sample.items))
        )
        X = kernel.prepare(sample.items, reference=True)
    if distinct < 2:
        return
    K = gram(kernel, X)
    K = K.detach().cpu().numpy() if isinstance(K, torch.Tensor) else np.asarray(K)
    spread = float(K.max() - K.min())
    if spread <= 1e-12 * max(float(np.abs(K).max()), 1e-300):
        value = "0" if not K.any() else f"{float(K.flat[0]):.6g}"
        graphs = data.kind is InputKind.GRAPH
        what = (
            "graphs (identical, or differing only in what it ignores)"
            if graphs
            else ("distinct records")
        )
        fix = "node labels, more iterations" if graphs else "a shorter k, a smaller sigma"
        raise DataFileError(
            data.path,
            f"the kernel {describe_kernel(kernel)} is {value} for every pair of {len(rows)} "
            f"{what} (a constant Gram matrix: no model can tell them apart); change its "
            f"parameters ({fix})",
        )


def read_target(
    args: argparse.Namespace, data: DataFile, *, task: str | None = None
) -> Target | None:
    """The target of ``--target COLUMN`` or ``--labels FILE`` (``None`` when neither).

    ``task``: ``args.task`` when given, else this default (``None``: decided from the values,
    see :func:`kernelkit.data.readers._common.as_targets`); a note on integer classes is
    printed as a warning.
    """
    task = getattr(args, "task", None) or task
    if args.target is not None:
        name, targets = args.target, data.target(args.target, task=task)
    elif args.labels is not None:
        name, targets = Path(args.labels).stem, read_labels(args.labels, task=task)
        if len(targets.values) != len(data):
            raise DataFileError(
                args.labels,
                f"expected {len(data)} labels (one per record), got {len(targets.values)}",
            )
    else:
        return None
    if targets.note:
        warn(args, targets.note)
    return Target(name, targets.values, targets.classes)


# ---------------------------------------------------------------------- autoencode
def run_autoencode_command(args: argparse.Namespace) -> int:
    """``kernelkit autoencode INPUT``."""
    settings = AutoencodeSettings(
        dims=args.dims,
        lam=args.lam,
        max_iter=args.max_iter,
        seed=args.seed,
        test_size=args.test_size,
        trees=args.trees,
        landmarks=args.landmarks,
        quiet=args.quiet,
        command="autoencode",
    )
    out = args.out
    require_plotting()
    data = read_input(args)
    kernel = input_kernel(args.kernels[0], data)
    target = read_target(args, data)
    with staged(out, folder=True) as folder:
        summary = run_autoencode(
            data,
            kernel,
            target,
            settings,
            folder,
            title=f"kernelkit autoencode: {Path(args.input).name}",
        )
    if not args.quiet:
        print(
            f"wrote {out}/ (report.md, report.html, codes, plots, models) in "
            f"{summary['wall_seconds']:.1f} s"
        )
    return 0


# ---------------------------------------------------------------------- gram
def run_gram_command(args: argparse.Namespace) -> int:
    """``kernelkit gram INPUT [--against INPUT2] --kernel SPEC --out K.npy`` (blockwise)."""
    from kernelkit.gram import gram

    out = args.out
    data = read_input(args)
    kernel = input_kernel(args.kernels[0], data)
    X = kernel.prepare(data.items, reference=True)
    Y = X
    if args.against is not None:
        other = read_data(args.against, kind=data.kind, column=args.column, alphabet=data.alphabet)
        report_letters(args, other)
        Y = kernel.prepare(other.items, reference=True)
    n, m = len(X), len(Y)
    block = max(1, args.block_size)
    stage(args, f"Gram matrix {n} x {m} of {describe_kernel(kernel)}")
    bar = progress_bar(n, "gram rows", args.quiet)
    start = time.perf_counter()
    with staged(out, folder=False) as tmp:
        K = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.float64, shape=(n, m))
        for r0 in range(0, n, block):
            r1 = min(r0 + block, n)
            gram(kernel, X[r0:r1], Y, out=torch.from_numpy(K[r0:r1]))
            bar.update(r1)
        K.flush()
        del K
    bar.close()
    if not args.quiet:
        print(
            f"wrote the {n} x {m} Gram of {describe_kernel(kernel)} to {out} "
            f"({time.perf_counter() - start:.2f} s)"
        )
    return 0
