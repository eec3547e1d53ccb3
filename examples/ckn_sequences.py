"""CKN-seq on promoters (DNA) and antimicrobial / anticancer peptides, under the protocol of
``examples/strings_svm.py`` (course part 3, section 10; Chen, Jacob & Mairal 2019).

Protocol (the same as the string kernels' table in ``docs/strings.md``): 10-fold stratified
outer cross-validation (shuffled, ``random_state=0``); inside each training fold a 3-fold
stratified grid search (``random_state=1``) picks the hyperparameters (nested CV).

* **Unsupervised CKN-seq + linear SVM**: ``SequenceCKNFeatures`` (256 anchors by spherical
  k-means on sampled k-mers, ``kappa(u) = exp((u - 1)/0.5^2)`` per position, mean pooling;
  256 anchors and sigma 0.5 chosen on the promoter set beforehand, so its row is slightly
  optimistic), rows normalised to unit norm (as the normalised string kernels), then
  ``KernelSVC(Linear())``; grid over ``k`` in {3, 5} and ``C`` in {1, 10}.  Two
  rows: contiguous k-mers (``gap_penalty=0``, CKN-seq) and gapped k-mers
  (``gap_penalty=0.5``, the RKN kernel).
* **Supervised CKN-seq**: ``SequenceCKNClassifier`` (32 anchors, k = 4, sigma 0.5, at most
  60 epochs of Adam), fixed settings, no inner search (the estimator's settings before
  issue 31, pinned: ``lam=1e-4``, ``training="joint"``, ``n_bins=1``).  Row ``supervised``:
  the estimator's default start (k-means anchors and the logistic regression on their features, as
  Mairal 2016, §3) and the epoch of best accuracy on a held-out 10 % of the training fold
  (stopping after 10 epochs without a better one);
  row ``supervised-zeros``: k-means anchors, a zero classifier and all 60 epochs on the
  whole training fold (the estimator before that initialisation, for comparison);
  row ``supervised-256``: as ``supervised`` with the unsupervised rows' 256 anchors and
  k = 5.

Datasets: ``promoter`` (106 x 57 nt), ``AMPvsTMset`` (412 peptides) and
``ACP_CancPPD_vs_TM`` (826 peptides).  Run: ``python examples/ckn_sequences.py``;
``--quick``: 3 outer folds, promoter only; ``--dataset`` and ``--models`` pick rows.  Writes
``examples/results/ckn_sequences.md`` (or ``ckn_sequences_<dataset>[_<models>].md``).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import torch
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import Normalizer

from kernelkit import KernelSVC, SequenceCKNClassifier, SequenceCKNFeatures
from kernelkit.data._datasets import load_amp, load_promoter
from kernelkit.kernels import Linear

DATA = Path(
    os.environ.get("KERNELKIT_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
OUT = Path(__file__).resolve().parent / "results" / "ckn_sequences.md"


def unsupervised(alphabet: str, gap: float):
    pipe = make_pipeline(
        SequenceCKNFeatures(256, 4, gap_penalty=gap, sigma=0.5, alphabet=alphabet, random_state=0),
        Normalizer(),
        KernelSVC(Linear()),
    )
    grid = {"sequencecknfeatures__k": [3, 5], "kernelsvc__C": [1.0, 10.0]}
    return GridSearchCV(pipe, grid, cv=StratifiedKFold(3, shuffle=True, random_state=1))


def supervised(alphabet: str, head_init: str = "linear", n_filters: int = 32, k: int = 4):
    return SequenceCKNClassifier(
        n_filters, k, sigma=0.5, alphabet=alphabet, max_iter=60, lr=0.01, batch_size=32,
        lam=1e-4, training="joint", n_bins=1, head_init=head_init,
        validation_fraction=0.1 if head_init == "linear" else 0.0,
        n_iter_no_change=10, random_state=0,
    )  # fmt: skip


MODELS = {
    "contiguous": (
        "CKN-seq unsupervised, contiguous k-mers, k in {3,5} + linear SVM",
        lambda alphabet: unsupervised(alphabet, 0.0),
    ),
    "gapped": (
        "CKN-seq unsupervised, gapped k-mers (lambda=0.5), k in {3,5} + linear SVM",
        lambda alphabet: unsupervised(alphabet, 0.5),
    ),
    "supervised": (
        "CKN-seq supervised, 32 anchors, k=4, k-means + logistic init, best held-out epoch",
        supervised,
    ),
    "supervised-256": (
        "CKN-seq supervised, 256 anchors, k=5, k-means + logistic init, best held-out epoch",
        lambda alphabet: supervised(alphabet, n_filters=256, k=5),
    ),
    "supervised-zeros": (
        "CKN-seq supervised, 32 anchors, k=4, k-means + zero classifier, 60 epochs",
        lambda alphabet: supervised(alphabet, "zeros"),
    ),
}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--dataset", default=None, help="run one dataset only")
    parser.add_argument(
        "--models", nargs="+", choices=list(MODELS), default=["contiguous", "gapped", "supervised"]
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    folds = 3 if args.quick else args.folds
    datasets = {"promoter": load_promoter(DATA)}
    if not args.quick:
        datasets["AMPvsTMset"] = load_amp(DATA, "AMPvsTMset")
        datasets["ACP_CancPPD_vs_TM"] = load_amp(DATA, "ACP_CancPPD_vs_TM")
    if args.dataset:
        datasets = {args.dataset: datasets[args.dataset]}
    rows = []
    for name, data in datasets.items():
        alphabet = "dna" if name == "promoter" else "protein"
        X = np.asarray(data.sequences, dtype=object)
        models = {MODELS[key][0]: MODELS[key][1](alphabet) for key in args.models}
        for label, model in models.items():
            start = time.perf_counter()
            scores = cross_val_score(
                model, X, data.y, cv=StratifiedKFold(folds, shuffle=True, random_state=0)
            )
            seconds = time.perf_counter() - start
            rows.append((name, len(data), label, scores.mean(), scores.std(), seconds))
            print(f"{name:>18} | {label:<70} | {scores.mean():.3f} +- {scores.std():.3f} | "
                  f"{seconds:.1f}s", flush=True)  # fmt: skip
    lines = [
        f"Nested CV: {folds}-fold stratified outer (accuracy mean +- std over folds), 3-fold "
        "inner grid search (unsupervised rows); 2 shared CPU cores.",
        "",
        "| dataset | n | model | accuracy | std | time (s) |",
        "|---|---:|---|---:|---:|---:|",
    ]
    lines += [
        f"| {n} | {size} | {label} | {mean:.3f} | {std:.3f} | {sec:.1f} |"
        for n, size, label, mean, std, sec in rows
    ]
    table = "\n".join(lines)
    print("\n" + table)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    out = OUT.with_name("ckn_sequences_quick.md") if args.quick else OUT
    if args.dataset:
        suffix = "" if args.models == parser.get_default("models") else "_" + "_".join(args.models)
        out = OUT.with_name(f"ckn_sequences_{args.dataset}{suffix}.md")
    out.write_text(table + "\n")


if __name__ == "__main__":
    main()
