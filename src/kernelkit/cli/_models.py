"""Handlers of ``kernelkit fit`` and ``kernelkit predict``.

``fit`` stores, on the saved estimator, the names of the vector columns it was trained on
(``training_columns_``) and the target's name (``target_name_``);
``predict`` matches a CSV's columns to them by name (reordered columns give the same
predictions; the target column is dropped when present; a missing or unknown column is an
error naming it) and writes class predictions as the class names.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from kernelkit.cli._autoencode import distinct_records, name_columns
from kernelkit.cli._cluster import cluster_client, distribute
from kernelkit.cli._commands import input_kernel, read_input, read_target
from kernelkit.cli._errors import UsageError
from kernelkit.cli._kernels import describe_kernel
from kernelkit.cli._output import staged
from kernelkit.cli._progress import stage, warn
from kernelkit.cli._tuning import check_tunable, cross_validate, split_rows
from kernelkit.data._strings import ALPHABETS
from kernelkit.data.readers import DataFile
from kernelkit.data.readers._tables import is_id_column
from kernelkit.kernels import Kernel, PrecomputedBatch
from kernelkit.utils._errors import DataFileError, InputError
from kernelkit.utils._kinds import InputKind


# ---------------------------------------------------------------------- fit
def _estimator(args: argparse.Namespace, kernel: Kernel, n_records: int, lam: Any) -> Any:
    from kernelkit import GaussianProcessRegressor, KernelAutoencoder, KernelRidge, KernelSVC

    if args.model == "gp":
        return GaussianProcessRegressor(kernel, random_state=args.seed)
    if args.model == "ridge" and args.solver == "nystrom":
        return KernelRidge(
            kernel,
            lam=lam,
            solver="nystrom",
            n_centers=min(args.centers, n_records),
            random_state=args.seed,
            verbose=not args.quiet and sys.stderr.isatty(),
        )
    if args.model == "ridge":
        return KernelRidge(kernel, lam=lam)
    if args.model == "svc":
        return KernelSVC(kernel, C=args.C)
    return KernelAutoencoder(
        dims=(args.dims[0],),
        input_kernel=kernel,
        lam=lam,
        max_iter=args.max_iter,
        random_state=args.seed,
    )


def _check_fit_target(args: argparse.Namespace, data: DataFile, target: Any) -> None:
    if args.model != "autoencoder" and target is None:
        raise UsageError(f"--target or --labels: a {args.model} model needs targets")
    if target is None:
        return
    if args.model in ("ridge", "gp") and target.classes is not None:
        raise UsageError(
            f"--task classification: {args.model} regression needs a numeric target "
            f"({target.name!r} taken as classes); use --model svc"
        )
    if args.model == "svc" and target.classes is None:
        raise UsageError("--task regression: an SVC needs classes; use --model ridge")
    distinct = len(np.unique(target.values))
    if args.model != "autoencoder" and distinct < 2:
        value = target.classes[0] if target.classes else f"{target.values[0]:g}"
        raise DataFileError(
            data.path,
            f"target {target.name!r} is constant (every record {value}); a {args.model} model "
            "needs at least two distinct values",
        )


def _tuned(args: argparse.Namespace, data: DataFile, X: Any, y: Any) -> tuple[Kernel, float, str]:
    """The kernel and lam to fit (the best cell of ``--cv``) and what the tuning reports."""
    kernels = [input_kernel(spec, data) for spec in args.kernels]
    if args.cv is None:
        return kernels[0], args.lams[0], ""
    what = "accuracy" if args.model == "svc" else "R²"
    cells = cross_validate(
        args, kernels, X, y, lambda kernel, lam: _estimator(args, kernel, len(data), lam)
    )
    best = max(cells, key=lambda c: c.scores.mean())
    if not args.quiet:
        print(f"{args.cv}-fold cross-validated {what} (mean ± sd over folds):")
        for cell in cells:
            print(("* " if cell is best else "  ") + cell.line(what))
    return (
        best.kernel,
        best.lam,
        f"; best of {len(cells)} cells: cross-validated {what} " + (f"{best.scores.mean():.4g}"),
    )


def run_fit_command(args: argparse.Namespace) -> int:
    """``kernelkit fit INPUT --model ridge|gp|svc|autoencoder --out MODEL`` (``--cv K`` or
    ``--split COLUMN``: see :mod:`kernelkit.cli._tuning`)."""
    from kernelkit.io import save

    out = args.out
    data = read_input(args)
    check_tunable(args, data)
    default_task = {"ridge": "regression", "gp": "regression", "svc": "classification"}.get(
        args.model
    )
    target = read_target(args, data, task=default_task)
    _check_fit_target(args, data, target)
    if distinct_records(data) < 2:
        warn(args, f"all {len(data)} records are equal; the model can only predict one value")
    y = None if target is None else target.values
    if args.model == "svc":
        y = np.asarray(target.classes, dtype=object)[y]
    test = None
    if args.split is not None:
        train, test = split_rows(data, args.split)
        test = (data.take(test), y[test])
        data, y = data.take(train), y[train]
    X = data.items
    kernel, lam, tuning = _tuned(args, data, X, y)
    estimator = _estimator(args, kernel, len(data), lam)
    stage(args, f"fitting {type(estimator).__name__} on {len(data)} records")
    start = time.perf_counter()
    if args.model == "autoencoder":
        estimator.fit(X)
        score = f"training objective {estimator.objective_:.4g}"
    else:
        with cluster_client(args) as client:
            estimator.fit(X if client is None else distribute(X, client), y)
        name = "accuracy" if args.model == "svc" else "R²"
        score = f"training {name} {estimator.score(X, y):.4g}"
        if test is not None:
            score += f", test {name} {estimator.score(test[0].items, test[1]):.4g} on the "
            score += f"{len(test[1])} records marked test in {args.split!r}"
    seconds = time.perf_counter() - start
    name_columns(estimator, data, target)
    save(estimator, out, overwrite=args.overwrite)
    if not args.quiet:
        print(
            f"{type(estimator).__name__} with {describe_kernel(kernel)}{_chosen(estimator)} on "
            f"{len(data)} records: {score}{tuning} ({seconds:.2f} s); saved to {out}"
        )
    return 0


def _chosen(estimator: Any) -> str:
    """The fitted hyper-parameters as the fit line reports them."""
    if hasattr(estimator, "noise_"):
        learned = estimator.kernel_.kernel.get_params(deep=False)
        values = "".join(f", {k}={v:.4g}" for k, v in learned.items() if isinstance(v, float))
        return (
            f"{values}, amplitude={estimator.amplitude_:.4g}, noise={estimator.noise_:.4g} "
            f"(log marginal likelihood {estimator.log_marginal_likelihood_value_:.5g}, "
            f"{estimator.solver_} solver)"
        )
    if hasattr(estimator, "loo_residuals_"):
        loo = np.sqrt(np.mean(np.square(np.asarray(estimator.loo_residuals_))))
        return f", lam={estimator.lam_:.4g} chosen (leave-one-out RMSE {loo:.4g})"
    lam = getattr(estimator, "lam_", getattr(estimator, "lam", None))
    return f", lam={lam:.4g}" if isinstance(lam, float) else ""


# ---------------------------------------------------------------------- predict
def _model_kind(model: Any) -> InputKind:
    kernel = getattr(model, "kernel", None)
    if kernel is None:
        return InputKind.VECTOR
    kind = InputKind.parse(kernel.input_kind)
    return kind if kind is not InputKind.ANY else InputKind.VECTOR


def _vector_columns(args: argparse.Namespace, model: Any) -> list[str] | None:
    """The model's training columns, checked against the CSV's header (``None`` when the
    model does not know its columns).  ``--columns`` may name them in any order (other
    columns are then ignored); without it every column but the id and the target must be
    one of them."""
    names = getattr(model, "training_columns_", None)
    if names is None:
        return None
    names = [str(n) for n in names]
    if args.columns:
        chosen = args.columns.split(",")
        if sorted(chosen) != sorted(names):
            raise UsageError(
                f"--columns: expected the model's training columns {names} (in any order), "
                f"got {chosen}"
            )
        return names
    header = read_input(args, kind=InputKind.VECTOR)
    present = set(header.columns)
    missing = [n for n in names if n not in present]
    if missing:
        raise DataFileError(
            header.path,
            f"no column(s) {missing} of the model's training columns {names}; columns of the "
            f"file: {list(header.columns)}",
        )
    target = getattr(model, "target_name_", None)
    extra = [n for n in header.columns if n not in names and n != target and not is_id_column(n)]
    if extra:
        raise DataFileError(
            header.path,
            f"column(s) {extra} are not among the model's training columns {names}; remove "
            "them, pick the columns with --columns, or name an id column 'id' (or '..._id')",
        )
    return names


def _values(model: Any, X: Any, n: int) -> tuple[list[str], np.ndarray]:
    if hasattr(model, "transform") and not hasattr(model, "predict"):
        values = np.asarray(model.transform(X))
        return [f"code_{j + 1}" for j in range(values.shape[1])], values
    values = np.asarray(model.predict(X)).reshape(n, -1)
    if values.shape[1] == 1:
        return ["prediction"], values
    return [f"prediction_{j + 1}" for j in range(values.shape[1])], values


def _uncertainty(
    args: argparse.Namespace, model: Any, X: Any, header: list[str], values: np.ndarray
) -> tuple[list[str], np.ndarray]:
    """``--std`` (a GP's posterior standard deviation) and ``--interval LEVEL`` (jackknife+
    lower and upper bounds) as extra columns."""
    name = type(model).__name__
    if args.std:
        if not hasattr(model, "noise_"):
            raise UsageError(f"--std: only a gp model has a posterior spread, got a {name}")
        std = np.asarray(model.predict(X, return_std=True)[1]).reshape(len(values), -1)
        header, values = [*header, "std"], np.hstack([values, std])
    if args.interval is not None:
        if not hasattr(model, "predict_interval") or values.shape[1] < 1:
            raise UsageError(f"--interval: a {name} model has no prediction intervals")
        bounds = np.asarray(model.predict_interval(X, alpha=1 - args.interval))
        header, values = [*header, "lower", "upper"], np.hstack([values, bounds])
    return header, values


def run_predict_command(args: argparse.Namespace) -> int:
    """``kernelkit predict MODEL INPUT --out FILE.csv``."""
    from kernelkit.io import load

    out = args.out
    model = load(args.model)
    kind = _model_kind(model)
    if args.kind is not None and InputKind.parse(args.kind) is not kind:
        raise UsageError(f"--kind: the model takes {kind.plural}, got --kind {args.kind}")
    alphabet = getattr(getattr(model, "kernel_", None), "alphabet", None)
    names = {chars: name for name, chars in ALPHABETS.items()}
    if args.alphabet is None and alphabet is not None:
        args.alphabet = alphabet if alphabet in ALPHABETS else names.get(alphabet)
    args.standardize = args.standardize or bool(getattr(model, "standardized_", False))
    columns = _vector_columns(args, model) if kind is InputKind.VECTOR else None
    data = read_input(args, kind=kind, columns=columns)
    X: Any = data.items
    if kind is InputKind.GRAM:
        _check_cross_gram(model, data)
        diag = None if args.diag is None else read_gram_diag(args.diag, len(data))
        X = PrecomputedBatch(torch.as_tensor(X), diag=diag)
    stage(args, f"predicting {len(data)} records")
    try:
        header, values = _values(model, X, len(data))
        header, values = _uncertainty(args, model, X, header, values)
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


def _check_cross_gram(model: Any, data: DataFile) -> None:
    """A cross-Gram has one column per training record of the model."""
    n_train = len(model.X_fit_) if hasattr(model, "X_fit_") else None
    width = data.items.shape[1]
    if n_train is not None and width != n_train:
        raise DataFileError(
            data.path,
            f"expected a cross-Gram with {n_train} columns (one per training record of the "
            f"model), got shape {data.items.shape}",
        )


def read_gram_diag(path: str, n: int) -> torch.Tensor:
    """``k(x, x)`` of the records of a cross-Gram, from a ``.npy`` vector of length ``n``."""
    d = np.load(path, allow_pickle=False) if Path(path).exists() else None
    if d is None:
        raise DataFileError(path, "no such file")
    d = np.asarray(d, dtype=np.float64).ravel()
    if len(d) != n or not np.isfinite(d).all():
        raise DataFileError(path, f"expected {n} finite values k(x, x), got {len(d)}")
    return torch.as_tensor(d)
