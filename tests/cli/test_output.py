"""Outputs appear whole or not at all (write to a temporary sibling, then rename)."""

from __future__ import annotations

import pytest

from kernelkit.cli._errors import UsageError
from kernelkit.cli._output import OutputError, check_output, staged


def test_a_failing_job_leaves_nothing_and_keeps_the_old_output(tmp_path):
    out = tmp_path / "result"
    out.mkdir()
    (out / "old.txt").write_text("old")
    with pytest.raises(RuntimeError, match="crash"), staged(out, folder=True) as tmp:
        (tmp / "half.txt").write_text("half")
        raise RuntimeError("crash")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["result"]
    assert (out / "old.txt").read_text() == "old"


def test_a_finished_job_replaces_the_output(tmp_path):
    out = tmp_path / "K.npy"
    out.write_text("old")
    with staged(out, folder=False) as tmp:
        assert tmp.parent == tmp_path and tmp.suffix == ".npy" and not out.samefile(tmp)
        tmp.write_text("new")
    assert out.read_text() == "new"
    # a .npy output gets kernelkit's record of it (what --overwrite may replace)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".K.npy.kernelkit", "K.npy"]


def test_check_output(tmp_path):
    (tmp_path / "taken").write_text("x")
    with pytest.raises(UsageError, match="exists; pass --overwrite"):
        check_output(tmp_path / "taken", overwrite=False)
    with pytest.raises(UsageError, match="a file kernelkit did not write"):
        check_output(tmp_path / "taken", overwrite=True, kind="file")
    (tmp_path / "p.csv").write_text("id,prediction\n1,0.5\n")
    assert check_output(tmp_path / "p.csv", overwrite=True, kind="file") == tmp_path / "p.csv"
    with pytest.raises(OutputError, match="does not exist"):
        check_output(tmp_path / "missing" / "out", overwrite=False)
    with pytest.raises(OutputError, match="is not a folder"):
        check_output(tmp_path / "taken" / "out", overwrite=False)
