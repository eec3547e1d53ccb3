"""Gram engine and eigensolver benchmarks against scikit-learn / SciPy, in one run.

1. Gaussian Gram 20000 x 20000 (d = 16, float32): ``kernelkit.gram.gram`` vs scikit-learn's
   ``rbf_kernel`` on the same float32 data (target: >= 4x faster).
2. ``GramOperator.matmat`` of a Gaussian Gram on n = 100,000 points (d = 16, float32, 8
   right-hand sides) under a 1 GiB memory budget, in a subprocess that reports its peak
   resident memory (``VmHWM``, falling back to ``ru_maxrss``).  scikit-learn has no lazy
   operator; the baseline is a
   loop of ``rbf_kernel`` row chunks under the same budget, timed on 10% of the rows and
   scaled by 10 (labelled so in the table).
3. Top-50 eigenpairs of a centred Gaussian Gram at n = 5000 (float64): ``top_eigenpairs``
   with ``method="auto"`` vs ARPACK as scikit-learn's ``KernelPCA(eigen_solver="arpack")``
   calls it (``eigsh(K, k, which="LA", tol=0, v0=uniform(-1, 1))``); the other methods are
   listed too, so the ``auto`` choice can be checked.

Run: ``python benchmarks/bench_gram.py [--quick]`` (``--quick`` shrinks every size by ~4x).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import median_time, report

GIB = 1 << 30

_MATMAT_CHILD = r"""
import json, resource, sys, time
import numpy as np, torch
from sklearn.metrics.pairwise import rbf_kernel
from kernelkit.gram import GramOperator
from kernelkit.kernels import Gaussian
n, budget, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = np.random.default_rng(0)
X = rng.normal(size=(n, 16)).astype(np.float32)
V = rng.normal(size=(n, 8)).astype(np.float32)
sigma = 4.0
def rss():
    # peak resident set of this process (VmHWM: per address space, so unlike ru_maxrss it does
    # not inherit the parent's high-water mark across fork + exec)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
if mode == "kernelkit":
    op = GramOperator(Gaussian(sigma), torch.from_numpy(X), memory_budget=budget)
    Vt = torch.from_numpy(V)
    before = rss()
    t = time.perf_counter()
    R = op.matmat(Vt)
    secs = time.perf_counter() - t
    check = float(R[:3].sum())
else:  # scikit-learn rbf_kernel row chunks under the same budget, on 10% of the rows
    rows = max(1, budget // (3 * 8 * n))  # float64 distance temporaries, ~3 per entry
    before = rss()
    t = time.perf_counter()
    out = np.empty((n // 10, 8), dtype=np.float32)
    for s in range(0, n // 10, rows):
        e = min(s + rows, n // 10)
        out[s:e] = rbf_kernel(X[s:e], X, gamma=1.0 / (2 * sigma**2)) @ V
    secs = (time.perf_counter() - t) * 10
    check = float(out[:3].sum())
print(json.dumps({"seconds": secs, "rss_before": before, "rss_peak": rss(),
                  "inputs": X.nbytes + V.nbytes, "check": check}))
"""


def bench_gram(n: int, repeat: int) -> dict:
    from sklearn.metrics.pairwise import rbf_kernel

    from kernelkit.gram import gram
    from kernelkit.kernels import Gaussian

    X = np.random.default_rng(0).normal(size=(n, 16)).astype(np.float32)
    Xt = torch.from_numpy(X)
    sigma = 4.0
    k = Gaussian(sigma)
    K = gram(k, Xt)
    ref = rbf_kernel(X[:500], X, gamma=1.0 / (2 * sigma**2))
    err = float(np.abs(K[:500].numpy() - ref).max())
    del K
    ours = median_time(lambda: gram(k, Xt), repeat=repeat)
    theirs = median_time(lambda: rbf_kernel(X, gamma=1.0 / (2 * sigma**2)), repeat=repeat)
    return {
        "case": f"gaussian gram {n}x{n} d=16 float32",
        "kernelkit_s": ours,
        "baseline": "sklearn rbf_kernel",
        "baseline_s": theirs,
        "max_abs_diff": err,
    }


def bench_matmat(n: int, budget: int) -> dict:
    results = {}
    for mode in ("kernelkit", "sklearn"):
        proc = subprocess.run(
            [sys.executable, "-c", _MATMAT_CHILD, str(n), str(budget), mode],
            capture_output=True,
            text=True,
            check=True,
        )
        results[mode] = json.loads(proc.stdout.strip().splitlines()[-1])
    ours = results["kernelkit"]
    extra = ours["rss_peak"] - ours["rss_before"]
    return {
        "case": f"GramOperator.matmat gaussian n={n} d=16 float32 r=8, budget 1 GiB",
        "kernelkit_s": ours["seconds"],
        "baseline": "sklearn rbf_kernel row chunks (x10 from 10% of rows)",
        "baseline_s": results["sklearn"]["seconds"],
        "peak_rss_gib": round(ours["rss_peak"] / GIB, 3),
        "rss_growth_gib": round(extra / GIB, 3),
        "budget_plus_inputs_gib": round((budget + ours["inputs"]) / GIB, 3),
        "within_budget": extra <= budget + ours["inputs"],
    }


def bench_eigen(n: int, k: int) -> list[dict]:
    from scipy.sparse.linalg import eigsh

    from kernelkit.gram import center_gram, gram
    from kernelkit.kernels import Gaussian
    from kernelkit.solvers import top_eigenpairs

    X = torch.as_tensor(np.random.default_rng(0).normal(size=(n, 16)))
    Kc = center_gram(gram(Gaussian(4.0), X))
    Kn = Kc.numpy()

    def sklearn_arpack():
        v0 = np.random.RandomState(0).uniform(-1, 1, n)
        return eigsh(Kn, k, which="LA", tol=0, v0=v0)

    base_s = median_time(sklearn_arpack, repeat=1, warmup=0)
    ref_vals = np.sort(sklearn_arpack()[0])[::-1]
    rows = []
    for method in ("auto", "block", "arpack", "subset", "full"):
        res = top_eigenpairs(Kc, k, method=method)
        secs = median_time(lambda m=method: top_eigenpairs(Kc, k, method=m), repeat=1, warmup=0)
        rows.append(
            {
                "case": f"top-{k} eigenpairs n={n} float64, method={method} ({res.method})",
                "kernelkit_s": secs,
                "baseline": "scipy eigsh as sklearn KernelPCA(arpack)",
                "baseline_s": base_s,
                "max_rel_diff_values": float(
                    np.abs(res.values.numpy() - ref_vals).max() / ref_vals[0]
                ),
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes (smoke run)")
    args = parser.parse_args()
    q = args.quick
    torch.manual_seed(0)
    rows = [bench_gram(5000 if q else 20000, repeat=3)]
    print(rows[-1], flush=True)
    rows.append(bench_matmat(20000 if q else 100_000, GIB))
    print(rows[-1], flush=True)
    rows.extend(bench_eigen(1500 if q else 5000, 50))
    report("gram" + ("_quick" if q else ""), rows)


if __name__ == "__main__":
    start = time.perf_counter()
    main()
    print(f"\ntotal {time.perf_counter() - start:.1f} s")
