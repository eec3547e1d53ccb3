"""One progress mechanism and one training loop (issue 26).

* :class:`kernelkit.utils._progress.Progress` writes the one format (``[Name] unit k/total
  key=value`` lines, ``[Name] done after unit N (reason)``), a tqdm bar on a terminal, or
  calls a user's callable.
* Every estimator with an iterative fit (a ``max_iter`` parameter, found by introspection)
  has ``verbose``: ``0`` writes nothing, ``1`` writes that format on stderr and nothing on
  stdout.
* A scan of ``src/kernelkit`` finds no other progress mechanism (tqdm, print, writes to
  stderr) and no other training loop (optimiser steps, best-state restores, non-finite
  warnings) than :mod:`kernelkit.utils._progress` and :mod:`kernelkit.solvers._training`;
  the scan fails on a planted copy.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

import kernelkit
from kernelkit.utils._progress import Progress
from test_contract import CASES, ESTIMATORS, _data, _fit

SRC = Path(kernelkit.__file__).parent
ITERATIVE = [c for c in ESTIMATORS if "max_iter" in CASES[c.__name__]().get_params()]
ITERATION = r"\[{name}\] \w+ \d+(/\d+)?( \w+=\S+)+"
LINE = r"\[{name}\] .+"
DONE = r"\[{name}\] done after \w+ \d+ \(.+\)"


# ------------------------------------------------------------------ Progress itself
def test_lines_every_five_percent_with_the_last_and_a_done_line():
    sink = io.StringIO()
    p = Progress("Model", 100, 1, stream=sink)
    for it in range(1, 38):
        p.update(it, objective=1.0 / it, gap=0.5)
    p.done(37, "converged")
    lines = sink.getvalue().splitlines()
    assert lines[0] == "[Model] iter 1/100 objective=1 gap=0.5"
    shown = [int(re.match(r"\[Model\] iter (\d+)/100", line)[1]) for line in lines[:-1]]
    assert shown == [1, 5, 10, 15, 20, 25, 30, 35, 37]
    assert lines[-1] == "[Model] done after iter 37 (converged)"


def test_silent_callable_stage_and_bar():
    sink = io.StringIO()
    p = Progress("Model", 10, 0, stream=sink)
    p.update(1, objective=2.0)
    p.stage("never shown")
    p.done(1, "converged")
    assert sink.getvalue() == "" and not p.active
    seen = []
    p = Progress("Model", 10, lambda it, v: seen.append((it, v)), stream=sink)
    p.update(3, residual=0.25)
    p.update(residual=0.125)
    p.done(4, "converged")
    assert seen == [(3, 0.25), (4, 0.125)] and sink.getvalue() == ""
    p = Progress("Model", 10, 1, stream=sink, terminal=True)  # a tqdm bar
    p.update(4, objective=0.5)
    p.stage("a stage")
    p.close()
    assert "objective=0.5" in sink.getvalue() and "[Model] a stage" in sink.getvalue()
    quiet = io.StringIO()
    Progress("Model", 10, 1, lines=False, stream=quiet).update(1, objective=1.0)
    assert quiet.getvalue() == ""


def test_a_skipped_iteration_line_is_written_before_a_stage():
    sink = io.StringIO()
    p = Progress("Model", 100, 1, stream=sink)
    p.update(1, objective=1.0)
    p.update(2, objective=0.5)
    p.stage("class 2/3")
    assert sink.getvalue().splitlines() == [
        "[Model] iter 1/100 objective=1",
        "[Model] iter 2/100 objective=0.5",
        "[Model] class 2/3",
    ]


# ------------------------------------------------------------------ every iterative estimator
def test_iterative_estimators_are_found():
    names = {c.__name__ for c in ITERATIVE}
    assert {"KernelAutoencoder", "KernelRidge", "KernelSVC", "SimpleMKL", "KernelKMeans"} <= names
    print(f"{len(ITERATIVE)} iterative estimators")


@pytest.mark.parametrize("cls", ITERATIVE, ids=lambda c: c.__name__)
def test_verbose_gives_the_same_kind_of_output(cls, capsys, one_torch_thread):
    name = cls.__name__
    X, y = _data()
    est = CASES[name]()
    assert "verbose" in est.get_params(), f"{name} has max_iter but no verbose"
    _fit(est.set_params(verbose=0), X, y)
    assert capsys.readouterr() == ("", "")
    _fit(est.set_params(verbose=1), X, y)
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert out == "" and lines, name
    for line in lines:
        assert re.fullmatch(LINE.format(name=name), line), line
    assert any(re.fullmatch(ITERATION.format(name=name), line) for line in lines), lines
    assert re.fullmatch(DONE.format(name=name), lines[-1]), lines[-1]


@pytest.mark.parametrize("cls", ITERATIVE, ids=lambda c: c.__name__)
def test_a_callable_verbose_receives_iterations_and_values(cls, capsys, one_torch_thread):
    X, y = _data()
    est = CASES[cls.__name__]()
    if "callable" not in str(est._parameter_constraints.get("verbose")):
        pytest.skip(f"{cls.__name__}: verbose takes an int or a bool")
    seen = []
    _fit(est.set_params(verbose=lambda it, value: seen.append((it, value))), X, y)
    assert seen and all(isinstance(it, int) and isinstance(v, float) for it, v in seen)
    assert capsys.readouterr() == ("", "")


# ------------------------------------------------------------------ one mechanism, one loop
PROGRESS_HOME = "utils/_progress.py"
TRAINING_HOME = "solvers/_training.py"
RULES = {
    "tqdm": (r"\btqdm\b", {PROGRESS_HOME}),
    "print": (r"(?<![\w.])print\(", None),  # None: only cli/ and report/ (command output)
    # writes to stderr; cli/_main.py writes the command line's error messages
    "stderr": (r"sys\.stderr\.write|file=sys\.stderr", {PROGRESS_HOME, "cli/_main.py"}),
    # solvers/_lbfgs.py drives torch's L-BFGS, the inner optimiser of train_module
    "optimiser step": (r"\.zero_grad\(|\bopt\w*\.step\(", {TRAINING_HOME, "solvers/_lbfgs.py"}),
    "best-state restore": (r"load_state_dict\(", {TRAINING_HOME}),
    "non-finite stop": (r"warn\([^;]{0,600}?NonFiniteObjectiveWarning", {TRAINING_HOME}),
}


def _code(text: str) -> str:
    """``text`` without docstrings' and comments' lines (a rough cut, enough for the rules)."""
    out, in_doc = [], False
    for line in text.splitlines():
        stripped = line.strip()
        quotes = stripped.count('"""') + stripped.count("'''")
        if in_doc or stripped.startswith(('"""', "'''", 'r"""', "#")):
            if quotes % 2 == 1:
                in_doc = not in_doc
            continue
        out.append(line)
    return "\n".join(out)


