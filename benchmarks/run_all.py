"""Run every benchmark script of this folder (``make bench``)."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

HERE = Path(__file__).parent

if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    only = sys.argv[1:]
    for script in sorted(HERE.glob("bench_*.py")):
        if only and not any(name in script.stem for name in only):
            continue
        print(f"\n## {script.stem}")
        runpy.run_path(str(script), run_name="__main__")
