"""Time of one objective + gradient evaluation of a 2-layer K2AE (code 50, float32).

* exact: n = 500, 1000, 2000, 5000; the closed-form last layer through :class:`RidgeTrace`
  (one Cholesky, one triangular solve forward; one triangular solve and one symmetric product
  backward), compared in the same run with plain autograd through ``torch.cholesky_solve`` of
  the same collapsed objective ``lam tr(W^-1 K_in)`` (what a user would write first);
* landmarks (m = 500, Nyström output factor): n = 1000 ... 50000;
* the fitted exponents of time against n, and the paper's gradient cost
  ``O(n^3 L^2 p^3)`` (Laforgue et al. 2019, section 4.2) evaluated as a flop count for the same
  sizes (L = 2, p = 50), with the time it would take at the GEMM rate measured here.

Data: n points of R^10 (standard normal), Gaussian input kernel (sigma = sqrt(10)), first
layer Gaussian on its feature space, last layer Gaussian (median heuristic), random init.
Run: ``python benchmarks/bench_kae.py [--quick]``; writes ``results/bench_kae.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from functools import partial

import numpy as np
import torch
from _common import RESULTS_DIR, machine_info, median_time

from kernelkit.kernels import FeatureSpaceGaussian, Gaussian
from kernelkit.models import build_autoencoder
from kernelkit.models._autoencoder import AutoencoderData
from kernelkit.models._ridge import psd_factor
from kernelkit.solvers._cholesky import solve_triangular

P, M, D = 50, 500, 10
DTYPE = torch.float32


def _problem(n: int, landmarks: int | None, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, D, generator=g, dtype=DTYPE)
    k_in = Gaussian(sigma=math.sqrt(D))
    first = FeatureSpaceGaussian(k_in, sigma=1.0)
    trace = float(n)  # k_in(x, x) = 1
    if landmarks is None:
        K1 = first.block(X, X)
        data = AutoencoderData(K1, psd_factor(k_in.block(X, X)), trace)
    else:
        idx = torch.randperm(n, generator=g)[:landmarks]
        L = X[idx]
        R = psd_factor(k_in.block(L, L))
        B = solve_triangular(R, k_in.block(X, L).mT).mT
        data = AutoencoderData(first.block(X, L), B, trace, K1_support=first.block(L, L))
    model = build_autoencoder(data, (P,), [None, None], (1e-3, 1e-3), init="random")
    return model, data


def _eval(model, data) -> None:
    model.zero_grad()
    model.objective(data)[0].backward()


def _naive(model, data, K_in: torch.Tensor) -> None:
    """The same collapsed objective by plain autograd through cholesky + cholesky_solve."""
    model.zero_grad()
    passed = model.chain.forward_train(data.K1)
    Z = passed.outputs[-1]
    n, lam = Z.shape[0], model.lam[-1]
    W = model.head_kernel.block(Z, Z) + n * lam * torch.eye(n, dtype=Z.dtype)
    C = torch.linalg.cholesky(W)
    value = lam * torch.cholesky_solve(K_in, C).diagonal().sum() + model.lam[0] * passed.norms[0]
    value.backward()


def _gemm_rate(n: int = 2000) -> float:
    A = torch.randn(n, n, dtype=DTYPE)
    t = median_time(lambda: A @ A, repeat=3)
    return 2 * n**3 / t


def _exponent(ns: list[int], ts: list[float]) -> float:
    return float(np.polyfit(np.log(ns), np.log(ts), 1)[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller sizes (smoke run)")
    args = parser.parse_args()
    exact_ns = [500, 1000, 2000] if args.quick else [500, 1000, 2000, 5000]
    lm_ns = [1000, 5000] if args.quick else [1000, 2000, 5000, 10000, 20000, 50000]
    naive_max = 2000 if args.quick else 5000
    rate = _gemm_rate()
    rows = []
    exact_t = []
    for n in exact_ns:
        model, data = _problem(n, None)
        t = median_time(partial(_eval, model, data), repeat=3 if n <= 2000 else 2)
        row = {"mode": "exact", "n": n, "kernelkit_s": t}
        if n <= naive_max:
            K_in = data.out_factor @ data.out_factor.mT
            tn = median_time(partial(_naive, model, data, K_in), repeat=2 if n <= 2000 else 1)
            row.update(naive_autograd_s=tn, speedup=tn / t)
        flops = n**3 * 2**2 * P**3
        row.update(paper_gradient_flops=float(flops), paper_gradient_s_at_gemm_rate=flops / rate)
        rows.append(row)
        exact_t.append(t)
        print(row, flush=True)
    lm_t = []
    for n in lm_ns:
        model, data = _problem(n, M)
        t = median_time(partial(_eval, model, data), repeat=3)
        flops = n**3 * 2**2 * P**3
        row = {
            "mode": f"landmarks m={M}",
            "n": n,
            "kernelkit_s": t,
            "paper_gradient_flops": float(flops),
            "paper_gradient_s_at_gemm_rate": flops / rate,
        }
        rows.append(row)
        lm_t.append(t)
        print(row, flush=True)
    summary = {
        "exact_exponent": _exponent(exact_ns, exact_t),
        "landmark_exponent": _exponent(lm_ns, lm_t),
        "gemm_rate_gflops": rate / 1e9,
        "targets": {"exact_n5000_s": 3.0, "landmarks_n5000_s": 0.3},
    }
    print("\n| mode | n | time (s) | naive autograd (s) | paper O(n^3 L^2 p^3) flops |")
    print("|---|---|---|---|---|")
    for r in rows:
        naive = f"{r['naive_autograd_s']:.3g}" if "naive_autograd_s" in r else "-"
        print(
            f"| {r['mode']} | {r['n']} | {r['kernelkit_s']:.3g} | {naive} | "
            f"{r['paper_gradient_flops']:.2e} |"
        )
    print(
        f"\nfitted exponents: exact {summary['exact_exponent']:.2f}, "
        f"landmarks {summary['landmark_exponent']:.2f}; GEMM {summary['gemm_rate_gflops']:.0f} "
        "GFLOP/s"
    )
    RESULTS_DIR.mkdir(exist_ok=True)
    payload = {
        "benchmark": "bench_kae",
        "machine": machine_info(),
        "rows": rows,
        "summary": summary,
        "time": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    (RESULTS_DIR / "bench_kae.json").write_text(json.dumps(payload, indent=2))


if __name__ == "__main__":
    main()
