"""Usage errors of every subcommand exit 2 before torch, scikit-learn or RDKit is imported
(the command answers at once: benchmarks/ measure the time; here: the exit code and what was
imported), and the light table of ``--kernel`` names agrees with the kernels' own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kernelkit.cli._kernel_names import KERNEL_DEFAULTS, SKLEARN_NAMES
from kernelkit.kernels._resolve import SKLEARN_KERNELS, parameter_kind
from kernelkit.kernels._specs import KERNEL_SPECS, spec_defaults

SRC = Path(__file__).resolve().parents[2] / "src"

_RUNNER = """
import contextlib, io, json, sys
from kernelkit.cli._main import main
codes = []
for argv in json.loads(sys.argv[1]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's own usage errors
            code = exc.code
    codes.append([code, err.getvalue()])
heavy = sorted({m.split(".")[0] for m in sys.modules} & {"torch", "sklearn", "rdkit", "scipy"})
print(json.dumps({"codes": codes, "heavy": heavy}))
"""


def _usage_errors(tmp: Path) -> list[tuple[list[str], str]]:
    v = tmp / "v.csv"
    v.write_text("a,b,y\n1,2,3\n4,5,6\n")
    notes = tmp / "notes.csv"
    notes.write_text("my notes\n")
    exists = tmp / "exists.zip"
    exists.write_text("not a model")
    m, o = str(tmp / "m.zip"), str(tmp / "out")
    ridge = ["fit", str(v), "--model", "ridge", "--target", "y", "--out"]
    gp = ["fit", str(v), "--model", "gp", "--target", "y", "--out", m]
    return [
        (["demo", "--max-iter", "0", "--out", o], "--max-iter: expected >= 1"),
        (["demo", "--bogus"], "unrecognized arguments"),
        (["autoencode", str(v), "--test-size", "1.5", "--out", o], "--test-size"),
        (["autoencode", str(v), "--kernel", "gausian", "--out", o], "unknown kernel 'gausian'"),
        (["autoencode", str(v), "--landmarks", "x", "--out", o], "--landmarks"),
        (["fit", str(v), "--model", "ridge", "--out", m], "--target or --labels"),
        ([*ridge, m, "--kernel", "gaussian:sigma=1e-300"], "sigma=1e-300 is too small"),
        ([*ridge, m, "--lam", "1e-4,1e-3"], "needs --cv K"),
        ([*ridge, m, "--kernel", "weighted-degree:degree=3,5"], "needs --cv K"),
        ([*ridge, m, "--kernel", "spectrum:k=3", "--kind", "vectors"], "spectrum takes sequences"),
        ([*ridge, m, "--cv", "1"], "--cv"),
        ([*ridge, m, "--lam", "auto", "--cv", "3"], "--lam auto: only --model ridge without"),
        ([*gp, "--lam", "1e-3"], "a gp learns its noise variance"),
        ([*gp, "--cv", "3"], "a gp learns its hyper-parameters"),
        ([*ridge, str(exists)], "exists; pass --overwrite"),
        ([*ridge, str(exists), "--overwrite"], "is a file that is no kernelkit model"),
        (["predict", m, str(v), "--interval", "1.5", "--out", o], "--interval: expected a level"),
        (
            ["predict", m, str(v), "--kernel", "gaussian", "--out", str(tmp / "p.csv")],
            "takes no --kernel",
        ),
        (["predict", m, str(v), "--out", str(notes), "--overwrite"], "kernelkit did not write"),
        (["predict", m, str(v), "--out", str(v)], "is or holds the input"),
        (["gram", str(v), "--out", str(tmp / "k.txt")], "expected a .npy file name"),
        (["gram", str(v), "--block-size", "0", "--out", str(tmp / "k.npy")], "--block-size"),
        (["two-sample", str(v), str(v), "--permutations", "0", "--out", o], "--permutations"),
        (["two-sample", str(v), str(v), "--gram", "--out", o], "--gram: two-sample"),
        (["suggest", str(v), "--target", "y", "--n", "0"], "--n: expected >= 1"),
        (
            ["suggest", str(v), "--target", "y", "--kernel", "spectrum", "--kind", "vectors"],
            "takes",
        ),
        (["suggest", str(v), "--target", "y", "--out", str(v)], "is or holds the input"),
        (["info", "--bogus"], "unrecognized arguments"),
        (["autoencode", str(v), "--threads", "0", "--out", o], "--threads: expected >= 1"),
    ]


def test_usage_errors_exit_2_without_importing_torch(tmp_path):
    cases = _usage_errors(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-c", _RUNNER, json.dumps([argv for argv, _ in cases])],
        capture_output=True,
        text=True,
        check=False,
        env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    for (argv, fragment), (code, err) in zip(cases, result["codes"], strict=True):
        assert code == 2, (argv, err)
        assert fragment in err and "Traceback" not in err, (argv, err)
        assert len(err.strip().splitlines()) <= 2, (argv, err)  # argparse: usage + error
    assert result["heavy"] == [], "a usage error imported " + ", ".join(result["heavy"])
    assert (tmp_path / "notes.csv").read_text() == "my notes\n"


def test_the_light_kernel_table_is_the_kernels_table():
    assert list(KERNEL_DEFAULTS) == list(KERNEL_SPECS)
    for name, (kind, cls) in KERNEL_SPECS.items():
        assert KERNEL_DEFAULTS[name] == (kind.plural, spec_defaults(cls)), name
    assert list(SKLEARN_NAMES) == list(SKLEARN_KERNELS)
    for name, kind in SKLEARN_NAMES.items():
        assert parameter_kind(name).plural == kind, name


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("weighted-degree:degree=3,5,8", [f"weighted-degree:degree={d}" for d in (3, 5, 8)]),
        ("mismatch:k=3,4,m=1", ["mismatch:k=3,m=1", "mismatch:k=4,m=1"]),
        ("gaussian", ["gaussian"]),
    ],
)
def test_kernel_grids(spec, expected):
    from kernelkit.cli._precheck import kernel_grid

    assert kernel_grid(spec) == expected
