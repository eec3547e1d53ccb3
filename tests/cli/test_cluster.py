"""``kernelkit fit --solver nystrom`` locally and on a Dask cluster (``--workers N``)."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from kernelkit import KernelRidge
from kernelkit.gram._centres import draw_by_keys
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
    # the cluster draws its centres by row position (the chunks read once), the process among
    # distinct points: each equals the in-process fit on its own centres
    np.testing.assert_array_equal(
        remote.center_indices_, draw_by_keys(np.arange(len(X), dtype=np.uint64), 40, None, 0)
    )
    settings = dict(lam=1e-3, solver="nystrom")
    on_remote_centres = KernelRidge(Gaussian(2.0), centers=X[remote.center_indices_], **settings)
    # both stop at the CG tolerance (1e-6 relative residual of the preconditioned system):
    # predictions equal to about that accuracy (measured 1.5e-6)
    np.testing.assert_allclose(
        remote.predict(X), on_remote_centres.fit(X, y).predict(X), rtol=0, atol=1e-5
    )
    reference = KernelRidge(Gaussian(2.0), n_centers=40, random_state=0, **settings).fit(X, y)
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
