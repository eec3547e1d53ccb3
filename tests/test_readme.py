"""The README's quickstart runs as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_quickstart_runs():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert blocks, "the README has no python example"
    namespace: dict = {}
    exec(compile(blocks[0], str(README), "exec"), namespace)
    assert namespace["codes"].shape == (200, 2)
    assert tuple(namespace["k"](namespace["X"][:3], namespace["X"][:4]).shape) == (3, 4)


def test_estimators_page_example_runs():
    """docs/estimators.md: its example asserts the kernel-name mapping, the precomputed
    equality and the default kernel of each kind."""
    page = README.parent / "docs" / "estimators.md"
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(), re.S)
    namespace: dict = {}
    exec(compile(blocks[0], str(page), "exec"), namespace)
    assert namespace["graph_model"].kernel_.n_iter == 3
