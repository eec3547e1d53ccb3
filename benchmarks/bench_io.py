"""kernelkit.io save/load against pickle and joblib, in the same run.

What a user would do instead of ``kernelkit.io`` is ``pickle.dump(model)`` or
``joblib.dump(model)`` (unsafe to load from untrusted sources).  Cases: a KernelRidge with a
large training set (the arrays dominate), a KernelSVC, and a kernel autoencoder (a torch model
with several layers: the codec's object tree dominates).  Each row times ``save`` or ``load``
of a directory model and of a ``.zip`` model against ``pickle`` / ``joblib`` on the same
estimator, and reports the file sizes.

Run ``python benchmarks/bench_io.py`` (``--quick`` for a small smoke run).  Prints a Markdown
table of medians and ratios (baseline time / kernelkit time; < 1 means kernelkit is slower)
and writes ``benchmarks/results/bench_io.json``.
"""

from __future__ import annotations

import argparse
import pickle
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from _common import median_time, report


def _size_mb(path: Path) -> float:
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    return round(sum(p.stat().st_size for p in files) / 2**20, 2)


def _models(n: int) -> dict[str, object]:
    from kernelkit import KernelAutoencoder, KernelRidge, KernelSVC
    from kernelkit.kernels import Gaussian

    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, 32))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(n)
    small = X[: min(n, 1000)]
    return {
        f"KernelRidge n={n} d=32": KernelRidge(Gaussian(sigma=4.0), lam=1e-3).fit(X, y),
        f"KernelSVC n={len(small)}": KernelSVC(Gaussian(sigma=4.0)).fit(small, y[: len(small)] > 0),
        f"KAE (16, 4, 16) n={len(small)}": KernelAutoencoder(
            (16, 4, 16), lam=1e-3, max_iter=3, random_state=0
        ).fit(small),
    }


def bench(n: int, repeat: int) -> list[dict]:
    import joblib

    from kernelkit.io import load, save

    rows = []
    workdir = Path(tempfile.mkdtemp(prefix="bench_io_"))
    try:
        for case, model in _models(n).items():
            pkl, jbl = workdir / "model.pkl", workdir / "model.joblib"

            def dump_pickle(model=model, pkl=pkl):
                with open(pkl, "wb") as fh:
                    pickle.dump(model, fh, protocol=pickle.HIGHEST_PROTOCOL)

            def load_pickle(pkl=pkl):
                with open(pkl, "rb") as fh:
                    return pickle.load(fh)  # the unsafe baseline being measured

            baselines = {
                "pickle": (dump_pickle, load_pickle, pkl),
                "joblib": (
                    lambda model=model, jbl=jbl: joblib.dump(model, jbl),
                    lambda jbl=jbl: joblib.load(jbl),
                    jbl,
                ),
            }
            for layout in ("directory", "zip"):
                target = workdir / ("model.zip" if layout == "zip" else "model")
                ops = {
                    "save": lambda model=model, target=target: save(model, target, overwrite=True),
                    "load": lambda target=target: load(target),
                }
                for op, ours in ops.items():
                    kk = median_time(ours, repeat=repeat)
                    for name, (b_save, b_load, b_path) in baselines.items():
                        base = median_time(b_save if op == "save" else b_load, repeat=repeat)
                        rows.append(
                            {
                                "case": f"{case} {op} ({layout})",
                                "kernelkit_s": kk,
                                "baseline": name,
                                "baseline_s": base,
                                "kernelkit_mb": _size_mb(target),
                                "baseline_mb": _size_mb(b_path),
                            }
                        )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one repeat")
    args = parser.parse_args()
    n, repeat = (2000, 1) if args.quick else (20000, 5)
    report("bench_io", bench(n, repeat))
