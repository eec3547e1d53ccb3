"""The Nyström-PCG ridge on a Dask LocalCluster of 1 and 2 workers against the in-process solver.

Default run (a few minutes): n = 2·10^5 points in R^10 (float32), Gaussian kernel, m = 1000
centres; the same model fitted in process (the reference: the tiled Falkon solver on all
threads) and on ``LocalCluster(n_workers=w, threads_per_worker=1, processes=True)`` for
``w = 1, 2``, each for ``ITERATIONS`` CG iterations.  Reported per case: time per CG
iteration (median time between consecutive iterations, from the CG callback), the pickled
bytes sent per task and returned per task (measured with ``pickle``), and the largest
difference of the predictions from the in-process fit (2000 training points).  Rows are
kernelkit against kernelkit (ablations).

``--large``: the issue's out-of-core case, 10^7 x 10 float32 points written chunked to a zarr
store on disk (about 400 MB; generated chunk by chunk, never held whole), fitted with
m = 2000 by 2 workers reading their chunks from disk in every pass; reports the peak
resident memory of each worker and of the client (``ru_maxrss``) and the time per iteration.
Writes ``results/distributed.json`` (and ``results/distributed_large.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import resource
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from _common import RESULTS_DIR, machine_info, report

D, SIGMA, LAM, ITERATIONS = 10, 5.0, 1e-6, 8


def _target(X):
    w = np.linspace(-1.0, 1.0, X.shape[1])
    return np.sin(X @ w / 4.0) + 0.5 * np.cos(X[:, 0])


def _estimator(m: int, max_iter: int, verbose=0):
    from kernelkit import KernelRidge
    from kernelkit.kernels import Gaussian

    return KernelRidge(
        Gaussian(SIGMA),
        lam=LAM,
        solver="nystrom",
        n_centers=m,
        tol=1e-14,
        max_iter=max_iter,
        random_state=0,
        verbose=verbose,
    )


def _per_iteration(m: int, X, y) -> tuple[float, object]:
    """Median seconds between consecutive CG iterations of one fit, and the fitted model."""
    stamps: list[float] = []
    model = _estimator(m, ITERATIONS, lambda k, residual: stamps.append(time.perf_counter()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
    return float(np.median(np.diff(stamps))), model


def _task_bytes(m: int, kernel, centres) -> tuple[int, int]:
    """Pickled bytes of one CG task's broadcast arguments and of its result."""
    V = np.zeros((m, 1))
    sent = len(pickle.dumps((V, kernel, centres, True, False)))
    returned = len(pickle.dumps((None, np.zeros((m, 1)))))
    return sent, returned


def run_default(n: int, m: int) -> None:
    import dask.array as da
    import distributed

    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, D)).astype(np.float32)
    y = _target(X)
    rows = []
    per_iter_local, local = _per_iteration(m, X, y)
    X_check = X[:2000]
    sent, returned = _task_bytes(m, local.kernel_, local.X_fit_)
    for workers in (1, 2):
        with (
            distributed.LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
            ) as cluster,
            distributed.Client(cluster),
        ):
            X_dask = da.from_array(X, chunks=(n // (2 * workers), D)).persist()
            distributed.wait(X_dask)
            per_iter, remote = _per_iteration(m, X_dask, y)
        rows.append(
            {
                "case": f"Nyström-PCG ridge n={n} d={D} m={m} float32, CG iteration, "
                f"Dask {workers} worker(s)",
                "kernelkit_s": round(per_iter, 3),
                "baseline": "in-process tiled solver, all threads",
                "baseline_s": round(per_iter_local, 3),
                "blocks": 2 * workers,
                "bytes_sent_per_task": sent,
                "bytes_returned_per_task": returned,
                "max_prediction_diff": float(
                    np.abs(remote.predict(X_check) - local.predict(X_check)).max()
                ),
            }
        )
    report("distributed", rows)


def _peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _current_rss_mib() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def run_large(n: int, m: int, chunk: int, iterations: int) -> None:
    import dask.array as da
    import distributed

    store = Path(tempfile.mkdtemp(prefix="kernelkit-large-"))
    t0 = time.perf_counter()
    gen = da.random.default_rng(0)
    X = gen.standard_normal((n, D), chunks=(chunk, D), dtype=np.float32)
    da.to_zarr(X, str(store / "X.zarr"))
    X = da.from_zarr(str(store / "X.zarr"))
    y = X.map_blocks(_target, drop_axis=1, dtype=np.float64)
    da.to_zarr(y, str(store / "y.zarr"))
    write_s = time.perf_counter() - t0
    size_mb = sum(f.stat().st_size for f in (store / "X.zarr").rglob("*") if f.is_file()) / 1e6
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            memory_limit="3GiB",
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        X = da.from_zarr(str(store / "X.zarr"))
        y = da.from_zarr(str(store / "y.zarr"))
        model = _estimator(m, iterations)
        client_before_fit = _peak_rss_mib()
        workers_before_fit = client.run(_current_rss_mib)
        t1 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X, y)
        fit_s = time.perf_counter() - t1
        worker_peaks = client.run(_peak_rss_mib)
        X_test = np.random.default_rng(1).standard_normal((10_000, D)).astype(np.float32)
        rmse = float(np.sqrt(np.mean((model.predict(X_test) - _target(X_test)) ** 2)))
    result = {
        "benchmark": "distributed_large",
        "machine": machine_info(),
        "time": time.strftime("%Y-%m-%d %H:%M:%S"),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "n": n,
        "d": D,
        "m": m,
        "chunk_rows": chunk,
        "zarr_mb": round(size_mb, 1),
        "write_s": round(write_s, 1),
        "cg_iterations": int(model.n_iter_),
        "fit_s": round(fit_s, 1),
        "passes": int(model.n_iter_) + 1,
        "seconds_per_pass": round(fit_s / (int(model.n_iter_) + 1), 1),
        "test_rmse": round(rmse, 4),
        "worker_peak_rss_mib": {k: round(v, 1) for k, v in worker_peaks.items()},
        "worker_rss_before_fit_mib": {k: round(v, 1) for k, v in workers_before_fit.items()},
        "client_peak_rss_mib": round(_peak_rss_mib(), 1),
        "client_peak_before_fit_mib": round(client_before_fit, 1),
        "y_float64_mib": round(n * 8 / 2**20, 1),
        "X_float32_mib": round(n * D * 4 / 2**20, 1),
    }
    print(json.dumps(result, indent=2))
    RESULTS_DIR.mkdir(exist_ok=True)
    (RESULTS_DIR / "distributed_large.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--m", type=int, default=1000)
    parser.add_argument("--large", action="store_true", help="the 10^7-point zarr case")
    parser.add_argument("--iterations", type=int, default=5, help="CG iterations (--large)")
    args = parser.parse_args()
    if args.large:
        run_large(10_000_000, 2000, 250_000, args.iterations)
    else:
        run_default(args.n, args.m)
