"""Smoke runs of the invariance reproduction scripts (``--quick``: tiny sizes, nothing written).

They guard the scripts against drifting from the library and from their shared helpers
(``examples/sip_common.py``); the numbers themselves are checked in ``tests/invariance``.
The weighted-degree promoter script runs here too: its ``--quick`` run exits non-zero unless
its Gram-bank nested CV gives the same fold scores as the string route of ``strings_svm.py``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / ".." / "shared" / "data"


@pytest.mark.parametrize(
    ("script", "options", "expected"),
    [
        pytest.param("sip_table1_mnist.py", [], "Embed (a)", marks=pytest.mark.slow),
        pytest.param(
            "sip_table1_mnist.py",
            ["--pairs", "4v9", "--readings", "plain,default"],
            "| Embed (default) |",
            marks=pytest.mark.slow,
        ),
        pytest.param(
            "sip_table1_mnist.py",
            ["--pairs", "4v9", "--readings", "", "--dual", "a", "--strength-scale", "0.01"],
            "| Dual (a) |",
            marks=pytest.mark.slow,
        ),
        ("sip_table2_mixup.py", [], "| p = 1n | Embed |"),
        ("sip_table2_mixup.py", ["--aggregate", "sum"], "| p = 1n | Embed (sum) |"),
        ("sip_table3_hierarchy.py", [], "| Embed |"),
        pytest.param(
            "strings_weighted_degree.py",
            [],
            "same fold scores as the Gram bank: True",
            marks=pytest.mark.slow,
        ),
    ],
)
def test_quick_run(script: str, options: list[str], expected: str, tmp_path: Path) -> None:
    if not DATA.is_dir():
        pytest.skip(f"real datasets not found at {DATA}")
    before = sorted((ROOT / "examples" / "results").iterdir())
    run = subprocess.run(
        [sys.executable, str(ROOT / "examples" / script), "--quick", *options],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
        env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1"},
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert expected in run.stdout
    assert sorted((ROOT / "examples" / "results").iterdir()) == before  # --quick writes nothing
