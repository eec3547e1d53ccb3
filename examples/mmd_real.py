"""MMD two-sample tests on real structured data: promoter sequences and soluble molecules.

Issue 18, item 7 (course part 3, section 2):

- the 53 E. coli promoters against the 53 non-promoters of ``../shared/data/promoter``
  (57 nt each), with spectrum kernels k = 1..5 and the mismatch kernel (k = 5, m = 1);
- the low-solubility class ``(A) low`` (519 molecules) against the high one ``(C) high``
  (246) of ``../shared/data/solubility`` (Huuskonen set), with the Tanimoto and MinMax
  kernels on Morgan fingerprints (radius 2, 2048 bits);

each by the permutation test (J = 1000) and the spectral test (J = 1000 draws), and a
control: a random half of one group against the other half (H0 true).  For the molecules,
the witness function names the molecules of each class the other lacks most.

Writes ``examples/results/mmd_real.json``.  About 2 minutes on one core.

Run: ``KERNELKIT_SHARED_DATA=../shared/data PYTHONPATH=src python examples/mmd_real.py``
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from kernelkit.kernels import MinMax, Mismatch, Spectrum, Tanimoto
from kernelkit.stats._mmd import pooled_gram, prepare, witness_from_gram
from kernelkit.stats._two_sample import gram_test

RESULTS = Path(__file__).parent / "results"
DATA = Path(
    os.environ.get("KERNELKIT_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
J = 1000


def compare(A: list, B: list, kernel, *, seed: int = 0) -> tuple[dict, torch.Tensor]:
    """Statistic, permutation and spectral p-values, and the control on halves of A + B."""
    samples, k = prepare(A, B, kernel)
    K = pooled_gram(k, samples)
    n = len(A)
    perm = gram_test(K, n, k, method="permutation", n_permutations=J, random_state=seed)
    spec = gram_test(K, n, k, method="spectral", n_permutations=J, random_state=seed)
    # control: a random half of A against the other half
    idx = torch.as_tensor(np.random.default_rng(seed).permutation(n))
    Kc = K[idx][:, idx]
    ctrl = gram_test(Kc, n // 2, k, method="permutation", n_permutations=J, random_state=seed)
    row = {
        "kernel": repr(k),
        "n_a": n,
        "n_b": len(B),
        "mmd2_u": perm.statistic,
        "p_permutation": perm.pvalue,
        "p_spectral": spec.pvalue,
        "control_p_permutation": ctrl.pvalue,
    }
    return row, K


def promoters() -> list[dict]:
    df = pd.read_csv(DATA / "promoter" / "promotergene.csv")
    seqs = [s.upper() for s in df["sequence"]]
    pos = [s for s, c in zip(seqs, df["class"], strict=True) if c == "+"]
    neg = [s for s, c in zip(seqs, df["class"], strict=True) if c == "-"]
    kernels = [Spectrum(k=k, alphabet="ACGT") for k in range(1, 6)]
    kernels.append(Mismatch(k=5, m=1, alphabet="ACGT"))
    rows = []
    for kernel in kernels:
        row, _ = compare(pos, neg, kernel)
        rows.append(row)
        print("promoter", row, flush=True)
    return rows


def molecules() -> tuple[list[dict], dict]:
    df = pd.read_csv(DATA / "solubility" / "solubility.csv")
    low = df[df.SOL_classification.str.startswith("(A)")]
    high = df[df.SOL_classification.str.startswith("(C)")]
    A, B = low.smiles.tolist(), high.smiles.tolist()
    rows, witness = [], {}
    for kernel in (Tanimoto(), MinMax()):
        row, K = compare(A, B, kernel)
        rows.append(row)
        print("solubility", row, flush=True)
        if isinstance(kernel, Tanimoto):
            w = witness_from_gram(K, len(A)).numpy()
            top_a = np.argsort(-w[: len(A)])[:5]
            top_b = np.argsort(w[len(A) :])[:5]
            witness = {
                "low solubility, largest witness": [
                    {"smiles": A[i], "name": low.NAME.iloc[i], "witness": float(w[i])}
                    for i in top_a
                ],
                "high solubility, smallest witness": [
                    {"smiles": B[i], "name": high.NAME.iloc[i], "witness": float(w[len(A) + i])}
                    for i in top_b
                ],
            }
    return rows, witness


def main() -> None:
    torch.set_num_threads(1)
    start = time.perf_counter()
    result = {"J": J, "promoter": promoters()}
    result["solubility"], result["solubility_witness"] = molecules()
    result["seconds"] = time.perf_counter() - start
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "mmd_real.json").write_text(json.dumps(result, indent=1))
    print(f"wrote {RESULTS}/mmd_real.json in {result['seconds']:.0f} s")


if __name__ == "__main__":
    main()
