"""docs/toolbox.md: its example runs as written (its asserts are the page's claims)."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "toolbox.md"


def test_example_runs(one_torch_thread):
    block = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)[0]
    namespace: dict = {}
    exec(compile(block, str(DOC), "exec"), namespace)
    assert namespace["svm"].duality_gap_[0] < 1e-6
    assert namespace["km"].labels_.shape == (500,)
