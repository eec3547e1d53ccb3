"""Falkon's CG iterations against ``lam``, ``m`` and ``tol`` (the model of ``cg_passes``).

``KernelRidge(solver="nystrom", nystrom_method="pcg")`` on ``bench_falkon``'s problem (d = 10,
Gaussian(SIGMA),
float32 data, noise 0.1) at ``--n`` points, ``random_state=0`` centres, ``max_iter=500``, for
every ``m`` of ``--m``, ``tol`` of ``--tol`` and ``lam`` of ``--lam``: the iterations CG took
(``n_iter_``) next to :func:`kernelkit.models._falkon.cg_passes` of the same settings (ridge:
the passes are the iterations).  Rows are kernelkit against its own model.

Run: ``python benchmarks/screen_cg_iterations.py [--n 100000]``; writes
``results/screen_cg_iterations.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _common import RESULTS_DIR, machine_info
from bench_falkon import SIGMA, _data

from kernelkit import KernelRidge
from kernelkit.kernels import Gaussian
from kernelkit.models._falkon import cg_passes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--m", type=int, nargs="+", default=[500, 1000, 2000])
    parser.add_argument("--tol", type=float, nargs="+", default=[1e-3, 1e-4, 1e-6])
    parser.add_argument(
        "--lam", type=float, nargs="+", default=[1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2]
    )
    args = parser.parse_args()
    X, y, *_ = _data(args.n, 10)
    rows = []
    for m in args.m:
        for tol in args.tol:
            for lam in args.lam:
                model = KernelRidge(
                    Gaussian(SIGMA), lam=lam, tol=tol, solver="nystrom", nystrom_method="pcg",
                    n_centers=m, random_state=0, max_iter=500,
                ).fit(X, y)  # fmt: skip
                rows.append(
                    {
                        "m": m,
                        "tol": tol,
                        "lam": lam,
                        "iterations": int(model.n_iter_),
                        "modelled": round(cg_passes(m, tol=tol, lam=lam), 1),
                    }
                )
                print(json.dumps(rows[-1]), flush=True)
    out = RESULTS_DIR / "screen_cg_iterations.json"
    result = {"benchmark": "screen_cg_iterations", "machine": machine_info(), "n": args.n}
    out.write_text(json.dumps({**result, "rows": rows}, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
