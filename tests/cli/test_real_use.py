"""The command line under real use (issue 13): every case of the issue's "Why", as a test.

The rule of this suite and of ``test_hostile_input.py``: a new reader, command or option adds
its hostile cases here (an input it must refuse, an output it must not touch), each checking
the exit code (1 data, 2 usage), a one-line message naming the option or FILE:LINE, that no
traceback is printed, and that nothing but the documented output was created or removed.
"""

from __future__ import annotations

import csv
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from kernelkit.cli._main import _KINDS, main
from kernelkit.cli._output import MARKER
from kernelkit.data.readers import KINDS

SRC = Path(__file__).resolve().parents[2] / "src"
VECTORS = "a,b,c\n" + "".join(f"{i},{(i * 7) % 5},{(i * i) % 11 + 0.5}\n" for i in range(30))


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _auto(path, out, *extra):
    options = ["--max-iter", "2", "--dims", "2", "--trees", "5", *extra]
    return ["autoencode", path, "--out", out, *options]


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def _one_line_error(res, code: int, *fragments: str) -> None:
    """Exit ``code``; stderr: stage lines, then one error line holding every fragment."""
    assert res.code == code, res.err
    *stages, error = res.err.splitlines()
    assert "Traceback" not in res.err, res.err
    assert all(re.fullmatch(r"kernelkit \w+: .* \[\d\d:\d\d:\d\d\]", s) for s in stages), res.err
    for fragment in fragments:
        assert fragment in error, res.err


# ---------------------------------------------------------------------- data loss
def test_overwrite_never_deletes_the_input_or_its_folder(cli, tmp_path):
    data = _write(tmp_path / "proj" / "data.csv", VECTORS)
    notes = _write(tmp_path / "proj" / "notes.txt", "mine")
    before = _files(tmp_path)
    res = cli(*_auto(data, tmp_path / "proj"), "--overwrite")
    _one_line_error(res, 2, "--out", "input", "data.csv")
    res = cli(*_auto(data, data), "--overwrite")
    _one_line_error(res, 2, "--out", "input")
    assert _files(tmp_path) == before and notes.read_text() == "mine"


def test_overwrite_replaces_only_a_folder_kernelkit_wrote(cli, tmp_path):
    data = _write(tmp_path / "data.csv", VECTORS)
    mine = _write(tmp_path / "results" / "thesis.tex", "chapter 1")
    res = cli(*_auto(data, tmp_path / "results"), "--overwrite", "--quiet")
    _one_line_error(res, 2, "--out", "kernelkit did not write", MARKER)
    assert mine.read_text() == "chapter 1"
    out = tmp_path / "out"
    assert cli(*_auto(data, out), "--quiet").code == 0
    assert (out / MARKER).is_file()
    first = (out / "results.json").stat().st_mtime_ns
    assert cli(*_auto(data, out), "--overwrite", "--quiet").code == 0
    assert (out / "results.json").stat().st_mtime_ns >= first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv", "out", "results"]


def test_predict_never_replaces_a_folder_with_a_csv(cli, tmp_path):
    data = _write(tmp_path / "data.csv", VECTORS)
    model = tmp_path / "m.zip"
    assert cli("fit", data, "--model", "ridge", "--target", "c", "--out", model).code == 0
    folder = tmp_path / "some_dir"
    _write(folder / "keep.txt", "keep")
    res = cli("predict", model, data, "--out", folder, "--overwrite")
    _one_line_error(res, 2, "--out", "is a folder")
    assert (folder / "keep.txt").read_text() == "keep"


def test_fit_never_replaces_a_folder_that_is_not_a_model(cli, tmp_path):
    data = _write(tmp_path / "data.csv", VECTORS)
    mine = _write(tmp_path / "work" / "notes.txt", "mine")
    for out in (tmp_path / "work", tmp_path / "work.zip"):
        if out.suffix:
            out.mkdir()
        res = cli("fit", data, "--model", "ridge", "--target", "c", "--out", out, "--overwrite")
        _one_line_error(res, 2, "--out", "folder")
    assert mine.read_text() == "mine"
    model = tmp_path / "model"
    for _ in range(2):
        res = cli("fit", data, "--model", "ridge", "--target", "c", "--out", model, "--overwrite")
        assert res.code == 0, res.err