def scan(root: Path) -> dict[str, list[str]]:
    """``{rule: [files breaking it]}`` for the modules under ``root``."""
    found: dict[str, list[str]] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        code = _code(path.read_text(encoding="utf-8"))
        for rule, (pattern, homes) in RULES.items():
            allowed = rel.startswith(("cli/", "report/")) if homes is None else rel in homes
            if not allowed and re.search(pattern, code):
                found.setdefault(rule, []).append(rel)
    return found


def test_one_progress_mechanism_and_one_training_loop():
    assert scan(SRC) == {}


def test_the_scan_fails_on_a_planted_loop_and_progress(tmp_path):
    root = tmp_path / "kernelkit"
    (root / "models").mkdir(parents=True)
    (root / "models" / "loop.py").write_text(
        "import sys\nimport warnings\nfrom tqdm import tqdm\n\n"
        "def fit(model, opt, loss, best):\n"
        "    for _ in tqdm(range(10)):\n"
        "        opt.zero_grad()\n        loss().backward()\n        opt.step()\n"
        "        print('objective', float(loss()), file=sys.stderr)\n"
        "    warnings.warn('nan', NonFiniteObjectiveWarning)\n"
        "    model.load_state_dict(best)\n",
        encoding="utf-8",
    )
    found = scan(root)
    assert set(found) == set(RULES) and found["tqdm"] == ["models/loop.py"]
