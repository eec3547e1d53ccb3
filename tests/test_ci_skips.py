"""The skip policy of ``tests/conftest.py``: under CI a skip is a failure naming its reason.

Run on a throw-away suite (a copy of the conftest and one test that skips for want of data)
in a child pytest, with and without the ``CI`` variable.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

CONFTEST = Path(__file__).with_name("conftest.py")

SUITE = """
import pytest


def test_needs_data():
    pytest.skip("real datasets not found at /nowhere/shared/data")


def test_needs_a_gpu():
    pytest.skip("needs CUDA")


def test_runs():
    assert True
"""


def _run_suite(tmp_path: Path, ci: str | None) -> subprocess.CompletedProcess[str]:
    shutil.copy(CONFTEST, tmp_path / "conftest.py")
    (tmp_path / "test_suite.py").write_text(SUITE)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci is not None:
        env["CI"] = ci
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-ra", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=False,
    )


def test_under_ci_a_missing_dataset_fails_naming_it(tmp_path):
    res = _run_suite(tmp_path, "true")
    assert res.returncode == 1, res.stdout
    assert "1 failed, 1 passed, 1 skipped" in res.stdout
    assert "FAILED" in res.stdout
    assert "real datasets not found at /nowhere/shared/data" in res.stdout


def test_without_ci_it_skips_with_the_reason_shown(tmp_path):
    res = _run_suite(tmp_path, "false")  # "false", "0", "no" and unset all mean local
    assert res.returncode == 0, res.stdout
    assert "1 passed, 2 skipped" in res.stdout
    assert "SKIPPED" in res.stdout and "real datasets not found" in res.stdout
