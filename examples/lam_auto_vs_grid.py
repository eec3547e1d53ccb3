"""``KernelRidge(lam="auto")`` against a 5-fold grid search over the same grid, 20 splits.

Per data set of :mod:`model_selection` (same data, kernels and standardisation) and random
80/20 split (``--splits`` seeds, the permutations of ``model_selection.py``): the held-out
root mean squared error of

* ``auto``: ``KernelRidge(kernel, lam="auto")`` (closed-form leave-one-out over
  ``lam_grid()``, groups of identical inputs left out together, then a zoom in ``log lam``);
* ``grid5``: ``KernelRidge(kernel, lam=list(lam_grid()), cv=5)``: the 5-fold ``KFold`` refits
  of every grid value (one eigendecomposition per fold), whose fold scores equal
  ``GridSearchCV(KernelRidge(kernel), {"lam": lam_grid()}, cv=5)``'s (tested to 1e-8 in
  ``tests/estimators/test_ridge_selection.py``), then the refit at the best value;
  ``--check-gridsearch K`` runs the real ``GridSearchCV`` on the first ``K`` splits and
  asserts it picks the same ``lam``.

The splits are paired (both models see the same rows), so next to the mean RMSEs the
example reports the mean relative difference ``(auto - grid5) / grid5`` over the splits with
its standard error and the splits each model wins (:func:`paired_summary`), and the fit
seconds of both.  Prints one JSON line per set and a table, and writes
``results/lam_auto_vs_grid.json``.  Run: ``python examples/lam_auto_vs_grid.py``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch
from scipy.spatial.distance import pdist
from scipy.stats import t as t_dist
from sklearn.model_selection import GridSearchCV

sys.path.insert(0, str(Path(__file__).parent))

from model_selection import RESULTS, _datasets, _rmse, _split

from kernelkit.estimators._ridge import KernelRidge
from kernelkit.kernels import Gaussian
from kernelkit.models._ridge_path import lam_grid

MARGIN = 0.005
"""Non-inferiority margin of :func:`paired_summary`: 0.5% of the grid search's RMSE (the
tolerance on test error of issue 27's table)."""


def _timed(model: KernelRidge, X: np.ndarray, y: np.ndarray) -> tuple[KernelRidge, float]:
    start = time.perf_counter()
    model.fit(X, y)
    return model, time.perf_counter() - start


def paired_summary(auto: np.ndarray, grid: np.ndarray, margin: float = MARGIN) -> dict:
    """Mean relative difference of the held-out RMSE, ``(auto - grid) / grid`` per split, with
    its standard error over the splits (the splits are paired: both models see the same
    training and test rows), the t statistic, and the non-inferiority test at ``margin``: the
    one-sided 95% upper confidence bound ``mean + t_{0.95, k-1} se`` of the difference below
    ``margin`` (Wellek, *Testing Statistical Hypotheses of Equivalence and Noninferiority*,
    2nd ed., 2010, chapter 2; the 20 splits share training rows, so the bound is optimistic:
    Nadeau and Bengio, "Inference for the generalization error", Machine Learning 52, 2003)."""
    rel = (auto - grid) / grid
    k = len(rel)
    se = float(rel.std(ddof=1) / np.sqrt(k)) if k > 1 else float("nan")
    mean = float(rel.mean())
    upper = mean + float(t_dist.ppf(0.95, k - 1)) * se if k > 1 else float("nan")
    return {
        "rel_diff": mean,
        "rel_diff_se": se,
        "t": mean / se if se > 0 else float("nan"),
        "upper_95": upper,
        "non_inferior": bool(upper < margin),
        "auto_lower_on_splits": int((auto < grid).sum()),
        "grid_lower_on_splits": int((grid < auto).sum()),
    }


def _splits(X: np.ndarray, y: np.ndarray, is_gram: bool, splits: int, first_seed: int = 0):
    """``(seed, X_train, X_test, y_train, y_test)`` of the 80/20 splits of ``model_selection``
    (seeded permutations, seeds ``first_seed`` to ``first_seed + splits - 1``)."""
    n = len(y)
    for seed in range(first_seed, first_seed + splits):
        perm = np.random.default_rng(seed).permutation(n)
        tr, te = perm[: int(0.8 * n)], perm[int(0.8 * n) :]
        Xtr, Xte = _split(X, is_gram, tr, te)
        yield seed, Xtr, Xte, y[tr], y[te]


def _summary(rows: dict[str, list[dict]], auto: str, grid: str) -> dict:
    """Per model: mean RMSE, per-split RMSEs, the chosen hyper-parameters per split and the
    summed fit seconds; then the comparison of ``auto`` with ``grid`` (:func:`paired_summary`)."""
    out: dict = {
        label: {
            "rmse": float(np.mean([r["rmse"] for r in rs])),
            "rmse_per_split": [r["rmse"] for r in rs],
            **{key: [r[key] for r in rs] for key in rs[0] if key not in ("rmse", "s")},
            "seconds": float(np.sum([r["s"] for r in rs])),
        }
        for label, rs in rows.items()
    }
    a, g = (np.array(out[label]["rmse_per_split"]) for label in (auto, grid))
    out["auto_no_worse"] = bool(a.mean() <= g.mean())
    out["paired"] = paired_summary(a, g)
    return out


