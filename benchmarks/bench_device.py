"""The Nyström solvers on an accelerator: issue 27's n = 10^6 problems on a CUDA device.

Run where a GPU is lent (``python benchmarks/bench_device.py --device cuda``); without one it
says so and runs nothing (``make bench`` calls it like every script; its results stay).  The
problems, settings and test sets are :mod:`bench_falkon`'s (10-D, float32 inputs, 10^5 test
points, ``tuned`` and ``defaults`` variants), the data handed over as torch tensors on
``--device``:

* ridge and logistic regression at ``n`` (10^6), every ``m`` of ``--m``: ``solver="auto"``
  and, on ``tuned`` rows, the one-pass and PCG solvers forced (the ablation that checks
  ``"auto"``'s choice on this device, whose cost model was measured on the CPU);
* scikit-learn's ``Nystroem + Ridge`` on the same machine's CPU cores at the ``m`` of
  ``--sk-m`` (what a user without the GPU would run; its ``n x m`` features in host memory);
* ``KernelPCA(solver="nystrom")`` and ``KernelKMeans(solver="nystrom")`` on
  :mod:`bench_nystrom_unsupervised`'s problems (2 components of 10-D normal points; two
  circles, the adjusted Rand index) at ``n`` with ``--unsupervised-m`` centres.

Each row records its wall seconds (the device synchronised before the clock stops), the test
error and the solver chosen.  Writes ``--out`` (JSON; default
``benchmarks/results/bench_device.json``) after every row, so a run cut short keeps its rows.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parent))

from _common import RESULTS_DIR, method_of
from bench_falkon import N_TEST, _data, _kernelkit_model, _sklearn_model
from bench_nystrom_unsupervised import SIGMA_CIRCLES, SIGMA_KPCA, _circles, _kpca_data
from sklearn.metrics import adjusted_rand_score


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _errors(pred, yt: np.ndarray, ft: np.ndarray, regression: bool) -> dict:
    pred = (pred.detach().cpu().numpy() if isinstance(pred, torch.Tensor) else pred).astype(float)
    if regression:
        return {
            "test_error": float(np.mean((pred - yt) ** 2)),
            "excess_mse": float(np.mean((pred - ft) ** 2)),
        }
    return {"test_error": float(np.mean(pred != yt))}


def supervised_row(task: str, variant: str, method: str, n: int, m: int, device: str) -> dict:
    regression = task == "regression"
    X, y, Xt, ft, yt = _data(n, N_TEST)
    if not regression:
        y, yt = (y > np.median(y)).astype(int), (yt > np.median(y)).astype(int)
    case = {"task": task, "variant": variant, "method": method, "n": n, "m": m}
    row = dict(case, device=device)
    if method == "sklearn":
        model, data, test, target = _sklearn_model(case), X, Xt, y
    else:
        model = _kernelkit_model(case)
        data, test = torch.as_tensor(X, device=device), torch.as_tensor(Xt, device=device)
        target = torch.as_tensor(y, device=device)
    _sync(device)
    start = time.perf_counter()
    model.fit(data, target)
    _sync(device)
    row["fit_seconds"] = round(time.perf_counter() - start, 3)
    pred = model.predict(test)
    _sync(device)
    row["seconds"] = round(time.perf_counter() - start, 3)
    if method != "sklearn":
        row["solver"] = method_of(model)
        row["output_device"] = str(pred.device) if isinstance(pred, torch.Tensor) else "numpy"
        if hasattr(model, "lam_"):
            row["lam"] = float(model.lam_)
    row.update(_errors(pred, yt, ft, regression))
    return row


def unsupervised_row(what: str, n: int, m: int, device: str) -> dict:
    """:mod:`bench_nystrom_unsupervised`'s problems (10-D normal points; circles) on ``device``."""
    import kernelkit
    from kernelkit.kernels import Gaussian

    if what == "KernelPCA":
        X = _kpca_data(n, 10).astype(np.float32)
        model = kernelkit.KernelPCA(
            Gaussian(SIGMA_KPCA), 2, solver="nystrom", n_centers=m, random_state=0
        )
    else:
        X, truth = _circles(n)
        X = X.astype(np.float32)
        model = kernelkit.KernelKMeans(
            2, Gaussian(SIGMA_CIRCLES), solver="nystrom", n_centers=m, random_state=0
        )
    data = torch.as_tensor(X, device=device)
    _sync(device)
    start = time.perf_counter()
    out = model.fit_transform(data) if what == "KernelPCA" else model.fit(data).labels_
    _sync(device)
    row = {"task": what, "n": n, "m": m, "device": device}
    row["seconds"] = round(time.perf_counter() - start, 3)
    row["output_device"] = str(out.device) if isinstance(out, torch.Tensor) else "numpy"
    if what == "KernelKMeans":
        row["ari"] = float(adjusted_rand_score(truth, out))
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--m", type=int, nargs="+", default=[1000, 2000, 5000])
    parser.add_argument("--sk-m", type=int, nargs="*", default=[1000, 2000])
    parser.add_argument("--unsupervised-m", type=int, default=2000)
    parser.add_argument("--tasks", nargs="+", default=["regression", "logistic"])
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "bench_device.json")
    args = parser.parse_args()
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print(f"--device {args.device}: no CUDA device here, nothing run ({args.out} kept)")
        return
    plan = [("unsupervised", what) for what in ("KernelPCA", "KernelKMeans")]
    for task in args.tasks:
        for m in args.m:
            plan += [(task, "tuned", method, m) for method in ("auto", "onepass", "nystrom")]
            plan.append((task, "defaults", "auto", m))
    plan += [("regression", "tuned", "sklearn", m) for m in args.sk_m]
    info = {"device": args.device, "torch": torch.__version__, "rows": []}
    if args.device.startswith("cuda"):
        info["gpu"] = torch.cuda.get_device_name(0)
    for item in plan:
        start = time.perf_counter()
        try:
            if item[0] == "unsupervised":
                row = unsupervised_row(item[1], args.n, args.unsupervised_m, args.device)
            else:
                row = supervised_row(*item[:3], args.n, item[3], args.device)
        except Exception as exc:  # keep the other rows: report this one and go on
            traceback.print_exc()
            row = {"case": list(item), "error": f"{type(exc).__name__}: {exc}"[:500]}
        row["row_seconds"] = round(time.perf_counter() - start, 2)
        print(json.dumps(row), flush=True)
        info["rows"].append(row)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(info, indent=1) + "\n")


if __name__ == "__main__":
    main()
