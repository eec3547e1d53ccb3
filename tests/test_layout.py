"""The source tree's layout: no import cycle between kernelkit's modules.

import-linter checks the order of the layers; this checks the modules inside them, including
imports under ``TYPE_CHECKING`` (a cycle there is still two modules that need each other).
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def _module_graph() -> dict[str, set[str]]:
    """``module -> kernelkit modules it imports``, packages' ``__init__`` left out (they only
    re-export their modules)."""
    files = {
        ".".join(path.relative_to(SRC).with_suffix("").parts): path
        for path in (SRC / "kernelkit").rglob("*.py")
        if path.name != "__init__.py"
    }
    graph = {}
    for name, path in files.items():
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                deps.add(node.module)
                deps.update(f"{node.module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.Import):
                deps.update(alias.name for alias in node.names)
        graph[name] = (deps & files.keys()) - {name}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    state: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(u: str) -> None:
        state[u] = 1
        stack.append(u)
        for v in sorted(graph.get(u, ())):
            if state.get(v) == 1:
                found.append([*stack[stack.index(v) :], v])
            elif v not in state:
                visit(v)
        stack.pop()
        state[u] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name)
    return found


def test_no_import_cycle_between_modules():
    graph = _module_graph()
    assert "kernelkit.io._encoder" in graph and "kernelkit.io._values" in graph
    assert _cycles(graph) == []


def test_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
