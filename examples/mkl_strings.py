"""Multiple kernel learning over string kernels: promoters and antimicrobial peptides.

SimpleMKL (Rakotomamonjy et al. 2008; course part 3, section 4) with the SVM (hinge) loss
learns a convex combination of normalised spectrum (k = 2..5), (k, 1)-mismatch and
local-alignment kernels, against the best single kernel chosen under the same
cross-validation.  Protocol, as ``examples/strings_svm.py``: a 10-fold stratified outer loop
(shuffled, ``random_state=0``) and, in each training fold, a 3-fold stratified inner search
(``random_state=1``):

* best single kernel: the inner search picks the kernel and ``C in {0.1, 1, 10}`` of
  ``KernelSVC``;
* uniform sum: the average of all the kernels, ``C`` by the inner search;
* SimpleMKL: ``loss="hinge"`` with ``lam = 1 / (2 n C)`` for the same ``C`` grid (the
  course's C-SVM correspondence), ``lam`` by the inner search; the weights are refitted on
  the training fold.

Every kernel here is a fixed function of a pair of sequences (nothing is fitted), so each
normalised Gram is computed once on all sequences and sliced per fold (nothing leaks between
folds).  Datasets (``--data``): ``promoter`` (106 x 57 nt) and ``AMPvsTMset`` (412 peptides);
``--all`` adds ``ACP_CancPPD_vs_TM`` (826 peptides).

Run: ``python examples/mkl_strings.py`` (about 10 minutes on 2 busy cores; ``--all``
about 40).  Writes
``examples/results/mkl_strings.json``.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
import torch
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import SVC
from strings_svm import C_GRID, DEFAULT_DATA

from kernelkit import SimpleMKL
from kernelkit.data._datasets import load_amp, load_promoter
from kernelkit.kernels import LocalAlignment, Mismatch, Spectrum
from kernelkit.utils._errors import ConvergenceWarning

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "mkl_strings.json"


def kernel_bank(alphabet: str) -> dict:
    """The normalised kernels combined, by label."""
    bank = {f"spectrum k={k}": Spectrum(k, alphabet=alphabet) for k in (2, 3, 4, 5)}
    for k in (3, 4) if alphabet == "protein" else (3, 4, 5):
        bank[f"mismatch k={k}, m=1"] = Mismatch(k, 1, alphabet=alphabet)
    if alphabet == "dna":
        bank["local alignment +2/-1, beta=0.2"] = LocalAlignment(
            beta=0.2, gap_open=3.0, gap_extend=1.0, matrix=(2.0, -1.0)
        )
    else:
        bank["local alignment BLOSUM62, beta=0.1"] = LocalAlignment(
            beta=0.1, gap_open=11.0, gap_extend=1.0, matrix="BLOSUM62"
        )
    return {label: k.normalized() for label, k in bank.items()}


def svm_accuracy(K: np.ndarray, y: np.ndarray, tr: np.ndarray, te: np.ndarray, C: float) -> float:
    svc = SVC(kernel="precomputed", C=C).fit(K[np.ix_(tr, tr)], y[tr])
    return float((svc.predict(K[np.ix_(te, tr)]) == y[te]).mean())


def mkl_fit(grams: list, y: np.ndarray, tr: np.ndarray, C: float) -> SimpleMKL:
    lam = 1.0 / (2.0 * len(tr) * C)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return SimpleMKL("precomputed", lam=lam, loss="hinge", max_iter=30, tol=1e-3).fit(
            [G[np.ix_(tr, tr)] for G in grams], y[tr]
        )


def mkl_accuracy(grams: list, y: np.ndarray, tr: np.ndarray, te: np.ndarray, C: float):
    model = mkl_fit(grams, y, tr, C)
    pred = model.predict([G[np.ix_(te, tr)] for G in grams])
    return float((pred == y[te]).mean()), model


def inner_best(score, y: np.ndarray, tr: np.ndarray, candidates: list):
    """The candidate with the best mean inner 3-fold accuracy (first on ties)."""
    inner = StratifiedKFold(3, shuffle=True, random_state=1)
    means = []
    for cand in candidates:
        accs = [score(tr[a], tr[b], cand) for a, b in inner.split(tr, y[tr])]
        means.append(np.mean(accs))
    return candidates[int(np.argmax(means))]


def run_dataset(name: str, seqs: list, y: np.ndarray, alphabet: str, folds: int) -> dict:
    bank = kernel_bank(alphabet)
    labels = list(bank)
    start = time.perf_counter()
    grams = [bank[label](seqs).numpy() for label in labels]
    gram_seconds = time.perf_counter() - start
    uniform = np.mean(grams, axis=0)
    outer = StratifiedKFold(folds, shuffle=True, random_state=0)
    acc = {"best single kernel": [], "uniform sum": [], "SimpleMKL": []}
    chosen, weights = [], []
    start = time.perf_counter()
    for tr, te in outer.split(seqs, y):
        cands = [(i, C) for i in range(len(grams)) for C in C_GRID]
        i, C = inner_best(lambda a, b, c: svm_accuracy(grams[c[0]], y, a, b, c[1]), y, tr, cands)
        acc["best single kernel"].append(svm_accuracy(grams[i], y, tr, te, C))
        chosen.append(labels[i])
        C = inner_best(lambda a, b, c: svm_accuracy(uniform, y, a, b, c), y, tr, C_GRID)
        acc["uniform sum"].append(svm_accuracy(uniform, y, tr, te, C))
        C = inner_best(lambda a, b, c: mkl_accuracy(grams, y, a, b, c)[0], y, tr, C_GRID)
        score, model = mkl_accuracy(grams, y, tr, te, C)
        acc["SimpleMKL"].append(score)
        weights.append(model.weights_)
        print(f"  {name} fold: single {chosen[-1]!r} / MKL weights {np.round(model.weights_, 2)}")
    cv_seconds = time.perf_counter() - start
    full = mkl_fit(grams, y, np.arange(len(y)), 1.0)
    return {
        "dataset": name,
        "n": len(y),
        "kernels": labels,
        "accuracy": {k: float(np.mean(v)) for k, v in acc.items()},
        "std": {k: float(np.std(v)) for k, v in acc.items()},
        "fold_accuracy": acc,
        "single_kernels_chosen": chosen,
        "mkl_weights_mean_over_folds": np.mean(weights, axis=0).tolist(),
        "mkl_weights_all_data_C1": full.weights_.tolist(),
        "mkl_iterations_all_data": full.n_iter_,
        "gram_seconds": gram_seconds,
        "cv_seconds": cv_seconds,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="shared data folder")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="JSON results file")
    parser.add_argument("--folds", type=int, default=10, help="outer CV folds (default 10)")
    parser.add_argument("--all", action="store_true", help="also ACP_CancPPD_vs_TM (826)")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    sets = [("promoter", load_promoter(args.data), "dna")]
    names = ["AMPvsTMset", "ACP_CancPPD_vs_TM"] if args.all else ["AMPvsTMset"]
    sets += [(n, load_amp(args.data, n), "protein") for n in names]
    results = []
    for name, data, alphabet in sets:
        res = run_dataset(name, list(data.sequences), np.asarray(data.y), alphabet, args.folds)
        results.append(res)
        for method, value in res["accuracy"].items():
            print(f"{name:>18} | {method:<18} | {value:.3f} +- {res['std'][method]:.3f}")
        ranked = sorted(zip(res["mkl_weights_all_data_C1"], res["kernels"], strict=True))[::-1]
        print("  weights (all data, C=1):", ", ".join(f"{k}: {w:.2f}" for w, k in ranked if w))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"outer_folds": args.folds, "results": results}, indent=2))
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
