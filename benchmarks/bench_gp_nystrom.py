"""The sparse (Nyström) GP at scale: fit with learned hyper-parameters and predict with std.

Two problems of ``n`` training points (``--n``, default 10^5) and 2000 test points:
vectors (``d = 10``, Gaussian kernel with its width, amplitude and noise learned by
Titsias's bound) and binary fingerprints (a CSR matrix of 2048 bits, about 3% set as in
Morgan fingerprints, Tanimoto kernel: amplitude and noise learned).  Each runs in a child
process whose peak resident memory (``ru_maxrss``) is reported with its wall time.  The baseline is
scikit-learn's exact ``GaussianProcessRegressor`` at the largest ``n`` whose ``n x n``
matrices it can hold here (``--sk-n``, default 5000), timed in the same run; at ``n = 10^5``
its covariance alone would take 80 GB.  Timings on a shared machine are noisy.

Usage: ``python benchmarks/bench_gp_nystrom.py [--n 100000] [--m 500] [--sk-n 5000]``
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from scipy import sparse

sys.path.insert(0, str(Path(__file__).parent))


def _problem(kind: str, n: int, seed: int = 0) -> tuple[Any, np.ndarray]:
    rng = np.random.default_rng(seed)
    if kind == "vectors":
        X = rng.normal(size=(n, 10))
        y = np.sin(X[:, 0]) + 0.5 * np.cos(X[:, 1] * X[:, 2]) + 0.1 * rng.normal(size=n)
        return X, y
    F = sparse.random(n, 2048, density=0.03, format="csr", random_state=seed, data_rvs=np.ones)
    y = np.asarray(F[:, :64].sum(1)).ravel() / 4 + 0.3 * rng.normal(size=n)
    return F, y


def child(kind: str, n: int, m: int, library: str) -> dict:
    """Fit and predict-with-std once; wall time, peak memory, test RMSE and std calibration."""
    X, y = _problem(kind, n + 2000)
    X, Xt, y, yt = X[:n], X[n:], y[:n], y[n:]
    start = time.perf_counter()
    if library == "kernelkit":
        from kernelkit import GaussianProcessRegressor
        from kernelkit.kernels import Gaussian, Tanimoto

        kernel = Gaussian(sigma=3.0) if kind == "vectors" else Tanimoto()
        gp = GaussianProcessRegressor(kernel, solver="nystrom", n_centers=m, random_state=0)
    else:
        from sklearn.gaussian_process import GaussianProcessRegressor as SkGPR
        from sklearn.gaussian_process.kernels import RBF, WhiteKernel
        from sklearn.gaussian_process.kernels import ConstantKernel as C

        gp = SkGPR(C(1.0) * RBF(3.0) + WhiteKernel(0.1), random_state=0)
    gp.fit(X, y)
    mean, std = gp.predict(Xt, return_std=True)
    seconds = time.perf_counter() - start
    z = (yt - mean) / np.sqrt(std**2 + (gp.noise_ if library == "kernelkit" else 0.0))
    return {
        "case": f"{kind} n={n}" + (f" m={m}" if library == "kernelkit" else ""),
        "library": library,
        "seconds": round(seconds, 2),
        "peak_rss_gb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 2),
        "test_rmse": round(float(np.sqrt(np.mean((yt - mean) ** 2))), 4),
        "within_1.64_sd": round(float(np.mean(np.abs(z) < 1.645)), 3),
    }


def _run(kind: str, n: int, m: int, library: str) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(n), str(m), library],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--m", type=int, default=500)
    parser.add_argument("--sk-n", type=int, default=5000)
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, n, m, library = args.child
        print(json.dumps(child(kind, int(n), int(m), library)))
        return
    rows = [_run("vectors", args.sk_n, args.m, "scikit-learn")]
    rows.append(_run("vectors", args.sk_n, args.m, "kernelkit"))
    for kind in ("vectors", "fingerprints"):
        rows.append(_run(kind, args.n, args.m, "kernelkit"))
    for row in rows:
        print(json.dumps(row))
    out = Path(__file__).parent / "results" / "gp_nystrom.json"
    out.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
