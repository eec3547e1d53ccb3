"""Docstrings state rules, not timings: no docstring (or attribute docstring) in ``src/``
quotes a duration measured on a machine; measurements live in ``docs/measurements.md``."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import kernelkit

SRC = Path(kernelkit.__file__).parent
TIMING = re.compile(r"(?<![\w.^-])\d+(\.\d+)? (s|ms|min|seconds)\b(?![\^\w(])")
"""A number, a space and a unit of time (``0.74 s``, ``12 ms``); ``2 s^2``, ``2s + 1`` and
``1e-6 min`` are algebra."""


def docstrings(source: str) -> list[tuple[int, str]]:
    """Every docstring of a module: module, class and function docstrings and the string
    statements that document attributes."""
    out = []
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for stmt in body:
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                if isinstance(stmt.value.value, str):
                    out.append((stmt.lineno, stmt.value.value))
    return out


def timings(source: str) -> list[str]:
    return [
        f"line {line}: {m.group(0)!r}"
        for line, text in docstrings(source)
        for m in TIMING.finditer(text)
    ]


def test_detector_finds_a_timing_and_ignores_algebra():
    assert timings('"""Took 0.74 s against 1.5 s."""') and timings('X = 1\n"""3 ms per tile."""')
    assert timings('def f():\n    """12.6 s CPU."""') and not timings(
        '"""``2 s^2`` and ``eps s``."""'
    )


def test_no_docstring_quotes_a_timing():
    bad = {}
    for path in sorted(SRC.rglob("*.py")):
        found = timings(path.read_text(encoding="utf-8"))
        if found:
            bad[str(path.relative_to(SRC))] = found
    assert bad == {}, f"timings in docstrings (move them to docs/measurements.md): {bad}"
