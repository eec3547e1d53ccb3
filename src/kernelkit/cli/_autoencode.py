"""The autoencoding job of ``kernelkit autoencode`` and ``kernelkit demo``.

For each code width ``d`` of ``--dims``: a 2-layer K2AE (Laforgue et al. 2019, objective (5):
the data enter only through the input kernel) and a kernel PCA with ``d`` components, both
fitted on the training part of a random split; measured on the held-out part: the mean
squared reconstruction error in the input kernel's RKHS, and, when the records have a
target, a random forest trained on the training codes (R² and NMSE = MSE / var(y_test) for a
numeric target, accuracy for classes).  Writes codes (CSV), a 2-D latent-space plot, the
training curve, the comparison table, the fitted K2AE models and a Markdown / HTML report.
"""

from __future__ import annotations

import csv
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from sklearn.model_selection import train_test_split

from kernelkit import KernelAutoencoder, KernelPCA
from kernelkit.cli._kernels import describe_kernel
from kernelkit.cli._progress import progress_bar, stage, warn
from kernelkit.data.readers import DataFile
from kernelkit.kernels import Kernel, PrecomputedBatch
from kernelkit.report._document import Report
from kernelkit.utils._errors import DataFileError, InputError
from kernelkit.utils._kinds import InputKind

AUTO_LANDMARKS = (1500, 500)
"""``--landmarks auto``: exact K2AE up to 1500 training records, else 500 random landmarks
(measured in ``benchmarks/cli_autoencode_sizes.py``: within a few percent of the exact
held-out reconstruction error at n = 1500, and 4200 molecules in under 2 minutes)."""


@dataclass
class AutoencodeSettings:
    """Options of the job (the command-line flags of the same names; ``tol`` has none).

    ``max_iter`` bounds the L-BFGS iterations of each K2AE; each iteration takes one or more
    objective evaluations (at most ``1.25 max_iter + 1`` in all), and the report records the
    evaluations used.  ``tol``: the K2AE's stopping test (L-BFGS stops when two successive
    objectives differ by less than ``tol * |J_0|``; ``KernelAutoencoder``'s ``tol``).
    ``landmarks``: a number, ``None`` (exact) or ``"auto"``
    (:data:`AUTO_LANDMARKS`).
    """

    dims: list[int]
    lam: float = 1e-3
    max_iter: int = 50
    tol: float = 1e-4
    seed: int = 0
    test_size: float = 0.2
    trees: int = 100
    landmarks: int | str | None = "auto"
    quiet: bool = False
    command: str = "autoencode"

    def landmarks_for(self, n_train: int) -> int | None:
        """The landmark count of a training set of ``n_train`` records (``None``: exact)."""
        if self.landmarks == "auto":
            limit, count = AUTO_LANDMARKS
            return None if n_train <= limit else count
        if self.landmarks is not None and int(self.landmarks) >= n_train:
            return None
        return None if self.landmarks is None else int(self.landmarks)


@dataclass
class Target:
    """Values to colour and predict: floats, or class indices with their names."""

    name: str
    values: np.ndarray
    classes: list[str] | None = None


def subset(data: DataFile, rows: np.ndarray, train: np.ndarray | None = None) -> Any:
    """Records ``rows`` of the data in the form the kernel takes.

    A Gram matrix gives its rows against the ``train`` columns (with the diagonal, needed by
    the K2AE's first layer and KPCA's reconstruction error); the square block when ``rows``
    is ``train``.
    """
    items = data.items
    if data.kind is InputKind.GRAM:
        if train is None or rows is train:
            return items[np.ix_(rows, rows)]
        return PrecomputedBatch(
            torch.as_tensor(items[np.ix_(rows, train)]),
            diag=torch.as_tensor(items[rows, rows]),
        )
    if isinstance(items, list):
        return [items[i] for i in rows]
    return items[rows]


def require_plotting() -> None:
    """Fail before any work when matplotlib (the ``plot`` extra) is missing."""
    from kernelkit.utils._optional import require

    require("matplotlib", purpose="Writing the plots of the report")


def _fit_autoencoder(
    kernel: Kernel, X: Any, d: int, settings: AutoencodeSettings, landmarks: int | None
) -> KernelAutoencoder:
    bar = progress_bar(settings.max_iter, f"K2AE {d}-D", settings.quiet)

    def report(it: int, value: float) -> None:
        bar.update(it, objective=value)

    model = KernelAutoencoder(
        dims=(d,),
        input_kernel=kernel,
        lam=settings.lam,
        max_iter=settings.max_iter,
        tol=settings.tol,
        n_centers=landmarks,
        random_state=settings.seed,
        verbose=report if bar.active else 0,
    )
    try:
        model.fit(X)
    finally:
        bar.close()
    # the progress callback is display state, not part of the model that is saved
    return model.set_params(verbose=0)


