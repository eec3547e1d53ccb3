"""The Nyström-PCG ridge on a Dask LocalCluster of 1 and 2 workers against the in-process solver.

Default run (a few minutes): n = 2·10^5 points in R^10 (float32), Gaussian kernel, m = 1000
centres; the same model fitted in process (the reference: the tiled Falkon solver on all
threads) and on ``LocalCluster(n_workers=w, threads_per_worker=1, processes=True)`` for
``w = 1, 2``, each for ``ITERATIONS`` CG iterations.  Reported per case: time per CG
iteration (median time between consecutive iterations, from the CG callback), the pickled
bytes sent per task and returned per task (measured with ``pickle``), and the largest
difference of the predictions from the in-process fit on the same centres (2000 training
points).  Rows are
kernelkit against kernelkit (ablations).

``--large``: the issue's out-of-core case, 10^7 x 10 float32 points written chunked to a zarr
store on disk (about 400 MB; generated chunk by chunk, never held whole), fitted with
m = 2000 by 2 workers (the centre draw keeps the chunks holding a centre, with m = 2000 all
of them, in the workers' memory for the fit); reports the peak resident memory of each
worker and of the client (``ru_maxrss``) and the time per iteration.

``--passes``: the one-pass solver against Falkon's PCG on data read from disk: ``n`` x 10
float32 points (default 10^7, 40 chunks) and their float64 targets (noise 0.1) written chunk
by chunk to uncompressed zarr stores (never held whole), opened with ``dask.array.from_zarr``
through :class:`kernelkit.testing._stores.CountingStore` on 2 workers x 1 thread (warmed up:
kernelkit imported in each before the fits); both
``KernelRidge`` solvers with the same ``m``, ``lam``, ``tol`` and an explicit kernel (no
data-dependent default).  Reported per solver: the wall time of ``fit`` (the uniform centre
draw included: it reads the chunks holding a centre and keeps them on the workers for the
fit), the bytes of ``X``'s chunks the store returned to any process (workers and client), the
passes over ``X`` (those bytes / the store's chunk bytes), the reads per chunk, the chunks
holding a centre, the test RMSE on 10^4 fresh points and the agreement of the two fits'
predictions.  The stores are deleted afterwards.

Writes ``results/distributed.json`` (and ``results/distributed_large.json``,
``results/distributed_passes_<n>.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import resource
import shutil
import signal
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from _common import RESULTS_DIR, machine_info, report, solver_params

D, SIGMA, LAM, ITERATIONS = 10, 5.0, 1e-6, 8


def _local_cluster():
    """Two one-thread worker processes on this machine (no dashboard, 3 GiB each)."""
    import distributed

    return distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        memory_limit="3GiB",
    )


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
        nystrom_method="pcg",
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
        # the in-process fit on the Dask fit's centres (drawn by row position there, among
        # distinct points in memory): what the two fits share, so their difference is the
        # summation order of float32 CG after ITERATIONS iterations
        same_centres = _estimator(m, ITERATIONS).set_params(centers=X[remote.center_indices_])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            same_centres.fit(X, y)
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
                    np.abs(remote.predict(X_check) - same_centres.predict(X_check)).max()
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
        _local_cluster() as cluster,
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


def _write_stores(root: Path, n: int, chunk: int) -> tuple[float, int]:
    """``X.zarr`` (n x D float32) and ``y.zarr`` (n float64, noise 0.1), chunk by chunk;
    returns the seconds taken and the bytes of ``X``'s chunks."""
    import zarr
    from zarr.storage import LocalStore

    t0 = time.perf_counter()
    X = zarr.create_array(
        LocalStore(root / "X.zarr"), shape=(n, D), chunks=(chunk, D), dtype="f4", compressors=None
    )
    y = zarr.create_array(
        LocalStore(root / "y.zarr"), shape=(n,), chunks=(chunk,), dtype="f8", compressors=None
    )
    for k, start in enumerate(range(0, n, chunk)):
        rng = np.random.default_rng([0, k])
        block = rng.standard_normal((min(chunk, n - start), D)).astype(np.float32)
        X[start : start + len(block)] = block
        y[start : start + len(block)] = _target(block) + 0.1 * rng.standard_normal(len(block))
    chunk_bytes = sum(f.stat().st_size for f in (root / "X.zarr" / "c").rglob("*") if f.is_file())
    return time.perf_counter() - t0, chunk_bytes


def _open_counted(root: Path, name: str, log: Path):
    """``root/name`` as a Dask array read through a fresh :class:`CountingStore` log."""
    import dask.array as da
    import zarr
    from zarr.storage import LocalStore

    from kernelkit.testing._stores import CountingStore

    log.mkdir()
    store = CountingStore(LocalStore(root / name, read_only=True), log)
    return da.from_zarr(zarr.open_array(store, mode="r"))


