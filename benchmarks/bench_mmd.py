"""MMD two-sample tests: kernelkit's permutation test against hyppo's, and the linear-time test.

What a user would write instead (hyppo 0.5.2)::

    stat, p = hyppo.ksample.MMD(compute_kernel="rbf", gamma=g).test(X, Y, reps=J, auto=False)

kernelkit: ``kernelkit.stats.two_sample_test(X, Y, kernel=Gaussian(sigma), n_permutations=J)``
with ``sigma = 1 / sqrt(2 g)`` (the same kernel): one pooled Gram, and the ``J`` permutation
statistics as quadratic forms ``S^T K S`` of batches of permutation indicators (one matrix
product per 256 permutations).

Why hyppo is slow (hyppo 0.5.2, ``independence/hsic.py``, ``tools/common.py``,
``independence/dcorr.py``): ``MMD.test`` computes the statistic, then ``KSample("Hsic").test``
builds the ``N x N`` Gram and the ``N x N`` label matrix and calls ``perm_test``, which for
every permutation copies the permuted label matrix (``y[order][:, order]``) and calls the
numba ``_dcorr``: it re-centres *both* ``N x N`` matrices (the Gram's centring, which never
changes, is recomputed each time) and takes three elementwise product sums, about ten
memory-bound passes over ``N^2`` doubles per permutation.  ``workers`` runs permutations in
joblib processes; ``random_state`` is not passed on by ``Hsic.test`` (its permutations are
unseeded); ``auto=True`` replaces the permutations by a chi-square approximation (not a
permutation test, so not the comparison asked for).  The fastest honest configuration here is
``workers=1``: ``workers=2`` on this 2-core machine took 266 s for 8 permutations against
36 s with ``workers=1`` (process start-up and shipping the 128 MB matrices).

Cases:

1. ``n`` points per sample (default 2000), ``J`` permutations (default 1000).  hyppo's time is
   linear in the number of permutations, ``t(J) = a + b J``; it is run in full at
   ``--hyppo-reps`` (default 10, 30, 100), ``a, b`` fitted by least squares, and
   ``a + b J`` reported as its time at ``J`` unless ``J`` is among the counts run (a run at
   J = 1000 takes over 20 minutes of one core).  kernelkit runs the full ``J``, and also the
   largest hyppo count, whose p-values are compared (within ``4 sqrt(2 p (1 - p) / J')``).
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
    parser.add_argument("--hyppo-reps", type=int, nargs="+", default=[10, 30, 100])
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
    hyppo_t, hyppo_cpu, hyppo_p = [], [], []
    for reps in args.hyppo_reps:
        t, (_, p) = _timed(
            lambda r=reps: MMD(compute_kernel="rbf", gamma=gamma).test(X, Y, reps=r, auto=False),
            f"hyppo{reps}",
        )
        hyppo_t.append(t)
        hyppo_cpu.append(CPU[f"hyppo{reps}"])
        hyppo_p.append(float(p))
    counts = np.array(args.hyppo_reps, dtype=float)
    (b, a), (bc, ac) = np.polyfit(counts, hyppo_t, 1), np.polyfit(counts, hyppo_cpu, 1)
    full = args.J in args.hyppo_reps
    hyppo_full = hyppo_t[args.hyppo_reps.index(args.J)] if full else a + b * args.J
    hyppo_full_cpu = hyppo_cpu[args.hyppo_reps.index(args.J)] if full else ac + bc * args.J
    ours_t, res = _timed(
        lambda: two_sample_test(X, Y, kernel=kernel, n_permutations=args.J, random_state=0),
        "ours",
    )
    J2 = max(args.hyppo_reps)
    ours2 = two_sample_test(X, Y, kernel=kernel, n_permutations=J2, random_state=0)
    p2 = (ours2.pvalue + hyppo_p[-1]) / 2
    measured = ", ".join(
        f"{t:.1f} s wall / {c:.1f} s CPU at J={r}"
        for r, t, c in zip(args.hyppo_reps, hyppo_t, hyppo_cpu, strict=True)
    )
    rows.append(
        {
            "case": f"permutation test, n={args.n} per sample, d={args.dim}, J={args.J}",
            "kernelkit_s": ours_t,
            "baseline": "hyppo MMD.test(auto=False, workers=1)"
            + ("" if full else f", a + b J fitted to J = {args.hyppo_reps}"),
            "baseline_s": hyppo_full,
            "hyppo_fit_wall_s": {"a": float(a), "b_per_permutation": float(b)},
            "hyppo_fit_cpu_s": {"a": float(ac), "b_per_permutation": float(bc)},
            "hyppo_measured": measured,
            "kernelkit_cpu_s": CPU["ours"],
            "baseline_cpu_s": hyppo_full_cpu,
            "cpu_ratio": round(hyppo_full_cpu / CPU["ours"], 1),
            "kernelkit_pvalue": res.pvalue,
            f"pvalues_at_J={J2}": {"kernelkit": ours2.pvalue, "hyppo": hyppo_p[-1]},
            f"mc_bound_at_J={J2}": 4 * math.sqrt(2 * p2 * (1 - p2) / J2),
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
