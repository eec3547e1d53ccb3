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


# ---------------------------------------------------------------------- objectives
OBJECTIVE = re.compile(
    r"\nNotes\n-----\nObjective: (?P<text>.*?)(?=\n[A-Z][\w ]*\n-{3,}\n|\Z)", re.S
)
"""A numpydoc ``Notes`` section whose first paragraph starts with ``Objective:``."""


def objective_problems(cls: type) -> list[str]:
    """What the class docstring lacks: the ``Objective:`` paragraph of ``Notes`` with a
    ``.. math::`` formula; for a ``lam`` parameter, the README form ``(1/n) sum loss +
    lam ||f||^2`` (a ``\\frac{1}{n}`` or ``\\frac{1}{\\sum_j w_j}`` data term, ``\\lambda``)."""
    import inspect

    doc = inspect.getdoc(cls) or ""
    found = OBJECTIVE.search(doc)
    if not found:
        return ["no 'Notes' section starting with 'Objective:'"]
    text = found.group("text")
    problems = [] if ".. math::" in text else ["no '.. math::' formula in the objective"]
    if "lam" in inspect.signature(cls.__init__).parameters:
        if "\\lambda" not in text:
            problems.append("takes lam but its objective has no \\lambda")
        if not re.search(r"\\frac\{?1\}?\{?(n|\\sum_j w_j)\}?", text):
            problems.append("takes lam but its objective has no (1/n) data term")
    return problems


def _estimators() -> list[type]:
    import inspect

    from sklearn.base import BaseEstimator

    return [
        obj
        for name in dir(kernelkit)
        if inspect.isclass(obj := getattr(kernelkit, name)) and issubclass(obj, BaseEstimator)
    ]


def test_objective_detector_fails_on_a_missing_or_formless_objective():
    class NoNotes:
        """Summary.

        Parameters
        ----------
        lam : float
        """

        def __init__(self, lam=1.0):
            self.lam = lam

    class NoLambda(NoNotes):
        r"""Summary.

        Notes
        -----
        Objective: the problem

        .. math:: \min_f \frac{1}{n} \sum_i (y_i - f(x_i))^2.

        Examples
        --------
        """

    class Stated(NoNotes):
        r"""Summary.

        Notes
        -----
        Objective: the problem

        .. math:: \min_f \frac{1}{n} \sum_i (y_i - f(x_i))^2 + \lambda \|f\|^2.
        """

    assert objective_problems(NoNotes) == ["no 'Notes' section starting with 'Objective:'"]
    assert objective_problems(NoLambda) == ["takes lam but its objective has no \\lambda"]
    assert objective_problems(Stated) == []


def test_every_estimator_states_its_objective():
    estimators = _estimators()
    assert len(estimators) >= 19
    bad = {cls.__name__: p for cls in estimators if (p := objective_problems(cls))}
    assert bad == {}, f"estimators without an 'Objective:' in their docstring's Notes: {bad}"
