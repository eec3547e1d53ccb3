"""The command line: demo outputs, info, usage and error exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from kernelkit.cli.main import main


def test_demo_writes_report_table_and_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    assert main(["demo", "--out", str(tmp_path), "--quiet"]) == 0
    results = json.loads((tmp_path / "results.json").read_text())
    rows = {row["method"].split(" ")[0]: row for row in results["rows"]}
    # the demo compares with scikit-learn on the same split: both must agree closely
    assert rows["KernelRidge"]["max |difference|"] < 1e-6
    assert rows["KernelRidge"]["test accuracy"] > 0.95
    assert rows["KernelSVC"]["max |difference|"] < 1e-4
    assert rows["KernelPCA"]["max |difference|"] < 1e-6
    assert (tmp_path / "kpca_digits.png").stat().st_size > 10_000
    assert "| KernelRidge" in (tmp_path / "results.md").read_text()
    assert capsys.readouterr().out == ""


def test_info_lists_versions(capsys):
    assert main(["info"]) == 0
    out = capsys.readouterr().out
    assert "kernelkit" in out and "torch" in out and "BLAS" in out


def test_no_command_is_a_usage_error(capsys):
    assert main([]) == 2


def test_unknown_option_exits_2_without_traceback():
    proc = subprocess.run(
        [sys.executable, "-m", "kernelkit.cli.main", "demo", "--bogus"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "--bogus" in proc.stderr
