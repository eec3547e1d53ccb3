"""Run every benchmark script of this folder, then regenerate the README's table (``make bench``).

``python benchmarks/run_all.py [NAME ...]`` runs the scripts whose name contains one of the
NAMEs (all without arguments), each in a fresh Python process (a script's settings, torch's
thread count for one, must not carry over into the next one's timings) with the options of
:data:`SCRIPT_ARGS` (none for the others).  The wall time of
each script and of the whole run goes to ``results/run_all.json``; then :mod:`readme_table`
rewrites the README's performance table from the JSON rows in ``results/``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent

SCRIPT_ARGS = {"bench_falkon": ["--big"]}
"""Options of the scripts whose default run is shorter than their README rows need:
bench_falkon's n = 10^6 tier (issue 27's table, in the same run as the smaller sizes)."""

if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    from readme_table import RESULTS_DIR, update_readme

    only = sys.argv[1:]
    scripts: dict[str, float] = {}
    start = time.perf_counter()
    for script in sorted(HERE.glob("bench_*.py")):
        if only and not any(name in script.stem for name in only):
            continue
        print(f"\n## {script.stem}", flush=True)
        t0 = time.perf_counter()
        options = SCRIPT_ARGS.get(script.stem, [])
        run = subprocess.run([sys.executable, str(script), *options], check=False)
        if run.returncode:
            raise SystemExit(f"{script.name} exited with {run.returncode}")
        scripts[script.stem] = round(time.perf_counter() - t0, 1)
    total = time.perf_counter() - start
    RESULTS_DIR.mkdir(exist_ok=True)
    summary = {
        "finished": time.strftime("%Y-%m-%d %H:%M"),
        "total_s": round(total, 1),
        "scripts": scripts,
        "complete": not only,
    }
    (RESULTS_DIR / "run_all.json").write_text(json.dumps(summary, indent=2))
    print(
        f"\ntotal {total / 60:.1f} min; README table "
        + ("rewritten" if update_readme() else "unchanged")
    )
