"""docs/chemistry.md: its example runs as written (GP, suggest, applicability domain,
scaffold cross-validation on the shipped ESOL molecules)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("rdkit")

DOC = Path(__file__).resolve().parents[1] / "docs" / "chemistry.md"


def test_example_runs(one_torch_thread):
    block = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)[0]
    ns: dict = {}
    exec(compile(block, str(DOC), "exec"), ns)
    assert ns["mean"].shape == ns["std"].shape == (50,) and np.all(ns["std"] > 0)
    assert len(set(ns["picks"].tolist())) == 3 and ns["picks"].max() < 50
    assert np.all((ns["domain"] > 0) & (ns["domain"] <= 1 + 1e-12))
    assert ns["scores"].shape == (5,) and np.all(np.isfinite(ns["scores"]))
    assert "fragprints" in repr(ns["gp"].kernel_)
