"""docs/approximations.md: its example runs as written and its score table is what it gives."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "approximations.md"
ROWS = {
    "exact `KernelRidge`": "exact",
    "Nyström, uniform": "uniform",
    "Nyström, k-means++": "kmeans++",
    "Nyström, greedy": "greedy",
    "random Fourier": "rff",
}


def test_example_runs_and_table_matches(one_torch_thread):
    text = DOC.read_text()
    block = re.findall(r"```python\n(.*?)```", text, re.S)[0]
    namespace: dict = {}
    exec(compile(block, str(DOC), "exec"), namespace)
    scores = namespace["scores"]
    for label, key in ROWS.items():
        row = re.search(rf"^\| {re.escape(label)} \|[^|]*\| ([0-9.]+) \|$", text, re.M)
        assert row is not None, label
        assert scores[key] == pytest.approx(float(row.group(1)), abs=2e-3), label
    assert namespace["Z"].shape[0] == 300 and namespace["Z"].shape[1] <= 30
