"""HSIC independence test: kernelkit's batched permutation test against hyppo's ``Hsic``.

What a user would write instead (hyppo 0.5.2)::

    stat, p = hyppo.independence.Hsic(compute_kernel="rbf", gamma=g).test(x, y, reps=J,
                                                                            auto=False)

kernelkit: ``kernelkit.stats.independence_test(x, y, kernel_x=Gaussian(s), kernel_y=
Gaussian(s), n_permutations=J)`` with ``s = 1 / sqrt(2 g)`` (the same kernels): one centred
Gram ``HKH``, and the ``J`` permutation statistics ``<HKH, L[pi][:, pi]>`` in batches, here
through the eigendecompositions of the two Grams (one GEMM per block of permutations,
:func:`kernelkit.stats._hsic.hsic_permutation_null`).  hyppo's ``perm_test`` copies the
permuted Gram and re-centres both Grams for every permutation (numba ``_dcorr``); run with
``workers=1`` (process workers cost more than they save on 2 shared cores, see
``bench_mmd.py``).  Both p-values are compared against Monte-Carlo error
``4 sqrt(2 p (1 - p) / J)``.

Usage: ``python benchmarks/bench_hsic.py [--n 500] [--J 1000]``.  Wall and process-CPU
seconds are both reported: the machine is shared, so wall time includes waiting for a core.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import report


def _timed(fn):
    start, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - start, time.process_time() - cpu, out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--J", type=int, default=1000)
    parser.add_argument("--dim", type=int, default=3)
    args = parser.parse_args(argv)

    from hyppo.independence import Hsic

    from kernelkit.kernels import Gaussian
    from kernelkit.stats import independence_test

    warnings.filterwarnings("ignore", message="The number of replications is low")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(args.n, args.dim))
    y = 0.15 * x[:, :1] + rng.normal(size=(args.n, 1))
    gamma = 0.5
    k = Gaussian(sigma=1.0 / math.sqrt(2 * gamma))
    Hsic(compute_kernel="rbf", gamma=gamma).test(x[:20], y[:20], reps=5, auto=False)  # numba
    independence_test(x[:20], y[:20], kernel_x=k, kernel_y=k, n_permutations=5)
    hy_t, hy_cpu, (_, hy_p) = _timed(
        lambda: Hsic(compute_kernel="rbf", gamma=gamma).test(
            x, y, reps=args.J, auto=False, workers=1, random_state=0
        )
    )
    our_t, our_cpu, res = _timed(
        lambda: independence_test(
            x, y, kernel_x=k, kernel_y=k, n_permutations=args.J, random_state=0
        )
    )
    p = (hy_p + res.pvalue) / 2
    report(
        "bench_hsic",
        [
            {
                "case": f"HSIC permutation test, n={args.n}, d={args.dim}, J={args.J}",
                "kernelkit_s": our_t,
                "baseline": "hyppo Hsic.test(auto=False, workers=1)",
                "baseline_s": hy_t,
                "kernelkit_cpu_s": our_cpu,
                "baseline_cpu_s": hy_cpu,
                "cpu_ratio": round(hy_cpu / our_cpu, 2),
                "kernelkit_pvalue": res.pvalue,
                "hyppo_pvalue": float(hy_p),
                "mc_bound": 4 * math.sqrt(2 * p * (1 - p) / args.J),
            }
        ],
    )


if __name__ == "__main__":
    main()