def _warm_up() -> None:
    """Import the task code in a worker before the timed fits (torch takes seconds)."""
    import kernelkit.gram._distributed_nystrom  # noqa: F401


def run_passes(n: int, m: int, tol: float, lam: float) -> None:
    import distributed

    from kernelkit import KernelRidge
    from kernelkit.kernels import Gaussian
    from kernelkit.testing._stores import read_log

    chunk = n // 40
    root = Path(tempfile.mkdtemp(prefix="kernelkit-passes-"))
    try:
        write_s, store_bytes = _write_stores(root, n, chunk)
        X_test = np.random.default_rng(1).standard_normal((10_000, D)).astype(np.float32)
        f_test = _target(X_test)
        rows, preds = {}, {}
        with (
            _local_cluster() as cluster,
            distributed.Client(cluster) as client,
        ):
            client.run(_warm_up)
            for solver in ("onepass", "nystrom"):
                X = _open_counted(root, "X.zarr", root / f"log-X-{solver}")
                y = _open_counted(root, "y.zarr", root / f"log-y-{solver}")
                model = KernelRidge(
                    Gaussian(SIGMA), lam=lam, **solver_params(solver), n_centers=m, tol=tol,
                    max_iter=100, random_state=0,
                )  # fmt: skip
                t0 = time.perf_counter()
                model.fit(X, y)
                fit_s = time.perf_counter() - t0
                reads = read_log(root / f"log-X-{solver}")
                preds[solver] = np.asarray(model.predict(X_test), dtype=np.float64)
                rows[solver] = {
                    "fit_s": round(fit_s, 1),
                    "cg_iterations": int(model.n_iter_) if solver == "nystrom" else None,
                    "X_bytes_read": reads.chunk_bytes,
                    "X_passes": round(reads.chunk_bytes / store_bytes, 3),
                    "X_reads_per_chunk": sorted(set(reads.chunk_reads.values())),
                    "chunks_holding_a_centre": len(set(model.center_indices_ // chunk)),
                    "y_bytes_read": read_log(root / f"log-y-{solver}").chunk_bytes,
                    "test_rmse": round(float(np.sqrt(np.mean((preds[solver] - f_test) ** 2))), 5),
                }
        diff = preds["onepass"] - preds["nystrom"]
        result = {
            "benchmark": "distributed_passes",
            "machine": machine_info(),
            "time": time.strftime("%Y-%m-%d %H:%M:%S"),
            "load_average_1min_after": round(os.getloadavg()[0], 2),
            "cluster": "LocalCluster(n_workers=2, threads_per_worker=1, processes=True)",
            "n": n, "d": D, "dtype": "float32", "m": m, "lam": lam, "tol": tol, "sigma": SIGMA,
            "chunks": -(-n // chunk), "chunk_rows": chunk,
            "X_store_bytes": store_bytes,
            "write_s": round(write_s, 1),
            "onepass": rows["onepass"],
            "pcg": rows["nystrom"],
            "fit_time_ratio_pcg_over_onepass": round(
                rows["nystrom"]["fit_s"] / rows["onepass"]["fit_s"], 2
            ),
            "prediction_rel_diff": float(np.linalg.norm(diff) / np.linalg.norm(preds["nystrom"])),
            "prediction_max_abs_diff": float(np.abs(diff).max()),
        }  # fmt: skip
    finally:
        shutil.rmtree(root)
    print(json.dumps(result, indent=2))
    RESULTS_DIR.mkdir(exist_ok=True)
    (RESULTS_DIR / f"distributed_passes_{n:.0e}.json".replace("+0", "")).write_text(
        json.dumps(result, indent=2)
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, help="points (default 2·10^5; 10^7 with --passes)")
    parser.add_argument("--m", type=int, default=1000)
    parser.add_argument("--large", action="store_true", help="the 10^7-point zarr case")
    parser.add_argument("--iterations", type=int, default=5, help="CG iterations (--large)")
    parser.add_argument("--passes", action="store_true", help="one-pass vs PCG, bytes read")
    parser.add_argument("--tol", type=float, default=1e-4, help="CG tolerance (--passes)")
    parser.add_argument("--lam", type=float, default=1e-6, help="lam (--passes)")
    args = parser.parse_args()
    if args.passes:  # a SIGTERM (timeout) still runs the cleanup that deletes the stores
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
        run_passes(args.n or 10_000_000, args.m, args.tol, args.lam)
    elif args.large:
        run_large(10_000_000, 2000, 250_000, args.iterations)
    else:
        run_default(args.n or 200_000, args.m)
