"""Does the default ``lam="auto"`` of the K2AE pay off on the shipped data, and at what cost.

Issue 14, items 2 and 4 (Laforgue, Clémençon, d'Alché-Buc 2019, objective (5); held-out
reconstruction error in the input kernel's RKHS, appendix B.7).  On four data sets shipped with
the project, at most 1000 points drawn with seed 0, one 80/20 split (seed 0), codes 2, 10, 50:

- ``esol`` (the copy in the package, 1128 molecules, log solubility) and ``solubility``
  (Huuskonen set, 1282 molecules, ``SOL``): Tanimoto kernel on Morgan fingerprints;
  downstream target the log solubility, scored by ``NMSE = MSE / var(y_test)``;
- ``yeast`` (2417 genes x 103 standardised features): Gaussian input kernel with the median
  heuristic on the training part; downstream target ``Class2`` (accuracy);
- ``amp`` (``AMPvsTMset``, 412 peptides): ``Spectrum(k=3)``; downstream target the AMP label.

Per data set and code size it fits, through ``Precomputed()`` rows of the Gram matrix,

- the K2AE with its defaults (``lam="auto"``, ``init="kpca"``): chosen ``lam``, fit time,
  held-out reconstruction, random forest on the codes;
- the K2AE with the fixed ``lam=1e-3`` (the former default): the same;
- ``KernelPCA`` with the same kernel: held-out reconstruction, random forest on its components.

Random forests: ``RandomForest{Regressor,Classifier}(n_estimators=100, max_features=1/3,
random_state=0)`` on the codes of the training part, scored on the test part.  Writes
``examples/results/kae_defaults.{json,md}``.

Run: ``KERNELKIT_SHARED_DATA=../shared/data PYTHONPATH=src python examples/kae_defaults.py``
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import torch
from kae_convergence import fit_timed  # examples/ is on sys.path when run as a script
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.model_selection import train_test_split

from kernelkit import KernelPCA
from kernelkit.data._datasets import load_amp
from kernelkit.data._molecule_datasets import load_esol, load_solubility
from kernelkit.estimators._autoencoder import KernelAutoencoder
from kernelkit.kernels import Gaussian, Precomputed, PrecomputedBatch, Spectrum, Tanimoto
from kernelkit.kernels._specs import median_sigma

RESULTS = Path(__file__).parent / "results"
DATA = Path(os.environ.get("KERNELKIT_SHARED_DATA", "../shared/data"))
CODES = (2, 10, 50)
N_MAX = 1000


def load(name: str) -> tuple[list[Any] | np.ndarray, np.ndarray, str]:
    """Inputs, target and task (``"regression"`` or ``"classification"``) of a data set."""
    if name == "esol":
        ds = load_esol()
        return ds.smiles, ds.target, "regression"
    if name == "solubility":
        ds = load_solubility(DATA, target="SOL")
        return ds.smiles, ds.target, "regression"
    if name == "yeast":
        a = np.loadtxt(DATA / "yeast" / "yeast.csv.gz", delimiter=",", skiprows=1)
        return a[:, :103], a[:, 104].astype(int), "classification"
    seq = load_amp(DATA, "AMPvsTMset")
    return list(seq.sequences), np.asarray(seq.y), "classification"


def gram_matrix(name: str, X: Any, tr: np.ndarray) -> np.ndarray:
    """Gram matrix of all points (for ``yeast`` after standardising with training statistics)."""
    if name in ("esol", "solubility"):
        kern = Tanimoto()
    elif name == "amp":
        kern = Spectrum(k=3)
    else:
        mu, sd = X[tr].mean(0), X[tr].std(0) + 1e-12
        X = (X - mu) / sd
        kern = Gaussian(sigma=median_sigma(torch.as_tensor(X[tr])))
    return kern(X).double().numpy()


def downstream(task: str, Z_tr: Any, y_tr: np.ndarray, Z_te: Any, y_te: np.ndarray) -> float:
    """NMSE (regression) or accuracy (classification) of a random forest on the codes."""
    Z_tr, Z_te = np.asarray(Z_tr), np.asarray(Z_te)
    if task == "regression":
        rf = RandomForestRegressor(n_estimators=100, max_features=1 / 3, random_state=0)
        pred = rf.fit(Z_tr, y_tr).predict(Z_te)
        return float(np.mean((pred - y_te) ** 2) / np.var(y_te))
    rf = RandomForestClassifier(n_estimators=100, max_features=1 / 3, random_state=0)
    return float(np.mean(rf.fit(Z_tr, y_tr).predict(Z_te) == y_te))


def run(name: str) -> list[dict[str, Any]]:
    X, y, task = load(name)
    n = len(y)
    rows = np.sort(np.random.default_rng(0).permutation(n)[: min(n, N_MAX)])
    X = X[rows] if isinstance(X, np.ndarray) else [X[i] for i in rows]
    y = y[rows]
    tr, te = train_test_split(np.arange(len(y)), test_size=0.2, random_state=0)
    K = gram_matrix(name, X, tr)
    K_tr = K[np.ix_(tr, tr)]
    K_te = PrecomputedBatch(
        torch.as_tensor(K[np.ix_(te, tr)]), diag=torch.as_tensor(K.diagonal()[te])
    )
    out = []
    for p in CODES:
        row: dict[str, Any] = {"data": name, "n_train": len(tr), "code": p, "task": task}
        for label, params in (("auto", {}), ("fixed", {"lam": 1e-3})):
            model, secs, warned = fit_timed(
                KernelAutoencoder(dims=(p,), input_kernel=Precomputed(), random_state=0, **params),
                K_tr,
            )
            row[label] = {
                "lam": model.lam_,
                "curve": model.lam_curve_,
                "seconds": secs,
                "converged": model.stopped_ == "converged" and not warned,
                "n_iter": model.n_iter_,
                "objective": model.objective_,
                "held_out": float(np.mean(np.asarray(model.reconstruction_error(K_te)))),
                "downstream": downstream(task, model.codes_, y[tr], model.transform(K_te), y[te]),
            }
        kpca = KernelPCA(Precomputed(), n_components=p).fit(K_tr)
        row["kpca"] = {
            "held_out": float(np.mean(np.asarray(kpca.reconstruction_error(K_te)))),
            "downstream": downstream(
                task, kpca.transform(K_tr), y[tr], kpca.transform(K_te), y[te]
            ),
        }
        print(json.dumps(row), flush=True)
        out.append(row)
    return out


def table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| data (n train) | code | held-out: auto (lam) / lam=1e-3 / KPCA | downstream: auto / "
        "lam=1e-3 / KPCA | fit s: auto / lam=1e-3 (ratio) | converged: auto / lam=1e-3 |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        a, f, k = r["auto"], r["fixed"], r["kpca"]
        unit = "NMSE" if r["task"] == "regression" else "acc"
        lines.append(
            f"| {r['data']} ({r['n_train']}) | {r['code']} | {a['held_out']:.4f} ({a['lam']:g}) / "
            f"{f['held_out']:.4f} / {k['held_out']:.4f} | {unit} {a['downstream']:.3f} / "
            f"{f['downstream']:.3f} / {k['downstream']:.3f} | {a['seconds']:.0f} / "
            f"{f['seconds']:.0f} ({a['seconds'] / f['seconds']:.2f}) | "
            f"{'yes' if a['converged'] else 'no'} / {'yes' if f['converged'] else 'no'} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    torch.set_num_threads(1)
    rows = []
    for name in ("esol", "solubility", "yeast", "amp"):
        rows.extend(run(name))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "kae_defaults.json").write_text(json.dumps(rows, indent=2) + "\n")
    (RESULTS / "kae_defaults.md").write_text(table(rows))
    print(table(rows))


if __name__ == "__main__":
    main()
