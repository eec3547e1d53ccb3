"""MMD two-sample tests: kernelkit's permutation test against hyppo's, and the linear-time test.

What a user would write instead (hyppo 0.5.2)::

    stat, p = hyppo.ksample.MMD(compute_kernel="rbf", gamma=g).test(X, Y, reps=J, auto=False)

kernelkit: ``kernelkit.stats.two_sample_test(X, Y, kernel=Gaussian(sigma), n_permutations=J)``
with ``sigma = 1 / sqrt(2 g)`` (the same kernel): one pooled Gram, and the ``J`` permutation
statistics as quadratic forms ``S^T K S`` of batches of permutation indicators (one matrix
product per 256 permutations).  hyppo recomputes its centred distance-correlation statistic
on the permuted ``N x N`` matrices once per permutation.

Cases:

1. ``n`` points per sample (default 2000), ``J`` permutations (default 1000).  hyppo's time is
   linear in the number of permutations, ``t(J) = a + b J``; it is measured at two small
   counts (``--hyppo-reps``, default 5 and 20) and ``a + b J`` is reported as its time at
   ``J`` (a run at J = 1000 takes hours on the shared 2-core machine).  kernelkit runs the
   full ``J``.
2. Same p-value: both libraries at ``--check-n`` points per sample (default 150) with the
   same ``J`` (mean shift 0.08 in every coordinate, so p is near 0.1, where Monte-Carlo
   error shows); the difference must lie within Monte-Carlo error, ``4 sqrt(2 p (1 - p) / J)``.
3. The streamed linear-time test on ``--linear-n`` points per sample (default 10^7, 4-D
   normal, mean shift 0.01) against the issue's limit of 60 s (``baseline_s = 60``; hyppo
   has no linear-time test).

Usage: ``python benchmarks/bench_mmd.py [--n 2000] [--J 1000] [--linear-n 10000000]``.
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

CPU: dict[str, float] = {}


def _timed(fn, key: str = ""):
    """Wall seconds and result of ``fn()``; its process CPU seconds go to ``CPU[key]`` (the
    machine is shared: wall time includes waiting for a core)."""
    start, cpu = time.perf_counter(), time.process_time()
    out = fn()
    CPU[key] = time.process_time() - cpu
    return time.perf_counter() - start, out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--J", type=int, default=1000)
    parser.add_argument("--dim", type=int, default=5)
    parser.add_argument("--hyppo-reps", type=int, nargs=2, default=[5, 20])
    parser.add_argument("--check-n", type=int, default=150)
    parser.add_argument("--linear-n", type=int, default=10_000_000)
    args = parser.parse_args(argv)

    from hyppo.ksample import MMD

    from kernelkit.kernels import Gaussian
    from kernelkit.stats import two_sample_test

    warnings.filterwarnings("ignore", message="The number of replications is low")
    rng = np.random.default_rng(0)
    gamma = 1.0 / (2 * args.dim)
    kernel = Gaussian(sigma=1.0 / math.sqrt(2 * gamma))
    rows = []

    X = rng.normal(size=(args.n, args.dim))
    Y = rng.normal(size=(args.n, args.dim)) + 0.03
    MMD(compute_kernel="rbf", gamma=gamma).test(X[:20], Y[:20], reps=5, auto=False)  # numba
    hyppo_t = []
    for reps in args.hyppo_reps:
        t, _ = _timed(
            lambda r=reps: MMD(compute_kernel="rbf", gamma=gamma).test(
                X, Y, reps=r, auto=False, random_state=0
            ),
            f"hyppo{reps}",
        )
        hyppo_t.append(t)
    (r1, r2), (t1, t2) = args.hyppo_reps, hyppo_t
    per_rep = (t2 - t1) / (r2 - r1)
    hyppo_full = t1 + per_rep * (args.J - r1)
    c1, c2 = CPU[f"hyppo{r1}"], CPU[f"hyppo{r2}"]
    hyppo_full_cpu = c1 + (c2 - c1) / (r2 - r1) * (args.J - r1)
    ours_t, res = _timed(
        lambda: two_sample_test(X, Y, kernel=kernel, n_permutations=args.J, random_state=0),
        "ours",
    )
    rows.append(
        {
            "case": f"permutation test, n={args.n} per sample, d={args.dim}, J={args.J}",
            "kernelkit_s": ours_t,
            "baseline": f"hyppo MMD.test(auto=False), a + b J from reps {r1} and {r2}",
            "baseline_s": hyppo_full,
            "hyppo_s_per_permutation": per_rep,
            "hyppo_measured_s": f"{t1:.1f} ({r1} reps), {t2:.1f} ({r2} reps)",
            "kernelkit_cpu_s": CPU["ours"],
            "baseline_cpu_s": hyppo_full_cpu,
            "cpu_ratio": round(hyppo_full_cpu / CPU["ours"], 1),
            "kernelkit_pvalue": res.pvalue,
        }
    )

    Xc, Yc = X[: args.check_n], Y[: args.check_n] + 0.08
    hy_t, (_, hy_p) = _timed(
        lambda: MMD(compute_kernel="rbf", gamma=gamma).test(
            Xc, Yc, reps=args.J, auto=False, random_state=0
        )
    )
    our_t, our = _timed(
        lambda: two_sample_test(Xc, Yc, kernel=kernel, n_permutations=args.J, random_state=0)
    )
    p = (hy_p + our.pvalue) / 2
    rows.append(
        {
            "case": f"same p-value, n={args.check_n} per sample, J={args.J}",
            "kernelkit_s": our_t,
            "baseline": "hyppo MMD.test(auto=False)",
            "baseline_s": hy_t,
            "kernelkit_pvalue": our.pvalue,
            "hyppo_pvalue": hy_p,
            "mc_bound": 4 * math.sqrt(2 * p * (1 - p) / args.J),
        }
    )

    N = args.linear_n
    XL = rng.standard_normal((N, 4), dtype=np.float32).astype(np.float64)
    YL = rng.standard_normal((N, 4), dtype=np.float32).astype(np.float64) + 0.01
    lin_t, lin = _timed(
        lambda: two_sample_test(XL, YL, kernel=Gaussian(2.0), method="linear", random_state=0),
        "linear",
    )
    rows.append(
        {
            "case": f"linear-time test, {N:.0e} points per sample, d=4",
            "kernelkit_s": lin_t,
            "baseline": "limit of issue 18 (hyppo has no linear-time test)",
            "baseline_s": 60.0,
            "kernelkit_cpu_s": CPU["linear"],
            "kernelkit_pvalue": lin.pvalue,
        }
    )
    report("bench_mmd", rows)


if __name__ == "__main__":
    main()