def _downstream(
    Z_train: np.ndarray,
    Z_test: np.ndarray,
    target: Target,
    tr: np.ndarray,
    te: np.ndarray,
    settings: AutoencodeSettings,
) -> dict[str, float]:
    """Random forest on the codes: R² and NMSE (numeric target) or accuracy (classes).

    ``sklearn.ensemble`` is imported here: ``kernelkit fit`` and ``predict`` import this
    module for its record helpers and need no forest."""
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

    y_tr, y_te = target.values[tr], target.values[te]
    if target.classes is None:
        rf = RandomForestRegressor(
            n_estimators=settings.trees, max_features=1 / 3, random_state=settings.seed, n_jobs=1
        ).fit(Z_train, y_tr)
        mse = float(np.mean((rf.predict(Z_test) - y_te) ** 2))
        var = float(np.var(y_te))
        return {"rf_r2": 1 - mse / var, "rf_nmse": mse / var}
    rf = RandomForestClassifier(
        n_estimators=settings.trees, random_state=settings.seed, n_jobs=1
    ).fit(Z_train, y_tr)
    return {"rf_accuracy": float(np.mean(rf.predict(Z_test) == y_te))}


def _write_codes(
    path: Path, data: DataFile, codes: np.ndarray, split: np.ndarray, target: Target | None
) -> None:
    """Codes CSV: the record's id (and its SMILES for molecules), split, target, codes."""
    smiles = data.kind is InputKind.MOLECULE
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        extra = [target.name] if target is not None else []
        writer.writerow(
            [
                "id",
                *(["smiles"] if smiles else []),
                "split",
                *extra,
                *(f"code_{j + 1}" for j in range(codes.shape[1])),
            ]
        )
        for i, row in enumerate(codes):
            value = []
            if target is not None:
                v = target.values[i]
                value = [target.classes[int(v)] if target.classes else f"{v:.6g}"]
            record = [data.ids[i], *([data.items[i]] if smiles else [])]
            writer.writerow([*record, split[i], *value, *(repr(float(x)) for x in row)])


def distinct_records(data: DataFile) -> int:
    """The number of distinct records (graphs are counted as all distinct)."""
    items = data.items
    if isinstance(items, np.ndarray):
        return len(np.unique(items, axis=0))
    if isinstance(items, list):
        return len(set(items))
    return len(data)


def _check_data(
    data: DataFile, target: Target | None, settings: AutoencodeSettings, n_train: int
) -> Target | None:
    """Degenerate data: an error when there is nothing to encode, a warning (and no random
    forest) for a constant target; returns the target to use."""
    n = len(data)
    distinct = distinct_records(data)
    if distinct < 2:
        raise DataFileError(
            data.path,
            f"all {n} records are equal; a K2AE or kernel PCA needs at least 2 distinct records",
        )
    largest = max(settings.dims)
    usable = min(n_train, distinct)
    if largest >= usable:
        what = f"{distinct} distinct records" if distinct < n_train else "training records"
        raise InputError(f"--dims: expected code widths below the {usable} {what}, got {largest}")
    if target is not None and len(np.unique(target.values)) < 2:
        warn(settings, f"target {target.name!r} is constant; no random forest on it")
        return None
    return target


def _mean_self_similarity(kernel: Kernel, data: DataFile, te: np.ndarray, X_te: Any) -> float:
    """Mean ``k(x, x)`` over the held-out records: the scale of the reconstruction errors."""
    if data.kind is InputKind.GRAM:
        return float(np.mean(data.items[te, te]))
    return float(torch.as_tensor(kernel.diag(X_te)).double().mean())


def name_columns(model: Any, data: DataFile, target: Target | None) -> None:
    """Store on ``model`` the names of its vector columns (``training_columns_``) and of the
    target (``target_name_``), by which ``kernelkit predict`` matches a file's columns, and
    whether its molecules were standardised (``standardized_``: predict does the same)."""
    if data.kind is InputKind.VECTOR:
        model.training_columns_ = list(data.feature_names)
    if data.standardized:
        model.standardized_ = True
    model.target_name_ = None if target is None else target.name


