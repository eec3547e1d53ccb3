"""Closed-form model selection and conformal intervals of KernelRidge on the shipped data.

Per data set and random 80/20 split (``--splits`` seeds; held-out root mean squared error):

* ``default``: ``KernelRidge(kernel, lam=1e-3)``, the former default ``lam`` (now ``"auto"``);
* ``auto``: ``KernelRidge(kernel, lam="auto")``: closed-form LOO over the 21-value grid
  ``lam_grid()`` (1e-9 .. 10) from one eigendecomposition, then L-BFGS on ``log lam``;
* ``auto+width`` (vector sets): also ``kernel_params="auto"`` (the Gaussian width by a
  coordinate search, the median heuristic times 1/4 .. 4, each scored by its best LOO over
  the grid);
* ``grid5``: ``GridSearchCV(KernelRidge(kernel), {"lam": lam_grid()}, cv=5)``, the same grid,
  on the first ``--grid-splits`` splits (what a user would run instead);
* jackknife+ and split-conformal 90% intervals of the ``auto`` model: coverage of the held-out
  points and mean width, averaged over all splits.

Data (``--data-dir``, default ``../shared/data``): ESOL and the Huuskonen solubility set as
Morgan/Tanimoto Grams (radius 2, 2048 bits) and ESOL's SMILES as strings (normalised
3-spectrum), both as precomputed Grams (the fastest route for the grid search too); ESOL's six
descriptors and scikit-learn's diabetes set standardised, Gaussian kernel with the median
heuristic.  Writes ``results/model_selection.{json,md}``.  Timings on a shared machine are
noisy.  Run: ``python examples/model_selection.py``.
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from pathlib import Path

import numpy as np
import torch
from sklearn.datasets import load_diabetes
from sklearn.model_selection import GridSearchCV

from kernelkit.data._molecule_datasets import load_esol, load_solubility
from kernelkit.estimators._ridge import KernelRidge
from kernelkit.kernels import Spectrum, Tanimoto
from kernelkit.models._ridge_path import lam_grid

RESULTS = Path(__file__).parent / "results"


def _datasets(data_dir: Path) -> dict[str, tuple[np.ndarray, np.ndarray, bool]]:
    """name -> (X or Gram, y, is_gram)."""
    esol = load_esol(data_dir)
    sol = load_solubility(data_dir, target="SOL")
    out = {
        "esol_tanimoto": (Tanimoto()(esol.smiles).numpy(), esol.target, True),
        "solubility_tanimoto": (Tanimoto()(sol.smiles).numpy(), sol.target, True),
        "esol_smiles_spectrum": (
            Spectrum(k=3).normalized()(esol.smiles).numpy(),
            esol.target,
            True,
        ),
    }
    with (data_dir / "esol" / "ESOL.csv").open() as fh:
        rows = list(csv.reader(fh))[1:]
    desc = np.array([[float(v) for v in r[2:8]] for r in rows])
    out["esol_descriptors"] = (desc, esol.target, False)
    X, y = load_diabetes(return_X_y=True)
    out["diabetes"] = (X, y, False)
    return out


def _split(X: np.ndarray, is_gram: bool, tr: np.ndarray, te: np.ndarray):
    if is_gram:
        return X[np.ix_(tr, tr)], X[np.ix_(te, tr)]
    mu, sd = X[tr].mean(0), X[tr].std(0)
    sd[sd == 0] = 1.0
    return (X[tr] - mu) / sd, (X[te] - mu) / sd


def _rmse(model, Xte, yte) -> float:
    return float(np.sqrt(np.mean((model.predict(Xte) - yte) ** 2)))


def _timed_fit(model, X, y):
    start = time.perf_counter()
    model.fit(X, y)
    return model, time.perf_counter() - start


def run(args: argparse.Namespace) -> dict:
    results: dict = {}
    for name, (X, y, is_gram) in _datasets(Path(args.data_dir)).items():
        kernel = "precomputed" if is_gram else None
        rows: dict[str, list] = {}
        n = len(y)
        for seed in range(args.splits):
            perm = np.random.default_rng(seed).permutation(n)
            tr, te = perm[: int(0.8 * n)], perm[int(0.8 * n) :]
            Xtr, Xte = _split(X, is_gram, tr, te)
            models = {
                "default": KernelRidge(kernel, lam=1e-3),
                "auto": KernelRidge(kernel, lam="auto", random_state=seed),
            }
            if not is_gram:
                models["auto+width"] = KernelRidge(kernel, lam="auto", kernel_params="auto")
            if seed < args.grid_splits:
                models["grid5"] = GridSearchCV(
                    KernelRidge(kernel),
                    {"lam": list(lam_grid())},
                    cv=5,
                    scoring="neg_mean_squared_error",
                )
            for label, model in models.items():
                if label != "auto" and seed >= args.grid_splits:
                    continue
                fitted, seconds = _timed_fit(model, Xtr, y[tr])
                lam = getattr(fitted, "lam_", None) or getattr(fitted, "best_params_", {}).get(
                    "lam", 1e-3
                )
                rows.setdefault(label, []).append(
                    {"rmse": _rmse(fitted, Xte, y[te]), "seconds": seconds, "lam": float(lam)}
                )
                if label == "auto":
                    for method in ("jackknife+", "split"):
                        iv = fitted.predict_interval(Xte, alpha=0.1, method=method)
                        inside = (iv[:, 0] <= y[te]) & (y[te] <= iv[:, 1])
                        rows.setdefault(method, []).append(
                            {
                                "coverage": float(inside.mean()),
                                "width": float(np.mean(iv[:, 1] - iv[:, 0])),
                            }
                        )
        results[name] = {
            "n": n,
            **{
                label: {k: float(np.mean([r[k] for r in rs])) for k in rs[0]} | {"runs": len(rs)}
                for label, rs in rows.items()
            },
            "auto_on_grid_splits": {
                k: float(np.mean([r[k] for r in rows["auto"][: args.grid_splits]]))
                for k in ("rmse", "seconds")
            },
            "per_split": rows,
        }
        print(name, json.dumps(results[name]), flush=True)
    return results


def markdown(results: dict) -> str:
    lines = [
        "| data | n | RMSE default | RMSE auto | RMSE auto+width | RMSE grid5 | s auto | "
        "s auto+width | s grid5 | jackknife+ cover / width | split cover / width |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        "| (first --grid-splits splits, except the intervals: all splits) |||||||||||",
    ]
    for name, full in results.items():
        r = {**full, "auto": full["auto_on_grid_splits"]}

        def cell(label: str, key: str, r: dict = r) -> str:
            return f"{r[label][key]:.3f}" if label in r else "-"

        jk, sp = r["jackknife+"], r["split"]
        lines.append(
            f"| {name} | {r['n']} | {cell('default', 'rmse')} | {cell('auto', 'rmse')} | "
            f"{cell('auto+width', 'rmse')} | {cell('grid5', 'rmse')} | "
            f"{cell('auto', 'seconds')} | {cell('auto+width', 'seconds')} | "
            f"{cell('grid5', 'seconds')} | {jk['coverage']:.3f} / {jk['width']:.3f} | "
            f"{sp['coverage']:.3f} / {sp['width']:.3f} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(Path(__file__).parents[2] / "shared" / "data"))
    parser.add_argument("--splits", type=int, default=20)
    parser.add_argument("--grid-splits", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    results = run(args)
    RESULTS.mkdir(exist_ok=True)
    payload = {"args": vars(args), "results": results}
    (RESULTS / "model_selection.json").write_text(json.dumps(payload, indent=2))
    (RESULTS / "model_selection.md").write_text(markdown(results))
    print(markdown(results))


if __name__ == "__main__":
    main()
