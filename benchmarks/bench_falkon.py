"""Nyström kernel ridge and logistic regression against scikit-learn, in one run (the README rows).

The table of issue 27: for both tasks, every ``n`` of :data:`GRID_N` (10^4, 10^5, 10^6) and
every ``m`` of :data:`GRID_M` (500, 1000, 2000, 5000), on a smooth 10-D problem (float32
inputs, 10^5 test points), in two variants (and an optional third):

* ``tuned``: the benchmark's problem settings on both sides: ``Gaussian(SIGMA)`` (scikit-learn:
  ``gamma = 1 / (2 SIGMA^2)``), ridge ``lam = LAM`` (``Ridge(alpha = n LAM,
  fit_intercept=False)``) with CG tolerance ``--tol`` (1e-4), logistic ``lam = LAM_LOGISTIC``
  (``LogisticRegression(C = 1 / (2 n LAM_LOGISTIC), fit_intercept=False, max_iter=200)``)
  with Newton tolerance ``--newton-tol`` (1e-2), and the same centres: the ``m`` rows that
  scikit-learn's ``Nystroem(random_state=0)`` draws (the first ``m`` of
  ``RandomState(0).permutation(n)``, :func:`sklearn_centres`) are kernelkit's ``centers=``,
  so both sides fit the same model and the test errors differ by the solvers alone (with
  separate uniform draws, the draw moves the test MSE at ``m = 500`` by about 1%);
* ``defaults``: every parameter but ``n_centers`` at its default, on both sides:
  ``KernelRidge(n_centers=m)`` / ``KernelLogisticRegression(n_centers=m)`` against
  ``make_pipeline(Nystroem(n_components=m), Ridge())`` /
  ``make_pipeline(Nystroem(n_components=m), LogisticRegression())`` (kernels, widths,
  regularisations, tolerances, intercepts and seeds as each library sets them; the two
  libraries then fit different models, and the test errors say how they compare);
* ``auto`` (only with ``--variants auto``): as ``defaults`` with ``lam="auto"`` on kernelkit's
  side (``lam`` chosen on held-out rows, :mod:`kernelkit.models._logistic_path`), against the
  same default pipeline.

Each row: kernelkit with ``solver="auto"`` (the row's time; ``kernelkit_solver`` is the
choice), scikit-learn where its memory fits (``Nystroem.transform`` holds the ``n x m``
kernel block and the ``n x m`` features, both float32: ``2 n m 4`` bytes, run when at most
``--sk-limit-gb``; else ``baseline_projected_gb`` records the size and the row is kernelkit
alone), the test error of both (MSE; logistic: ``1 - accuracy``) and their relative
difference ``test_error_rel_diff = (ours - theirs) / theirs``.

Whether ``"auto"`` picked the faster solver is checked on every ``tuned`` row: the Nyström
solver it did not pick (both when it picked the exact one) is timed too, and
``auto_over_fastest`` is the fit time of the choice over the fastest fit (``<= 1.1``: the
item holds).  To keep the run short, an alternative is not run where the cost model
(:func:`kernelkit.models._falkon.solver_costs`) puts it more than :data:`ALT_MARGIN` times
above the choice (``{solver}_modelled_ratio`` recorded), nor at ``n = 10^6``, where its fit
time is extrapolated from the same solver's measured fit at ``n / 10`` times 10
(``{solver}_extrapolated_s``; both solvers cost ``O(n)`` at fixed ``m``: one-pass
``n m (E + 2 m)``, PCG ``t`` passes of ``n m`` with ``t`` set by ``m`` and ``tol``);
``--alternatives all`` runs every one.  ``defaults`` rows time ``"auto"`` alone.

Every case runs in its own subprocess (``--case`` with the case as JSON; ``"keep": false``
streams ``K_nm`` at every pass instead of keeping it), which reports its wall and CPU seconds
of the fit (the estimator is built, its library imported, before the clocks start) and its
peak resident memory (``ru_maxrss``, data included).  PCG ridge fits also report the time of
one pass ``K_nm^T (K_nm v)`` against the ``exp`` pass over the same ``n m`` entries (same
tiles and threads): the kernel-evaluation bound; and the same pass on the kept ``K_nm``.

Run ``python benchmarks/bench_falkon.py`` for n = 10^4 and 10^5 (both variants, both tasks),
``--big`` for the whole table (``make bench`` passes it: ``run_all.SCRIPT_ARGS``),
``--only-big --merge`` for the n = 10^6 tier alone, added to the rows of an earlier run
(whose n = 10^5 fits then serve the extrapolation); ``--variants``, ``--tasks``, ``--n``,
``--m`` select rows, ``--quick`` is a smoke run.  Writes ``benchmarks/results/bench_falkon.json``.
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

from _common import RESULTS_DIR, method_of, report, solver_params

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

    from kernelkit.gram._tiling import n_workers, run_parallel

    starts = list(range(0, n, rows))
    workers = n_workers(len(starts))

    def work(w: int) -> None:
        src, dst = -torch.rand(rows, m), torch.empty(rows, m)
        for _ in starts[w::workers]:
            torch.exp(src, out=dst)

    start = time.perf_counter()
    run_parallel(work, list(range(workers)), parallel=workers > 1)
    return time.perf_counter() - start


def _falkon_pass(model, X) -> tuple[float, float, float]:
    """Seconds of one streamed ``K_nm^T (K_nm v)`` pass, of its ``exp`` bound and of the same
    pass on the kept ``K_nm`` (``NystromOperator(memory_budget=...)``, filled beforehand)."""
    import torch

    from kernelkit.gram._streaming import NystromOperator

    op = NystromOperator(model.kernel_, X, model.X_fit_)
    kept = NystromOperator(model.kernel_, X, model.X_fit_, memory_budget=1 << 40)
    v = torch.randn(op.shape[1], 1, dtype=torch.float64)
    kept.normal_matmat(v)  # the first pass keeps the block
    passes, bounds, kept_passes = [], [], []
    for _ in range(3):  # minimum of 3: the machine is shared
        start = time.perf_counter()
        op.normal_matmat(v)
        passes.append(time.perf_counter() - start)
        bounds.append(_exp_bound(op.shape[0], op.shape[1], op.rows_per_tile(4)))
        start = time.perf_counter()
        kept.normal_matmat(v)
        kept_passes.append(time.perf_counter() - start)
    return min(passes), min(bounds), min(kept_passes)


def sklearn_centres(X: np.ndarray, m: int) -> np.ndarray:
    """The ``m`` rows of ``X`` that ``Nystroem(n_components=m, random_state=0)`` takes as its
    basis: the first ``m`` of ``RandomState(0).permutation(len(X))``."""
    return X[np.random.RandomState(0).permutation(len(X))[:m]]


def _kernelkit_model(case: dict, X: np.ndarray | None = None):
    """The kernelkit estimator of a case (module docstring: ``tuned`` / ``defaults``); the
    ``tuned`` one takes :func:`sklearn_centres` of the training rows ``X`` when given."""
    from kernelkit import KernelLogisticRegression, KernelRidge
    from kernelkit.kernels import Gaussian

    m, method, regression = case["m"], case["method"], case["task"] == "regression"
    if case.get("variant", "tuned") in ("defaults", "auto"):
        forced = solver_params(method)
        if case["variant"] == "auto":
            forced["lam"] = "auto"
        return (KernelRidge if regression else KernelLogisticRegression)(n_centers=m, **forced)
    cls = KernelRidge if regression else KernelLogisticRegression
    settings = (
        {"lam": LAM, "tol": case.get("tol", 1e-4), "max_iter": 200}
        if regression
        else {"lam": LAM_LOGISTIC, "tol": case.get("newton_tol", 1e-2)}
    )
    if X is not None:
        settings["centers"] = sklearn_centres(X, m)
    return cls(Gaussian(SIGMA), **solver_params(method), n_centers=m, random_state=0, **settings)


def _sklearn_model(case: dict):
    """scikit-learn's ``Nystroem + Ridge`` / ``+ LogisticRegression`` of a case."""
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.pipeline import make_pipeline

    n, m, regression = case["n"], case["m"], case["task"] == "regression"
    if case.get("variant", "tuned") in ("defaults", "auto"):
        return make_pipeline(
            Nystroem(n_components=m), Ridge() if regression else LogisticRegression()
        )
    features = Nystroem(gamma=1.0 / (2.0 * SIGMA**2), n_components=m, random_state=0)
    if regression:
        return make_pipeline(features, Ridge(alpha=n * LAM, fit_intercept=False))
    C = 1.0 / (2 * n * LAM_LOGISTIC)
    return make_pipeline(features, LogisticRegression(C=C, fit_intercept=False, max_iter=200))


