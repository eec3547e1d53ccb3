"""Shared helpers for the benchmarks: timing by median (or best) of repeats, tables and JSON
results.

Benchmarks compare kernelkit with what a user would use instead (scikit-learn, GraKeL, ...)
*in the same run* and report ratios.  They are scripts, never timed unit tests.
"""

from __future__ import annotations

import json
import math
import os
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(__file__).parent / "results"


def median_time(fn: Callable[[], Any], *, repeat: int = 3, warmup: int = 1) -> float:
    """Median wall-clock seconds of ``fn()`` over ``repeat`` runs after ``warmup`` runs."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def adaptive_time(
    fn: Callable[[], Any], *, repeat: int = 3, budget_s: float = 1.0, max_repeat: int = 200
) -> tuple[float, str]:
    """Seconds of one ``fn()`` run and how they were taken.

    A first run is timed; when it takes under ``budget_s``, the result is the best of
    ``k = ceil(budget_s / first)`` runs (at least ``repeat``, at most ``max_repeat``, the first
    included), so a sub-second timing spends about ``budget_s`` and the minimum filters the
    noise of a shared machine (standard practice for short timings, as ``timeit`` does);
    otherwise the median of ``repeat`` runs, the first included.
    """
    start = time.perf_counter()
    fn()
    times = [time.perf_counter() - start]
    fast = times[0] < budget_s
    k = min(max(repeat, math.ceil(budget_s / max(times[0], 1e-9))), max_repeat) if fast else repeat
    for _ in range(k - 1):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    if fast:
        return min(times), f"best of {k}"
    return statistics.median(times), "one run" if k == 1 else f"median of {k}"


def machine_info() -> dict[str, Any]:
    """Versions and thread counts recorded next to every result."""
    import numpy
    import scipy
    import sklearn
    import torch

    return {
        "python": platform.python_version(),
        "machine": platform.machine(),
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "sklearn": sklearn.__version__,
    }


def report(name: str, rows: list[dict[str, Any]]) -> None:
    """Print rows as a Markdown table and write ``results/<name>.json``.

    Each row is a dict with at least ``case``, ``kernelkit_s``, ``baseline``, ``baseline_s``;
    the speed-up ``ratio = baseline_s / kernelkit_s`` is added here.
    """
    for row in rows:
        row["ratio"] = round(row["baseline_s"] / row["kernelkit_s"], 2)
    keys = list(dict.fromkeys(k for row in rows for k in row))
    print(f"\n### {name}\n")
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for row in rows:
        cells = [
            f"{row.get(k):.4g}" if isinstance(row.get(k), float) else str(row.get(k, ""))
            for k in keys
        ]
        print("| " + " | ".join(cells) + " |")
    RESULTS_DIR.mkdir(exist_ok=True)
    payload = {
        "benchmark": name,
        "machine": machine_info(),
        "time": time.strftime("%Y-%m-%d %H:%M:%S"),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "rows": rows,
    }
    (RESULTS_DIR / f"{name}.json").write_text(json.dumps(payload, indent=2))


def solver_params(method: str) -> dict:
    """``KernelRidge`` / ``KernelLogisticRegression`` parameters that force ``method``:
    ``"auto"``, ``"exact"``, or a Nyström method (``"onepass"``, ``"pcg"``; ``"nystrom"`` is
    the benchmarks' historical label of PCG)."""
    if method in ("auto", "exact"):
        return {"solver": method}
    return {"solver": "nystrom", "nystrom_method": "pcg" if method == "nystrom" else method}


def method_of(model) -> str:
    """The method that fitted, in the benchmarks' labels: ``"exact"``, ``"onepass"`` or
    ``"nystrom"`` (PCG)."""
    method = getattr(model, "nystrom_method_", model.solver_)
    return "nystrom" if method == "pcg" else method
