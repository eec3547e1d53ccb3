"""Fixtures of the command-line tests: the shared data folder and an in-process runner."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from kernelkit.cli._main import main

SHARED_DATA = Path(
    os.environ.get(
        "KERNELKIT_SHARED_DATA", Path(__file__).resolve().parents[2].parent / "shared" / "data"
    )
)


@dataclass
class Result:
    code: int
    out: str
    err: str


@pytest.fixture(autouse=True)
def _one_thread(one_torch_thread):
    """Small problems: torch on one thread (the shared fixture of tests/conftest.py)."""
    yield


@pytest.fixture
def data_dir() -> Path:
    """``../shared/data`` next to the repository, or ``$KERNELKIT_SHARED_DATA`` (the tests
    skip without it)."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real datasets not found at {SHARED_DATA} (../shared/data)")
    return SHARED_DATA


@pytest.fixture
def cli(capsys):
    """Run ``kernelkit ARGS`` in-process; returns exit code, stdout and stderr."""

    def run(*args: object) -> Result:
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run