def run_case(case: dict) -> dict:
    """One case, in this process: fit + predict, test error, and the pass timing of PCG."""
    n, method, regression = case["n"], case["method"], case["task"] == "regression"
    X, y, Xt, ft, yt = _data(n, N_TEST)
    if not regression:  # labels: above the training median
        y, yt = (y > np.median(y)).astype(int), (yt > np.median(y)).astype(int)
    out: dict = {}
    if not case.get("keep", True):  # the streamed fit: K_nm recomputed at every pass
        import kernelkit.models._falkon as falkon

        falkon.keep_budget = lambda device=None: 0
    # the estimator is built (its library imported: seconds of CPU) before the clocks start
    if method == "exact":
        from kernelkit import KernelRidge
        from kernelkit.kernels import Gaussian

        model = KernelRidge(Gaussian(SIGMA), lam=LAM)
    else:
        model = _sklearn_model(case) if method == "sklearn" else _kernelkit_model(case, X)
    start, cpu0 = time.perf_counter(), time.process_time()
    if method == "exact":
        model.fit(X.astype(np.float64), y)
        # predict in chunks: the exact predict holds the whole test x train block
        chunks = np.array_split(Xt.astype(np.float64), max(1, len(Xt) // 10_000))
        pred = np.concatenate([model.predict(chunk) for chunk in chunks])
    else:
        model.fit(X, y)
        out["fit_seconds"] = round(time.perf_counter() - start, 2)
        out["fit_cpu_seconds"] = round(time.process_time() - cpu0, 2)
        pred = model.predict(Xt)
        if method != "sklearn":
            out["solver"] = method_of(model)
            if out["solver"] == "nystrom":
                out["cg_iterations"] = int(getattr(model, "n_cg_", np.max(model.n_iter_)))
            if not regression:
                out["newton_steps"] = int(np.max(model.n_iter_))
            if hasattr(model, "lam_"):  # lam="auto": the chosen lam
                out["lam"] = float(model.lam_)
    pred = np.asarray(pred, dtype=np.float64)
    if regression:
        out["test_mse"] = float(np.mean((pred - yt) ** 2))
        out["excess_mse"] = float(np.mean((pred - ft) ** 2))
        out["test_error"] = out["test_mse"]
    else:
        out["test_accuracy"] = float(np.mean(pred == yt))
        out["test_error"] = 1.0 - out["test_accuracy"]
    out["seconds"] = round(time.perf_counter() - start, 2)
    out["cpu_seconds"] = round(time.process_time() - cpu0, 2)
    if regression and out.get("solver") == "nystrom" and case.get("pass_timing", False):
        pass_s, exp_s, kept_s = _falkon_pass(model, X)
        out["pass_s"], out["exp_bound_s"] = round(pass_s, 3), round(exp_s, 3)
        out["kept_pass_s"] = round(kept_s, 3)
        out["pass_over_exp"] = round(pass_s / exp_s, 2)
    out["peak_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return out


def scaling() -> dict:
    """CPU seconds of one streamed pass over an (n, m) grid, one thread, and the fitted
    exponents of ``time ~ n^a m^b`` (CPU time: less sensitive to other load than wall time)."""
    import torch

    from kernelkit.gram._streaming import NystromOperator
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


GRID_N = (10_000, 100_000, 1_000_000)
"""Training sizes of the table."""

GRID_M = (500, 1000, 2000, 5000)
"""Centres of the table (scikit-learn's ``n_components``)."""

ALT_MARGIN = 3.0
"""An alternative solver is timed where the cost model puts it at most this many times above
``"auto"``'s choice (where the choice could be wrong); further above, its modelled ratio is
recorded instead."""


def sklearn_peak_gb(n: int, m: int) -> float:
    """GB held by ``Nystroem.transform``: the ``n x m`` kernel block and the features, float32."""
    return 2 * n * m * 4 / 1e9


def _merge(row: dict, prefix: str, result: dict) -> None:
    row[f"{prefix}_s"] = result.get("seconds", float("nan"))
    row.update({f"{prefix}_{k}": v for k, v in result.items() if k != "seconds"})


def _modelled_costs(task: str, variant: str, n: int, m: int, tol: float) -> dict[str, float]:
    from kernelkit import get_config
    from kernelkit.models._falkon import solver_costs

    if task == "regression":
        costs = solver_costs(n, m, d=D, tol=tol if variant == "tuned" else 1e-6)
    else:
        costs = solver_costs(n, m, d=D, newton_steps=get_config()["logistic_newton_steps"])
    costs["nystrom"] = costs.pop("pcg")  # the benchmarks' label of PCG
    return costs


def table_row(task: str, variant: str, n: int, m: int, args, fits: dict) -> dict:
    """One row of the table (module docstring); ``fits[(task, variant, solver, n, m)]`` holds
    the measured fit wall and CPU seconds of earlier rows (the extrapolation at ``n = 10^6``)."""
    name = "KRR" if task == "regression" else "logistic"
    suffix = "" if variant == "tuned" else f", {variant}"
    baseline = "sklearn Nystroem+" + ("Ridge" if task == "regression" else "LogisticRegression")
    row: dict = {"case": f"{name} n={n} m={m}{suffix}", "baseline": baseline}
    row.update(task=task, variant=variant, n=n, m=m)
    case = {"task": task, "n": n, "m": m, "variant": variant}
    case.update(tol=args.tol, newton_tol=args.newton_tol)
    projected = sklearn_peak_gb(n, m)
    if projected <= args.sk_limit_gb:
        _merge(row, "baseline", _spawn({**case, "method": "sklearn"}))
    else:
        row["baseline_s"] = float("nan")
        row["baseline_projected_gb"] = round(projected, 1)
        row["baseline_error"] = (
            f"not run: its kernel block and features would hold {projected:.0f} GB "
            f"(limit {args.sk_limit_gb:g} GB)"
        )
    timing = variant == "tuned" and not args.no_pass_timing
    _merge(row, "kernelkit", _spawn({**case, "method": "auto", "pass_timing": timing}))
    chosen = row.get("kernelkit_solver")
    ours, theirs = row.get("kernelkit_test_error"), row.get("baseline_test_error")
    if ours is not None and theirs:
        row["test_error_rel_diff"] = round((ours - theirs) / theirs, 4)
    if variant != "tuned" or chosen is None or args.alternatives == "none":
        fits.update(measured_fits([row]))
        return row
    costs = _modelled_costs(task, variant, n, m, args.tol)
    fastest, fastest_cpu = row["kernelkit_fit_seconds"], row["kernelkit_fit_cpu_seconds"]
    checks = []
    for alt in ("onepass", "nystrom"):
        if alt == chosen:
            continue
        ratio = costs[alt] / costs[chosen]
        row[f"{alt}_modelled_ratio"] = round(ratio, 2)
        earlier = fits.get((task, variant, alt, n // 10, m))
        run = args.alternatives == "all" or (ratio <= ALT_MARGIN and n < GRID_N[-1])
        if run:
            _merge(row, alt, _spawn({**case, "method": alt}))
            fit = row.get(f"{alt}_fit_seconds")
            if fit is not None:
                fastest = min(fastest, fit)
                fastest_cpu = min(fastest_cpu, row[f"{alt}_fit_cpu_seconds"])
                checks.append("measured")
        elif n == GRID_N[-1] and earlier is not None:
            row[f"{alt}_extrapolated_s"] = round(10 * earlier[0], 1)
            fastest = min(fastest, 10 * earlier[0])
            fastest_cpu = min(fastest_cpu, 10 * earlier[1])
            checks.append("extrapolated")
        else:
            checks.append("modelled")
    row["auto_over_fastest"] = round(row["kernelkit_fit_seconds"] / fastest, 2)
    row["auto_over_fastest_cpu"] = round(row["kernelkit_fit_cpu_seconds"] / fastest_cpu, 2)
    row["auto_check"] = "/".join(checks)
    fits.update(measured_fits([row]))  # with the alternatives: the n = 10^6 extrapolation
    return row


def measured_fits(rows: list[dict]) -> dict:
    """``(task, variant, solver, n, m) -> (fit wall s, fit CPU s)`` of the rows of a run."""
    fits = {}
    for row in rows:
        if "task" not in row:
            continue
        key = (row["task"], row["variant"])
        for prefix in ("kernelkit", "onepass", "nystrom"):
            solver = row.get(f"{prefix}_solver", prefix)
            if f"{prefix}_fit_seconds" in row:
                wall, cpu = row[f"{prefix}_fit_seconds"], row[f"{prefix}_fit_cpu_seconds"]
                fits[(*key, solver, row["n"], row["m"])] = (wall, cpu)
    return fits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n = 10^4, m = 500 and 1000")
    parser.add_argument("--big", action="store_true", help="add n = 10^6 (make bench does)")
    parser.add_argument("--only-big", action="store_true", help="only n = 10^6")
    parser.add_argument(
        "--merge", action="store_true", help="keep the results file's rows of other cases"
    )
    parser.add_argument("--n", type=int, nargs="*", default=None, help="training sizes")
    parser.add_argument("--m", type=int, nargs="*", default=None, help="centres")
    parser.add_argument(
        "--tasks", nargs="*", default=["regression", "logistic"], choices=["regression", "logistic"]
    )
    parser.add_argument(
        "--variants",
        nargs="*",
        default=["tuned", "defaults"],
        choices=["tuned", "defaults", "auto"],
    )
    parser.add_argument(
        "--alternatives",
        choices=["model", "all", "none"],
        default="model",
        help="which non-chosen solvers to time (module docstring)",
    )
    parser.add_argument("--exact-n", type=int, nargs="*", default=None)
    parser.add_argument(
        "--sk-limit-gb", type=float, default=12.0, help="scikit-learn runs under this many GB"
    )
    parser.add_argument(
        "--no-pass-timing", action="store_true", help="skip the per-pass / exp-bound timing"
    )
    parser.add_argument("--tol", type=float, default=1e-4, help="CG tolerance of the KRR fits")
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
    ns, ms, exact_n = list(GRID_N[:-1]), list(GRID_M), [10_000]
    if args.big or args.only_big:
        ns = [GRID_N[-1]] if args.only_big else list(GRID_N)
        exact_n = [] if args.only_big else exact_n
    if args.quick:
        ns, ms, exact_n = [10_000], [500, 1000], []
    ns, ms = args.n or ns, args.m or ms
    exact_n = exact_n if args.exact_n is None else args.exact_n
    name = args.name or ("bench_falkon" + ("_quick" if args.quick else ""))
    path = RESULTS_DIR / f"{name}.json"
    earlier = json.loads(path.read_text())["rows"] if args.merge and path.exists() else []
    rows: list[dict] = []
    fits = measured_fits(earlier)  # --only-big --merge: extrapolate from the n = 10^5 rows
    start = time.perf_counter()
    for variant in args.variants:
        for task in args.tasks:
            for n in sorted(ns):
                for m in ms:
                    rows.append(table_row(task, variant, n, m, args, fits))
                    print(
                        json.dumps(rows[-1]), f"[{time.perf_counter() - start:.0f} s]", flush=True
                    )
    for n in exact_n:
        ex = _spawn({"task": "regression", "method": "exact", "n": n})
        row = {"case": f"exact KRR n={n}", "kernelkit_s": ex.get("seconds", float("nan"))}
        row.update({f"kernelkit_{k}": v for k, v in ex.items() if k != "seconds"})
        row.update(baseline="(exact: the reference)", baseline_s=row["kernelkit_s"])
        rows.append(row)
        print(json.dumps(row), flush=True)
    done = {row["case"] for row in rows}  # --merge: the earlier rows of other cases stay
    merged = [row for row in earlier if row["case"] not in done] + rows
    report(name, sorted(merged, key=table_order))


def table_order(row: dict) -> tuple:
    """Rows in the order of a whole run (variant, task, n, m; the exact rows last), so that a
    ``--merge`` run leaves the table as one run would lay it out."""
    variants, tasks = ("tuned", "defaults", "auto"), ("regression", "logistic")
    if "task" not in row:
        return (len(variants), 0, 0, 0, row["case"])
    return (
        variants.index(row.get("variant", "tuned")),
        tasks.index(row["task"]),
        row["n"],
        row["m"],
        row["case"],
    )


if __name__ == "__main__":
    main()
