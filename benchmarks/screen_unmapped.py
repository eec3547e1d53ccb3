"""The one-pass ridge statistics summed unmapped against the per-tile feature map (an ablation).

For ``bench_falkon``'s problem (d = 10, Gaussian(SIGMA), float32 data, noise 0.1) at ``--n``
points, every ``m`` of ``--m`` (the first ``m`` rows of a seeded permutation as centres) and
every ``lam`` of ``--lam``: the condition number ``kappa(P)`` of ``P = K_mm + tau s I``
(``numpy.linalg.eigvalsh``), :func:`kernelkit.solvers._nystrom_normal.unmapped_error_bound`,
the relative difference of the two forms' solutions in feature coordinates (the mapped one
as reference: its own error is of order ``eps_64 kappa(P)^{1/2}``), and the wall seconds of
:func:`kernelkit.models._falkon.nystrom_statistics` in each form (the pass, and for the
unmapped form the bound and the final map ``L^{-1} H L^{-T}``) and their CPU seconds, on
all threads or on ``--threads`` (torch's and the BLAS's; the calibration of
``models.falkon.ONEPASS_UNMAPPED_*`` used one), ``K_nm`` streamed.  Rows are kernelkit
against kernelkit.

``--fits``: instead, the wall seconds (best of 2) of ``KernelRidge`` fit + predict on 10^5
test points at each ``m`` and the first ``--lam``, with ``--tol``: the one-pass solver (the
form its ``tol`` takes, recorded), the one-pass solver at ``tol = 1e-300`` (the per-tile map),
PCG (``K_nm`` kept when it fits) and ``"auto"`` (its pick recorded), on ``--device`` (torch
tensors there, the device synchronised before the clock stops).

Run: ``python benchmarks/screen_unmapped.py [--n 100000] [--m 200 500 1000 2000]
[--lam 1e-3 1e-4 1e-6] [--threads 1] [--fits --tol 1e-3 --device cpu --out F]``; writes
``results/screen_unmapped_<n>[_1thread].json`` (``--fits``: ``--out`` or
``screen_unmapped_fits_<n>_<device>.json``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import torch
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).parent))

from _common import RESULTS_DIR, machine_info, method_of, solver_params
from bench_falkon import N_TEST, SIGMA, _data

from kernelkit import KernelRidge
from kernelkit.kernels import Gaussian
from kernelkit.models import _falkon as falkon
from kernelkit.models._falkon import nystrom_statistics, nystrom_system
from kernelkit.solvers._nystrom_normal import nystrom_normal_solve, unmapped_error_bound


def row(X: torch.Tensor, Y: torch.Tensor, m: int, lam: float) -> dict:
    index = np.random.default_rng(0).permutation(len(X))[:m]
    system = nystrom_system(Gaussian(SIGMA), X, index, lam=lam, memory_budget=0)
    L = system.factor.L
    P = L @ L.T
    bound = unmapped_error_bound(P, L, lam)
    eig = np.linalg.eigvalsh(P.numpy())
    seconds, cpu, solutions = {}, {}, {}
    for form, tol in (("mapped", None), ("unmapped", float("inf"))):
        start, start_cpu = time.perf_counter(), time.process_time()
        stats = nystrom_statistics(system, Y, lam=lam, tol=tol)
        seconds[form] = time.perf_counter() - start
        cpu[form] = time.process_time() - start_cpu
        solutions[form] = nystrom_normal_solve(stats, lam).solution
    ref = solutions["mapped"]
    error = float((solutions["unmapped"] - ref).norm() / ref.norm())
    return {
        "m": m,
        "lam": lam,
        "kappa": float(eig[-1] / eig[0]),
        "bound": bound,
        "error": error,
        "bound_over_error": bound / error if error > 0 else None,
        "mapped_s": round(seconds["mapped"], 3),
        "unmapped_s": round(seconds["unmapped"], 3),
        "speedup": round(seconds["mapped"] / seconds["unmapped"], 2),
        "mapped_cpu_s": round(cpu["mapped"], 3),
        "unmapped_cpu_s": round(cpu["unmapped"], 3),
    }


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def fits(n: int, m: int, lam: float, tol: float, device: str) -> dict:
    X, y, Xt, _, yt = _data(n, N_TEST)
    X, y, Xt = (torch.as_tensor(a).to(device) for a in (X, y, Xt))
    result: dict = {"m": m, "lam": lam, "tol": tol}
    for name, solver, solver_tol in (
        ("onepass", "onepass", tol),
        ("onepass_mapped", "onepass", 1e-300),
        ("pcg", "nystrom", tol),
        ("auto", "auto", tol),
    ):
        calls: list[int] = []
        mapped_once = falkon.to_features
        falkon.to_features = lambda *a, f=mapped_once, c=calls: c.append(1) or f(*a)
        best = float("inf")
        try:
            for _ in range(2):
                _sync(device)
                start = time.perf_counter()
                model = KernelRidge(
                    Gaussian(SIGMA),
                    lam=lam,
                    tol=solver_tol,
                    **solver_params(solver),
                    n_centers=m,
                    random_state=0,
                ).fit(X, y)
                pred = model.predict(Xt)
                _sync(device)
                best = min(best, time.perf_counter() - start)
        finally:
            falkon.to_features = mapped_once
        result[name] = {
            "seconds": round(best, 3),
            "unmapped": bool(calls),
            "solver_": method_of(model),
            "test_mse": float(((pred.double().cpu().numpy() - yt) ** 2).mean()),
        }
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--m", type=int, nargs="+", default=[200, 500, 1000, 2000])
    parser.add_argument("--lam", type=float, nargs="+", default=[1e-3, 1e-4, 1e-6])
    parser.add_argument("--fits", action="store_true", help="estimator fits (module docstring)")
    parser.add_argument("--tol", type=float, default=1e-3, help="tol of the fits")
    parser.add_argument("--device", default="cpu", help="device of the fits")
    parser.add_argument("--threads", type=int, default=None, help="torch and BLAS threads")
    parser.add_argument("--out", type=Path, default=None, help="results file of --fits")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
        threadpool_limits(args.threads)
    if args.fits:
        rows = [fits(args.n, m, args.lam[0], args.tol, args.device) for m in args.m]
        for r in rows:
            print(json.dumps(r), flush=True)
        device = args.device.split(":")[0]
        out = args.out or RESULTS_DIR / f"screen_unmapped_fits_{args.n}_{device}.json"
        name = torch.cuda.get_device_name() if device == "cuda" else None
        result = {"benchmark": "screen_unmapped --fits", "machine": machine_info(), "gpu": name}
        out.write_text(json.dumps({**result, "n": args.n, "rows": rows}, indent=1) + "\n")
        print(f"wrote {out}")
        return
    X, y, *_ = _data(args.n, 10)
    X, Y = torch.as_tensor(X), torch.as_tensor(y, dtype=torch.float64)[:, None]
    rows = []
    for m in args.m:
        for lam in args.lam:
            rows.append(row(X, Y, m, lam))
            print(json.dumps(rows[-1]), flush=True)
    suffix = f"_{args.threads}thread" if args.threads else ""
    out = RESULTS_DIR / f"screen_unmapped_{args.n}{suffix}.json"
    result = {"benchmark": "screen_unmapped", "machine": machine_info(), "n": args.n, "rows": rows}
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
