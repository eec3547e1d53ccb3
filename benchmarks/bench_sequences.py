"""Sequence benchmark: string-kernel SVMs against CKN-seq / RKN (promoters, peptides, coiled coils).

Protocol (fixed before any run): 10-fold stratified CV with ``random_state=0``
(``StratifiedGroupKFold`` on the coiled coils, whose ``group`` column joins related
segments), accuracy and ROC AUC on each test fold, mean and standard deviation over folds,
wall time of the whole CV (Grams included) with one thread.  No inner model selection:

* string kernels, each normalised (``K / sqrt(K(x, x) K(y, y))``), then scikit-learn's
  ``SVC(kernel="precomputed", C=1)`` — what a user of a string-kernel library writes; the
  Gram is computed once on all sequences (the kernels have no fitted state), except the
  SVM-pairwise map, whose reference set is the training fold (the empirical kernel map
  ``Phi(x) = (k(x, x_i))_{i in train}`` of the normalised 3-spectrum, then the normalised
  linear kernel on it);
* ``SequenceCKNClassifier()``: the defaults (architecture search over ``encoding`` and
  ``pooling``, ``lam`` and the pyramid's depth by its internal cross-validation on the
  training fold only), with the choice of each fold (``encoding pooling n_bins``) counted;
* CKN-seq / RKN: ``SequenceCKNClassifier`` (64 anchors per layer, ``normalize=True``, one
  bin, ``lam="auto"`` by its internal 5-fold CV, no end-to-end epochs), the variants named in
  the rows.

The baseline of every row's time ratio is the 3-spectrum SVM on the same set
(``ratio = baseline_s / kernelkit_s``: above 1 the row is faster than the spectrum SVM).

Usage: ``python benchmarks/bench_sequences.py [--data DIR] [--sets promoter amp ccoil]
[--ckn all|default]``.
Results: ``benchmarks/results/sequences_<set>.json`` (each row with its correct predictions
per fold; the CKN rows with each fold's fit seconds and search record: ``lam``, the
cross-validated accuracy of every candidate scored, the skipped ones); the table in
``docs/ckn.md``.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedGroupKFold, StratifiedKFold
from sklearn.svm import SVC

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import report

from kernelkit import SequenceCKNClassifier
from kernelkit.data._datasets import load_amp, load_promoter
from kernelkit.kernels import (
    DictionaryKernel,
    Kernel,
    Mismatch,
    MutualInformation,
    PhysicoChemical,
    Spectrum,
    WeightedDegree,
)

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def load(name: str, data: Path) -> tuple[list[str], np.ndarray, np.ndarray | None, str]:
    """Sequences, labels, CV groups (or None) and the alphabet name of one set."""
    if name == "promoter":
        d = load_promoter(data)
        return d.sequences, d.y, None, "dna"
    if name == "amp":
        d = load_amp(data, "AMPvsTMset")
        return d.sequences, d.y, None, "protein"
    with (data / "ccoil" / "CCoil.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    y = np.array([r["label"] == "TRIMER" for r in rows], dtype=np.int64)
    groups = np.array([int(r["group"]) for r in rows])
    return [r["sequence"] for r in rows], y, groups, "protein"


def string_kernels(alphabet: str) -> dict[str, Kernel]:
    """The string kernels of one alphabet (each normalised in :func:`gram_svm`)."""
    kernels: dict[str, Kernel] = {
        f"Spectrum({k}) SVM": Spectrum(k, alphabet=alphabet) for k in (3, 4, 5, 6)
    }
    if alphabet == "dna":
        kernels["Mismatch(5, 1) SVM"] = Mismatch(5, 1, alphabet=alphabet)
        kernels["WeightedDegree(5) SVM"] = WeightedDegree(5)
        kernels["MutualInformation(depth=3) SVM"] = MutualInformation(3, alphabet=alphabet)
    else:
        kernels["Mismatch(3, 1) SVM"] = Mismatch(3, 1, alphabet=alphabet)
        kernels["MutualInformation(depth=1) SVM"] = MutualInformation(1, alphabet=alphabet)
        kernels["PhysicoChemical(5) SVM"] = PhysicoChemical(5)
        kernels["PhysicoChemical(5, sigma=1) SVM"] = PhysicoChemical(5, sigma=1.0)
    return kernels


def ckn_models(alphabet: str, rows: str) -> dict[str, Callable[[], SequenceCKNClassifier]]:
    default = {"SequenceCKNClassifier() (architecture search)": lambda: SequenceCKNClassifier(
        random_state=0
    )}  # fmt: skip
    if rows == "default":
        return default
    common: dict[str, Any] = {"n_bins": 1, "normalize": True, "random_state": 0}
    k = 5 if alphabet == "dna" else 3
    models = {
        **default,
        f"CKN-seq (k={k}, lambda=0, mean)": lambda: SequenceCKNClassifier(64, k, **common),
        f"RKN (k={k}, lambda=0.5, mean)": lambda: SequenceCKNClassifier(
            64, k, gap_penalty=0.5, **common
        ),
        f"RKN-max (k={k}, lambda=0.5)": lambda: SequenceCKNClassifier(
            64, k, gap_penalty=0.5, pooling="max", **common
        ),
        f"RKN-max 2 layers (k={k}, 3)": lambda: SequenceCKNClassifier(
            (64, 64), (k, 3), gap_penalty=0.5, pooling="max", **common
        ),
    }
    if alphabet == "protein":
        models[f"RKN-max BLOSUM62 (k={k}, lambda=0.5)"] = lambda: SequenceCKNClassifier(
            64, k, gap_penalty=0.5, pooling="max", encoding="blosum62", **common
        )
    return models


def normalise(K: np.ndarray, dx: np.ndarray, dy: np.ndarray) -> np.ndarray:
    scale = np.sqrt(np.outer(dx, dy))
    return np.divide(K, scale, out=np.zeros_like(K), where=scale > 0)


def svm_scores(K: np.ndarray, y: np.ndarray, train: np.ndarray, test: np.ndarray) -> np.ndarray:
    svm = SVC(kernel="precomputed", C=1.0).fit(K[np.ix_(train, train)], y[train])
    return svm.decision_function(K[np.ix_(test, train)])


def run_set(name: str, data: Path, folds: int, ckn_rows: str = "all") -> list[dict[str, Any]]:
    seqs, y, groups, alphabet = load(name, data)
    splitter = (
        StratifiedGroupKFold(folds, shuffle=True, random_state=0)
        if groups is not None
        else StratifiedKFold(folds, shuffle=True, random_state=0)
    )
    splits = list(splitter.split(np.zeros(len(y)), y, groups))
    rows: list[dict[str, Any]] = []

    def record(
        case: str, scores: list[tuple[np.ndarray, np.ndarray]], seconds: float, **extra: Any
    ) -> None:
        acc = [float(np.mean((s > 0) == y[t])) for s, t in scores]
        auc = [float(roc_auc_score(y[t], s)) for s, t in scores]
        extra["fold_correct"] = [int(np.sum((s > 0) == y[t])) for s, t in scores]
        rows.append({
            "case": f"{name}: {case}", "accuracy": round(float(np.mean(acc)), 3),
            "accuracy_std": round(float(np.std(acc)), 3), "auc": round(float(np.mean(auc)), 3),
            "kernelkit_s": round(seconds, 2), **extra,
        })  # fmt: skip
        print(rows[-1], flush=True)

    for case, kernel in string_kernels(alphabet).items():
        start = time.perf_counter()
        K = kernel(seqs).numpy()
        K = normalise(K, np.diag(K), np.diag(K))
        scores = [(svm_scores(K, y, tr, te), te) for tr, te in splits]
        record(case, scores, time.perf_counter() - start)

    start = time.perf_counter()
    scores = []
    for tr, te in splits:  # Phi(x) = (k(x, x_i))_{i in train}, k the normalised 3-spectrum
        base = Spectrum(3, alphabet=alphabet).normalized()
        G = DictionaryKernel([seqs[i] for i in tr], base)(seqs).numpy()
        scores.append((svm_scores(normalise(G, np.diag(G), np.diag(G)), y, tr, te), te))
    record("SVM-pairwise (3-spectrum) SVM", scores, time.perf_counter() - start)

    for case, make in ckn_models(alphabet, ckn_rows).items():
        start = time.perf_counter()
        scores, fits, chosen, searches = [], [], [], []
        for tr, te in splits:
            clf = make().set_params(alphabet=alphabet)
            fit_start = time.perf_counter()
            clf.fit([seqs[i] for i in tr], y[tr])
            fits.append(time.perf_counter() - fit_start)
            arch = clf.architecture_
            chosen.append(" ".join(str(arch.get(p, "")) for p in ("encoding", "pooling", "n_bins")))
            searches.append({
                "lam": arch.get("lam"), "cv_accuracy": arch.get("cv_accuracy"),
                "candidates": [{**c, "cv_accuracy": round(c["cv_accuracy"], 4)}
                               for c in arch.get("candidates", [])],
                "skipped": arch.get("skipped", []), "seconds": round(arch.get("seconds", 0.0), 1),
            })  # fmt: skip
            scores.append((np.asarray(clf.decision_function([seqs[i] for i in te])), te))
        record(case, scores, time.perf_counter() - start,
               fit_s_max=round(max(fits), 1), fit_s_mean=round(float(np.mean(fits)), 1),
               chosen={c: chosen.count(c) for c in sorted(set(chosen))},
               fold_fits=[round(f, 1) for f in fits], searches=searches)  # fmt: skip
    baseline = next(r["kernelkit_s"] for r in rows if r["case"].endswith("Spectrum(3) SVM"))
    for row in rows:
        row["baseline"] = "Spectrum(3) SVM"
        row["baseline_s"] = baseline
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--sets", nargs="+", default=["promoter", "amp", "ccoil"])
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument(
        "--ckn", choices=["all", "default"], default="all",
        help="CKN rows: all, or the default SequenceCKNClassifier() only "
        "(results then in sequences_<set>_default.json)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    for name in args.sets:
        suffix = "" if args.ckn == "all" else "_default"
        report(f"sequences_{name}{suffix}", run_set(name, args.data, args.folds, args.ckn))


if __name__ == "__main__":
    main()
