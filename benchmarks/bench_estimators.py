"""KernelRidge, KernelPCA and KernelSVC against scikit-learn, in the same run.

Cases:

* exact KRR, n = 10^4, d = 16, Gaussian: fit + predict, kernelkit float64 and float32 against
  scikit-learn ``KernelRidge(alpha=n*lam, kernel="rbf")`` in the same dtype (both test MSEs
  are reported);
* KPCA top-50 at n = 5000 against ``KernelPCA(eigen_solver="arpack")`` (target: >= 1x);
* KernelSVC against ``SVC(kernel="rbf")`` at a few thousand points.

Run ``python benchmarks/bench_estimators.py`` (``--quick`` for a small smoke run).  Prints a
Markdown table of medians and ratios (baseline time / kernelkit time) and writes
``benchmarks/results/bench_estimators.json``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from _common import median_time, report


def _regression_data(n: int, n_test: int, d: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(d)
    X = rng.standard_normal((n, d))
    Xt = rng.standard_normal((n_test, d))

    def target(Z):
        return np.sin(Z @ w / 4.0) + 0.5 * np.cos(Z[:, 0])

    return X, target(X) + 0.1 * rng.standard_normal(n), Xt, target(Xt)


def bench_krr(n: int, repeat: int) -> list[dict]:
    from sklearn.kernel_ridge import KernelRidge as SkKernelRidge

    from kernelkit import KernelRidge
    from kernelkit.kernels import Gaussian

    d, sigma, lam = 16, 4.0, 1e-4
    X, y, Xt, yt = _regression_data(n, 2000, d)
    gamma = 1.0 / (2.0 * sigma**2)
    results: dict[str, tuple[float, float]] = {}

    def run(name, make, Xtr, Xte):
        pred = {}

        def job():
            pred["y"] = np.asarray(make().fit(Xtr, y).predict(Xte), dtype=np.float64)

        seconds = median_time(job, repeat=repeat, warmup=0)
        results[name] = (seconds, float(np.mean((pred["y"] - yt) ** 2)))

    run("sk64", lambda: SkKernelRidge(alpha=n * lam, kernel="rbf", gamma=gamma), X, Xt)
    run("kk64", lambda: KernelRidge(Gaussian(sigma), lam=lam), X, Xt)
    X32, Xt32 = X.astype(np.float32), Xt.astype(np.float32)
    run("kk32", lambda: KernelRidge(Gaussian(sigma), lam=lam), X32, Xt32)
    run("sk32", lambda: SkKernelRidge(alpha=n * lam, kernel="rbf", gamma=gamma), X32, Xt32)
    sk64, sk32 = results["sk64"], results["sk32"]
    rows = []
    for case, ours, base, base_name in [
        ("KRR fit+predict float64", results["kk64"], sk64, "sklearn KernelRidge float64"),
        ("KRR fit+predict float32", results["kk32"], sk32, "sklearn KernelRidge float32"),
    ]:
        rows.append(
            {
                "case": f"{case} n={n} d={d}",
                "kernelkit_s": round(ours[0], 3),
                "baseline": base_name,
                "baseline_s": round(base[0], 3),
                "kernelkit_test_mse": round(ours[1], 6),
                "baseline_test_mse": round(base[1], 6),
            }
        )
    return rows


def bench_kpca(n: int, k: int, repeat: int) -> list[dict]:
    from sklearn.decomposition import KernelPCA as SkKernelPCA

    from kernelkit import KernelPCA
    from kernelkit.kernels import Gaussian

    d, sigma = 16, 4.0
    X = np.random.default_rng(1).standard_normal((n, d))
    out = {}

    def ours():
        out["ours"] = KernelPCA(Gaussian(sigma), n_components=k).fit(X).eigenvalues_

    def ref():
        model = SkKernelPCA(
            n_components=k,
            kernel="rbf",
            gamma=1.0 / (2.0 * sigma**2),
            eigen_solver="arpack",
            random_state=0,
        )
        out["ref"] = model.fit(X).eigenvalues_

    t_ours = median_time(ours, repeat=repeat, warmup=0)
    t_ref = median_time(ref, repeat=repeat, warmup=0)
    rel = float(np.abs(out["ours"] - out["ref"]).max() / out["ref"].max())
    return [
        {
            "case": f"KPCA fit top-{k} n={n} d={d} float64",
            "kernelkit_s": round(t_ours, 3),
            "baseline": "sklearn KernelPCA arpack",
            "baseline_s": round(t_ref, 3),
            "max_rel_eigenvalue_diff": rel,
        }
    ]


def bench_svc(n: int, repeat: int) -> list[dict]:
    from sklearn.svm import SVC

    from kernelkit import KernelSVC
    from kernelkit.kernels import Gaussian

    d, sigma, C = 16, 4.0, 1.0
    X, y, Xt, yt = _regression_data(n, 2000, d, seed=2)
    labels, labels_t = (y > np.median(y)).astype(int), (yt > np.median(y)).astype(int)
    out = {}

    def ours():
        model = KernelSVC(Gaussian(sigma), C=C).fit(X, labels)
        out["ours"] = model.decision_function(Xt)

    def ref():
        model = SVC(kernel="rbf", gamma=1.0 / (2.0 * sigma**2), C=C).fit(X, labels)
        out["ref"] = model.decision_function(Xt)

    t_ours = median_time(ours, repeat=repeat, warmup=1)
    t_ref = median_time(ref, repeat=repeat, warmup=1)
    return [
        {
            "case": f"SVC fit+decision n={n} d={d} float64",
            "kernelkit_s": round(t_ours, 3),
            "baseline": "sklearn SVC rbf",
            "baseline_s": round(t_ref, 3),
            "max_abs_decision_diff": float(np.abs(out["ours"] - out["ref"]).max()),
            "kernelkit_test_acc": float(np.mean((out["ours"] > 0) == labels_t)),
        }
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (smoke run)")
    parser.add_argument("--only", choices=["krr", "kpca", "svc"], action="append")
    args = parser.parse_args(argv)
    only = set(args.only or ["krr", "kpca", "svc"])
    quick = args.quick
    rows: list[dict] = []
    if "krr" in only:
        rows += bench_krr(2000 if quick else 10_000, repeat=1 if quick else 3)
    if "kpca" in only:
        rows += bench_kpca(1000 if quick else 5000, 50, repeat=1 if quick else 3)
    if "svc" in only:
        rows += bench_svc(1000 if quick else 4000, repeat=1 if quick else 3)
    report("bench_estimators", rows)


if __name__ == "__main__":
    # under run_all.py the command line names scripts, not our options
    main(sys.argv[1:] if Path(sys.argv[0]).name == Path(__file__).name else [])
