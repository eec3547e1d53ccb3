"""Nyström kernel PCA and kernel k-means at n = 10^6 against scikit-learn's Nystroem pipelines.

* ``KernelPCA(solver="nystrom", n_centers=m)`` (fit, then ``transform`` of the training set)
  on a 10-D Gaussian cloud, beside what a user would run instead, scikit-learn
  ``Nystroem(n_components=m) + PCA``, whose ``n x m`` features are materialised (run where
  they fit in ``--sk-limit-gb``, else their projected size is recorded);
* ``KernelKMeans(solver="nystrom", n_centers=m)`` on concentric circles (``factor=0.3``,
  ``noise=0.05``, ``Gaussian(0.3)``), its adjusted Rand index against the true circles,
  beside ``Nystroem(m) + KMeans`` with the same kernel.

KernelPCA also runs on float32 data (``--kpca-dtypes``): its one pass then forms the tile
products in float32 (summed in float64), against the float64 data of the same run.
Every case runs in its own subprocess, which reports its wall seconds (fit and transform
apart for KernelPCA), peak resident memory (``ru_maxrss``, data included), the 1-minute load
average before it started and the torch threads.  Run
``python benchmarks/bench_nystrom_unsupervised.py`` (defaults: n = 10^6, d = 10, m = 2000
for KPCA, m = 200 for k-means); writes ``benchmarks/results/bench_nystrom_unsupervised.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

SIGMA_KPCA = 3.0
SIGMA_CIRCLES = 0.3


def _kpca_data(n: int, d: int) -> np.ndarray:
    return np.random.default_rng(0).normal(size=(n, d))


def _circles(n: int):
    from sklearn.datasets import make_circles

    return make_circles(n, factor=0.3, noise=0.05, random_state=0)


def run_case(case: dict) -> dict:
    """One case in this process: wall seconds, peak RSS and the case's quality numbers."""
    import torch
    from sklearn.cluster import KMeans
    from sklearn.decomposition import PCA
    from sklearn.kernel_approximation import Nystroem
    from sklearn.metrics import adjusted_rand_score

    from kernelkit import KernelKMeans, KernelPCA
    from kernelkit.kernels import Gaussian

    out: dict = {"load_1min": os.getloadavg()[0], "threads": torch.get_num_threads()}
    if case["what"] == "kpca":
        X = _kpca_data(case["n"], case["d"]).astype(case.get("dtype", "float64"))
        start = time.perf_counter()
        if case["lib"] == "kernelkit":
            est = KernelPCA(
                Gaussian(SIGMA_KPCA), 2, solver="nystrom", n_centers=case["m"], random_state=0
            )
            est.fit(X)
            out["fit_seconds"] = time.perf_counter() - start
            Z = est.transform(X)
            out["eigenvalues"] = np.asarray(est.eigenvalues_, dtype=float).tolist()
        else:
            gamma = 1 / (2 * SIGMA_KPCA**2)
            F = Nystroem(gamma=gamma, n_components=case["m"], random_state=0).fit_transform(X)
            pca = PCA(2, random_state=0).fit(F)
            Z = pca.transform(F)
            out["eigenvalues"] = (pca.explained_variance_ * (len(X) - 1)).tolist()
        out["codes_shape"] = list(Z.shape)
    else:
        X, y = _circles(case["n"])
        start = time.perf_counter()
        if case["lib"] == "kernelkit":
            est = KernelKMeans(
                2, Gaussian(SIGMA_CIRCLES), solver="nystrom", n_centers=case["m"], random_state=0
            )
            labels = est.fit(X).labels_
            out["feature_rank"] = est.feature_rank_
            out["n_iter"] = est.n_iter_
        else:
            gamma = 1 / (2 * SIGMA_CIRCLES**2)
            F = Nystroem(gamma=gamma, n_components=case["m"], random_state=0).fit_transform(X)
            labels = KMeans(2, n_init=10, random_state=0).fit(F).labels_
        out["ari"] = float(adjusted_rand_score(y, labels))
    out["seconds"] = time.perf_counter() - start
    out["peak_rss_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10**6)
    parser.add_argument("--d", type=int, default=10)
    parser.add_argument("--m-kpca", type=int, default=2000)
    parser.add_argument("--m-kmeans", type=int, default=200)
    parser.add_argument("--sk-limit-gb", type=float, default=6.0)
    parser.add_argument("--kpca-dtypes", default="float64,float32")
    parser.add_argument("--what", default="kpca,kmeans", help="cases: kpca, kmeans or both")
    parser.add_argument("--out", default="bench_nystrom_unsupervised.json")
    parser.add_argument("--case", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        print(json.dumps(run_case(json.loads(args.case))))
        return
    cases = []
    what = args.what.split(",")
    if "kpca" in what:
        for dtype in args.kpca_dtypes.split(","):
            kpca = {"what": "kpca", "n": args.n, "d": args.d, "m": args.m_kpca, "dtype": dtype}
            cases.append({**kpca, "lib": "kernelkit"})
        cases.append({**kpca, "lib": "sklearn", "dtype": "float64"})
    if "kmeans" in what:
        for lib in ("kernelkit", "sklearn"):
            cases.append({"what": "kmeans", "lib": lib, "n": args.n, "m": args.m_kmeans})
    rows = []
    for case in cases:
        features_gb = case["n"] * case["m"] * 8 / 2**30
        if case["lib"] == "sklearn" and features_gb > args.sk_limit_gb:
            rows.append({**case, "skipped": f"n x m features {features_gb:.1f} GB"})
            print(json.dumps(rows[-1]), flush=True)
            continue
        cmd = [sys.executable, __file__, "--case", json.dumps(case)]
        result = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            rows.append({**case, "error": result.stderr.strip().splitlines()[-1:]})
        else:
            rows.append({**case, **json.loads(result.stdout.strip().splitlines()[-1])})
        print(json.dumps(rows[-1]), flush=True)
    path = Path(__file__).parent / "results" / args.out
    path.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
