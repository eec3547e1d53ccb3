"""Is the weighted-degree kernel's gap to the spectrum kernel on the promoters a fold artefact?

``examples/strings_weighted_degree.py`` runs the docs' nested CV once (outer folds shuffled
with ``random_state=0``, inner with ``1``): the spectrum kernel makes 3 errors on the 106
E. coli promoters, the weighted-degree (WD) kernel 5.  Two errors are within the exact
binomial interval of one run, so this script asks whether the gap survives a reshuffle: it
repeats the same nested CV (10 stratified outer folds, a 3-fold inner ``GridSearchCV`` over
``C in {0.1, 1, 10}`` and the kernel's grid) with outer seed ``s`` and inner seed ``s + 1``
for ``s = 0 .. R - 1`` (seed 0 is the docs' run), on the same Grams, for these rows:

* spectrum, ``k in {2, 3, 4, 5}``, normalised (the docs' row, the best existing string kernel);
* WD (Rätsch & Sonnenburg 2004), ``d in {2, 3, 4, 6}``, normalised (the docs' small grid);
* WD with shifts (Rätsch, Sonnenburg & Schölkopf 2005, eq. 2), the same ``d`` with
  ``S in {0, 1, 2}`` (a small grid; the docs' per-setting map shows larger shifts lower the
  accuracy, so this grid favours the shifted kernel if anything);
* the sum of the normalised WD with shifts and spectrum kernels (ARTS's combination), the
  docs' grid ``d in {2, 3, 4, 6, 8, 10}``, ``S in {0, 1, 2, 4, 8}``, ``k in {3, 4, 5, 6}``.

Reported per row: the errors per seed, their mean and standard deviation, and the paired
difference to the spectrum row (mean and standard error over the seeds; the seeds share the
106 sequences, so this measures the sensitivity to the folds, not to new data).

Run: ``python examples/strings_weighted_degree_repeated.py`` (23 minutes on a shared 2-core machine;
``--repeats 3`` for a smoke test).  Writes
``examples/results/strings_weighted_degree_repeated.json``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch
from strings_svm import DEFAULT_DATA
from strings_weighted_degree import add_sums, build_bank, nested_cv

from kernelkit.data._datasets import load_promoter

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "strings_weighted_degree_repeated.json"
DEGREES, SHIFTS, KS = [2, 3, 4, 6], [0, 1, 2], [2, 3, 4, 5]
SUM_GRID = ([2, 3, 4, 6, 8, 10], [0, 1, 2, 4, 8], [3, 4, 5, 6])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="shared data folder")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="JSON results file")
    parser.add_argument("--repeats", type=int, default=20, help="outer seeds 0..R-1 (default 20)")
    args = parser.parse_args(argv)
    if args.repeats < 2:
        parser.error(f"--repeats: expected at least 2 seeds (a spread), got {args.repeats}")
    torch.set_num_threads(1)
    data = load_promoter(args.data)
    seqs, y = list(data.sequences), np.asarray(data.y)
    start = time.perf_counter()
    degrees, shifts, ks = (
        sorted(set(own) | set(summed))
        for own, summed in zip((DEGREES, SHIFTS, KS), SUM_GRID, strict=True)
    )
    bank = build_bank(seqs, degrees, shifts, ks)
    rows = {
        "spectrum, k in {2,3,4,5}, normalised": [f"spectrum k={k}, normalised" for k in KS],
        "weighted degree, d in {2,3,4,6}, normalised": [
            f"wd d={d} S=0, normalised" for d in DEGREES
        ],
        "WD with shifts, d in {2,3,4,6}, S in {0,1,2}, normalised": [
            f"wd d={d} S={S}, normalised" for d in DEGREES for S in SHIFTS
        ],
        "WD with shifts + spectrum (normalised, summed), docs' grid": add_sums(bank, *SUM_GRID),
    }
    errors: dict[str, list[int]] = {label: [] for label in rows}
    for seed in range(args.repeats):
        for label, grams in rows.items():
            pred = nested_cv(bank, grams, y, 10, outer_seed=seed, inner_seed=seed + 1)["pred"]
            errors[label].append(int((pred != y).sum()))
        print(f"seed {seed}: " + ", ".join(f"{e[-1]}" for e in errors.values()), flush=True)
    reference = np.asarray(errors[next(iter(rows))])
    summary = []
    for label, errs in errors.items():
        e = np.asarray(errs)
        diff = e - reference
        summary.append(
            {
                "kernel": label,
                "errors_per_seed": errs,
                "mean_errors": float(e.mean()),
                "sd_errors": float(e.std(ddof=1)),
                "mean_accuracy": float(1 - e.mean() / len(y)),
                "minus_spectrum_mean": float(diff.mean()),
                "minus_spectrum_se": float(diff.std(ddof=1) / np.sqrt(len(diff))),
                "seeds_not_worse_than_spectrum": int((diff <= 0).sum()),
            }
        )
        print(
            f"{label:<62} errors {e.mean():.2f} +- {e.std(ddof=1):.2f}  "
            f"minus spectrum {diff.mean():+.2f} +- {summary[-1]['minus_spectrum_se']:.2f}"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    result = {
        "dataset": "promoter",
        "n": len(y),
        "outer_folds": 10,
        "seeds": list(range(args.repeats)),
        "seconds": time.perf_counter() - start,
        "rows": summary,
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
