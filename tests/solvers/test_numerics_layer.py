"""Source test of issue 12, item 1: the numerics calls live only in ``kernelkit.solvers``.

Every Python file of ``src/kernelkit`` outside ``solvers/`` is parsed and its code (not its
docstrings or comments) searched for Cholesky factorisations and solves, general and
triangular solves, symmetric eigendecompositions (torch, NumPy, SciPy), SciPy's dense linear
algebra and ``torch.optim.LBFGS``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import kernelkit

SRC = Path(kernelkit.__file__).parent
LAYER = SRC / "solvers"

ANY_OWNER = {"cholesky", "cholesky_ex", "cholesky_solve", "solve_triangular", "eigh", "LBFGS"}
"""Forbidden whatever they are an attribute of (``torch.linalg.eigh``, ``scipy.linalg.eigh``)."""
LINALG_ONLY = {"solve", "solve_ex", "cho_factor", "cho_solve", "lu_solve", "inv"}
"""Forbidden as attributes of a ``linalg`` module (``x.solve`` of a factor object is fine)."""
MODULES = ("torch.linalg", "numpy.linalg", "scipy.linalg", "torch.optim")


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def violations(source: str) -> list[str]:
    """The forbidden numerics calls, imports and attribute uses in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute):
            owner = _dotted(node.value)
            if node.attr in ANY_OWNER or (
                node.attr in LINALG_ONLY and owner.split(".")[-1] == "linalg"
            ):
                found.append(f"line {node.lineno}: {owner}.{node.attr}")
            elif owner.split(".")[-1:] == ["scipy"] and node.attr == "linalg":
                found.append(f"line {node.lineno}: scipy.linalg")
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = {a.name for a in node.names}
            if node.module.startswith(MODULES[2]) or (
                node.module.startswith(MODULES) and names & (ANY_OWNER | LINALG_ONLY)
            ):
                found.append(f"line {node.lineno}: from {node.module} import {sorted(names)}")
            elif node.module in ("torch", "scipy", "numpy") and names & {"linalg"}:
                found.append(f"line {node.lineno}: from {node.module} import linalg")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(MODULES[2]):
                    found.append(f"line {node.lineno}: import {alias.name}")
    return found


@pytest.mark.parametrize(
    "code",
    [
        "import torch\nL = torch.linalg.cholesky(A)",
        "import torch\nL, info = torch.linalg.cholesky_ex(A)",
        "import torch\nX = torch.cholesky_solve(B, L)",
        "import torch\nX = torch.linalg.solve(A, B)",
        "import torch\nX = torch.linalg.solve_triangular(L, B, upper=False)",
        "import torch\nw, U = torch.linalg.eigh(A)",
        "import numpy as np\nw, U = np.linalg.eigh(A)",
        "import numpy as np\nX = np.linalg.solve(A, B)",
        "import scipy.linalg\nw, U = scipy.linalg.eigh(A)",
        "from scipy.linalg import cho_factor",
        "from scipy import linalg",
        "from torch.linalg import eigh",
        "import torch\nopt = torch.optim.LBFGS(params)",
        "from torch.optim import LBFGS",
    ],
)
def test_detector_finds_each_forbidden_call(code):
    assert violations(code), code


def test_detector_ignores_docstrings_and_allowed_calls():
    code = '"""Uses torch.linalg.eigh and torch.optim.LBFGS (see solvers)."""\n'
    code += "import torch\nx = torch.linalg.vector_norm(v)\ny = factor.solve(B)\n"
    code += "w = torch.linalg.eigvalsh(A)\nopt = torch.optim.Adam(params)\n"
    assert violations(code) == []


def test_numerics_calls_only_in_solvers():
    files = [p for p in SRC.rglob("*.py") if LAYER not in p.parents]
    assert len(files) > 50  # the whole package is scanned
    bad = {
        str(p.relative_to(SRC)): v
        for p in files
        if (v := violations(p.read_text(encoding="utf-8")))
    }
    assert bad == {}, f"numerics outside kernelkit.solvers: {bad}"


def test_solvers_import_no_kernel_or_gram():
    """solvers sits below kernels and gram in the layer contract (operators are duck-typed)."""
    for p in LAYER.rglob("*.py"):
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith(("kernelkit.kernels", "kernelkit.gram")), p
