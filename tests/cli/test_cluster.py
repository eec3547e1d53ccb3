"""``kernelkit fit --solver nystrom`` locally and on a Dask cluster (``--workers N``)."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from kernelkit import KernelRidge
from kernelkit.io import load
from kernelkit.kernels import Gaussian


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = np.sin(X.sum(1))
    path = tmp_path / "points.csv"
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["a", "b", "c", "y"])
        writer.writerows(np.column_stack([X, y]).tolist())
    return path, X, y


def _fit(cli, path, out, *extra):
    return cli(
        "fit",
        path,
        "--model",
        "ridge",
        "--kernel",
        "gaussian:sigma=2",
        "--lam",
        "0.001",
        "--target",
        "y",
        "--solver",
        "nystrom",
        "--centers",
        "40",
        "--out",
        out,
        *extra,
    )


def test_fit_nystrom_on_local_workers_equals_in_process(cli, table, tmp_path):
    pytest.importorskip("distributed")
    path, X, y = table
    res = _fit(cli, path, tmp_path / "local.zip")
    assert res.code == 0, res.err
    res = _fit(cli, path, tmp_path / "cluster.zip", "--workers", "2")
    assert res.code == 0, res.err
    assert "local Dask cluster of 2 worker processes" in res.err
    local, remote = load(tmp_path / "local.zip"), load(tmp_path / "cluster.zip")
    np.testing.assert_array_equal(remote.center_indices_, local.center_indices_)
    # both stop at the CG tolerance (1e-6 relative residual): equal to that accuracy
    np.testing.assert_allclose(remote.predict(X), local.predict(X), rtol=0, atol=1e-6)
    reference = KernelRidge(
        Gaussian(2.0), lam=1e-3, solver="nystrom", n_centers=40, random_state=0
    ).fit(X, y)
    np.testing.assert_allclose(local.predict(X), reference.predict(X), rtol=0, atol=1e-10)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--workers", "0"], "--workers: expected at least 1, got 0"),
        (["--workers", "2", "--scheduler", "tcp://127.0.0.1:1"], "give one of them, not both"),
        (["--centers", "0"], "--centers: expected at least 1"),
    ],
)
def test_cluster_usage_errors(cli, table, tmp_path, extra, message):
    res = _fit(cli, table[0], tmp_path / "m.zip", *extra)
    assert res.code == 2 and message in res.err
    assert not (tmp_path / "m.zip").exists()


def test_cluster_needs_the_nystrom_solver(cli, table, tmp_path):
    res = cli(
        "fit",
        table[0],
        "--model",
        "ridge",
        "--target",
        "y",
        "--workers",
        "2",
        "--out",
        tmp_path / "m.zip",
    )
    assert res.code == 2
    assert "--workers: a cluster fit needs --model ridge --solver nystrom" in res.err


def test_unreachable_scheduler_is_one_line(cli, table, tmp_path):
    pytest.importorskip("distributed")
    res = _fit(cli, table[0], tmp_path / "m.zip", "--scheduler", "tcp://127.0.0.1:9")
    assert res.code == 2
    assert res.err.strip().splitlines()[-1].startswith("kernelkit fit: error: --scheduler:")
    assert "Traceback" not in res.err
