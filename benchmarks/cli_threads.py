"""Torch threads of each command: the wall time of ``kernelkit autoencode``, ``fit`` and
``gram`` with ``--threads 1`` and ``--threads 2``, each in a fresh process (median of
``--repeat`` runs), on files of real size built by ``benchmarks/cli_data.py``.

Its numbers are quoted in ``kernelkit.cli._main.THREADED_COMMANDS`` (the ``--threads``
default is torch's own: two threads win on the quiet 2-core machine, one wins while other
jobs load the cores).  Run
``python benchmarks/cli_threads.py DATA_FOLDER`` after ``python benchmarks/cli_data.py
DATA_FOLDER --molecules 1000``; prints a Markdown table and writes
``benchmarks/results/cli_threads.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
RESULTS = Path(__file__).resolve().parent / "results" / "cli_threads.json"


def _commands(data: Path, out: Path, n: int) -> dict[str, list[str]]:
    smi = str(data / f"molecules_{n}.smi")
    return {
        "autoencode": ["autoencode", smi, "--out", str(out / "ae"), "--dims", "2"],
        "fit": ["fit", smi, "--model", "autoencoder", "--dims", "2", "--out", str(out / "m.zip")],
        "gram": ["gram", smi, "--out", str(out / "K.npy")],
    }


def _time(argv: list[str], threads: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "kernelkit.cli._main", *argv, "--threads", str(threads), "--quiet"],
        env=env,
        check=True,
    )
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="folder written by benchmarks/cli_data.py")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument(
        "--n", type=int, default=1000, help="molecules: DATA/molecules_N.smi (cli_data.py)"
    )
    args = parser.parse_args(argv)
    rows = {}
    print("| command | 1 thread s | 2 threads s |\n|---|---|---|")
    for name in ("gram", "fit", "autoencode"):
        seconds = {}
        for threads in (1, 2):
            runs = []
            for _ in range(args.repeat):
                with tempfile.TemporaryDirectory() as tmp:
                    runs.append(_time(_commands(args.data, Path(tmp), args.n)[name], threads))
            seconds[threads] = statistics.median(runs)
        rows[name] = seconds
        print(f"| {name} | {seconds[1]:.1f} | {seconds[2]:.1f} |", flush=True)
    load = os.getloadavg()[0]
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps({"seconds": rows, "load": load}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
