"""Handlers of ``kernelkit autoencode``, ``fit``, ``predict`` and ``gram``.

Each handler reads and checks all its input, and checks that the output can be written,
before it computes anything or creates the output (written to a temporary sibling, then
renamed into place).
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from kernelkit.cli.autoencode import (
    AutoencodeSettings,
    Target,
    progress_bar,
    require_plotting,
    run_autoencode,
)
from kernelkit.cli.errors import UsageError
from kernelkit.cli.kernels import KERNELS, build_kernel, describe_kernel, parse_kernel
from kernelkit.cli.output import check_output, staged
from kernelkit.data.readers import DataFile, read_data, read_labels
from kernelkit.data.strings import ALPHABETS
from kernelkit.kernels import Kernel, PrecomputedBatch
from kernelkit.utils.errors import DataFileError, InputError
from kernelkit.utils.kinds import InputKind


# ---------------------------------------------------------------------- shared helpers
def read_input(args: argparse.Namespace, *, kind: str | None = None) -> DataFile:
    """Read ``args.input`` with the reader options of the command line."""
    if getattr(args, "gram", False):
        kind = "gram"
    kind = kind or args.kind
    if kind is None and args.kernel is not None:
        kind = KERNELS[parse_kernel(args.kernel)[0]][0].plural
    columns = args.columns.split(",") if getattr(args, "columns", None) else None
    return read_data(
        args.input,
        kind=kind,
        column=args.column,
        columns=columns,
        target=getattr(args, "target", None),
        alphabet=args.alphabet,
        node_label=None if args.node_label.lower() == "none" else args.node_label,
    )


def input_kernel(spec: str | None, data: DataFile) -> Kernel:
    """The kernel of ``--kernel`` for the data, checked against what the data carry."""
    kernel = build_kernel(
        spec,
        data.kind,
        sigma_from=data.items if data.kind == "vectors" else None,
        alphabet=data.alphabet,
    )
    if data.kind == "graphs":
        needs = getattr(kernel, "node_label", None)
        if needs is not None and data.items.node_labels is None:
            raise DataFileError(
                data.path,
                f"graph {data.ids[0]!r}: nodes have no attribute {needs!r}, which the kernel "
                f"{type(kernel).__name__} needs (name the attribute with --node-label, or "
                "ignore labels with --kernel wl:node_label=none)",
            )
    if data.kind == "gram":
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


def read_target(args: argparse.Namespace, data: DataFile) -> Target | None:
    """The target of ``--target COLUMN`` or ``--labels FILE`` (``None`` when neither)."""
    if args.target is not None and args.labels is not None:
        raise UsageError("--target and --labels: give one of them, not both")
    if args.target is not None:
        values, classes = data.target(args.target)
        return Target(args.target, values, classes)
    if args.labels is not None:
        values, classes = read_labels(args.labels)
        if len(values) != len(data):
            raise DataFileError(
                args.labels, f"expected {len(data)} labels (one per record), got {len(values)}"
            )
        return Target(Path(args.labels).stem, values, classes)
    return None


def _check_dims(dims: list[int]) -> list[int]:
    if not dims or any(d < 1 for d in dims):
        raise UsageError(f"--dims: expected positive code widths such as '2 10', got {dims}")
    return sorted(set(dims))


# ---------------------------------------------------------------------- autoencode
def run_autoencode_command(args: argparse.Namespace) -> int:
    """``kernelkit autoencode INPUT``."""
    settings = AutoencodeSettings(
        dims=_check_dims(args.dims),
        lam=args.lam,
        max_iter=args.max_iter,
        seed=args.seed,
        test_size=args.test_size,
        trees=args.trees,
        quiet=args.quiet,
    )
    if not 0 < args.test_size < 1:
        raise UsageError(f"--test-size: expected a fraction in (0, 1), got {args.test_size}")
    if args.trees < 1 or args.max_iter < 1 or args.lam < 0:
        raise UsageError("--trees and --max-iter: expected >= 1; --lam: expected >= 0")
    out = check_output(args.out, overwrite=args.overwrite)
    require_plotting()
    data = read_input(args)
    kernel = input_kernel(args.kernel, data)
    target = read_target(args, data)
    with staged(out, folder=True) as folder:
        summary = run_autoencode(
            data,
            kernel,
            target,
            settings,
            folder,
            title=f"kernelkit autoencode: {Path(args.input).name}",
            command="autoencode",
        )
    if not args.quiet:
        print(
            f"wrote {out}/ (report.md, report.html, codes, plots, models) in "
            f"{summary['wall_seconds']:.1f} s"
        )
    return 0


# ---------------------------------------------------------------------- fit / predict
def _estimator(args: argparse.Namespace, kernel: Kernel) -> Any:
    from kernelkit import KernelAutoencoder, KernelRidge, KernelSVC

    if args.model == "ridge":
        return KernelRidge(kernel, lam=args.lam)
    if args.model == "svc":
        return KernelSVC(kernel, C=args.C)
    dims = _check_dims(args.dims)
    if len(dims) != 1:
        raise UsageError(f"--dims: a fitted autoencoder has one code width, got {args.dims}")
    return KernelAutoencoder(
        dims=(dims[0],),
        input_kernel=kernel,
        lam=args.lam,
        max_iter=args.max_iter,
        random_state=args.seed,
    )


def run_fit_command(args: argparse.Namespace) -> int:
    """``kernelkit fit INPUT --model ridge|svc|autoencoder --out MODEL``."""
    from kernelkit.io import save

    out = check_output(args.out, overwrite=args.overwrite)
    data = read_input(args)
    kernel = input_kernel(args.kernel, data)
    target = read_target(args, data)
    if args.model != "autoencoder" and target is None:
        raise UsageError(f"--target or --labels: a {args.model} model needs targets")
    if args.model == "ridge" and target.classes is not None:
        raise DataFileError(
            data.path,
            f"ridge regression needs a numeric target, {target.name!r} holds classes "
            f"{target.classes[:5]}; use --model svc",
        )
    X = data.items
    estimator = _estimator(args, kernel)
    start = time.perf_counter()
    if args.model == "autoencoder":
        estimator.fit(X)
        score = f"training objective {estimator.objective_:.4g}"
    else:
        y = target.values
        if args.model == "svc":
            y = np.asarray(target.classes, dtype=object)[y] if target.classes else y
        estimator.fit(X, y)
        name = "R²" if args.model == "ridge" else "accuracy"
        score = f"training {name} {estimator.score(X, y):.4g}"
    seconds = time.perf_counter() - start
    save(estimator, out, overwrite=args.overwrite)
    if not args.quiet:
        print(
            f"{type(estimator).__name__} with {describe_kernel(kernel)} on {len(data)} "
            f"records: {score} ({seconds:.2f} s); saved to {out}"
        )
    return 0


def _model_kind(model: Any) -> str:
    kernel = (
        getattr(model, "input_kernel", None) if hasattr(model, "input_kernel") else model.kernel
    )
    if kernel is None:
        return "vectors"
    kind = InputKind.parse(kernel.input_kind)
    return kind.plural if kind is not InputKind.ANY else "vectors"


def run_predict_command(args: argparse.Namespace) -> int:
    """``kernelkit predict MODEL INPUT --out FILE.csv``."""
    from kernelkit.io import load

    out = check_output(args.out, overwrite=args.overwrite)
    model = load(args.model)
    kind = _model_kind(model)
    if args.kind is not None and args.kind != kind:
        raise UsageError(f"--kind: the model takes {kind}, got --kind {args.kind}")
    alphabet = getattr(getattr(model, "kernel_", None), "alphabet", None)
    names = {chars: name for name, chars in ALPHABETS.items()}
    if args.alphabet is None and alphabet is not None:
        args.alphabet = alphabet if alphabet in ALPHABETS else names.get(alphabet)
    data = read_input(args, kind=kind)
    X: Any = data.items
    if kind == "gram":
        diag = None
        if args.diag is not None:
            diag = read_gram_diag(args.diag, len(data))
        X = PrecomputedBatch(torch.as_tensor(X), diag=diag)
    try:
        if hasattr(model, "transform") and not hasattr(model, "predict"):
            values = np.asarray(model.transform(X))
            header = [f"code_{j + 1}" for j in range(values.shape[1])]
        else:
            values = np.asarray(model.predict(X)).reshape(len(data), -1)
            header = (
                ["prediction"]
                if values.shape[1] == 1
                else [f"prediction_{j + 1}" for j in range(values.shape[1])]
            )
    except InputError as exc:
        raise DataFileError(data.path, str(exc)) from exc
    with staged(out, folder=False) as tmp, tmp.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", *header])
        for record, row in zip(data.ids, values, strict=False):
            writer.writerow([record, *(v if isinstance(v, str) else repr(float(v)) for v in row)])
    if not args.quiet:
        print(f"wrote {len(data)} rows to {out}")
    return 0


def read_gram_diag(path: str, n: int) -> torch.Tensor:
    """``k(x, x)`` of the records of a cross-Gram, from a ``.npy`` vector of length ``n``."""
    d = np.load(path, allow_pickle=False) if Path(path).exists() else None
    if d is None:
        raise DataFileError(path, "no such file")
    d = np.asarray(d, dtype=np.float64).ravel()
    if len(d) != n or not np.isfinite(d).all():
        raise DataFileError(path, f"expected {n} finite values k(x, x), got {len(d)}")
    return torch.as_tensor(d)


# ---------------------------------------------------------------------- gram
def run_gram_command(args: argparse.Namespace) -> int:
    """``kernelkit gram INPUT [--against INPUT2] --kernel SPEC --out K.npy`` (blockwise)."""
    from kernelkit.gram import gram

    out = check_output(args.out, overwrite=args.overwrite)
    if out.suffix != ".npy":
        raise UsageError(f"--out: expected a .npy file name, got {str(out)!r}")
    data = read_input(args)
    if data.kind == "gram":
        raise UsageError("--kind gram: the input is already a Gram matrix")
    kernel = input_kernel(args.kernel, data)
    X = kernel.prepare(data.items, reference=True)
    Y = X
    if args.against is not None:
        other = read_data(args.against, kind=data.kind, column=args.column, alphabet=data.alphabet)
        Y = kernel.prepare(other.items, reference=True)
    n, m = len(X), len(Y)
    block = max(1, args.block_size)
    bar = progress_bar(n, "gram rows", args.quiet)
    start = time.perf_counter()
    with staged(out, folder=False) as tmp:
        K = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.float64, shape=(n, m))
        for r0 in range(0, n, block):
            r1 = min(r0 + block, n)
            gram(kernel, X[r0:r1], Y, out=torch.from_numpy(K[r0:r1]))
            if bar is not None:
                bar.update(r1 - r0)
        K.flush()
        del K
    if bar is not None:
        bar.close()
    if not args.quiet:
        print(
            f"wrote the {n} x {m} Gram of {describe_kernel(kernel)} to {out} "
            f"({time.perf_counter() - start:.2f} s)"
        )
    return 0
