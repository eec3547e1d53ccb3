"""Nyström-PCG (Falkon) kernel ridge and logistic regression against scikit-learn, in one run.

Test error against time for n = 10^4 ... 10^6 and m = 500 ... 10^4 on a smooth 10-D problem
(float32 inputs, Gaussian kernel):

* kernelkit ``KernelRidge(solver="auto", n_centers=m)`` (the row's time), with its solvers
  as ablations, ``solver="onepass"`` (the normal equations formed in one pass) and
  ``solver="nystrom"`` (Falkon's PCG; K_nm streamed, never stored in both), beside
  scikit-learn ``Nystroem(m) + Ridge`` (the n x m features materialised) at every m whose
  features fit in ``--sk-limit-gb`` (else the projected size is recorded), and the exact
  ``KernelRidge`` where it fits (``--exact-n``);
* binary classification: kernelkit's one-pass Newton
  (:func:`kernelkit.models.falkon_logistic.nystrom_logistic_onepass`) and Newton-PCG
  (:func:`kernelkit.models.falkon_logistic.nystrom_logistic_fit`) beside
  ``Nystroem(m) + LogisticRegression`` at the same m, and the choice ``solver="auto"``
  makes there.

Every case runs in its own subprocess, which reports its wall and CPU seconds and its peak
resident memory (``ru_maxrss``, data included).  Falkon cases also report the time of one
pass ``K_nm^T (K_nm v)`` against the ``exp`` pass over the same ``n m`` entries (same tiles and
threads): the kernel-evaluation bound.

Run ``python benchmarks/bench_falkon.py`` (about 10 minutes on an unloaded 2-core machine;
``--quick`` for a smoke run, ``--big`` adds n = 10^6 with m = 1000 and 5000, ``--huge`` adds
m = 10^4 at n = 10^6).  Writes ``benchmarks/results/bench_falkon.json``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from _common import report

from kernelkit.estimators.logistic import NEWTON_STEPS
from kernelkit.models.falkon import choose_solver

# LAM_LOGISTIC weights lam ||f||^2: the committed runs' (lam / 2) ||f||^2 with lam = 1e-6
D, SIGMA, LAM, LAM_LOGISTIC, N_TEST, NOISE = 10, 5.0, 1e-6, 5e-7, 100_000, 0.1


def _data(n: int, n_test: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(D)

    def target(Z):
        return np.sin(Z @ w / 4.0) + 0.5 * np.cos(Z[:, 0])

    X = rng.standard_normal((n, D)).astype(np.float32)
    Xt = rng.standard_normal((n_test, D)).astype(np.float32)
    f, ft = target(X), target(Xt)
    return X, f + NOISE * rng.standard_normal(n), Xt, ft, ft + NOISE * rng.standard_normal(n_test)


def _exp_bound(n: int, m: int, rows: int) -> float:
    """Seconds of the ``exp`` pass over ``n m`` float32 entries in ``rows x m`` tiles, on the
    worker threads of the streamed products (``exp`` of a fixed tile into a scratch tile)."""
    import torch

    from kernelkit.gram.tiling import n_workers, run_parallel

    starts = list(range(0, n, rows))
    workers = n_workers(len(starts))

    def work(w: int) -> None:
        src, dst = -torch.rand(rows, m), torch.empty(rows, m)
        for _ in starts[w::workers]:
            torch.exp(src, out=dst)

    start = time.perf_counter()
    run_parallel(work, list(range(workers)), parallel=workers > 1)
    return time.perf_counter() - start


def _falkon_pass(model, X) -> tuple[float, float]:
    """Seconds of one ``K_nm^T (K_nm v)`` pass and of its ``exp`` bound."""
    import torch

    from kernelkit.gram.streaming import NystromOperator

    op = NystromOperator(model.kernel_, X, model.X_fit_)
    v = torch.randn(op.shape[1], 1, dtype=torch.float64)
    passes, bounds = [], []
    for _ in range(3):  # minimum of 3: the machine is shared
        start = time.perf_counter()
        op.normal_matmat(v)
        passes.append(time.perf_counter() - start)
        bounds.append(_exp_bound(op.shape[0], op.shape[1], op.rows_per_tile(4)))
    return min(passes), min(bounds)


def _progress(start: float):
    """A ``verbose`` callable writing iteration, residual, wall and CPU seconds to stderr."""

    def report_iteration(k: int, residual: float) -> None:
        wall, cpu = time.perf_counter() - start, time.process_time()
        print(
            f"iteration {k} residual {residual:.3e} wall {wall:.1f} cpu {cpu:.1f}",
            file=sys.stderr,
            flush=True,
        )

    return report_iteration


def run_case(case: dict) -> dict:
    """One case, in this process: fit + predict, errors, and the pass timing for Falkon."""
    n, m, method, task = case["n"], case.get("m"), case["method"], case["task"]
    X, y, Xt, ft, yt = _data(n, N_TEST)
    import torch
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.pipeline import make_pipeline

    from kernelkit import KernelRidge
    from kernelkit.gram.nystrom import centre_indices
    from kernelkit.kernels import Gaussian
    from kernelkit.models.falkon import nystrom_system
    from kernelkit.models.falkon_logistic import (
        nystrom_logistic_decision,
        nystrom_logistic_fit,
        nystrom_logistic_onepass,
    )

    out: dict = {}
    start, cpu0 = time.perf_counter(), time.process_time()
    if task == "regression":
        if method in ("falkon", "onepass", "auto"):
            model = KernelRidge(
                Gaussian(SIGMA),
                lam=LAM,
                solver={"falkon": "nystrom"}.get(method, method),
                n_centers=m,
                random_state=0,
                tol=case.get("tol", 1e-4),
                max_iter=200,
                verbose=_progress(start),
            )
            model.fit(X, y)
            out["fit_seconds"] = round(time.perf_counter() - start, 2)
            out["fit_cpu_seconds"] = round(time.process_time() - cpu0, 2)
            pred = model.predict(Xt)
            out["solver"] = model.solver_
            if model.solver_ == "nystrom":
                out["cg_iterations"] = model.n_iter_
        elif method == "exact":
            model = KernelRidge(Gaussian(SIGMA), lam=LAM).fit(X.astype(np.float64), y)
            # predict in chunks: the exact predict holds the whole test x train block
            chunks = np.array_split(Xt.astype(np.float64), max(1, len(Xt) // 10_000))
            pred = np.concatenate([model.predict(chunk) for chunk in chunks])
        else:
            gamma = 1.0 / (2.0 * SIGMA**2)
            pipe = make_pipeline(
                Nystroem(gamma=gamma, n_components=m, random_state=0),
                Ridge(alpha=n * LAM, fit_intercept=False),
            )
            pred = pipe.fit(X, y).predict(Xt)
        pred = np.asarray(pred, dtype=np.float64)
        out["test_mse"] = float(np.mean((pred - yt) ** 2))
        out["excess_mse"] = float(np.mean((pred - ft) ** 2))
    else:
        labels = (yt > np.median(y)).astype(int)
        ytrain = (y > np.median(y)).astype(int)
        Xtt = torch.as_tensor(X)
        idx = centre_indices(Gaussian(SIGMA), Xtt, m, random_state=0)
        if method == "onepass":
            system = nystrom_system(Gaussian(SIGMA), Xtt, idx, lam=LAM_LOGISTIC)
            res = nystrom_logistic_onepass(
                system, ytrain, LAM_LOGISTIC, newton_tol=case.get("newton_tol", 1e-2)
            )
            score = nystrom_logistic_decision(Gaussian(SIGMA), torch.as_tensor(Xt), res)
            pred = (score[:, 0] > 0).numpy().astype(int)
            # one pass per Newton step (the trial point's weights), one more for the start
            out["newton_steps"], out["converged"] = res.n_newton, res.converged
            out["objective"] = float(res.objective[0])
        elif method == "falkon":
            res = nystrom_logistic_fit(
                Gaussian(SIGMA),
                Xtt,
                ytrain,
                idx,
                LAM_LOGISTIC,
                tol=1e-2,
                max_iter=20,
                max_newton=20,
                newton_tol=case.get("newton_tol", 1e-2),
            )
            score = nystrom_logistic_decision(Gaussian(SIGMA), torch.as_tensor(Xt), res)
            pred = (score[:, 0] > 0).numpy().astype(int)
            out["newton_steps"], out["cg_iterations"] = res.n_newton, res.n_cg
            # one gradient pass per Newton step, one pass per CG iteration
            out["passes"], out["converged"] = res.n_newton + res.n_cg, res.converged
            out["objective"] = float(res.objective[0])
        else:
            pipe = make_pipeline(
                Nystroem(gamma=1.0 / (2.0 * SIGMA**2), n_components=m, random_state=0),
                LogisticRegression(
                    C=1.0 / (2 * n * LAM_LOGISTIC), fit_intercept=False, max_iter=200
                ),
            )
            pred = pipe.fit(X, ytrain).predict(Xt)
        out["test_accuracy"] = float(np.mean(pred == labels))
    out["seconds"] = round(time.perf_counter() - start, 2)
    out["cpu_seconds"] = round(time.process_time() - cpu0, 2)
    if task == "regression" and method == "falkon" and case.get("pass_timing", True):
        pass_s, exp_s = _falkon_pass(model, X)
        out["pass_s"], out["exp_bound_s"] = round(pass_s, 3), round(exp_s, 3)
        out["pass_over_exp"] = round(pass_s / exp_s, 2)
    out["peak_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return out


def scaling() -> dict:
    """CPU seconds of one streamed pass over an (n, m) grid, one thread, and the fitted
    exponents of ``time ~ n^a m^b`` (CPU time: less sensitive to other load than wall time)."""
    import torch

    from kernelkit.gram.streaming import NystromOperator
    from kernelkit.kernels import Gaussian

    torch.set_num_threads(1)
    X, *_ = _data(100_000, 1)
    X = torch.as_tensor(X)
    rows, fit = [], []
    for n in (25_000, 50_000, 100_000):
        for m in (250, 500, 1000, 2000):
            op = NystromOperator(Gaussian(SIGMA), X[:n], X[:m])
            v = torch.randn(m, 1, dtype=torch.float64)
            times = []
            for _ in range(3):
                cpu = time.process_time()
                op.normal_matmat(v)
                times.append(time.process_time() - cpu)
            t = min(times)
            b = op.rows_per_tile(4)
            src, dst = -torch.rand(b, m), torch.empty(b, m)
            cpu = time.process_time()
            for _ in range(0, n, b):
                torch.exp(src, out=dst)
            e = time.process_time() - cpu
            rows.append(
                {
                    "n": n,
                    "m": m,
                    "pass_cpu_s": round(t, 4),
                    "ns_per_entry": round(t / n / m * 1e9, 3),
                    "exp_cpu_s": round(e, 4),
                    "pass_over_exp": round(t / e, 2),
                }
            )
            fit.append((np.log(n), np.log(m), np.log(t)))
    A = np.array([[1.0, a, b] for a, b, _ in fit])
    coef = np.linalg.lstsq(A, np.array([c for *_, c in fit]), rcond=None)[0]
    return {"rows": rows, "exponent_n": round(coef[1], 3), "exponent_m": round(coef[2], 3)}


def _spawn(case: dict) -> dict:
    proc = subprocess.run(
        [sys.executable, __file__, "--case", json.dumps(case)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--big", action="store_true", help="add n = 10^6 (m = 1000, 5000)")
    parser.add_argument("--huge", action="store_true", help="add m = 10^4 at n = 10^6")
    parser.add_argument("--exact-n", type=int, nargs="*", default=None)
    parser.add_argument("--sk-limit-gb", type=float, default=4.0)
    parser.add_argument("--only-big", action="store_true", help="run only the n = 10^6 cases")
    parser.add_argument(
        "--krr", nargs="*", default=None, metavar="N:M", help="KRR cases instead of the grid"
    )
    parser.add_argument("--no-logistic", action="store_true")
    parser.add_argument(
        "--no-pass-timing", action="store_true", help="skip the per-pass / exp-bound timing"
    )
    parser.add_argument("--no-exact", action="store_true", help="skip the exact KRR row")
    parser.add_argument("--tol", type=float, default=1e-4, help="CG tolerance of the KRR fits")
    parser.add_argument(
        "--logistic-only-n", type=int, default=None, help="run only the logistic case at this n"
    )
    parser.add_argument(
        "--newton-tol", type=float, default=1e-2, help="Newton decrement stopping the logistic fit"
    )
    parser.add_argument("--name", default=None, help="results file name (default bench_falkon)")
    parser.add_argument("--scaling", action="store_true", help="only the pass-time exponents")
    parser.add_argument("--case", type=str, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        print(json.dumps(run_case(json.loads(args.case))))
        return
    if args.scaling:
        result = scaling()
        print(json.dumps(result, indent=1))
        (Path(__file__).parent / "results" / "bench_falkon_scaling.json").write_text(
            json.dumps(result, indent=2)
        )
        return
    if args.quick:
        grid, exact_n, logistic = [(10_000, 500), (10_000, 1000)], [], [(10_000, 500)]
    else:
        grid = [(n, m) for n in (10_000, 100_000) for m in (500, 1000, 2000)]
        exact_n, logistic = [10_000], [(100_000, 1000)]
    if args.only_big:
        grid, exact_n, logistic = [], [], []
    if args.big or args.only_big:
        grid += [(1_000_000, 1000), (1_000_000, 5000)]
        logistic += [(1_000_000, 1000)]
    if args.huge:
        grid += [(1_000_000, 10_000)]
    if args.exact_n is not None:
        exact_n = args.exact_n
    if args.no_exact:
        exact_n = []
    if args.krr is not None:
        grid = [tuple(int(v) for v in item.split(":")) for item in args.krr]
    if args.no_logistic:
        logistic = []
    if args.logistic_only_n is not None:
        grid, exact_n, logistic = [], [], [(args.logistic_only_n, 1000)]
    rows = []
    for n, m in grid:
        row = {"case": f"KRR n={n} m={m}", "baseline": "sklearn Nystroem+Ridge"}
        projected_gb = n * m * 8 / 1e9
        if projected_gb <= args.sk_limit_gb:
            base = _spawn({"task": "regression", "method": "sklearn", "n": n, "m": m})
            row["baseline_s"] = base.get("seconds", float("nan"))
            row.update({f"baseline_{k}": v for k, v in base.items() if k != "seconds"})
        else:
            row["baseline_s"] = float("nan")
            row["baseline_error"] = f"not run: n x m float64 features {projected_gb:.0f} GB"
        # kernelkit: solver="auto" (the row's time), and the solvers as ablations
        for method in ("auto", "onepass", "falkon"):
            case = {"task": "regression", "method": method, "n": n, "m": m, "tol": args.tol}
            ours = _spawn({**case, "pass_timing": not args.no_pass_timing})
            prefix = "kernelkit" if method == "auto" else method
            row[f"{prefix}_s"] = ours.get("seconds", float("nan"))
            row.update({f"{prefix}_{k}": v for k, v in ours.items() if k != "seconds"})
            row[f"{prefix}_speedup_vs_baseline"] = round(row["baseline_s"] / row[f"{prefix}_s"], 2)
        rows.append(row)
        print(json.dumps(row), flush=True)
    for n in exact_n:
        ex = _spawn({"task": "regression", "method": "exact", "n": n})
        row = {"case": f"exact KRR n={n}", "kernelkit_s": ex.get("seconds", float("nan"))}
        row.update({f"kernelkit_{k}": v for k, v in ex.items() if k != "seconds"})
        row.update(baseline="(exact: the reference)", baseline_s=row["kernelkit_s"])
        rows.append(row)
        print(json.dumps(row), flush=True)
    for n, m in logistic:
        row = {"case": f"logistic n={n} m={m} newton_tol={args.newton_tol:g}"}
        base = _spawn({"task": "logistic", "method": "sklearn", "n": n, "m": m})
        row.update(baseline="sklearn Nystroem+LogisticRegression")
        row["baseline_s"] = base.get("seconds", float("nan"))
        row.update({f"baseline_{k}": v for k, v in base.items() if k != "seconds"})
        for method in ("onepass", "falkon"):
            case = {"task": "logistic", "method": method, "n": n, "m": m}
            ours = _spawn({**case, "newton_tol": args.newton_tol})
            row[f"{method}_s"] = ours.get("seconds", float("nan"))
            row.update({f"{method}_{k}": v for k, v in ours.items() if k != "seconds"})
            row[f"{method}_speedup_vs_baseline"] = round(row["baseline_s"] / row[f"{method}_s"], 2)
        # solver="auto" of KernelLogisticRegression: the modelled choice
        choice = choose_solver(n, m, d=D, newton_steps=NEWTON_STEPS)
        row["auto_choice"] = choice
        key = {"nystrom": "falkon"}.get(choice, choice)
        row["kernelkit_s"] = row.get(f"{key}_s", float("nan"))
        rows.append(row)
        print(json.dumps(row), flush=True)
    report(args.name or ("bench_falkon" + ("_quick" if args.quick else "")), rows)


if __name__ == "__main__":
    main()