def run(args: argparse.Namespace) -> dict:
    results: dict = {}
    for name, (X, y, is_gram) in _datasets(Path(args.data_dir)).items():
        kernel = "precomputed" if is_gram else None
        rows: dict[str, list] = {"auto": [], "grid5": []}
        for seed, Xtr, Xte, ytr, yte in _splits(X, y, is_gram, args.splits, args.first_seed):
            auto, auto_s = _timed(KernelRidge(kernel, lam="auto"), Xtr, ytr)
            grid, grid_s = _timed(KernelRidge(kernel, lam=list(lam_grid()), cv=5), Xtr, ytr)
            if seed - args.first_seed < args.check_gridsearch:
                search = GridSearchCV(
                    KernelRidge(kernel),
                    {"lam": list(lam_grid())},
                    cv=5,
                    scoring="neg_mean_squared_error",
                ).fit(Xtr, ytr)
                assert search.best_params_["lam"] == grid.lam_, (name, seed)
            for label, model, seconds in (("auto", auto, auto_s), ("grid5", grid, grid_s)):
                rows[label].append(
                    {"rmse": _rmse(model, Xte, yte), "lam": float(model.lam_), "s": seconds}
                )
        groups = getattr(auto, "loo_groups_", None)
        results[name] = {
            "n": len(y),
            "distinct_train_inputs_last_split": None if groups is None else len(set(groups)),
            **_summary(rows, "auto", "grid5"),
        }
        print(name, json.dumps(results[name]["paired"]), flush=True)
    return results


WIDTH_FACTORS = (0.25, 0.5, 1.0, 2.0, 4.0)
"""Gaussian widths of the ``--width`` grid search, as multiples of the median heuristic."""


def _width_grid_search(Xtr: np.ndarray, ytr: np.ndarray) -> KernelRidge:
    """5-fold search over ``WIDTH_FACTORS x lam_grid()``: per width, the closed-form 5-fold
    path over ``lam_grid()`` (fold scores equal to ``GridSearchCV``'s), then the width and
    ``lam`` of the best mean fold score, refitted on all the rows (``GridSearchCV``'s rule
    over the product grid)."""
    sigma0 = float(np.median(pdist(Xtr)))  # the median heuristic, kernel=None's width
    best, best_score = None, -np.inf
    for factor in WIDTH_FACTORS:
        model = KernelRidge(Gaussian(sigma=factor * sigma0), lam=list(lam_grid()), cv=5)
        model.fit(Xtr, ytr)
        score = float(np.max(model.cv_results_["mean_test_score"]))
        if score > best_score:
            best, best_score = model, score
    assert best is not None
    return best


def run_width(args: argparse.Namespace) -> dict:
    """``KernelRidge(lam="auto", kernel_params="auto")`` (the coordinate search over the
    Gaussian width from the median heuristic, each width scored by its best LOO over the
    ``lam`` grid) against the 5-fold search over widths and ``lam``
    (:func:`_width_grid_search`), on the vector sets, same splits."""
    results: dict = {}
    for name, (X, y, is_gram) in _datasets(Path(args.data_dir)).items():
        if is_gram:
            continue
        rows: dict[str, list] = {"auto+width": [], "grid5+width": []}
        for _, Xtr, Xte, ytr, yte in _splits(X, y, is_gram, args.splits, args.first_seed):
            auto, auto_s = _timed(KernelRidge(lam="auto", kernel_params="auto"), Xtr, ytr)
            start = time.perf_counter()
            grid = _width_grid_search(Xtr, ytr)
            grid_s = time.perf_counter() - start
            for label, model, seconds in (
                ("auto+width", auto, auto_s),
                ("grid5+width", grid, grid_s),
            ):
                rows[label].append(
                    {
                        "rmse": _rmse(model, Xte, yte),
                        "lam": float(model.lam_),
                        "sigma": float(model.kernel_.sigma),
                        "s": seconds,
                    }
                )
        results[name] = _summary(rows, "auto+width", "grid5+width")
        print(name, json.dumps(results[name]["paired"]), flush=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(Path(__file__).parents[2] / "shared" / "data"))
    parser.add_argument("--splits", type=int, default=20)
    parser.add_argument(
        "--first-seed", type=int, default=0, help="seed of the first split (splits held apart)"
    )
    parser.add_argument("--check-gridsearch", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--width",
        action="store_true",
        help="tune the Gaussian width too (vector sets; results/lam_auto_vs_grid_width.json)",
    )
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    stem = "lam_auto_vs_grid_width" if args.width else "lam_auto_vs_grid"
    args.out = args.out or str(RESULTS / f"{stem}.json")
    results = run_width(args) if args.width else run(args)
    Path(args.out).parent.mkdir(exist_ok=True)
    Path(args.out).write_text(json.dumps({"args": vars(args), "results": results}, indent=2))
    print(
        "| data | auto | grid5 | auto vs grid5 (paired SE) | 95% upper bound | no worse | "
        "non-inferior (0.5%) | s auto | s grid5 |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    auto, grid = ("auto+width", "grid5+width") if args.width else ("auto", "grid5")
    for name, r in results.items():
        pair = r["paired"]
        print(
            f"| {name} | {r[auto]['rmse']:.5f} | {r[grid]['rmse']:.5f} | "
            f"{100 * pair['rel_diff']:+.3f}% ({100 * pair['rel_diff_se']:.3f}%) | "
            f"{100 * pair['upper_95']:+.3f}% | {'yes' if r['auto_no_worse'] else 'no'} | "
            f"{'yes' if pair['non_inferior'] else 'no'} | {r[auto]['seconds']:.1f} | "
            f"{r[grid]['seconds']:.1f} |"
        )


if __name__ == "__main__":
    main()
