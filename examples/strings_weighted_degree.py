"""Weighted-degree kernels on the E. coli promoters, under the string-kernel comparison's CV.

The position-aware weighted-degree (WD) kernel (Rätsch & Sonnenburg 2004,
``beta_k = 2 (d - k + 1) / (d (d + 1))``) and the WD kernel with shifts (Rätsch, Sonnenburg &
Schölkopf 2005, eq. 2, ``delta_s = 1 / (2 (s + 1))``), with ``KernelSVC``, under the nested
cross-validation of ``examples/strings_svm.py``: a 10-fold stratified outer loop (shuffled,
``random_state=0``) and, in each training fold, ``GridSearchCV`` with a 3-fold stratified
inner split (``random_state=1``) over ``C in {0.1, 1, 10}`` and every kernel hyperparameter
(degree, shift, and whether the kernel is normalised, ``k(x, y) / sqrt(k(x, x) k(y, y))``).

Every kernel here is a fixed function of a pair of sequences (nothing is fitted, and the
normalisation is per pair), so each Gram is computed once on all 106 sequences and
``GridSearchCV`` selects among the Grams through :class:`GramBankSVC`, which slices them per
fold: the same folds, the same inner search and the same tie-breaking (the first best in the
grid order, ``C`` slowest) as ``GridSearchCV(KernelSVC(kernel), ...)`` on the raw strings.
The run checks this: the docs' spectrum row is rerun on the strings and must give the same
fold scores.

Rows: the docs' spectrum grid (``k in {2,3,4,5}``, normalised; the best existing string
kernel, 0.970) and a small WD grid (``d in {2,3,4,6}``); the widened grids (WD:
``d in 1..20``, shifts ``S in 0..15``; spectrum, for a like-for-like comparison:
``k in 1..10``); and the sum of the
normalised WD-with-shifts and spectrum kernels, the combination Sonnenburg, Zien & Rätsch
(2006, ARTS) use for promoters.  Beside the accuracies: the exact (Clopper-Pearson) 95%
interval of each accuracy over the 106 sequences, and McNemar's exact test of each row's
out-of-fold predictions against the docs' spectrum row.  ``per_setting`` holds the nested-CV
accuracy of every fixed (degree, shift) of the normalised WD kernel with only ``C`` searched
(a map of the landscape; choosing the best cell of it would be tuning on the outer folds).

Run: ``python examples/strings_weighted_degree.py`` (about 40 minutes on 2 busy cores;
``--quick``: 3 outer folds and small grids, nothing written).
Writes ``examples/results/strings_weighted_degree.json``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch
from scipy.stats import binomtest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_validate
from strings_svm import C_GRID, DEFAULT_DATA, run_strings

from kernelkit import KernelSVC
from kernelkit.data._datasets import load_promoter
from kernelkit.gram import gram
from kernelkit.kernels import Precomputed, Spectrum, WeightedDegree

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "strings_weighted_degree.json"


class GramBank(dict):
    """Read-only Gram matrices by label; shared, not copied, when scikit-learn clones."""

    def __deepcopy__(self, memo: dict) -> GramBank:
        return self


class GramBankSVC(ClassifierMixin, BaseEstimator):
    """``KernelSVC(kernel=Precomputed())`` on the Gram ``bank[gram]``; ``X`` holds row indices.

    ``fit(X, y)`` trains on ``bank[gram][X, X]``, ``predict(X)`` uses ``bank[gram][X, X_fit]``,
    so a grid over ``gram`` searches kernels without recomputing them per fold.
    """

    def __init__(self, bank: GramBank | None = None, gram: str | None = None, C: float = 1.0):
        self.bank = bank
        self.gram = gram
        self.C = C

    def fit(self, X: np.ndarray, y: np.ndarray) -> GramBankSVC:
        self.index_ = np.asarray(X).ravel()
        K = self.bank[self.gram][np.ix_(self.index_, self.index_)]
        self.svc_ = KernelSVC(kernel=Precomputed(), C=self.C).fit(K, y)
        self.classes_ = self.svc_.classes_
        return self

    def predict(self, X: np.ndarray) -> np.ndarray:
        return self.svc_.predict(self.bank[self.gram][np.ix_(np.asarray(X).ravel(), self.index_)])


def normalized_gram(K: np.ndarray) -> np.ndarray:
    """``K[i, j] / sqrt(K[i, i] K[j, j])``, the Gram of the normalised kernel."""
    d = np.sqrt(np.diag(K))
    return K / np.outer(d, d)


def build_bank(seqs: list[str], degrees, shifts, ks) -> GramBank:
    """Raw and normalised Grams of WD(d, S) and of the k-spectrum on all sequences."""
    bank = GramBank()
    raw = {f"spectrum k={k}": Spectrum(k, alphabet="dna") for k in ks}
    raw |= {
        f"wd d={d} S={S}": WeightedDegree(d, shift=S, alphabet="dna")
        for d in degrees
        for S in shifts
    }
    for label, kernel in raw.items():
        K = np.asarray(gram(kernel, seqs))
        bank[label] = K
        bank[label + ", normalised"] = normalized_gram(K)
    return bank


def nested_cv(
    bank: GramBank,
    labels: list[str],
    y: np.ndarray,
    folds: int,
    outer_seed: int = 0,
    inner_seed: int = 1,
) -> dict:
    """The docs' nested CV over ``labels x C_GRID``; scores, choices and out-of-fold predictions.

    The docs' folds are ``outer_seed=0, inner_seed=1``; other seeds reshuffle both loops.
    """
    search = GridSearchCV(
        GramBankSVC(bank),
        {"gram": labels, "C": C_GRID},
        cv=StratifiedKFold(3, shuffle=True, random_state=inner_seed),
    )
    X = np.arange(len(y))[:, None]
    res = cross_validate(
        search,
        X,
        y,
        cv=StratifiedKFold(folds, shuffle=True, random_state=outer_seed),
        return_estimator=True,
        return_indices=True,
    )
    pred = np.empty_like(y)
    for est, test in zip(res["estimator"], res["indices"]["test"], strict=True):
        pred[test] = est.predict(X[test])
    return {
        "scores": res["test_score"],
        "chosen": [f"{e.best_params_['gram']}, C={e.best_params_['C']}" for e in res["estimator"]],
        "pred": pred,
    }


def add_sums(bank: GramBank, degrees, shifts, ks) -> list[str]:
    """Normalised WD(d, S) + normalised k-spectrum Grams (ARTS's combination), their labels."""
    labels = []
    for d in degrees:
        for S in shifts:
            for k in ks:
                label = f"wd d={d} S={S} + spectrum k={k}"
                bank[label] = (
                    bank[f"wd d={d} S={S}, normalised"] + bank[f"spectrum k={k}, normalised"]
                )
                labels.append(label)
    return labels


def grids(quick: bool) -> dict:
    if quick:
        return {"degrees": [2, 3], "shifts": [0, 1], "ks": [2, 3], "sum": ([2], [0, 1], [3])}
    return {
        "degrees": list(range(1, 21)),
        "shifts": list(range(16)),
        "ks": list(range(1, 11)),
        "sum": ([2, 3, 4, 6, 8, 10], [0, 1, 2, 4, 8], [3, 4, 5, 6]),
    }


def rows_to_run(g: dict, bank: GramBank, quick: bool) -> list[tuple[str, list[str]]]:
    """(row label, Gram labels searched) pairs; normalised before raw, then ascending."""

    def both(names):
        return [n + ", normalised" for n in names] + list(names)

    wd = [f"wd d={d} S=0" for d in g["degrees"]]
    wds = [f"wd d={d} S={S}" for d in g["degrees"] for S in g["shifts"]]
    spec = [f"spectrum k={k}" for k in g["ks"]]
    docs = [2, 3] if quick else [2, 3, 4, 5]
    old_wd = [2, 3] if quick else [2, 3, 4, 6]
    d_lo, d_hi, k_hi = g["degrees"][0], g["degrees"][-1], g["ks"][-1]
    return [
        (
            f"spectrum, k in {set(docs)}, normalised (docs)",
            [f"spectrum k={k}, normalised" for k in docs],
        ),
        (
            f"weighted degree, d in {set(old_wd)}, normalised (small grid)",
            [f"wd d={d} S=0, normalised" for d in old_wd],
        ),
        (f"spectrum, k in {g['ks'][0]}..{k_hi}, normalised or not", both(spec)),
        (f"weighted degree, d in {d_lo}..{d_hi}, normalised or not", both(wd)),
        (
            f"WD with shifts, d in {d_lo}..{d_hi}, S in 0..{g['shifts'][-1]}, normalised or not",
            both(wds),
        ),
        (
            "WD with shifts + spectrum (normalised, summed), "
            f"d in {g['sum'][0]}, S in {g['sum'][1]}, k in {g['sum'][2]}",
            add_sums(bank, *g["sum"]),
        ),
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="shared data folder")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="JSON results file")
    parser.add_argument("--folds", type=int, default=10, help="outer CV folds (default 10)")
    parser.add_argument("--quick", action="store_true", help="3 folds, small grids, no output")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    folds = 3 if args.quick else args.folds
    data = load_promoter(args.data)
    seqs, y = list(data.sequences), np.asarray(data.y)
    g = grids(args.quick)
    start = time.perf_counter()
    bank = build_bank(seqs, g["degrees"], g["shifts"], g["ks"])
    gram_seconds = time.perf_counter() - start
    print(f"{len(bank)} Grams in {gram_seconds:.1f} s")

    rows, reference = [], None
    for label, grams in rows_to_run(g, bank, args.quick):
        start = time.perf_counter()
        res = nested_cv(bank, grams, y, folds)
        seconds = time.perf_counter() - start
        right = res["pred"] == y
        reference = right if reference is None else reference
        errors = int((~right).sum())
        only_ref, only_row = int((reference & ~right).sum()), int((~reference & right).sum())
        ci = binomtest(len(y) - errors, len(y)).proportion_ci(method="exact")
        mcnemar = (
            binomtest(min(only_ref, only_row), only_ref + only_row).pvalue
            if only_ref + only_row
            else 1.0
        )
        rows.append(
            {
                "kernel": label,
                "grid_size": len(grams) * len(C_GRID),
                "accuracy": float(res["scores"].mean()),
                "std": float(res["scores"].std()),
                "errors": errors,
                "accuracy_ci95": [float(ci.low), float(ci.high)],
                "mcnemar_vs_docs_spectrum": {
                    "docs_right_row_wrong": only_ref,
                    "row_right_docs_wrong": only_row,
                    "exact_p": float(mcnemar),
                },
                "misclassified": np.flatnonzero(~right).tolist(),
                "fold_scores": res["scores"].tolist(),
                "chosen": res["chosen"],
                "seconds": seconds,
            }
        )
        print(
            f"{label:<80} {res['scores'].mean():.3f} +- {res['scores'].std():.3f}  "
            f"{errors} errors  McNemar p={mcnemar:.2f}  ({seconds:.1f} s)"
        )

    start = time.perf_counter()
    direct = run_strings(
        data,
        Spectrum(3, alphabet="dna").normalized(),
        {"kernel__kernel__k": [2, 3] if args.quick else [2, 3, 4, 5], "C": C_GRID},
        folds,
    )
    same = bool(np.array_equal(direct, rows[0]["fold_scores"]))
    print(f"docs' spectrum row on the strings: same fold scores as the Gram bank: {same}")
    if not same:
        raise SystemExit(f"the Gram-bank CV differs from the string CV: {direct} vs {rows[0]}")
    direct_seconds = time.perf_counter() - start
    if args.quick:
        return

    per_setting = {}
    for d in g["degrees"]:
        for S in g["shifts"]:
            label = f"wd d={d} S={S}, normalised"
            per_setting[label] = float(nested_cv(bank, [label], y, folds)["scores"].mean())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    result = {
        "dataset": "promoter",
        "n": len(y),
        "outer_folds": folds,
        "C_grid": C_GRID,
        "gram_seconds": gram_seconds,
        "string_route_check": {
            "fold_scores": direct.tolist(),
            "equal": same,
            "seconds": direct_seconds,
        },
        "rows": rows,
        "per_setting_C_only": per_setting,
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
