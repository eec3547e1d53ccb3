"""docs/estimators.md describes every parameter and fitted attribute of every estimator.

The estimators are those enrolled by introspection in ``tests/test_contract.py``; the
parameters come from ``get_params()``, the fitted attributes from ``vars()`` after the
contract's small fit.  A parameter or attribute the table lacks, or a table row for one the
estimator no longer has, fails the test.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from test_contract import CASES, ESTIMATORS, _data, _fit

DOC = Path(__file__).resolve().parents[1] / "docs" / "estimators.md"
SECTION = "## Every estimator's parameters and fitted attributes"


def _table(doc: str | None = None) -> tuple[set[str], dict[str, dict[str, set[str]]]]:
    """Common attributes, and ``{estimator: {"parameter": names, "fitted attribute": names}}``."""
    doc = DOC.read_text(encoding="utf-8") if doc is None else doc
    text = doc.split(SECTION, 1)[1]
    common: set[str] = set()
    tables: dict[str, dict[str, set[str]]] = {}
    current, header = None, None
    for line in text.splitlines():
        if line.startswith("### "):
            current = line[4:].strip()
            tables[current] = {"parameter": set(), "fitted attribute": set()}
        elif line.startswith("| ") and not line.startswith("|---"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            name = re.fullmatch(r"`([A-Za-z_][A-Za-z0-9_]*)`", cells[0])
            if name is None:
                header = cells[0]
                continue
            assert len(cells) >= 2 and cells[1], f"{current}: {cells[0]} has no meaning"
            if current is None:
                common.add(name.group(1))
            else:
                tables[current]["parameter" if header == "parameter" else "fitted attribute"].add(
                    name.group(1)
                )
    return common, tables


COMMON, TABLES = _table()


def test_the_table_covers_every_estimator():
    assert set(TABLES) == {c.__name__ for c in ESTIMATORS}
    assert {"X_fit_", "kernel_", "n_features_in_"} <= COMMON


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_every_parameter_is_described(cls):
    params = set(CASES[cls.__name__]().get_params(deep=False))
    described = TABLES[cls.__name__]["parameter"]
    assert params == described, {
        "missing": sorted(params - described),
        "stale": sorted(described - params),
    }


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_every_fitted_attribute_is_described(cls, one_torch_thread):
    X, y = _data()
    fitted = _fit(CASES[cls.__name__](), X, y)
    names = {k for k in vars(fitted) if k.endswith("_") and not k.startswith("_")}
    described = TABLES[cls.__name__]["fitted attribute"]
    assert names - COMMON <= described, sorted(names - COMMON - described)
    assert described <= names, sorted(described - names)


def test_a_row_removed_from_the_table_is_missed():
    """The check can fail: drop KernelRidge's ``lam`` row and ``dual_coef_`` row."""
    doc = DOC.read_text(encoding="utf-8")
    head, tail = doc.split("### KernelRidge\n", 1)
    body, rest = tail.split("\n### ", 1)
    body = re.sub(r"^\| `(lam|dual_coef_)` \|.*\n", "", body, flags=re.M)
    tables = _table(head + "### KernelRidge\n" + body + "\n### " + rest)[1]
    assert TABLES["KernelRidge"]["parameter"] - tables["KernelRidge"]["parameter"] == {"lam"}
    lost = TABLES["KernelRidge"]["fitted attribute"] - tables["KernelRidge"]["fitted attribute"]
    assert lost == {"dual_coef_"}
