"""The command line end to end: ``kernelkit demo`` by torch threads, ``kernelkit gram`` vs RDKit.

* ``kernelkit demo`` (K2AE of the 1128 ESOL molecules, 2-D and 10-D codes, KPCA, forests),
  each in a fresh process, with ``--threads 1`` and ``--threads 2``; baseline = two threads.
* ``kernelkit gram`` of the ESOL molecules (Tanimoto, binary Morgan radius 2, 2048 bits,
  written blockwise to ``.npy``) against what a chemist would write instead: RDKit's
  ``BulkTanimotoSimilarity`` row by row, then ``np.save``; both in fresh processes, and the
  two matrices are checked equal first; and the same without process start-up (in this
  process, median of 3).

Run ``python benchmarks/bench_cli.py`` (``--quick``: the Gram only, and the demo on 200
molecules).  Prints a Markdown table and writes ``benchmarks/results/bench_cli.json``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from _common import median_time, report

SRC = Path(__file__).resolve().parents[1] / "src"

RDKIT_GRAM = """
import sys, numpy as np
from rdkit import Chem, DataStructs
from rdkit.Chem import rdFingerprintGenerator
from kernelkit.data._molecule_datasets import load_esol
gen = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048)
fps = [gen.GetFingerprint(Chem.MolFromSmiles(s)) for s in load_esol().smiles]
K = np.array([DataStructs.BulkTanimotoSimilarity(fp, fps) for fp in fps])
np.save(sys.argv[1], K)
"""


def _run(args: list[str]) -> float:
    """Wall seconds of a fresh Python process running ``args`` (kernelkit from ``src``)."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], check=True, env=env, capture_output=True)
    return time.perf_counter() - start


def _in_process_gram() -> dict[str, object]:
    """The same Gram without process start-up: read + fingerprints + Gram vs RDKit's loop."""
    from rdkit import Chem, DataStructs
    from rdkit.Chem import rdFingerprintGenerator

    from kernelkit.data._molecule_datasets import bundled_esol_path
    from kernelkit.data.readers import read_data
    from kernelkit.gram import gram
    from kernelkit.kernels import Tanimoto

    path = bundled_esol_path()

    def ours() -> np.ndarray:
        data = read_data(path, kind="molecules")
        kernel = Tanimoto()
        return gram(kernel, kernel.prepare(data.items, reference=True)).numpy()

    def theirs() -> np.ndarray:
        gen = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048)
        data = read_data(path, kind="molecules")
        fps = [gen.GetFingerprint(Chem.MolFromSmiles(s)) for s in data.items]
        return np.array([DataStructs.BulkTanimotoSimilarity(fp, fps) for fp in fps])

    diff = float(np.abs(ours() - theirs()).max())
    return {
        "case": "ESOL Tanimoto Gram, read + fingerprints + Gram (in process)",
        "kernelkit_s": round(median_time(ours), 3),
        "baseline": "RDKit BulkTanimotoSimilarity",
        "baseline_s": round(median_time(theirs), 3),
        "max_abs_diff": diff,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    opts = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        from kernelkit.data._molecule_datasets import bundled_esol_path

        ours, theirs = Path(tmp) / "K.npy", Path(tmp) / "K_rdkit.npy"
        cli = ["-m", "kernelkit.cli._main"]
        t_ours = _run(
            [
                *cli,
                "gram",
                str(bundled_esol_path()),
                "--kind",
                "molecules",
                "--kernel",
                "tanimoto",
                "--out",
                str(ours),
                "--quiet",
            ]
        )
        t_theirs = _run(["-c", RDKIT_GRAM, str(theirs)])
        diff = float(np.abs(np.load(ours) - np.load(theirs)).max())
        rows.append(
            {
                "case": "kernelkit gram, ESOL 1128 x 1128 Tanimoto (process)",
                "kernelkit_s": round(t_ours, 2),
                "baseline": "RDKit BulkTanimotoSimilarity",
                "baseline_s": round(t_theirs, 2),
                "max_abs_diff": diff,
            }
        )
        rows.append(_in_process_gram())
        subset = ["--subset", "200"] if opts.quick else []
        times = {}
        for threads in (1, 2):
            out = Path(tmp) / f"demo{threads}"
            times[threads] = _run(
                [*cli, "demo", "--out", str(out), "--quiet", "--threads", str(threads), *subset]
            )
        n = 200 if opts.quick else 1128
        rows.append(
            {
                "case": f"kernelkit demo, {n} molecules, --threads 1 (process)",
                "kernelkit_s": round(times[1], 2),
                "baseline": "--threads 2",
                "baseline_s": round(times[2], 2),
                "max_abs_diff": None,
            }
        )
    report("bench_cli", rows)


if __name__ == "__main__":
    main()
