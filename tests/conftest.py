"""Shared fixtures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch

# ---------------------------------------------------------------------------------------------
# Skips under CI.  Locally a test that needs ../shared/data, an optional dependency of the `all`
# extra or Linux /proc skips (the reason is printed by `-ra`).  When the environment variable
# CI is set (`.ci/run` sets it; it runs on a fresh machine that installs the `all` extra next
# to ../shared), such a skip means the run did not test what it claims: it is reported as a
# failure naming the reason.  A skip is of that kind when its reason contains one of
# CI_REQUIRED_SKIP_REASONS, so a test that skips for want of data says "not found" (as every
# data fixture here does) and one that skips for want of a package uses pytest.importorskip.
# Other skips stay skips under CI: scikit-learn's estimator checks that do not apply
# ("SCIPY_ARRAY_API is not set", "does not have a predict_proba method"), a GPU-only check.
# ---------------------------------------------------------------------------------------------
CI_REQUIRED_SKIP_REASONS: tuple[str, ...] = (
    "not found",  # ../shared/data or one of its folders (data fixtures, skipif markers)
    "could not import",  # pytest.importorskip of a package of the `all` extra
    "No module named",
    " extra",  # importorskip with a reason naming the extra ("needs the io extra")
    "/proc",  # Linux /proc (peak-memory measurements)
)


def _under_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> object:
    """Under CI, turn a skip for want of data, package or /proc into a failure."""
    outcome = yield
    report = outcome.get_result()
    if not (report.skipped and _under_ci()) or hasattr(report, "wasxfail"):
        return
    reason = _skip_reason(report)
    if not any(required in reason for required in CI_REQUIRED_SKIP_REASONS):
        return
    report.outcome = "failed"
    report.longrepr = (
        f"skipped under CI ({reason}); CI must run this test: install the `all` extra and "
        "place the shared data at ../shared/data (or set KERNELKIT_SHARED_DATA)"
    )


@pytest.fixture
def one_torch_thread():
    """Torch on one thread for the test (tiny matrices: OpenMP spin-waits dominate on 2 cores)."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


PEAK_PRELUDE = '''
import gc
import json


def _status_bytes(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(key)


def peak_growth(fn):
    """Run ``fn()``; return (peak RSS during the call minus RSS before it, in bytes, result)."""
    gc.collect()
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets VmHWM to the current RSS
    base = _status_bytes("VmRSS")
    out = fn()
    return _status_bytes("VmHWM") - base, out
'''


@pytest.fixture(scope="session")
def measure_peaks():
    """Run a script in a fresh interpreter that can call ``peak_growth(fn)``; return its JSON.

    Peak memory is *measured*: the kernel's resident-set high-water mark (``VmHWM``), reset
    with ``/proc/self/clear_refs`` before the measured call.  The child runs with one thread
    and ``MALLOC_MMAP_THRESHOLD_=65536``, so that every buffer of 64 KiB or more is its own
    mapping, given back when freed: the resident set then follows the live tensors instead of
    glibc's cached heap.  The script prints one JSON line last.
    """
    if not os.path.exists("/proc/self/clear_refs"):
        pytest.skip("peak-memory measurement needs Linux /proc/self/clear_refs")

    def run(body: str, timeout: float = 300) -> dict:
        env = {
            **os.environ,
            "OMP_NUM_THREADS": "1",
            "MALLOC_MMAP_THRESHOLD_": "65536",
            "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
        }
        code = PEAK_PRELUDE + textwrap.dedent(body)
        res = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=timeout
        )
        assert res.returncode == 0, res.stderr[-3000:]
        return json.loads(res.stdout.strip().splitlines()[-1])

    return run


@pytest.fixture(scope="session")
def dask_client():
    """One ``LocalCluster(n_workers=2, threads_per_worker=1, processes=True)`` for the session
    (the Dask backend's tests; skipped without ``distributed``)."""
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client
