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
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.model_selection import train_test_split

from kernelkit import KernelAutoencoder, KernelPCA
from kernelkit.cli.kernels import describe_kernel
from kernelkit.data.readers import DataFile
from kernelkit.kernels import Kernel, PrecomputedBatch
from kernelkit.report.document import Report
from kernelkit.utils.errors import InputError


@dataclass
class AutoencodeSettings:
    """Options of the job (the command-line flags of the same names)."""

    dims: list[int]
    lam: float = 1e-3
    max_iter: int = 50
    seed: int = 0
    test_size: float = 0.2
    trees: int = 100
    quiet: bool = False


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
    if data.kind == "gram":
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
    from kernelkit.utils.optional import require

    require("matplotlib", purpose="Writing the plots of the report")


def progress_bar(total: int, desc: str, quiet: bool) -> Any:
    """A tqdm bar on stderr, or ``None`` with ``--quiet`` or when stderr is not a terminal."""
    if quiet or not sys.stderr.isatty():
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, leave=False)


def _fit_autoencoder(
    kernel: Kernel, X: Any, d: int, settings: AutoencodeSettings
) -> KernelAutoencoder:
    bar = progress_bar(settings.max_iter, f"K2AE {d}-D", settings.quiet)

    def report(it: int, value: float) -> None:
        bar.n = min(it, settings.max_iter)
        bar.set_postfix(objective=f"{value:.4g}", refresh=False)
        bar.refresh()

    model = KernelAutoencoder(
        dims=(d,),
        input_kernel=kernel,
        lam=settings.lam,
        max_iter=settings.max_iter,
        random_state=settings.seed,
        verbose=report if bar is not None else 0,
    )
    try:
        model.fit(X)
    finally:
        if bar is not None:
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
    """Random forest on the codes: R² and NMSE (numeric target) or accuracy (classes)."""
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
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        extra = [target.name] if target is not None else []
        writer.writerow(["id", "split", *extra, *(f"code_{j + 1}" for j in range(codes.shape[1]))])
        for i, row in enumerate(codes):
            value = []
            if target is not None:
                v = target.values[i]
                value = [target.classes[int(v)] if target.classes else f"{v:.6g}"]
            writer.writerow([data.ids[i], split[i], *value, *(repr(float(x)) for x in row)])


def run_autoencode(
    data: DataFile,
    kernel: Kernel,
    target: Target | None,
    settings: AutoencodeSettings,
    folder: Path,
    *,
    title: str,
    command: str,
) -> dict[str, Any]:
    """Fit, compare and write every output into ``folder``; returns the results dictionary."""
    from kernelkit.io import save
    from kernelkit.report.plots import latent_panels, training_curves

    start = time.perf_counter()
    n = len(data)
    if n < 10:
        raise InputError(f"{data.path}: expected at least 10 records to split and fit, got {n}")
    tr, te = train_test_split(
        np.arange(n), test_size=settings.test_size, random_state=settings.seed
    )
    tr, te = np.sort(tr), np.sort(te)
    largest = max(settings.dims)
    if largest >= len(tr):
        raise InputError(
            f"--dims: expected code widths below the {len(tr)} training records, got {largest}"
        )
    split = np.where(np.isin(np.arange(n), tr), "train", "test")
    X_tr, X_te, X_all = subset(data, tr, tr), subset(data, te, tr), subset(data, np.arange(n), tr)
    rows, curves, panels, results = [], [], [], []
    files: list[tuple[str, str]] = []
    for d in settings.dims:
        t0 = time.perf_counter()
        ae = _fit_autoencoder(kernel, X_tr, d, settings)
        t_ae = time.perf_counter() - t0
        t0 = time.perf_counter()
        kpca = KernelPCA(kernel, n_components=d).fit(X_tr)
        t_kpca = time.perf_counter() - t0
        codes = {"K2AE": np.asarray(ae.transform(X_all)), "KPCA": np.asarray(kpca.transform(X_all))}
        errors = {
            "K2AE": float(np.mean(ae.reconstruction_error(X_te))),
            "KPCA": float(np.mean(kpca.reconstruction_error(X_te))),
        }
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
        save(ae, folder / model_file)
        files.append((model_file, f"the fitted {d}-D K2AE (kernelkit.io.load, kernelkit predict)"))
        curves.append((f"K2AE {d}-D", list(ae.history_)))
        if not panels and d >= 2:
            panels = [
                (f"K2AE ({d}-D code)", codes["K2AE"]),
                (f"kernel PCA ({d} components)", codes["KPCA"]),
            ]
        rows.append((ae, d))
    images = []
    if panels:
        latent = latent_panels(
            panels,
            None if target is None else target.values,
            folder / "latent_2d.png",
            colour_label=target.name if target is not None else "",
            categorical=target is not None and target.classes is not None,
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
        "command": command,
        "input": str(data.path),
        "kind": data.kind,
        "n_records": n,
        "n_train": len(tr),
        "n_test": len(te),
        "kernel": describe_kernel(kernel),
        "target": None if target is None else target.name,
        "settings": asdict(settings),
        "results": results,
        "iterations": {f"{d}d": int(ae.n_iter_) for ae, d in rows},
        "wall_seconds": elapsed,
        "torch_threads": torch.get_num_threads(),
    }
    (folder / "results.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    files.append(("results.json", "every number of this report, machine-readable"))
    _report(summary, images, files, title).write(folder)
    return summary


def _report(
    summary: dict[str, Any], images: list[tuple[str, str]], files: list[tuple[str, str]], title: str
) -> Report:
    report = Report(title)
    report.add_paragraph(
        f"Input {summary['input']} ({summary['n_records']} records of {summary['kind']}), kernel "
        f"{summary['kernel']}; random split into {summary['n_train']} training and "
        f"{summary['n_test']} held-out records (seed {summary['settings']['seed']}). "
        f"K2AE: 2 layers, Gaussian first layer on the kernel's feature space and Gaussian "
        f"last layer (median heuristic), lam = {summary['settings']['lam']:g}, at most "
        f"{summary['settings']['max_iter']} L-BFGS objective evaluations."
    )
    header = ["method", "code", "held-out reconstruction error (RKHS)"]
    downstream = [k for k in ("rf_r2", "rf_nmse", "rf_accuracy") if k in summary["results"][0]]
    names = {"rf_r2": "RF R²", "rf_nmse": "RF NMSE", "rf_accuracy": "RF accuracy"}
    header += [names[k] for k in downstream] + ["fit s"]
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
    if downstream:
        report.add_paragraph(
            f"Downstream: a random forest ({summary['settings']['trees']} trees) trained on the "
            f"training codes predicts {summary['target']!r} of the held-out records; "
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
