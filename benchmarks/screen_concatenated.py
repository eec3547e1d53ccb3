"""Feasibility of subsample screening for concatenated regression (issue 14).

Rule measured: run the 64 initialisations (``random_state=0``) to convergence on a random
subsample of ``n_s = round(frac N)`` training points, group their ends into distinct optima
(objective within 1e-6 and Gram ``Z Z^T`` within 1e-3, as ``fit_concatenated``), and continue
the representatives of the ``k`` lowest distinct optima on the full data, warm-started from
their subsample coefficients padded with zeros (the inner map ``g(x) = sum_{j in S} k_I(x, x_j)
diag(w) c_j`` is the same function on the full set).  Compared, in the same process, with the
64 restarts on the full data: final objective against the best of 64 and time / row
evaluations.

The cases are those of ``bench_concatenated.py --auto`` (0-7: h1, h2 x least squares,
interpolation x inner Poly p = 1, 2, N = 100; 8: ESOL's descriptors, N = 150), the fractions
1/4 and 1/3 (one random subsample each, seed 0) and k = 1, 2, 4.  ``--paper-mu``: on the
subsample an interpolation problem keeps the paper's ``n mu`` (``mu n / n_s``) instead of the
estimator's ``mu``.  ``--all``: every distinct subsample optimum is continued, and
``rank_reaching_best`` is the position (by subsample objective) of the first whose
continuation reaches the best of 64 (``None``: none does).

Run: ``python benchmarks/screen_concatenated.py [--cases i ...] [--paper-mu] [--all]
[--name NAME]`` (rows to ``results/NAME.json``, default ``concatenated_screen``).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch
from _common import RESULTS_DIR
from bench_concatenated import _data, _esol, _h2_data

from kernelkit.kernels import Gaussian, Polynomial, TensorMatern
from kernelkit.models._concatenated import build_concatenated, restart_problem
from kernelkit.solvers._lbfgs import lbfgs_batched
from kernelkit.solvers._optima import DistinctOptima

FRACS = (1 / 4, 1 / 3)
KS = (1, 2, 4)


def _spec(setting: str, p: int, n: int) -> dict:
    if setting == "interpolation":
        return dict(
            inner=[Polynomial(degree=p)], outer=TensorMatern(s=1.0), lam=0.0, mu=[1.0 / n],
            interpolate=True,
        )  # fmt: skip
    return dict(
        inner=[Polynomial(degree=p)], outer=Gaussian(sigma=0.1), lam=2.0**-9, mu=[2.0**-9],
        interpolate=False,
    )  # fmt: skip


def _build(spec: dict, X: torch.Tensor, y: torch.Tensor, restarts: int):
    return build_concatenated(
        X, y, spec["inner"], [X.shape[1]], spec["outer"], lam=spec["lam"], mu=spec["mu"],
        interpolate=spec["interpolate"], n_restarts=restarts, random_state=0,
    )  # fmt: skip


def _run(model, data, x0, max_iter):
    fun = restart_problem(model, data).objective
    t = time.perf_counter()
    x, res = lbfgs_batched(fun, x0, max_iter=max_iter, tol=1e-9)
    return x, res, time.perf_counter() - t


def _first_reaching(values: torch.Tensor, best: float) -> int | None:
    """1-based position (subsample order) of the first continuation within 1e-6 of ``best``."""
    hit = (values <= best + 1e-6 * abs(best)).nonzero()
    return int(hit[0]) + 1 if len(hit) else None


def case_rows(name, spec, X, y, max_iter, paper_mu=False, ks=KS):
    Xt, yt = torch.as_tensor(X), torch.as_tensor(y)
    n, d = Xt.shape
    model, data = _build(spec, Xt, yt, 64)
    _, res64, t64 = _run(model, data, restart_problem(model, data).start, max_iter)
    best64 = float(res64.values.min())
    rows = []
    for frac in FRACS:
        ns = round(frac * n)
        S = np.sort(np.random.default_rng(0).choice(n, ns, replace=False))
        # interpolation: the paper's objective y^T Q^-1 y + n mu ||g||^2 keeps n mu, so the
        # subsample's mu is mu n / n_s (paper_mu); otherwise the estimator's mu as given
        scale = n / ns if paper_mu and spec["interpolate"] else 1.0
        sub, sdata = _build({**spec, "mu": [m * scale for m in spec["mu"]]}, Xt[S], yt[S], 64)
        sub_problem = restart_problem(sub, sdata)
        xs, rs, ts = _run(sub, sdata, sub_problem.start, max_iter)
        distinct = DistinctOptima(1e-6, sub_problem.image_gram)
        order = torch.argsort(rs.values)
        labels = distinct.assign(xs[order], rs.values[order])
        reps, seen = [], set()
        for i, lab in zip(order.tolist(), labels.tolist(), strict=True):
            if lab >= 0 and lab not in seen:
                seen.add(lab)
                reps.append(i)
        for k in ks:
            chosen = reps[:k]
            m = len(chosen)
            full, fdata = _build(spec, Xt, yt, m)
            coef = torch.zeros(m, n, d, dtype=xs.dtype)
            coef[:, torch.as_tensor(S)] = xs[chosen].reshape(m, ns, d)
            xw = coef.reshape(m, -1)
            # the padded coefficients give the subsample map on the subsample points exactly
            full_images = restart_problem(full, fdata).images
            gap = float((full_images(xw)[:, S] - sub_problem.images(xs[chosen])).abs().max())
            _, rf, tf = _run(full, fdata, xw, max_iter)
            final = float(rf.values.min())
            rel = (final - best64) / abs(best64)
            row = {
                "case": name, "sub_mu_scale": scale, "frac": round(frac, 3), "n_sub": ns,
                "k": k, "continued": m,
                "distinct_sub_optima": len(distinct), "screened_best": final,
                "best_64": best64, "relative_gap": rel, "reaches_best": rel <= 1e-6,
                "warm_start_image_gap": gap, "sub_s": round(ts, 3), "cont_s": round(tf, 3),
                "s_64": round(t64, 3), "time_ratio": round((ts + tf) / t64, 3),
                "rank_reaching_best": _first_reaching(rf.values, best64),
                "rows_sub": rs.n_rows, "rows_cont": rf.n_rows, "rows_64": res64.n_rows,
                "cont_iters": rf.n_iter,
            }  # fmt: skip
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cases", type=int, nargs="*")
    parser.add_argument("--name", default="concatenated_screen")
    parser.add_argument("--all", action="store_true", help="continue every distinct optimum")
    parser.add_argument("--paper-mu", action="store_true", help="interpolation: mu n / n_s")
    args = parser.parse_args()
    torch.set_num_threads(1)
    n = 100
    cases = [
        (f"{h}, {setting}, inner Poly p={p}", _spec(setting, p, n), data, 300)
        for h, data in [("h1", _data(n)), ("h2", _h2_data(n))]
        for setting, p in [
            ("least squares", 1), ("least squares", 2), ("interpolation", 1),
            ("interpolation", 2),
        ]
    ]  # fmt: skip
    esol = dict(inner=[Polynomial(1)], outer=Gaussian(1.0), lam=1e-3, mu=[1e-3], interpolate=False)
    cases.append(("ESOL descriptors (d = 6), least squares, N=150", esol, _esol(150), 200))
    rows = []
    ks = (64,) if args.all else KS
    for i, (name, spec, (X, y), max_iter) in enumerate(cases):
        if args.cases is None or i in args.cases:
            rows += case_rows(name, spec, X, y, max_iter, args.paper_mu, ks)
    RESULTS_DIR.mkdir(exist_ok=True)
    (RESULTS_DIR / f"{args.name}.json").write_text(json.dumps({"rows": rows}, indent=2))


if __name__ == "__main__":
    main()
