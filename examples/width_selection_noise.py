"""How well do leave-one-out and 5-fold scores of a Gaussian width predict its held-out error?

On each random 80/20 split of the shipped vector sets (the splits of
:mod:`lam_auto_vs_grid`), for every width of the grid ``WIDTH_FACTORS`` times the median
heuristic: the best closed-form leave-one-out score over ``lam_grid()`` (what
``KernelRidge(lam="auto", kernel_params="auto")`` compares) and the best 5-fold score over the
same grid (what the 5-fold grid search compares), each with the held-out RMSE of the model
refitted at that score's ``lam``.  Reported per set:

* the mean of each score and of the held-out MSE relative to the median-heuristic width;
* how often each criterion, and the held-out rows themselves (the oracle), pick each width,
  and the mean held-out RMSE of those picks;
* per split, the correlation over the splits between a criterion's relative difference
  ``score(width) / score(median) - 1`` and the held-out one: what a criterion's preference in
  one split says about the held-out rows of that split.

The training rows and the held-out rows are complementary parts of one fixed data set, so a
width that suits the training rows better than usual tends to suit the held-out rows worse
than usual: cross-validation estimates the error averaged over training sets, not the error of
the model at hand (Bates, Hastie and Tibshirani, "Cross-validation: what does it estimate and
how well does it do it?", JASA 119, 2024; Hastie, Tibshirani and Friedman, *The Elements of
Statistical Learning*, 2nd ed., section 7.12).  Writes ``results/width_selection_noise.json``.
Run: ``python examples/width_selection_noise.py`` (100 splits, seeds 0-99).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch
from scipy.spatial.distance import pdist

sys.path.insert(0, str(Path(__file__).parent))

from lam_auto_vs_grid import WIDTH_FACTORS, _splits
from model_selection import RESULTS, _datasets, _rmse

from kernelkit.estimators._ridge import KernelRidge
from kernelkit.kernels import Gaussian
from kernelkit.models._ridge_path import lam_grid

CRITERIA = {"loo": "loo", "5-fold": 5}
"""Label -> ``cv`` of :class:`KernelRidge`: closed-form leave-one-out, 5-fold ``KFold``."""


def _scores(Xtr, Xte, ytr, yte) -> dict[str, np.ndarray]:
    """Per criterion, ``(len(WIDTH_FACTORS), 2)``: best mean score (MSE) over ``lam_grid()`` and
    the held-out RMSE at that ``lam``, per width."""
    sigma0 = float(np.median(pdist(Xtr)))
    out = {label: np.empty((len(WIDTH_FACTORS), 2)) for label in CRITERIA}
    for i, factor in enumerate(WIDTH_FACTORS):
        for label, cv in CRITERIA.items():
            model = KernelRidge(Gaussian(sigma=factor * sigma0), lam=list(lam_grid()), cv=cv)
            model.fit(Xtr, ytr)
            score = float(-np.max(model.cv_results_["mean_test_score"]))
            out[label][i] = score, _rmse(model, Xte, yte)
    return out


def _corr(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.corrcoef(a, b)[0, 1])


def summarise(per_split: dict[str, np.ndarray]) -> dict:
    """Summary of ``per_split[label]`` of shape ``(splits, widths, 2)`` (module docstring)."""
    centre = WIDTH_FACTORS.index(1.0)
    rows = np.arange(next(iter(per_split.values())).shape[0])
    summary: dict = {"width_factors": list(WIDTH_FACTORS)}
    for label, arr in per_split.items():
        score, rmse = arr[..., 0], arr[..., 1]
        rel_score = score / score[:, [centre]] - 1
        rel_heldout = rmse**2 / rmse[:, [centre]] ** 2 - 1
        pick = score.argmin(1)
        summary[label] = {
            "mean_rel_score": rel_score.mean(0).tolist(),
            "mean_rel_heldout_mse": rel_heldout.mean(0).tolist(),
            "picks": np.bincount(pick, minlength=len(WIDTH_FACTORS)).tolist(),
            "oracle_picks": np.bincount(rmse.argmin(1), minlength=len(WIDTH_FACTORS)).tolist(),
            "rmse_of_picks": float(rmse[rows, pick].mean()),
            "rmse_at_median_width": float(rmse[:, centre].mean()),
            "rmse_of_oracle": float(rmse.min(1).mean()),
            "corr_rel_score_heldout": [
                _corr(rel_score[:, j], rel_heldout[:, j]) if j != centre else None
                for j in range(len(WIDTH_FACTORS))
            ],
        }
    return summary


def run(args: argparse.Namespace) -> dict:
    results: dict = {}
    for name, (X, y, is_gram) in _datasets(Path(args.data_dir)).items():
        if is_gram:
            continue
        per_split = {label: [] for label in CRITERIA}
        for _, Xtr, Xte, ytr, yte in _splits(X, y, is_gram, args.splits, args.first_seed):
            for label, arr in _scores(Xtr, Xte, ytr, yte).items():
                per_split[label].append(arr)
        arrays = {label: np.stack(v) for label, v in per_split.items()}
        results[name] = {
            **summarise(arrays),
            "per_split": {label: arr.tolist() for label, arr in arrays.items()},
        }
        print(name, json.dumps({k: v for k, v in results[name].items() if k != "per_split"}))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=str(Path(__file__).parents[2] / "shared" / "data"))
    parser.add_argument("--splits", type=int, default=100)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--out", default=str(RESULTS / "width_selection_noise.json"))
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    results = run(args)
    Path(args.out).write_text(json.dumps({"args": vars(args), "results": results}, indent=2))
    print(
        "| data | criterion | picks (1/4 .. 4) | oracle picks | RMSE of picks | "
        "RMSE at median width | corr. at 1/2 | corr. at 2 |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, r in results.items():
        for label in CRITERIA:
            s = r[label]
            corr = s["corr_rel_score_heldout"]
            print(
                f"| {name} | {label} | {s['picks']} | {s['oracle_picks']} | "
                f"{s['rmse_of_picks']:.4f} | {s['rmse_at_median_width']:.4f} | "
                f"{corr[1]:+.2f} | {corr[3]:+.2f} |"
            )


if __name__ == "__main__":
    main()