def test_out_dot_is_a_clean_usage_error(cli, tmp_path, monkeypatch):
    data = _write(tmp_path / "data.csv", VECTORS)
    monkeypatch.chdir(tmp_path)
    for out in (".", "./", str(tmp_path)):
        res = cli(*_auto("data.csv", out), "--overwrite")
        _one_line_error(res, 2, "--out", "current folder")
    assert _files(tmp_path) == ["data.csv"] and data.read_text() == VECTORS


def test_outputs_follow_the_umask(cli, tmp_path):
    data = _write(tmp_path / "data.csv", VECTORS)
    old = os.umask(0o022)
    try:
        assert cli(*_auto(data, tmp_path / "out"), "--quiet").code == 0
        assert cli("fit", data, "--model", "ridge", "--target", "c", "--out", tmp_path / "m.zip")
        res = cli("predict", tmp_path / "m.zip", data, "--out", tmp_path / "p.csv")
        assert res.code == 0
    finally:
        os.umask(old)
    assert (tmp_path / "out").stat().st_mode & 0o777 == 0o755
    assert (tmp_path / "out" / "report.md").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "p.csv").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "m.zip").stat().st_mode & 0o777 == 0o644


def _default_signal_dispositions() -> None:
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_leaves_no_temporary_folder(tmp_path, signum, code):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 5))
    _write(tmp_path / "big.csv", "".join(",".join(f"{v:.4f}" for v in row) + "\n" for row in X))
    env = {**os.environ, "PYTHONPATH": str(SRC), "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "kernelkit.cli._main", "autoencode", "big.csv", "--out", "out"]
    proc = subprocess.Popen(
        [*cmd, "--max-iter", "500", "--dims", "2", "10", "20"],
        cwd=tmp_path,
        env=env,
        stderr=subprocess.PIPE,
        text=True,
        # a job started in the background of a non-interactive shell inherits SIGINT ignored;
        # the command is tested as a user runs it, with the default disposition
        preexec_fn=_default_signal_dispositions,
    )
    deadline = time.monotonic() + 120
    line = ""
    while "K2AE" not in line and time.monotonic() < deadline:
        line = proc.stderr.readline()
    assert "K2AE" in line, "the job did not reach the K2AE stage"
    assert any(p.name.startswith(".out.tmp-") for p in tmp_path.iterdir())
    proc.send_signal(signum)
    err = proc.communicate(timeout=60)[1]
    assert proc.returncode == code, err
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.csv"]


# ---------------------------------------------------------------------- silent wrong answers
def _fit_ridge(cli, tmp_path, *extra):
    data = _write(tmp_path / "train.csv", VECTORS)
    model = tmp_path / "ridge.zip"
    res = cli("fit", data, "--model", "ridge", "--target", "c", "--out", model, *extra)
    assert res.code == 0, res.err
    return model


def _predictions(path: Path) -> list[list[str]]:
    return list(csv.reader(path.read_text().splitlines()))


def test_predict_matches_columns_by_name(cli, tmp_path):
    model = _fit_ridge(cli, tmp_path)
    rows = [(i, (i * 7) % 5) for i in range(5)]
    ab = _write(tmp_path / "ab.csv", "a,b\n" + "".join(f"{a},{b}\n" for a, b in rows))
    ba = _write(tmp_path / "ba.csv", "b,a\n" + "".join(f"{b},{a}\n" for a, b in rows))
    with_target = _write(tmp_path / "cab.csv", "c,a,b\n" + "".join(f"9,{a},{b}\n" for a, b in rows))
    outs = []
    for i, src in enumerate((ab, ba, with_target)):
        out = tmp_path / f"p{i}.csv"
        assert cli("predict", model, src, "--out", out, "--quiet").code == 0
        outs.append([row[1] for row in _predictions(out)[1:]])
    assert outs[0] == outs[1] == outs[2]
    renamed = _write(tmp_path / "ax.csv", "a,x\n1,2\n")
    res = cli("predict", model, renamed, "--out", tmp_path / "p.csv")
    _one_line_error(res, 1, "ax.csv", "no column(s) ['b']")


def test_cross_gram_wider_than_the_training_set_is_refused(cli, tmp_path):
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(30, 3))
    K = np.exp(-((Z[:, None] - Z[None]) ** 2).sum(-1) / 4)
    np.save(tmp_path / "K.npy", K)
    _write(tmp_path / "y.txt", "".join(f"{v:.3f}\n" for v in Z[:, 0]))
    for model, extra in (("ridge", ["--labels", tmp_path / "y.txt"]), ("autoencoder", [])):
        path = tmp_path / f"{model}.zip"
        res = cli("fit", tmp_path / "K.npy", "--gram", "--model", model, *extra, "--out", path)
        assert res.code == 0, res.err
        np.save(tmp_path / "wide.npy", np.hstack([K[:5], K[:5, :4]]))
        res = cli("predict", path, tmp_path / "wide.npy", "--out", tmp_path / "p.csv")
        _one_line_error(res, 1, "wide.npy", "expected a cross-Gram with 30 columns")


