"""A 30-value ``lam`` grid with closed-form leave-one-out against three plain fits, n = 5000.

``KernelRidge(lam=grid, cv="loo")`` with its default ``solver="auto"`` prices the lam path
(:func:`kernelkit.models._falkon.choose_solver` with ``select=True``): above n of about 2000
it scores the grid on the one-pass Nyström statistics (``n_centers=1000``, ``O(m^2)`` per
value after one pass, :mod:`kernelkit.models._nystrom_path`); ``solver="exact"`` forces one
eigendecomposition of the ``n x n`` Gram and ``O(n^2)`` per value
(:mod:`kernelkit.models._ridge_path`).  The baseline is three plain ``KernelRidge(lam=1e-3)``
fits (their default solver is exact at this size: Gram + Cholesky each), timed in the same
run; ``plain_fits_per_path`` is the path's time over one plain fit.  The exact-path row is
an ablation (the cost of the eigendecomposition against a Cholesky factorisation).  Each
row also reports the held-out mean squared error of the selected model on 2000 new points
of the same distribution, next to the exact model at the exact path's ``lam_``.

A second table prices ``lam="auto"`` at ``n = 1000`` with the default kernel, fitted
``--repeat`` times interleaved with plain ``KernelRidge(lam=1e-3)`` fits (the ratio of the
medians is ``fixed_fits_per_auto``), against scikit-learn's ``GridSearchCV`` over the same
17 values of ``alpha = n lam`` with 5 folds on the same median-heuristic ``"rbf"`` kernel.

Usage: ``python benchmarks/bench_model_selection.py [--n 5000] [--threads 1]``
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parent))

from _common import report

from kernelkit import KernelRidge
from kernelkit.kernels import Gaussian
from kernelkit.models._ridge_path import lam_grid


def _timed_fit(model: KernelRidge, X: np.ndarray, y: np.ndarray) -> float:
    start = time.perf_counter()
    model.fit(X, y)
    return time.perf_counter() - start


def _data(n: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)


def auto_rows(n: int, d: int, repeat: int) -> list[dict]:
    """``lam="auto"`` against plain fits (interleaved, medians) and ``GridSearchCV``."""
    from sklearn.kernel_ridge import KernelRidge as SkKernelRidge
    from sklearn.model_selection import GridSearchCV

    X, y = _data(n, d, 2)
    auto_s, fixed_s = [], []
    for _ in range(repeat + 1):  # the first round warms up
        fixed_s.append(_timed_fit(KernelRidge(lam=1e-3), X, y))
        auto_s.append(_timed_fit(KernelRidge(lam="auto"), X, y))
    auto, fixed = float(np.median(auto_s[1:])), float(np.median(fixed_s[1:]))
    model = KernelRidge(lam="auto").fit(X, y)
    gamma = 1.0 / (2.0 * model.kernel_.sigma**2)
    search = GridSearchCV(  # alpha = n lam (the Gaussian's k(x, x) is 1)
        SkKernelRidge(kernel="rbf", gamma=gamma),
        {"alpha": list(n * lam_grid())},
        cv=5,
    )
    start = time.perf_counter()
    search.fit(X, y)
    grid_s = time.perf_counter() - start
    return [
        {
            "case": f"lam='auto' n={n} d={d} (closed-form LOO, {len(lam_grid())}-value grid)",
            "kernelkit_s": round(auto, 4),
            "baseline": "GridSearchCV(sklearn KernelRidge, same grid, cv=5)",
            "baseline_s": round(grid_s, 4),
            "one_fixed_fit_s": round(fixed, 4),
            "fixed_fits_per_auto": round(auto / fixed, 2),
            "lam_": model.lam_,
            "sklearn_alpha_over_n": float(search.best_params_["alpha"]) / n,
            "torch_threads": torch.get_num_threads(),
        }
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--d", type=int, default=8)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: default)")
    parser.add_argument("--auto-n", type=int, default=1000, help="n of the lam='auto' table")
    parser.add_argument("--repeat", type=int, default=5, help="interleaved rounds (auto table)")
    parser.add_argument("--only-auto", action="store_true", help="the lam='auto' table only")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    report("bench_lam_auto", auto_rows(args.auto_n, args.d, args.repeat))
    if args.only_auto:
        return
    X, y = _data(args.n, args.d, 0)
    X_test, y_test = _data(2000, args.d, 1)
    kernel = Gaussian(sigma=float(np.sqrt(args.d)))
    grid = list(np.logspace(-8, 1, 30))
    plain_s = [_timed_fit(KernelRidge(kernel, lam=1e-3), X, y) for _ in range(3)]
    one_fit = float(np.median(plain_s))
    rows = []
    for solver in ("auto", "exact"):
        path = KernelRidge(kernel, lam=grid, cv="loo", solver=solver)
        path_s = _timed_fit(path, X, y)
        rows.append(
            {
                "case": f"30-lam LOO path n={args.n} d={args.d}, solver={solver} -> {path.solver_}",
                "kernelkit_s": round(path_s, 3),
                "baseline": "3 plain KernelRidge fits",
                "baseline_s": round(sum(plain_s), 3),
                "one_plain_fit_s": round(one_fit, 3),
                "plain_fits_per_path": round(path_s / one_fit, 2),
                "lam_": path.lam_,
                "test_mse": float(np.mean((path.predict(X_test) - y_test) ** 2)),
                "torch_threads": torch.get_num_threads(),
            }
        )
    exact_at_lam = KernelRidge(kernel, lam=rows[1]["lam_"], solver="exact").fit(X, y)
    rows[0]["test_mse_exact_at_exact_lam_"] = float(
        np.mean((exact_at_lam.predict(X_test) - y_test) ** 2)
    )
    report("bench_model_selection", rows)


if __name__ == "__main__":
    main()
