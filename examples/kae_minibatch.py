"""Landmark K2AE trained by minibatches against the full-batch landmark fit (issue 15, item 4).

Data: ``n`` points of a smooth 3-manifold in R^10 with noise, generated, not real:
``u ~ U[0, 1]^3``, ``x = tanh(u W_1 + c) W_2 + 0.05 e`` with ``W_1`` (3 x 32, entries
N(0, 3^2)), ``c`` (N(0, 1)), ``W_2`` (32 x 10, N(0, 1/32)) drawn once with seed 0, ``e``
standard normal; the points with seed 1.  Model (Laforgue et al. 2019, objective (5) with
landmarks): ``KernelAutoencoder(dims=(10,), input_kernel=Gaussian(sigma), n_centers=500)``,
``sigma`` the median heuristic on the first 1000 points, ``lam=1e-3``, KPCA initialisation,
500 landmarks drawn uniformly with seed 0.

``--mode compare`` (default ``n = 5e4``): the full-batch landmark fit (L-BFGS, default
``max_iter``/``tol``) and the minibatch fit (``optimizer="adam"``, ``--batch-size``,
``--lr``, ``--epochs``), same landmarks and start; their objectives (the minibatch one after
every epoch, the exact landmark objective over all points) and times.
``--mode scale`` (default ``n = 1e6``): the minibatch fit alone, wall and CPU time of the fit
(after every epoch) and of the codes of all points (``transform``, row tiles).  With one
thread the CPU time is what the run takes on an idle core, whatever the load of the machine.

Run: ``PYTHONPATH=src python examples/kae_minibatch.py --mode compare`` (writes
``examples/results/kae_minibatch_{mode}.json``).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
import torch

from kernelkit.estimators._autoencoder import KernelAutoencoder
from kernelkit.kernels import Gaussian
from kernelkit.kernels._specs import median_sigma

RESULTS = Path(__file__).parent / "results"


def manifold(n: int, dtype: np.dtype) -> np.ndarray:
    """``n`` points near a smooth 3-manifold in R^10 (see the module docstring)."""
    g = np.random.default_rng(0)
    W1, c, W2 = 3 * g.normal(size=(3, 32)), g.normal(size=32), g.normal(size=(32, 10)) / 32**0.5
    rng = np.random.default_rng(1)
    X = np.tanh(rng.uniform(size=(n, 3)) @ W1 + c) @ W2
    X += 0.05 * rng.normal(size=X.shape)
    return X.astype(dtype)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=("compare", "scale"), default="compare")
    ap.add_argument("--n", type=int, default=None)
    ap.add_argument("--landmarks", type=int, default=500)
    ap.add_argument("--batch-size", type=int, default=2000)
    ap.add_argument("--lr", type=float, default=1e-2)
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--float32", action="store_true")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    n = args.n or (50_000 if args.mode == "compare" else 1_000_000)
    X = manifold(n, np.float32 if args.float32 else np.float64)
    sigma = median_sigma(torch.as_tensor(X[:1000]))
    kw = {
        "dims": (10,),
        "input_kernel": Gaussian(sigma),
        "lam": 1e-3,
        "n_centers": args.landmarks,
        "random_state": 0,
    }
    row: dict = {"mode": args.mode, "n": n, "sigma": sigma, **vars(args)}
    warnings.simplefilter("ignore")
    if args.mode == "compare":
        t0 = time.perf_counter()
        full = KernelAutoencoder(**kw).fit(X)
        row["full"] = {
            "seconds": time.perf_counter() - t0,
            "objective": full.objective_,
            "n_iter": full.n_iter_,
            "stopped": full.stopped_,
            "start": full.history_[0],
        }
        print(json.dumps(row["full"]), flush=True)
    times: list[float] = []
    cpu: list[float] = []
    t0, c0 = time.perf_counter(), time.process_time()

    def tick(epoch: int, objective: float) -> None:
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        print(
            f"epoch {epoch}: objective {objective:.6g} at {times[-1]:.1f} s (CPU {cpu[-1]:.1f} s)",
            flush=True,
        )

    mb = KernelAutoencoder(
        **kw,
        optimizer="adam",
        batch_size=args.batch_size,
        lr=args.lr,
        max_iter=args.epochs,
        verbose=tick,
    ).fit(X)
    fit_s, fit_cpu = time.perf_counter() - t0, time.process_time() - c0
    t1, c1 = time.perf_counter(), time.process_time()
    codes = mb.transform(X)
    row["minibatch"] = {
        "seconds": fit_s,
        "cpu_seconds": fit_cpu,
        "transform_seconds": time.perf_counter() - t1,
        "transform_cpu_seconds": time.process_time() - c1,
        "epoch_cpu_seconds": cpu,
        "objective": mb.objective_,
        "history": mb.history_,
        "epoch_seconds": times,
        "n_iter": mb.n_iter_,
        "stopped": mb.stopped_,
        "codes_shape": list(np.shape(codes)),
    }
    if "full" in row:
        row["ratio"] = mb.objective_ / row["full"]["objective"]
        first = next(
            (i for i, v in enumerate(mb.history_) if v <= 1.02 * row["full"]["objective"]), None
        )
        row["first_epoch_within_2pct"] = first
    print(json.dumps({k: v for k, v in row.items() if k != "minibatch"}), flush=True)
    RESULTS.mkdir(exist_ok=True)
    suffix = "" if args.n is None else f"_{n}"
    (RESULTS / f"kae_minibatch_{args.mode}{suffix}.json").write_text(
        json.dumps(row, indent=2) + "\n"
    )


if __name__ == "__main__":
    main()
