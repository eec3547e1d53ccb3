"""Run every benchmark script here, then regenerate the performance tables (``make bench``).

``python benchmarks/run_all.py [NAME ...]`` runs the scripts whose name contains one of the
NAMEs (all without arguments), each in a fresh Python process (a script's settings, torch's
thread count for one, must not carry over into the next one's timings) with the options of
:data:`SCRIPT_ARGS` (none for the others).  The wall time of each script and of the whole
run goes to ``results/run_all.json``, rewritten after every script (a script that fails
stops the run and is named there as ``failed``); then :mod:`readme_table` rewrites the
full table of ``docs/performance.md`` and the README's summary from the JSON rows in
``results/``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent

SCRIPT_ARGS = {"bench_falkon": ["--big"]}
"""Options of the scripts whose default run is shorter than their table rows need:
bench_falkon's n = 10^6 tier (issue 27's table, in the same run as the smaller sizes)."""

if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    from readme_table import RESULTS_DIR, update_readme

    only = sys.argv[1:]
    scripts: dict[str, float] = {}
    start = time.perf_counter()
    RESULTS_DIR.mkdir(exist_ok=True)

    def record(complete: bool, failed: str | None = None) -> None:
        """``results/run_all.json`` as the run stands (written after every script, so that a
        run stopped by a failing script still says which scripts ran, in how long)."""
        summary = {
            "finished": time.strftime("%Y-%m-%d %H:%M"),
            "total_s": round(time.perf_counter() - start, 1),
            "scripts": scripts,
            "complete": complete,
        }
        if failed is not None:
            summary["failed"] = failed
        (RESULTS_DIR / "run_all.json").write_text(json.dumps(summary, indent=2))

    selected = [
        script
        for script in sorted(HERE.glob("bench_*.py"))
        if not only or any(name in script.stem for name in only)
    ]
    for script in selected:
        print(f"\n## {script.stem}", flush=True)
        t0 = time.perf_counter()
        options = SCRIPT_ARGS.get(script.stem, [])
        run = subprocess.run([sys.executable, str(script), *options], check=False)
        if run.returncode:
            record(False, failed=script.stem)
            raise SystemExit(f"{script.name} exited with {run.returncode}")
        scripts[script.stem] = round(time.perf_counter() - t0, 1)
        record(False)
    record(not only)
    total = time.perf_counter() - start
    print(
        f"\ntotal {total / 60:.1f} min; performance tables "
        + ("rewritten" if update_readme() else "unchanged")
    )
