"""``SequenceCKNClassifier()`` on the two kinds of data of issue 48 that it was not tuned on.

* ``splice``: the UCI splice-junction set (Towell, Shavlik & Noordewier 1992; 3190 DNA windows
  of 60 bases, classes EI / IE / N; aligned: the junction sits mid-window).  Not in
  ``../shared/data``: pass the CSV (columns ``label, instance_name, sequence``, the UCI
  ``splice.data`` with a header) as ``--splice PATH``.  The 15 windows with letters outside
  ``ACGT`` are dropped (3175 left); three stratified splits of 2000 training / 1175 test
  windows (``random_state`` 0, 1, 2).  Against: the string-kernel SVMs of the issue's bar
  (each kernel normalised, ``SVC(kernel="precomputed")``, ``C`` in {0.1, 1, 10} by 3-fold CV
  on the training part): spectrum ``k = 3..6``, mismatch ``(5, 1)``, weighted degree
  ``d = 5, 8, 12``; and one-hot + ``SVC()``.
* ``enhancers``: the issue's unaligned enhancers of 277-2328 bases, KeBABS' ``enhancerFB``
  (Palme, Hochreiter & Bodenhofer 2015; a subset of the EP300 ChIP-seq forebrain enhancers of
  Lee et al. 2011: 259 enhancers of embryonic day 11.5 mouse embryos against 241 sequences
  sampled from mm9).  Not in ``../shared/data``: pass a CSV with columns ``label, sequence``
  (in R: ``library(kebabs); data(TFBS); write.csv(data.frame(label = yFB, sequence =
  as.character(enhancerFB)), "enhancerFB.csv", row.names = FALSE)``) as ``--enhancers
  PATH``.  Stratified 10-fold CV (``random_state=0``, 450 training sequences per fold),
  against the spectrum (``k = 3..6``) and mismatch ``(5, 1)`` SVMs as above (the
  weighted-degree kernel needs equal lengths).
* ``long``: a timing stand-in for the enhancers, from before they were found: 500
  sequences, lengths log-uniform on 277-2328, letters i.i.d. (A, C, G, T) = (0.29, 0.21,
  0.21, 0.29); the positives carry three copies of one of three transcription-factor sites
  anywhere, each letter redrawn uniformly with probability 0.15; one fold of a stratified
  10-fold split (450 training sequences), the issue's unit of time.  Against: the spectrum
  SVMs (``k = 3..6``, ``C`` as above).

Every fit runs with one torch thread.  Usage: ``python examples/ckn_heldout_sequences.py
[--splice PATH] [--enhancers PATH] [--only splice|enhancers|long]``; writes
``examples/results/ckn_heldout_<set>.json``.
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from pathlib import Path

import numpy as np
import torch
from sklearn.model_selection import GridSearchCV, StratifiedKFold, train_test_split
from sklearn.svm import SVC

from kernelkit import SequenceCKNClassifier
from kernelkit.kernels import Kernel, Mismatch, Spectrum, WeightedDegree

OUT = Path(__file__).resolve().parent / "results"
SITES = ("TGACTCA", "CACGTG", "GGAATTTCC")


def splice_windows(path: Path) -> tuple[list[str], np.ndarray]:
    """The ACGT-only windows of the UCI CSV and their classes (EI 0, IE 1, N 2)."""
    with path.open(newline="") as fh:
        rows = list(csv.reader(fh))[1:]
    kept = [(r[0].strip(), r[2].strip()) for r in rows if set(r[2].strip()) <= set("ACGT")]
    return [s for _, s in kept], np.array([("EI", "IE", "N").index(c) for c, _ in kept])


def labelled_sequences(path: Path) -> tuple[list[str], np.ndarray]:
    """The ``sequence`` column of a CSV and its ``label`` column (as class codes)."""
    with path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    labels = np.array([r["label"] for r in rows])
    return [r["sequence"] for r in rows], np.unique(labels, return_inverse=True)[1]


def long_sequences(n: int = 500) -> tuple[list[str], np.ndarray]:
    """The unaligned stand-in described in the module docstring (``random_state=0``)."""
    rng = np.random.default_rng(0)
    lengths = np.exp(rng.uniform(np.log(277), np.log(2328), n)).astype(int)
    y = rng.permutation(np.arange(n) % 2)
    seqs = []
    for length, label in zip(lengths, y, strict=True):
        letters = list(rng.choice(list("ACGT"), size=length, p=[0.29, 0.21, 0.21, 0.29]))
        for _ in range(3 * label):
            site = [c if rng.random() >= 0.15 else "ACGT"[rng.integers(4)]
                    for c in SITES[rng.integers(len(SITES))]]  # fmt: skip
            start = rng.integers(0, length - len(site))
            letters[start : start + len(site)] = site
        seqs.append("".join(letters))
    return seqs, y


def kernel_svm(kernel: Kernel, seqs: list[str], y: np.ndarray, train, test) -> dict:
    """Normalised Gram, ``C`` by 3-fold CV on the training part, test accuracy and seconds."""
    start = time.perf_counter()
    K = np.asarray(kernel(seqs, seqs), dtype=np.float64)
    d = np.sqrt(np.diag(K))
    K = K / np.outer(d, d)
    grid = GridSearchCV(SVC(kernel="precomputed"), {"C": [0.1, 1.0, 10.0]}, cv=3)
    grid.fit(K[np.ix_(train, train)], y[train])
    accuracy = float((grid.predict(K[np.ix_(test, train)]) == y[test]).mean())
    return {"accuracy": accuracy, "C": grid.best_params_["C"],
            "seconds": time.perf_counter() - start}  # fmt: skip


def ckn_defaults(seqs: list[str], y: np.ndarray, train, test) -> dict:
    start = time.perf_counter()
    model = SequenceCKNClassifier(random_state=0).fit([seqs[i] for i in train], y[train])
    fit = time.perf_counter() - start
    accuracy = float((model.predict([seqs[i] for i in test]) == y[test]).mean())
    return {"accuracy": accuracy, "fit_seconds": fit,
            "architecture": {k: v for k, v in model.architecture_.items() if k != "candidates"},
            "candidates": model.architecture_.get("candidates")}  # fmt: skip


def run(name: str, seqs: list[str], y: np.ndarray, splits, kernels: dict) -> dict:
    rows: dict[str, list] = {}
    for train, test in splits:
        rows.setdefault("SequenceCKNClassifier()", []).append(ckn_defaults(seqs, y, train, test))
        for label, kernel in kernels.items():
            rows.setdefault(label, []).append(kernel_svm(kernel, seqs, y, train, test))
        if name == "splice":
            X = np.zeros((len(seqs), 4 * 60))
            for i, s in enumerate(seqs):
                X[i, 4 * np.arange(60) + np.array(["ACGT".index(c) for c in s])] = 1.0
            start = time.perf_counter()
            accuracy = SVC().fit(X[train], y[train]).score(X[test], y[test])
            rows.setdefault("one-hot + SVC()", []).append(
                {"accuracy": float(accuracy), "seconds": time.perf_counter() - start}
            )
        print(name, {k: round(v[-1]["accuracy"], 4) for k, v in rows.items()}, flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splice", type=Path, default=None)
    parser.add_argument("--enhancers", type=Path, default=None)
    parser.add_argument("--only", choices=("splice", "enhancers", "long"), default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)
    OUT.mkdir(exist_ok=True)
    if args.only in (None, "enhancers") and args.enhancers is not None:
        seqs, y = labelled_sequences(args.enhancers)
        folds = StratifiedKFold(10, shuffle=True, random_state=0).split(np.zeros(len(y)), y)
        kernels = {f"Spectrum({k}) SVM": Spectrum(k, alphabet="dna") for k in (3, 4, 5, 6)}
        kernels["Mismatch(5, 1) SVM"] = Mismatch(5, 1, alphabet="dna")
        result = run("enhancers", seqs, y, list(folds), kernels)
        (OUT / "ckn_heldout_enhancers.json").write_text(json.dumps(result, indent=1))
    if args.only in (None, "long"):
        seqs, y = long_sequences()
        split = next(StratifiedKFold(10, shuffle=True, random_state=0).split(np.zeros(len(y)), y))
        spectra = {f"Spectrum({k}) SVM": Spectrum(k, alphabet="dna") for k in (3, 4, 5, 6)}
        result = run("long", seqs, y, [split], spectra)
        (OUT / "ckn_heldout_long.json").write_text(json.dumps(result, indent=1))
    if args.only in (None, "splice") and args.splice is not None:
        seqs, y = splice_windows(args.splice)
        index = np.arange(len(y))
        splits = [train_test_split(index, train_size=2000, stratify=y, random_state=seed)
                  for seed in (0, 1, 2)]  # fmt: skip
        kernels: dict[str, Kernel] = {
            f"Spectrum({k}) SVM": Spectrum(k, alphabet="dna") for k in (3, 4, 5, 6)
        }
        kernels["Mismatch(5, 1) SVM"] = Mismatch(5, 1, alphabet="dna")
        kernels |= {f"WeightedDegree({d}) SVM": WeightedDegree(d) for d in (5, 8, 12)}
        result = run("splice", seqs, y, splits, kernels)
        (OUT / "ckn_heldout_splice.json").write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
