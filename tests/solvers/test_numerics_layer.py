"""The numerics calls live only in ``kernelkit.solvers`` (DESIGN.md section 7), and the guard
that says so can fail.

Every Python file of ``src/kernelkit`` outside ``solvers/`` is parsed and its code (not its
docstrings or comments) searched for four kinds of call:

* **factorisations and solves**: Cholesky, LU, QR, SVD, LDL, inverses, least squares, general
  and triangular solves, of ``torch`` / ``torch.linalg``, ``numpy.linalg`` and
  ``scipy.linalg`` (and anything imported from them);
* **eigensolvers**: dense (``eigh``, ``eigvalsh``, ``eig``, ``eigvals``...) and sparse or
  iterative (``scipy.sparse.linalg.eigsh`` / ``eigs`` / ``svds`` / ``lobpcg``,
  ``torch.lobpcg``);
* **optimisers**: anything of ``torch.optim`` (L-BFGS, Adam, SGD, schedulers) and
  ``scipy.optimize``;
* **PSD verdicts**: the PSD tolerance (``psd_tolerance``) used anywhere but as an argument of
  the solvers' verdicts (``check_psd``, ``spectrum_check``), i.e. a PSD rule re-coded.

:data:`ALLOWED` lists the exceptions, each with its reason.  The mutation tests plant one
forbidden call of each kind into a temporary copy of a real module and prove the package
scan then fails.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

import kernelkit

SRC = Path(kernelkit.__file__).parent
LAYER = SRC / "solvers"

FACTORISATIONS = {
    "cholesky", "cholesky_ex", "cholesky_solve", "cholesky_inverse", "solve_triangular",
    "lu", "lu_factor", "lu_factor_ex", "lu_solve", "qr", "svd", "svdvals", "ldl_factor",
    "cho_factor", "cho_solve", "inv", "inv_ex", "pinv", "pinvh", "lstsq", "solve", "solve_ex",
    "schur", "polar", "sqrtm",
}  # fmt: skip
"""Forbidden as attributes of (or imports from) a linear-algebra module."""
EIGENSOLVERS = {
    "eigh", "eigvalsh", "eig", "eigvals", "eigsh", "eigs", "svds", "lobpcg", "eigh_tridiagonal",
    "eig_banded", "eigvals_banded",
}  # fmt: skip
"""Forbidden whatever they are an attribute of, and as imports from any module."""
LINALG_MODULES = ("torch.linalg", "numpy.linalg", "scipy.linalg", "scipy.sparse.linalg")
OPTIMISER_MODULES = ("torch.optim", "scipy.optimize")
TORCH_TOPLEVEL = {"cholesky", "cholesky_solve", "cholesky_inverse", "lu", "lu_solve", "qr",
                  "svd", "inverse", "pinverse", "lstsq", "triangular_solve"}  # fmt: skip
"""``torch.<name>`` factorisations (legacy spellings of ``torch.linalg``)."""
VERDICT_CALLS = {"check_psd", "spectrum_check"}

ALLOWED: dict[tuple[str, str], str] = {
    ("gram/_operator.py", "scipy.sparse.linalg.LinearOperator"): (
        "wraps a GramOperator as SciPy's LinearOperator for users' own solvers; no solve"
    ),
}
"""``(file, what)`` -> reason: the calls outside ``solvers/`` that are not numerics."""


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _verdict_arguments(tree: ast.AST) -> set[int]:
    """``id`` of every node inside an argument of ``check_psd(...)`` / ``spectrum_check(...)``."""
    inside = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _dotted(node.func).split(".")[-1] in VERDICT_CALLS:
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                inside.update(id(sub) for sub in ast.walk(arg))
    return inside


def violations(source: str) -> list[tuple[str, str]]:
    """``(kind, what)`` of every forbidden numerics call, import or rule in ``source``."""
    tree = ast.parse(source)
    verdict_args = _verdict_arguments(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            owner = _dotted(node.value)
            full = f"{owner}.{node.attr}"
            if node.attr in EIGENSOLVERS:
                found.append(("eigensolver", full))
            elif node.attr in FACTORISATIONS and owner.split(".")[-1] == "linalg":
                found.append(("factorisation", full))
            elif owner == "torch" and node.attr in TORCH_TOPLEVEL:
                found.append(("factorisation", full))
            elif owner.split(".")[-1] == "scipy" and node.attr in ("linalg", "optimize"):
                found.append(("factorisation" if node.attr == "linalg" else "optimiser", full))
            elif full.startswith(OPTIMISER_MODULES) and full.count(".") == 2:
                found.append(("optimiser", full))
            elif full in OPTIMISER_MODULES and not isinstance(node.ctx, ast.Store):
                found.append(("optimiser", full))
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = {a.name for a in node.names}
            module = node.module
            if module.startswith(OPTIMISER_MODULES) or (
                module in ("torch", "scipy") and names & {"optim", "optimize"}
            ):
                found.append(("optimiser", f"from {module} import {sorted(names)}"))
            elif module.startswith(LINALG_MODULES):
                for name in sorted(names):
                    kind = "eigensolver" if name in EIGENSOLVERS else "factorisation"
                    found.append((kind, f"{module}.{name}"))
            elif module in ("torch", "scipy", "numpy", "scipy.sparse") and "linalg" in names:
                found.append(("factorisation", f"from {module} import linalg"))
            elif names & EIGENSOLVERS:
                found.append(("eigensolver", f"from {module} import {sorted(names)}"))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(OPTIMISER_MODULES):
                    found.append(("optimiser", f"import {alias.name}"))
                elif alias.name.startswith(LINALG_MODULES):
                    found.append(("factorisation", f"import {alias.name}"))
        elif isinstance(node, ast.Name) and node.id == "psd_tolerance":
            if id(node) not in verdict_args:
                found.append(("psd verdict", "psd_tolerance"))
    return found


def package_violations(root: Path) -> dict[str, list[tuple[str, str]]]:
    """Forbidden calls of every module under ``root`` outside ``solvers/``, minus ALLOWED."""
    bad = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith("solvers/"):
            continue
        found = [
            (kind, what)
            for kind, what in violations(path.read_text(encoding="utf-8"))
            if (rel, what) not in ALLOWED
        ]
        if found:
            bad[rel] = found
    return bad


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        ("import torch\nL = torch.linalg.cholesky(A)", "factorisation"),
        ("import torch\nL, info = torch.linalg.cholesky_ex(A)", "factorisation"),
        ("import torch\nX = torch.cholesky_solve(B, L)", "factorisation"),
        ("import torch\nX = torch.linalg.solve(A, B)", "factorisation"),
        ("import torch\nX = torch.linalg.solve_triangular(L, B, upper=False)", "factorisation"),
        ("import torch\nQ, R = torch.linalg.qr(A)", "factorisation"),
        ("import numpy as np\nU, s, Vt = np.linalg.svd(A)", "factorisation"),
        ("import numpy as np\nX = np.linalg.solve(A, B)", "factorisation"),
        ("import numpy as np\nAi = np.linalg.inv(A)", "factorisation"),
        ("from scipy.linalg import cho_factor", "factorisation"),
        ("from scipy import linalg", "factorisation"),
        ("import scipy.linalg", "factorisation"),
        ("import torch\nw, U = torch.linalg.eigh(A)", "eigensolver"),
        ("import torch\nw = torch.linalg.eigvalsh(A)", "eigensolver"),
        ("import numpy as np\nw = np.linalg.eigvalsh(A)", "eigensolver"),
        ("import scipy.linalg\nw, U = scipy.linalg.eigh(A)", "eigensolver"),
        ("from scipy.sparse.linalg import eigsh", "eigensolver"),
        ("import scipy.sparse.linalg as sla\nw = sla.eigsh(A, k=1)", "eigensolver"),
        ("import torch\nw, U = torch.lobpcg(A, k=2)", "eigensolver"),
        ("from torch.linalg import eigh", "eigensolver"),
        ("import torch\nopt = torch.optim.LBFGS(params)", "optimiser"),
        ("import torch\nopt = torch.optim.Adam(params, lr=0.1)", "optimiser"),
        ("import torch\nopt = torch.optim.SGD(params, lr=0.1)", "optimiser"),
        ("from torch.optim import Adam", "optimiser"),
        ("from torch import optim", "optimiser"),
        ("from scipy.optimize import minimize", "optimiser"),
        ("import scipy.optimize", "optimiser"),
        ("from kernelkit.utils._numerics import psd_tolerance\nok = m >= -psd_tolerance(d) * M",
         "psd verdict"),
    ],
)  # fmt: skip
def test_detector_finds_each_forbidden_call(code, kind):
    assert kind in {k for k, _ in violations(code)}, (code, violations(code))


def test_detector_ignores_docstrings_and_allowed_calls():
    code = '"""Uses torch.linalg.eigh, eigsh and torch.optim.Adam (see solvers)."""\n'
    code += "import torch\nx = torch.linalg.vector_norm(v)\ny = factor.solve(B)\n"
    code += "z = torch.linalg.matrix_norm(A)\nq = check_psd(K, rtol=psd_tolerance(K.dtype))\n"
    assert violations(code) == []


def test_allow_list_entries_are_still_needed():
    """A stale exception hides nothing: every ALLOWED entry matches a call in its file."""
    for (rel, what), reason in ALLOWED.items():
        assert reason
        found = {w for _, w in violations((SRC / rel).read_text(encoding="utf-8"))}
        assert what in found, (rel, what)


def test_numerics_calls_only_in_solvers():
    files = [p for p in SRC.rglob("*.py") if LAYER not in p.parents]
    assert len(files) > 50  # the whole package is scanned
    bad = package_violations(SRC)
    assert bad == {}, f"numerics outside kernelkit.solvers: {bad}"


PLANTS = {
    "factorisation": "\n\ndef _planted(A):\n    return torch.linalg.cholesky(A)\n",
    "eigensolver": "\n\ndef _planted(A):\n    from scipy.sparse.linalg import eigsh\n\n"
    "    return eigsh(A, k=1)\n",
    "optimiser": "\n\ndef _planted(params):\n    return torch.optim.Adam(params, lr=0.1)\n",
    "psd verdict": "\n\ndef _planted(lam):\n    from kernelkit.utils._numerics import "
    "psd_tolerance\n\n    return lam[0] >= -psd_tolerance(lam.dtype) * lam[-1]\n",
}


@pytest.mark.parametrize("kind", sorted(PLANTS))
def test_guard_fails_on_a_planted_call(kind, tmp_path):
    """Mutation check: a copy of the package with one forbidden call planted into a real
    module (gram/_nystrom.py) makes the package scan report exactly that file and kind."""
    copy = tmp_path / "kernelkit"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    assert package_violations(copy) == {}
    target = copy / "gram" / "_nystrom.py"
    target.write_text(target.read_text(encoding="utf-8") + PLANTS[kind], encoding="utf-8")
    bad = package_violations(copy)
    assert list(bad) == ["gram/_nystrom.py"] and {k for k, _ in bad["gram/_nystrom.py"]} == {kind}


def test_solvers_import_no_kernel_or_gram():
    """solvers sits below kernels and gram in the layer contract (operators are duck-typed)."""
    for p in LAYER.rglob("*.py"):
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith(("kernelkit.kernels", "kernelkit.gram")), p
