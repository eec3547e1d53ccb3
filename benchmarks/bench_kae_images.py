"""``KernelAutoencoder()`` with its defaults on 2000 images, next to scikit-learn's KernelPCA.

Issue 51 asks that ``KernelAutoencoder()`` fit 2000 fashion images in at most 300 s on the
shared 2-core machine.  The fashion set is not in the shared data, so the stand-in is
``mnist5k`` (784 pixels, scaled to [0, 1] as the other benchmarks do): the rows shuffled with
seed 0, the first ``--n`` for training and the next ``--n-test`` for testing.

Compared in the same run, with the same code size (10):

* ``KernelAutoencoder(random_state=0)`` (defaults: ``dims=(10,)``, ``lam="auto"``, Gaussian
  kernels with the median heuristic, full-batch L-BFGS);
* what a user would use instead: ``sklearn.decomposition.KernelPCA(n_components=10,
  kernel="rbf", gamma=1 / (2 sigma^2), fit_inverse_transform=True)`` with the same median-
  heuristic ``sigma`` as the autoencoder's first layer (and once with scikit-learn's defaults,
  ``gamma = 1 / n_features``).

``--grid-rows N`` sets the option ``autoencoder_grid_rows`` (``--grid-rows 100000``: every grid fit
on the whole fit part, the protocol before the option).

Reported: fit seconds (wall, and the autoencoder's CPU seconds), their ratio, and the mean
squared reconstruction error
``||x - x_hat||^2`` on the training and test images (the autoencoder's ``reconstruction_error``,
KernelPCA's ``inverse_transform(transform(X))``), with the load average of the machine.

Run: ``python benchmarks/bench_kae_images.py [--threads 2] [--n 2000] [--grid-rows N]``; writes
``benchmarks/results/bench_kae_images.json``.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import torch
from _common import report
from sklearn.decomposition import KernelPCA

from kernelkit import KernelAutoencoder, config_context, get_config

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def _images(data: Path, n: int, n_test: int) -> tuple[np.ndarray, np.ndarray]:
    table = np.loadtxt(data / "mnist5k" / "mnist_5k.csv.gz", delimiter=",", dtype=np.uint8)
    order = np.random.default_rng(0).permutation(len(table))
    X = table[order, :784] / 255.0
    return X[:n], X[n : n + n_test]


def _mse(X: np.ndarray, X_hat: np.ndarray) -> float:
    return float(((X - X_hat) ** 2).sum(1).mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=2000, help="training images")
    parser.add_argument("--n-test", type=int, default=1000, help="test images")
    parser.add_argument("--threads", type=int, default=2, help="torch threads")
    parser.add_argument("--data", type=Path, default=DATA, help="the shared data folder")
    parser.add_argument("--name", default="bench_kae_images", help="results file name")
    parser.add_argument("--grid-rows", type=int, default=None, help="autoencoder_grid_rows")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    X, X_test = _images(args.data, args.n, args.n_test)
    load_before = os.getloadavg()[0]

    grid_rows = args.grid_rows or get_config()["autoencoder_grid_rows"]
    start, cpu = time.perf_counter(), time.process_time()
    with config_context(autoencoder_grid_rows=grid_rows):
        ae = KernelAutoencoder(random_state=0).fit(X)
    ae_s, ae_cpu = time.perf_counter() - start, time.process_time() - cpu
    ae_train = float(np.mean(ae.reconstruction_error(X)))
    ae_test = float(np.mean(ae.reconstruction_error(X_test)))
    sigma = ae.kernels_[0].sigma

    rows = []
    for label, gamma in (("median sigma", 1 / (2 * sigma**2)), ("sklearn default gamma", None)):
        kpca = KernelPCA(n_components=10, kernel="rbf", gamma=gamma, fit_inverse_transform=True)
        start = time.perf_counter()
        kpca.fit(X)
        kpca_s = time.perf_counter() - start
        rows.append(
            {
                "case": f"{args.n} mnist5k images, code 10, vs KernelPCA ({label})",
                "kernelkit_s": round(ae_s, 2),
                "kernelkit_cpu_s": round(ae_cpu, 2),
                "grid_rows": grid_rows,
                "baseline": "sklearn KernelPCA(fit_inverse_transform=True)",
                "baseline_s": round(kpca_s, 2),
                "kae_lam": ae.lam_,
                "kae_lam_curve": ae.lam_curve_,
                "kae_refit_iterations": ae.n_iter_,
                "kae_train_mse": round(ae_train, 4),
                "kae_test_mse": round(ae_test, 4),
                "kpca_train_mse": round(_mse(X, kpca.inverse_transform(kpca.transform(X))), 4),
                "kpca_test_mse": round(
                    _mse(X_test, kpca.inverse_transform(kpca.transform(X_test))), 4
                ),
                "threads": args.threads,
                "load_1min_before": round(load_before, 2),
                "load_1min_after": round(os.getloadavg()[0], 2),
            }
        )
    report(args.name, rows)


if __name__ == "__main__":
    main()
