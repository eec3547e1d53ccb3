"""Kernel k-means and kernel logistic regression against the scikit-learn pipelines users build.

scikit-learn has neither estimator; the nearest pipelines approximate the kernel by explicit
features and run the linear method on them.  Cases, in one run:

* kernel k-means, n = 10^4 concentric circles (``make_circles(factor=0.4, noise=0.05)``),
  ``Gaussian(0.3)``, 2 clusters: ``KernelKMeans(n_init=10)`` (exact, on the full Gram) against
  ``Nystroem(rbf, n_components=m) + KMeans(n_init=10)`` and
  ``KernelPCA(rbf, n_components=10, eigen_solver="randomized") + KMeans(n_init=10)``; time and
  adjusted Rand index (ARI) against the generating labels;
* kernel logistic regression, n = 10^4 training points of a nonlinear 16-d problem
  (``y = 1[sin(x.w / 4) + 0.5 cos(x_0) + 0.1 noise > 0]``), ``Gaussian(4)``, ``lam = 5e-5``:
  ``KernelLogisticRegression`` with its default ``solver="auto"`` (its choice, ``solver_``, in
  the row's label: at n = 10^4 Newton-PCG on 1000 uniform Nyström centres; exact IRLS below
  the cost model's crossover) against
  ``Nystroem(rbf, n_components=m) + LogisticRegression(C = 1 / (2 n lam))`` (the same
  objective on the Nyström features); time and accuracy on 2000 test points.

``ratio = baseline_s / kernelkit_s`` (> 1: kernelkit faster).  The exact methods cost
O(n^2) memory and, for exact KLR, one O(n^3) Cholesky per Newton step; the baselines are
approximations whose accuracy is reported beside their time.

Run ``python benchmarks/bench_toolbox.py`` (``--n`` to change the size, ``--quick`` for
n = 2000).  Writes ``benchmarks/results/bench_toolbox.json``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from _common import report

SIGMA_CIRCLES = 0.3
SIGMA_KLR, LAM = 4.0, 5e-5  # lam ||f||^2: the committed runs' (lam / 2) with lam = 1e-4


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def bench_kmeans(n: int, m: int) -> list[dict]:
    from sklearn.cluster import KMeans
    from sklearn.datasets import make_circles
    from sklearn.decomposition import KernelPCA
    from sklearn.kernel_approximation import Nystroem
    from sklearn.metrics import adjusted_rand_score
    from sklearn.pipeline import make_pipeline

    from kernelkit import KernelKMeans
    from kernelkit.kernels import Gaussian

    X, y = make_circles(n, factor=0.4, noise=0.05, random_state=0)
    gamma = 1 / (2 * SIGMA_CIRCLES**2)
    ours_s, labels = _timed(
        lambda: KernelKMeans(2, Gaussian(SIGMA_CIRCLES), random_state=0, n_init=10).fit(X).labels_
    )
    ours_ari = adjusted_rand_score(y, labels)
    baselines = {
        f"Nystroem(m={m}) + KMeans": make_pipeline(
            Nystroem(gamma=gamma, n_components=m, random_state=0),
            KMeans(2, n_init=10, random_state=0),
        ),
        "KernelPCA(10, randomized) + KMeans": make_pipeline(
            KernelPCA(10, kernel="rbf", gamma=gamma, eigen_solver="randomized", random_state=0),
            KMeans(2, n_init=10, random_state=0),
        ),
    }
    rows = []
    for name, pipe in baselines.items():
        seconds, base_labels = _timed(lambda p=pipe: p.fit_predict(X))
        rows.append(
            {
                "case": f"kernel k-means, circles n={n}",
                "kernelkit": "KernelKMeans (exact)",
                "kernelkit_s": ours_s,
                "kernelkit_score": round(ours_ari, 4),
                "baseline": name,
                "baseline_s": seconds,
                "baseline_score": round(adjusted_rand_score(y, base_labels), 4),
                "score": "ARI",
            }
        )
    return rows


def _classification(n: int, n_test: int, d: int = 16, seed: int = 0):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(d)
    X = rng.standard_normal((n + n_test, d))
    f = np.sin(X @ w / 4.0) + 0.5 * np.cos(X[:, 0]) + 0.1 * rng.standard_normal(n + n_test)
    y = (f > 0).astype(int)
    return X[:n], y[:n], X[n:], y[n:]


def bench_klr(n: int, m: int) -> list[dict]:
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    from kernelkit import KernelLogisticRegression
    from kernelkit.kernels import Gaussian

    X, y, Xt, yt = _classification(n, 2000)
    ours = KernelLogisticRegression(Gaussian(SIGMA_KLR), LAM)
    ours_s, _ = _timed(lambda: ours.fit(X, y))
    ours_acc = float(np.mean(ours.predict(Xt) == yt))
    pipe = make_pipeline(
        Nystroem(gamma=1 / (2 * SIGMA_KLR**2), n_components=m, random_state=0),
        LogisticRegression(C=1 / (2 * n * LAM), fit_intercept=False, max_iter=1000),
    )
    base_s, _ = _timed(lambda: pipe.fit(X, y))
    return [
        {
            "case": f"KLR, 16-d nonlinear, n={n}",
            "kernelkit": (
                f"KernelLogisticRegression (solver {ours.solver_}, "
                f"{int(ours.n_iter_[0])} Newton steps)"
            ),
            "kernelkit_s": ours_s,
            "kernelkit_score": round(ours_acc, 4),
            "baseline": f"Nystroem(m={m}) + LogisticRegression",
            "baseline_s": base_s,
            "baseline_score": round(float(np.mean(pipe.predict(Xt) == yt)), 4),
            "score": "test accuracy",
        }
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--m", type=int, default=1000, help="Nystroem components")
    parser.add_argument("--quick", action="store_true", help="n = 2000, m = 200")
    args = parser.parse_args()
    n, m = (2000, 200) if args.quick else (args.n, args.m)
    rows = bench_kmeans(n, m) + bench_klr(n, m)
    report("bench_toolbox", rows)


if __name__ == "__main__":
    main()