def test_one_text_cell_in_a_numeric_target_is_an_error_not_classes(cli, tmp_path):
    lines = VECTORS.splitlines()
    lines[7] = lines[7].rsplit(",", 1)[0] + ",2.O"
    data = _write(tmp_path / "typo.csv", "\n".join(lines) + "\n")
    res = cli(*_auto(data, tmp_path / "out"), "--target", "c")
    _one_line_error(res, 1, "typo.csv:8:", "'2.O'", "--task classification")
    res = cli("fit", data, "--model", "ridge", "--target", "c", "--out", tmp_path / "m.zip")
    _one_line_error(res, 1, "typo.csv:8:", "'2.O'")
    res = cli(*_auto(data, tmp_path / "out"), "--target", "c", "--task", "classification")
    assert res.code == 0, res.err
    report = (tmp_path / "out" / "report.md").read_text()
    assert "RF accuracy" in report and "NMSE" not in report
    assert not (tmp_path / "m.zip").exists()


def test_integer_labels_with_few_values_are_classes_with_a_warning(cli, tmp_path):
    data = _write(tmp_path / "d.csv", VECTORS.replace(".5\n", "\n"))
    res = cli(*_auto(data, tmp_path / "out"), "--target", "b")
    assert res.code == 0, res.err
    assert "5 distinct integer values, taken as classes" in res.err
    summary = json.loads((tmp_path / "out" / "results.json").read_text())
    assert summary["task"] == "classification" and "rf_accuracy" in summary["results"][0]
    res = cli(*_auto(data, tmp_path / "out2"), "--target", "b", "--task", "regression")
    assert res.code == 0 and "taken as classes" not in res.err
    assert "rf_r2" in json.loads((tmp_path / "out2" / "results.json").read_text())["results"][0]


# ---------------------------------------------------------------------- degenerate data
def test_identical_rows_give_named_errors_not_tracebacks(cli, tmp_path):
    same = _write(tmp_path / "same.csv", "a,b,c\n" + "1,2,3\n" * 30)
    res = cli(*_auto(same, tmp_path / "out"))
    _one_line_error(res, 1, "same.csv", "all 30 records are equal")
    res = cli("fit", same, "--model", "ridge", "--target", "c", "--out", tmp_path / "m.zip")
    _one_line_error(res, 1, "same.csv", "target 'c' is constant")
    varying = _write(
        tmp_path / "vary.csv", "a,b,c\n" + "".join(f"1,2,{i * 0.5}\n" for i in range(30))
    )
    res = cli("fit", varying, "--model", "ridge", "--target", "c", "--out", tmp_path / "m.zip")
    assert res.code == 0 and "all 30 records are equal" in res.err
    assert "e+" not in res.out.split("training R²")[1].split()[0]
    assert not (tmp_path / "out").exists()


def test_fewer_distinct_records_than_dims_and_a_constant_target(cli, tmp_path):
    few = _write(
        tmp_path / "few.csv", "a,b,c\n" + "".join(f"{i % 3},{i % 3},4\n" for i in range(30))
    )
    res = cli(*_auto(few, tmp_path / "out")[:-6], "--dims", "5", "--max-iter", "2")
    _one_line_error(res, 1, "--dims", "3 distinct records")
    res = cli(*_auto(few, tmp_path / "out"), "--target", "c")
    assert res.code == 0, res.err
    assert "target 'c' is constant" in res.err
    assert (tmp_path / "out" / "latent_2d.png").is_file()


