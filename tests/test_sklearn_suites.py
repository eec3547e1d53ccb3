"""scikit-learn's own test modules run against kernelkit through tests/sklearn_compat/adapter.py
(renames and the documented ``lam = alpha / n`` only).

docs/sklearn_compat.md has, per module, a section ``### Test results: `sklearn/<module>```
whose table rows ``| `test_name` | fails | reason |`` and ``| `test_name` | N/A | reason |``
list every test that does not pass (a name without ``[...]`` covers all its parametrisations,
``*`` stands for any text, e.g. ``test_*[*NuSVC*]``).
``N/A``: the test exercises a scikit-learn estimator or internal kernelkit does not mirror
(``NuSVC``, ``LinearSVC``, ``AdditiveChi2Sampler``...); it is not counted.  The test keeps the
page true: every failing test is listed, every test listed as ``fails`` does fail, and the
passes of the tests in scope are at least those measured (``SUITES``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import sklearn

ROOT = Path(__file__).resolve().parents[1]
SKLEARN = Path(sklearn.__file__).parent
PAGE = ROOT / "docs" / "sklearn_compat.md"

SUITES = {
    "tests/test_kernel_ridge.py": 10,
    "decomposition/tests/test_kernel_pca.py": 38,
    "cluster/tests/test_spectral.py": 36,
    "svm/tests/test_svm.py": 36,
    "tests/test_kernel_approximation.py": 12,
}
"""Module of the installed scikit-learn -> passes of its in-scope tests measured with the
adapter (the counts are on docs/sklearn_compat.md)."""

_HEADING = re.compile(r"^### Test results: `sklearn/(\S+)`", re.M)
_ROW = re.compile(r"^\| `(test_[\w*]+(?:\[[^`]*\])?)`[^|]*\| (fails|N/A) \|", re.M)


def listed(module: str) -> dict[str, str]:
    """``{test name: "fails" | "N/A"}`` of ``module``'s section of the page."""
    text = PAGE.read_text(encoding="utf-8")
    starts = [(m.group(1), m.end()) for m in _HEADING.finditer(text)]
    for name, start in starts:
        if name == module:
            end = text.find("\n#", start)
            return {m.group(1): m.group(2) for m in _ROW.finditer(text[start : end % len(text)])}
    raise AssertionError(f"{PAGE.name} has no section '### Test results: `sklearn/{module}`'")


def matches(test_id: str, name: str) -> bool:
    """``test_id`` is ``name``, a parametrisation of it, or matches it with ``*`` as any text."""
    if "*" in name:
        return re.fullmatch(".*".join(map(re.escape, name.split("*"))), test_id) is not None
    return test_id == name or test_id.split("[", 1)[0] == name


def status(test_id: str, entries: dict[str, str]) -> str | None:
    """The page's entry for one test id: its own, else a pattern's, else its function's."""
    if test_id in entries:
        return entries[test_id]
    for name, kind in entries.items():
        if "*" in name and matches(test_id, name):
            return kind
    return entries.get(test_id.split("[", 1)[0])


def outcomes(module: str) -> dict[str, str]:
    """``{test id: "PASSED" | "FAILED" | "ERROR"}`` of the module run through the adapter."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    cmd = [sys.executable, "-m", "pytest", "-q", "-rA", "--tb=no", "-o", "addopts=",
           "-p", "tests.sklearn_compat.adapter", "-p", "no:cacheprovider",
           str(SKLEARN / module)]  # fmt: skip
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=1800)
    found = re.findall(r"^(PASSED|FAILED|ERROR) \S+?::(\S+)", res.stdout, re.M)
    assert found, res.stdout[-2000:] + res.stderr[-2000:]
    return {test: outcome for outcome, test in found}


@pytest.mark.slow
@pytest.mark.parametrize("module", sorted(SUITES))
def test_sklearn_suite_through_the_adapter(module):
    entries = listed(module)
    results = outcomes(module)
    in_scope = {t: o for t, o in results.items() if status(t, entries) != "N/A"}
    unlisted = sorted(
        t for t, o in in_scope.items() if o != "PASSED" and status(t, entries) is None
    )
    assert not unlisted, f"failing tests not listed on {PAGE.name}: {unlisted}"
    stale = sorted(
        name
        for name, kind in entries.items()
        if kind == "fails"
        and not any(o != "PASSED" and matches(t, name) for t, o in results.items())
    )
    assert not stale, f"listed as failing on {PAGE.name} but passing (update the page): {stale}"
    passed = sum(o == "PASSED" for o in in_scope.values())
    assert passed >= SUITES[module], f"{passed} of {len(in_scope)} in-scope tests pass"
