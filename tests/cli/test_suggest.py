"""``kernelkit suggest``: the picks of ``kernelkit.bo.suggest`` on the same GP, read from a CSV
library whose empty target cells mark the candidates."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from kernelkit import GaussianProcessRegressor
from kernelkit.bo import suggest
from kernelkit.data import load_esol


@pytest.fixture
def library(tmp_path):
    """40 ESOL molecules (the shipped copy): the first 25 measured, 15 candidates."""
    esol = load_esol()
    smiles, y = esol.smiles[:40], esol.target[:40]
    path = tmp_path / "library.csv"
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["name", "smiles", "logS"])
        for i, (s, t) in enumerate(zip(smiles, y, strict=True)):
            writer.writerow([f"m{i}", s, repr(float(t)) if i < 25 else ""])
    return path, smiles, y


def _oracle(smiles, y, n, **kwargs):
    gp = GaussianProcessRegressor(normalize_y=True, random_state=0).fit(smiles[:25], y[:25])
    return suggest(gp, smiles, n=n, exclude=np.arange(25), random_state=0, **kwargs), gp


@pytest.mark.parametrize(("options", "kwargs"), [((), {}), (("--minimize",), {"maximize": False})])
def test_picks_equal_the_library_call_and_skip_measured_records(
    cli, library, tmp_path, options, kwargs
):
    path, smiles, y = library
    out = tmp_path / "picks.csv"
    argv = ("suggest", path, "--kind", "molecules", "--column", "smiles", "--target", "logS")
    run = cli(*argv, "--n", 4, "--out", out, *options)
    assert run.code == 0, run.err
    with out.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    expected, gp = _oracle(smiles, y, 4, **kwargs)
    assert [r["id"] for r in rows] == [f"m{i}" for i in expected]
    assert [r["record"] for r in rows] == [smiles[i] for i in expected]
    assert all(int(r["id"][1:]) >= 25 for r in rows)
    mean, std = gp.predict([smiles[i] for i in expected], return_std=True)
    np.testing.assert_allclose([float(r["logS_mean"]) for r in rows], mean, rtol=1e-10)
    np.testing.assert_allclose([float(r["logS_std"]) for r in rows], std, rtol=1e-10)
    assert f"m{expected[0]}" in run.out and "wrote 4 rows" in run.out


def test_without_out_it_prints_and_caps_n_at_the_candidates(cli, library, tmp_path):
    path, *_ = library
    argv = ("suggest", path, "--kind", "molecules", "--column", "smiles", "--target", "logS")
    run = cli(*argv, "--n", 50, "--acquisition", "ucb")
    assert run.code == 0, run.err
    assert run.out.startswith("15 of 15 candidates by ucb")
    assert [p.name for p in tmp_path.glob("*.csv")] == ["library.csv"]  # nothing written


def _rewrite(path, edit):
    with path.open(newline="") as fh:
        rows = list(csv.reader(fh))
    edit(rows)
    with path.open("w", newline="") as fh:
        csv.writer(fh).writerows(rows)


def test_data_errors_name_the_file_and_line(cli, library):
    path, *_ = library
    argv = ("suggest", path, "--kind", "molecules", "--column", "smiles", "--target", "logS")
    _rewrite(path, lambda rows: rows[3].__setitem__(2, "soluble"))
    run = cli(*argv)
    assert run.code == 1 and f"{path}:4:" in run.err and "'soluble'" in run.err
    assert "Traceback" not in run.err

    def measure_all(rows):
        for row in rows[1:]:
            row[2] = row[2] or "-1.0"

    _rewrite(path, lambda rows: rows[3].__setitem__(2, "-2.0"))
    _rewrite(path, measure_all)
    run = cli(*argv)
    assert run.code == 1 and "none left to suggest" in run.err
    run = cli(*argv[:-1], "nosuch")
    assert run.code == 1 and "no column 'nosuch'" in run.err


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (("--n", "0"), "--n: expected >= 1"),
        (("--kernel", "gaussian"), "gaussian takes vectors"),
        (("--out", "library.csv", "--overwrite"), "input"),
    ],
)
def test_usage_errors_exit_2(cli, library, monkeypatch, extra, fragment):
    path, *_ = library
    monkeypatch.chdir(path.parent)
    argv = ("suggest", path, "--kind", "molecules", "--column", "smiles", "--target", "logS")
    run = cli(*argv, *extra)
    assert run.code == 2 and fragment in run.err, run.err


def test_unknown_acquisition_and_missing_target_are_argparse_errors(cli, library):
    path, *_ = library
    for argv in (("--target", "logS", "--acquisition", "best"), ()):
        with pytest.raises(SystemExit) as info:
            cli("suggest", path, "--kind", "molecules", "--column", "smiles", *argv)
        assert info.value.code == 2
