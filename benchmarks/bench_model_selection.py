"""A 30-value ``lam`` grid with closed-form leave-one-out against three plain fits, exact KRR.

``KernelRidge(lam=grid, cv="loo")`` eigendecomposes the Gram once and scores every grid
value in ``O(n^2)`` (:mod:`kernelkit.models.ridge_path`); the baseline is three plain
``KernelRidge(lam=1e-3)`` fits (Gram + Cholesky each), timed in the same run, and the 30
plain fits a grid search without the closed form would need at least.  The ratio is
``baseline_s / kernelkit_s``.  Timings on a shared machine are noisy.

Usage: ``python benchmarks/bench_model_selection.py [--n 5000] [--threads 1]``
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parent))

from _common import report

from kernelkit import KernelRidge
from kernelkit.kernels import Gaussian


def _seconds(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--d", type=int, default=8)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: default)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(args.n, args.d))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=args.n)
    kernel = Gaussian(sigma=float(np.sqrt(args.d)))
    grid = list(np.logspace(-8, 1, 30))
    path = KernelRidge(kernel, lam=grid, cv="loo")
    path_s = _seconds(lambda: path.fit(X, y))
    plain_s = [_seconds(lambda: KernelRidge(kernel, lam=1e-3).fit(X, y)) for _ in range(3)]
    rows = [
        {
            "case": f"30-lam LOO path n={args.n} d={args.d}",
            "kernelkit_s": round(path_s, 3),
            "baseline": "3 plain KernelRidge fits",
            "baseline_s": round(sum(plain_s), 3),
            "one_plain_fit_s": round(float(np.median(plain_s)), 3),
            "plain_fits_per_path": round(path_s / float(np.median(plain_s)), 2),
            "lam_": path.lam_,
            "torch_threads": torch.get_num_threads(),
        }
    ]
    report("bench_model_selection", rows)


if __name__ == "__main__":
    main()
