"""SVMs on raw sequences: E. coli promoters (DNA) and antimicrobial / anticancer peptides.

Kernels: spectrum, (k, m)-mismatch and local alignment, all normalised
(``k(x, y) / sqrt(k(x, x) k(y, y))``), with ``KernelSVC`` (libsvm on the kernelkit Gram).
Protocol: 10-fold stratified cross-validation (shuffled, ``random_state=0``); inside each
training fold an inner 3-fold stratified grid search picks the hyperparameters (nested CV, so
the reported accuracy is not tuned on its own test folds).

* Spectrum and mismatch run end to end on the raw strings:
  ``GridSearchCV(KernelSVC(Spectrum(...).normalized()), {"kernel__kernel__k": ..., "C": ...})``
  inside ``cross_val_score``.
* Local alignment costs O(|x| |y|) per pair, so its normalised Gram is computed once on all
  sequences (it has no fitted state: a pair's value does not depend on the other sequences,
  so nothing leaks between folds) and the same nested CV runs on
  ``KernelSVC(kernel=Precomputed())`` over ``C``; ``beta`` is fixed a priori (0.2 for DNA with
  a +2/-1 match score and gap penalties 3/1, the course's test setting; 0.1 for proteins with
  BLOSUM62 and gap penalties 11/1, as in Saigo et al. 2004).

Datasets (``--data``, default ``<repo>/../shared/data``): ``promoter`` (106 x 57 nt),
``AMPvsTMset`` (412 peptides, 8-56 aa) and ``ACP_CancPPD_vs_TM`` (826 peptides, 8-30 aa).
The large ``AMPvsUniProt`` set (5200) is not used here (see ``benchmarks/bench_strings.py``).

Run: ``python examples/strings_svm.py`` (a few minutes on 2 cores); ``--quick`` uses 3 outer
folds and one dataset for a smoke test.  Prints a Markdown table and writes it to ``--out``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score

from kernelkit import KernelSVC
from kernelkit.data._datasets import SequenceDataset, load_amp, load_promoter
from kernelkit.gram import gram
from kernelkit.kernels import LocalAlignment, Mismatch, Precomputed, Spectrum

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "strings_svm.md"
C_GRID = [0.1, 1.0, 10.0]


def run_strings(data: SequenceDataset, kernel, grid, outer_folds: int):
    X = np.asarray(data.sequences, dtype=object)
    scores = cross_val_score(
        GridSearchCV(
            KernelSVC(kernel=kernel), grid, cv=StratifiedKFold(3, shuffle=True, random_state=1)
        ),
        X,
        data.y,
        cv=StratifiedKFold(outer_folds, shuffle=True, random_state=0),
    )
    return scores


def run_precomputed(data: SequenceDataset, kernel, outer_folds: int):
    K = gram(kernel, data.sequences)
    scores = cross_val_score(
        GridSearchCV(
            KernelSVC(kernel=Precomputed()),
            {"C": C_GRID},
            cv=StratifiedKFold(3, shuffle=True, random_state=1),
        ),
        K,
        data.y,
        cv=StratifiedKFold(outer_folds, shuffle=True, random_state=0),
    )
    return scores


def experiments(datasets: dict[str, SequenceDataset]):
    """(dataset, kernel label, runner) triples."""
    for name, data in datasets.items():
        alphabet = "dna" if name == "promoter" else "protein"
        yield (
            name,
            "spectrum, k in {2,3,4,5}",
            lambda d=data, a=alphabet: ("strings", Spectrum(3, alphabet=a).normalized(),
                                        {"kernel__kernel__k": [2, 3, 4, 5], "C": C_GRID}, d),
        )  # fmt: skip
        mm_k = [3, 4, 5] if alphabet == "dna" else [3, 4]
        yield (
            name,
            f"mismatch, m=1, k in {{{','.join(map(str, mm_k))}}}",
            lambda d=data, a=alphabet, ks=mm_k: ("strings", Mismatch(3, 1, alphabet=a).normalized(),
                                                 {"kernel__kernel__k": ks, "C": C_GRID}, d),
        )  # fmt: skip
        if alphabet == "dna":
            la = LocalAlignment(beta=0.2, gap_open=3.0, gap_extend=1.0, matrix=(2.0, -1.0))
            label = "local alignment, +2/-1, gaps 3/1, beta=0.2"
        else:
            la = LocalAlignment(beta=0.1, gap_open=11.0, gap_extend=1.0, matrix="BLOSUM62")
            label = "local alignment, BLOSUM62, gaps 11/1, beta=0.1"
        yield name, label, lambda d=data, k=la: ("gram", k.normalized(), None, d)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="shared data folder")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="Markdown results file")
    parser.add_argument("--folds", type=int, default=10, help="outer CV folds (default 10)")
    parser.add_argument("--quick", action="store_true", help="3 folds, promoter data only")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads (default 1: the alignment sweeps are many small tensor ops, "
        "which extra threads slow down on a busy machine)",
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    folds = 3 if args.quick else args.folds
    datasets = {"promoter": load_promoter(args.data)}
    if not args.quick:
        datasets["AMPvsTMset"] = load_amp(args.data, "AMPvsTMset")
        datasets["ACP_CancPPD_vs_TM"] = load_amp(args.data, "ACP_CancPPD_vs_TM")

    rows = []
    for name, label, make in experiments(datasets):
        mode, kernel, grid, data = make()
        start = time.perf_counter()
        if mode == "strings":
            scores = run_strings(data, kernel, grid, folds)
        else:
            scores = run_precomputed(data, kernel, folds)
        seconds = time.perf_counter() - start
        rows.append((name, len(data), label, scores.mean(), scores.std(), seconds))
        print(
            f"{name:>18} | {label:<48} | {scores.mean():.3f} +- {scores.std():.3f} | {seconds:.1f}s"
        )

    lines = [
        f"Nested CV: {folds}-fold stratified outer (accuracy mean +- std over folds), "
        f"3-fold inner grid search over C in {C_GRID} and k; normalised kernels; KernelSVC.",
        "",
        "| dataset | n | kernel | accuracy | std | time (s) |",
        "|---|---:|---|---:|---:|---:|",
    ]
    lines += [
        f"| {n} | {size} | {label} | {mean:.3f} | {std:.3f} | {sec:.1f} |"
        for n, size, label, mean, std, sec in rows
    ]
    table = "\n".join(lines)
    print("\n" + table)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(table + "\n")
    print(f"\nwritten to {args.out}")


if __name__ == "__main__":
    main()