def run_autoencode(
    data: DataFile,
    kernel: Kernel,
    target: Target | None,
    settings: AutoencodeSettings,
    folder: Path,
    *,
    title: str,
) -> dict[str, Any]:
    """Fit, compare and write every output into ``folder``; returns the results dictionary."""
    from kernelkit.io import save
    from kernelkit.report._plots import latent_panels, training_curves

    start = time.perf_counter()
    n = len(data)
    if n < 10:
        raise InputError(f"{data.path}: expected at least 10 records to split and fit, got {n}")
    tr, te = train_test_split(
        np.arange(n), test_size=settings.test_size, random_state=settings.seed
    )
    tr, te = np.sort(tr), np.sort(te)
    target = _check_data(data, target, settings, len(tr))
    landmarks = settings.landmarks_for(len(tr))
    split = np.where(np.isin(np.arange(n), tr), "train", "test")
    X_tr, X_te, X_all = subset(data, tr, tr), subset(data, te, tr), subset(data, np.arange(n), tr)
    rows, curves, panels, results = [], [], [], []
    files: list[tuple[str, str]] = []
    how = "exact" if landmarks is None else f"{landmarks} landmarks"
    for d in settings.dims:
        stage(settings, f"{d}-D: K2AE on {len(tr)} training records ({how})")
        t0 = time.perf_counter()
        ae = _fit_autoencoder(kernel, X_tr, d, settings, landmarks)
        t_ae = time.perf_counter() - t0
        stage(settings, f"{d}-D: kernel PCA, codes and held-out errors")
        t0 = time.perf_counter()
        kpca = KernelPCA(kernel, n_components=d).fit(X_tr)
        t_kpca = time.perf_counter() - t0
        codes = {"K2AE": np.asarray(ae.transform(X_all)), "KPCA": np.asarray(kpca.transform(X_all))}
        errors = {
            "K2AE": float(np.mean(ae.reconstruction_error(X_te))),
            "KPCA": float(np.mean(kpca.reconstruction_error(X_te))),
        }
        if target is not None:
            stage(settings, f"{d}-D: random forests on the codes")
        for method, seconds in (("K2AE", t_ae), ("KPCA", t_kpca)):
            entry = {
                "method": method,
                "dims": d,
                "test_reconstruction_error": errors[method],
                "fit_seconds": seconds,
            }
            if target is not None:
                entry.update(
                    _downstream(codes[method][tr], codes[method][te], target, tr, te, settings)
                )
            results.append(entry)
        codes_file = f"codes_{d}d.csv"
        _write_codes(folder / codes_file, data, codes["K2AE"], split, target)
        files.append((codes_file, f"K2AE codes ({d}-D) of all {n} records, with their split"))
        model_file = f"model_{d}d.zip"
        name_columns(ae, data, target)
        save(ae, folder / model_file)
        files.append((model_file, f"the fitted {d}-D K2AE (kernelkit.io.load, kernelkit predict)"))
        curves.append((f"K2AE {d}-D", list(ae.history_)))
        if not panels and d >= 2:
            panels = [
                (f"K2AE ({d}-D code)", codes["K2AE"]),
                (f"kernel PCA ({d} components)", codes["KPCA"]),
            ]
        rows.append((ae, d))
    stage(settings, "plots and report")
    images = []
    if panels:
        latent = latent_panels(
            panels,
            None if target is None else target.values,
            folder / "latent_2d.png",
            colour_label=target.name if target is not None else "",
            classes=None if target is None else target.classes,
        )
        images.append(
            (
                latent.name,
                "first two code coordinates of every record (K2AE left, kernel PCA right)",
            )
        )
    curve = training_curves(curves, folder / "training_curve.png")
    images.append((curve.name, "K2AE training objective against objective evaluations"))
    elapsed = time.perf_counter() - start
    summary = {
        "command": settings.command,
        "input": str(data.path),
        "kind": data.kind.plural,
        "n_records": n,
        "n_train": len(tr),
        "n_test": len(te),
        "kernel": describe_kernel(kernel),
        "target": None if target is None else target.name,
        "task": None if target is None else ("classification" if target.classes else "regression"),
        "landmarks": landmarks,
        "error_scale": _mean_self_similarity(kernel, data, te, X_te),
        "settings": asdict(settings),
        "results": results,
        "verdict": verdict(results, None if target is None else target.name),
        "objective_evaluations": {f"{d}d": int(ae.n_eval_) for ae, d in rows},
        "stopped": {f"{d}d": ae.stopped_ for ae, d in rows},
        "wall_seconds": elapsed,
        "torch_threads": torch.get_num_threads(),
    }
    (folder / "results.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    files.append(("results.json", "every number of this report, machine-readable"))
    _report(summary, images, files, title).write(folder)
    return summary


_DOWNSTREAM = {
    "rf_r2": "RF R²",
    "rf_nmse": "RF NMSE",
    "rf_accuracy": "RF accuracy",
}


def verdict(results: list[dict[str, Any]], target: str | None) -> str | None:
    """One sentence saying whether the K2AE codes beat the KPCA codes on the target.

    The comparison is the random forest's held-out score on the codes (R² or accuracy,
    higher is better) at each code size of ``results``; ``None`` without a target.
    """
    key = next((k for k in ("rf_r2", "rf_accuracy") if results and k in results[0]), None)
    if key is None or target is None:
        return None
    score = {(r["method"], r["dims"]): r[key] for r in results}
    dims = list(dict.fromkeys(r["dims"] for r in results))
    wins = [d for d in dims if score["K2AE", d] > score["KPCA", d]]
    if len(wins) == len(dims):
        outcome = "beat the KPCA codes at every code size"
    elif not wins:
        outcome = "do not beat the KPCA codes at any code size"
    else:
        outcome = "beat the KPCA codes only at " + ", ".join(f"{d}-D" for d in wins)
    numbers = "; ".join(
        f"{d}-D: {score['K2AE', d]:.3f} against {score['KPCA', d]:.3f}" for d in dims
    )
    return (
        f"Verdict on {target!r}: the K2AE codes {outcome} "
        f"({_DOWNSTREAM[key]} on the held-out records, K2AE against KPCA, higher is better; "
        f"{numbers})."
    )


def _stopping(stopped: dict[str, str]) -> str:
    """Which fits met their stopping test and which ran out of iterations."""
    met = [k for k, v in stopped.items() if v == "converged"]
    if len(met) == len(stopped):
        return "every K2AE fit met it"
    return "not met by " + ", ".join(f"{k} ({v})" for k, v in stopped.items() if k not in met)


def _report(
    summary: dict[str, Any], images: list[tuple[str, str]], files: list[tuple[str, str]], title: str
) -> Report:
    report = Report(title)
    s = summary["settings"]
    evaluations = ", ".join(f"{v} ({k})" for k, v in summary["objective_evaluations"].items())
    landmarks = (
        "all training records as representers (exact)"
        if summary["landmarks"] is None
        else f"{summary['landmarks']} random landmarks (Nyström)"
    )
    report.add_paragraph(
        f"Input {summary['input']} ({summary['n_records']} records of {summary['kind']}), kernel "
        f"{summary['kernel']}; random split into {summary['n_train']} training and "
        f"{summary['n_test']} held-out records (seed {s['seed']}). "
        f"K2AE: 2 layers, Gaussian first layer on the kernel's feature space and Gaussian "
        f"last layer (median heuristic), lam = {s['lam']:g}, {landmarks}, at most "
        f"{s['max_iter']} L-BFGS iterations; objective evaluations used: {evaluations}. "
        f"Stopping test: two successive objectives within {s['tol']:g} times the initial one; "
        f"{_stopping(summary['stopped'])}."
    )
    header = ["method", "code", "held-out reconstruction error (RKHS)"]
    downstream = [k for k in _DOWNSTREAM if k in summary["results"][0]]
    header += [_DOWNSTREAM[k] for k in downstream] + ["fit s"]
    table = [
        [
            r["method"],
            f"{r['dims']}-D",
            f"{r['test_reconstruction_error']:.4f}",
            *(f"{r[k]:.3f}" for k in downstream),
            f"{r['fit_seconds']:.2f}",
        ]
        for r in summary["results"]
    ]
    report.add_heading("K2AE against kernel PCA")
    report.add_table(header, table)
    if summary["verdict"] is not None:
        report.add_paragraph(summary["verdict"])
    report.add_paragraph(
        "Reconstruction error: the mean over held-out records of the squared distance, in the "
        "input kernel's feature space, between phi(x) and its reconstruction; on the scale of "
        f"k(x, x), whose held-out mean is {summary['error_scale']:.4g} (0 = perfect, that "
        "value = reconstructing every record by the origin)."
    )
    if "rf_accuracy" in downstream:
        report.add_paragraph(
            f"Downstream: a random forest ({s['trees']} trees) trained on the training codes "
            f"predicts the class {summary['target']!r} of the held-out records; accuracy = "
            "share of held-out records given their class."
        )
    elif downstream:
        report.add_paragraph(
            f"Downstream: a random forest ({s['trees']} trees) trained on the training codes "
            f"predicts {summary['target']!r} of the held-out records; "
            "NMSE = MSE / var(y_test) (1 = predicting the mean), R² = 1 - NMSE."
        )
    for path, caption in images:
        report.add_image(path, caption)
    report.add_heading("Files")
    report.add_files(files)
    report.add_paragraph(
        f"Wall time {summary['wall_seconds']:.1f} s on {summary['torch_threads']} torch thread(s)."
    )
    return report
