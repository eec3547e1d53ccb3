"""``kernelkit autoencode`` on real sizes, and what its landmarks cost in accuracy.

* ``sizes``: ``kernelkit autoencode`` with default settings on 4200 SMILES and on 3186 DNA
  sequences (the files of ``benchmarks/cli_data.py``), each in a fresh process: wall and CPU
  seconds and the load average (the machine is shared).
* ``landmarks``: a 10-D K2AE (lam 1e-3, 50 L-BFGS iterations, seed 0) on 1500 of those
  records (80% training), exact and with M random landmarks; the mean held-out
  reconstruction error in the input kernel's RKHS, and the fit's CPU seconds.  The choice of
  ``--landmarks auto`` (:data:`kernelkit.cli._autoencode.AUTO_LANDMARKS`) rests on it.

Run ``python benchmarks/cli_autoencode_sizes.py DATA_FOLDER [sizes|landmarks]``; prints
Markdown tables and writes ``benchmarks/results/cli_autoencode_sizes.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SRC = Path(__file__).resolve().parents[1] / "src"
RESULTS = Path(__file__).resolve().parent / "results" / "cli_autoencode_sizes.json"


def _files(data: Path) -> dict[str, tuple[Path, list[str]]]:
    return {
        "4200 SMILES": (data / "molecules_4200.smi", []),
        "3186 DNA sequences": (data / "dna_3186.fasta", ["--target", "class"]),
    }


def sizes(data: Path) -> dict[str, dict[str, float]]:
    """Wall and CPU seconds of ``kernelkit autoencode`` with default settings."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    out = {}
    print("| input | wall s | CPU s | load |\n|---|---|---|---|")
    for name, (path, extra) in _files(data).items():
        with tempfile.TemporaryDirectory() as tmp:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            cmd = [sys.executable, "-m", "kernelkit.cli._main", "autoencode", str(path)]
            subprocess.run([*cmd, *extra, "--out", f"{tmp}/out", "--quiet"], env=env, check=True)
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        out[name] = {"wall": wall, "cpu": cpu, "load": os.getloadavg()[0]}
        print(f"| {name} | {wall:.1f} | {cpu:.1f} | {out[name]['load']:.1f} |", flush=True)
    return out


def landmarks(data: Path, counts: tuple[int | None, ...] = (None, 400, 500, 600)) -> dict:
    """Held-out reconstruction error of a 10-D K2AE, exact and with landmarks (n = 1500)."""
    import torch

    from kernelkit import KernelAutoencoder
    from kernelkit.data.readers import read_data
    from kernelkit.kernels import Spectrum, Tanimoto

    torch.set_num_threads(1)
    kernels = {"4200 SMILES": Tanimoto(), "3186 DNA sequences": Spectrum(k=3, alphabet="ACGT")}
    out: dict[str, dict[str, dict[str, float]]] = {}
    print("| input | landmarks | held-out error | fit CPU s |\n|---|---|---|---|")
    for name, (path, _) in _files(data).items():
        items = read_data(path).items
        idx = np.random.default_rng(0).permutation(len(items))[:1500]
        train, test = [items[i] for i in idx[:1200]], [items[i] for i in idx[1200:]]
        out[name] = {}
        for m in counts:
            cpu = time.process_time()
            ae = KernelAutoencoder(
                dims=(10,),
                input_kernel=kernels[name],
                lam=1e-3,
                max_iter=50,
                n_centers=m,
                random_state=0,
            ).fit(train)
            seconds = time.process_time() - cpu
            error = float(np.mean(ae.reconstruction_error(test)))
            out[name][str(m or "exact")] = {"error": error, "cpu": seconds}
            print(f"| {name} | {m or 'exact'} | {error:.4f} | {seconds:.1f} |", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="folder written by benchmarks/cli_data.py")
    parser.add_argument("parts", nargs="*", default=["sizes", "landmarks"])
    args = parser.parse_args(argv)
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    for part in args.parts:
        results[part] = {"sizes": sizes, "landmarks": landmarks}[part](args.data)
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