# ---------------------------------------------------------------------- start, help, reports
def test_version_and_help_import_no_heavy_package():
    code = (
        "import sys\nfrom kernelkit.cli._main import main\n"
        "for argv in (['--version'], ['--help']):\n"
        "    try:\n        main(argv)\n    except SystemExit:\n        pass\n"
        "print(sorted(m for m in ('torch', 'sklearn', 'rdkit', 'matplotlib') if m in sys.modules))"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_kind_names_are_the_readers_kinds():
    assert sorted(_KINDS) == sorted(k.plural for k in KINDS)


@pytest.mark.parametrize(
    "command", ["demo", "autoencode", "fit", "predict", "gram", "suggest", "info"]
)
def test_every_subcommand_has_a_description_and_shows_defaults(cli, command):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    res = cli()  # collects the help printed above
    text = " ".join(res.out.split())
    description = text.split("options:")[0]
    assert len(description.split()) > 8, description
    if command not in ("predict", "info"):
        assert "(default: " in text
    if command in ("autoencode", "fit", "gram", "suggest"):
        assert "spectrum (sequences): k=3" in text and "wl (graphs): n_iter=3" in text


def test_debug_is_accepted_after_the_subcommand(cli, tmp_path):
    bad = _write(tmp_path / "bad.csv", "a,b\n1,x\n")
    assert cli("autoencode", bad, "--out", tmp_path / "o").code == 1
    for argv in (["autoencode", bad, "--debug"], ["--debug", "autoencode", bad]):
        with pytest.raises(ValueError, match=r"bad\.csv:2"):
            main([str(a) for a in argv] + ["--out", str(tmp_path / "o")])


def test_predict_refuses_kernel(cli, tmp_path):
    model = _fit_ridge(cli, tmp_path)
    res = cli("predict", model, tmp_path / "train.csv", "--kernel", "linear", "--out", "p.csv")
    _one_line_error(res, 2, "--kernel", "model carries its kernel")


def test_column_without_kind_points_to_kind(cli, tmp_path):
    data = _write(tmp_path / "m.csv", "smiles,y\n" + "CCO,1\nCCC,2\n" * 6)
    res = cli(*_auto(data, tmp_path / "out"), "--column", "smiles")
    _one_line_error(res, 2, "--column 'smiles'", "--kind molecules")


def test_svc_predictions_are_class_labels(cli, tmp_path):
    rows = "".join(f"{i},{(i * 3) % 7},{9 if i % 2 else 4}\n" for i in range(30))
    data = _write(tmp_path / "d.csv", "a,b,label\n" + rows)
    model = tmp_path / "svc.zip"
    res = cli("fit", data, "--model", "svc", "--target", "label", "--out", model)
    assert res.code == 0, res.err
    assert cli("predict", model, data, "--out", tmp_path / "p.csv").code == 0
    values = {row[1] for row in _predictions(tmp_path / "p.csv")[1:]}
    assert values <= {"4", "9"} and values


def test_report_states_error_scale_evaluations_and_codes_carry_smiles(cli, tmp_path):
    smiles = ["CCO", "CCC", "CCN", "c1ccccc1", "CC(=O)O", "CCCl", "CCBr", "CO", "CN", "CCCC"]
    data = _write(tmp_path / "m.smi", "".join(f"{s}\n" for s in smiles * 2))
    res = cli(*_auto(data, tmp_path / "out"), "--landmarks", "6")
    assert res.code == 0, res.err
    out = tmp_path / "out"
    summary = json.loads((out / "results.json").read_text())
    report = (out / "report.md").read_text()
    assert "on the scale of k(x, x)" in report and "6 random landmarks" in report
    assert summary["landmarks"] == 6 and summary["error_scale"] == pytest.approx(1.0)
    evaluations = summary["objective_evaluations"]["2d"]
    assert f"at most 2 L-BFGS iterations; objective evaluations used: {evaluations} (2d)" in (
        " ".join(report.split())
    )
    rows = _predictions(out / "codes_2d.csv")
    assert rows[0][:3] == ["id", "smiles", "split"] and rows[4][1] == "c1ccccc1"
    res = cli(*_auto(data, tmp_path / "o2"), "--landmarks", "many")
    _one_line_error(res, 2, "--landmarks")


def test_python_warnings_print_as_one_line(cli, tmp_path):
    """An optimiser stopped by --max-iter warns in the command's own one-line format."""
    data = _write(tmp_path / "m.smi", "".join(f"{s}\n" for s in ["CCO", "CCC", "CCN", "CO"] * 3))
    res = cli(*_auto(data, tmp_path / "out"))
    assert res.code == 0, res.err
    lines = [line for line in res.err.splitlines() if "max_iter" in line]
    assert lines and all(
        line.startswith("kernelkit autoencode: warning: KernelAutoencoder: the optimiser stopped")
        for line in lines
    )
    assert "ConvergenceWarning" not in res.err and ".py:" not in res.err
