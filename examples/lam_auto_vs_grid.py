"""``KernelRidge(lam="auto")`` against a 5-fold grid search over the same grid, 20 splits.

Per data set of :mod:`model_selection` (same data, kernels and standardisation) and random
80/20 split (``--splits`` seeds, the permutations of ``model_selection.py``): the held-out
root mean squared error of

* ``auto``: ``KernelRidge(kernel, lam="auto")`` (closed-form leave-one-out over
  ``AUTO_GRID``, groups of identical inputs left out together, then L-BFGS on ``log lam``);
* ``grid5``: ``KernelRidge(kernel, lam=list(AUTO_GRID), cv=5)``: the 5-fold ``KFold`` refits
  of every grid value (one eigendecomposition per fold), whose fold scores equal
  ``GridSearchCV(KernelRidge(kernel), {"lam": AUTO_GRID}, cv=5)``'s (tested to 1e-8 in
  ``tests/estimators/test_ridge_selection.py``), then the refit at the best value;
  ``--check-gridsearch K`` runs the real ``GridSearchCV`` on the first ``K`` splits and
  asserts it picks the same ``lam``.

Prints one JSON line per set (mean RMSE over the splits, per-split ``lam``) and writes
``results/lam_auto_vs_grid.json``.  Run: ``python examples/lam_auto_vs_grid.py``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch
from sklearn.model_selection import GridSearchCV

sys.path.insert(0, str(Path(__file__).parent))

from model_selection import RESULTS, _datasets, _rmse, _split

from kernelkit.estimators._ridge_selection import AUTO_GRID
from kernelkit.estimators.ridge import KernelRidge


def run(args: argparse.Namespace) -> dict:
    results: dict = {}
    for name, (X, y, is_gram) in _datasets(Path(args.data_dir)).items():
        kernel = "precomputed" if is_gram else None
        n = len(y)
        rows: dict[str, list] = {"auto": [], "grid5": []}
        for seed in range(args.splits):
            perm = np.random.default_rng(seed).permutation(n)
            tr, te = perm[: int(0.8 * n)], perm[int(0.8 * n) :]
            Xtr, Xte = _split(X, is_gram, tr, te)
            auto = KernelRidge(kernel, lam="auto").fit(Xtr, y[tr])
            grid = KernelRidge(kernel, lam=list(AUTO_GRID), cv=5).fit(Xtr, y[tr])
            if seed < args.check_gridsearch:
                search = GridSearchCV(
                    KernelRidge(kernel),
                    {"lam": list(AUTO_GRID)},
                    cv=5,
                    scoring="neg_mean_squared_error",
                ).fit(Xtr, y[tr])
                assert search.best_params_["lam"] == grid.lam_, (name, seed)
            for label, model in (("auto", auto), ("grid5", grid)):
                rows[label].append({"rmse": _rmse(model, Xte, y[te]), "lam": float(model.lam_)})
        groups = getattr(auto, "loo_groups_", None)
        results[name] = {
            "n": n,
            "distinct_train_inputs_last_split": None if groups is None else len(set(groups)),
            **{
                label: {
                    "rmse": float(np.mean([r["rmse"] for r in rs])),
                    "lam": [r["lam"] for r in rs],
                }
                for label, rs in rows.items()
            },
        }
        a, g = results[name]["auto"]["rmse"], results[name]["grid5"]["rmse"]
        results[name]["auto_no_worse"] = bool(a <= g)
        print(name, json.dumps(results[name]), flush=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(Path(__file__).parents[2] / "shared" / "data"))
    parser.add_argument("--splits", type=int, default=20)
    parser.add_argument("--check-gridsearch", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default=str(RESULTS / "lam_auto_vs_grid.json"))
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    results = run(args)
    Path(args.out).parent.mkdir(exist_ok=True)
    Path(args.out).write_text(json.dumps({"args": vars(args), "results": results}, indent=2))
    for name, r in results.items():
        print(
            f"| {name} | {r['auto']['rmse']:.5f} | {r['grid5']['rmse']:.5f} | "
            f"{'yes' if r['auto_no_worse'] else 'no'} |"
        )


if __name__ == "__main__":
    main()
