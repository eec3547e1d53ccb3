"""The Dask backend against the single-process engine, on a two-process LocalCluster."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
db = pytest.importorskip("dask.bag")
distributed = pytest.importorskip("distributed")

from kernelkit import (  # noqa: E402
    BiasFreeSVC,
    KernelKMeans,
    KernelPCA,
    NystromFeatures,
)
from kernelkit.gram import gram  # noqa: E402
from kernelkit.gram._distributed import (  # noqa: E402
    cluster_keep_budget,
    gram_blocks,
    sum_over_row_blocks,
    write_gram,
)
from kernelkit.gram._streaming import keep_budget  # noqa: E402
from kernelkit.kernels import Gaussian, Spectrum  # noqa: E402
from kernelkit.utils._errors import InputError  # noqa: E402


@pytest.fixture
def client(dask_client):
    return dask_client


@pytest.fixture
def points():
    return np.random.default_rng(0).normal(size=(150, 4))


@pytest.mark.parametrize(("dtype", "rtol"), [(np.float64, 1e-10), (np.float32, 1e-5)])
def test_gram_blocks_equal_single_process(client, points, dtype, rtol):
    X = points.astype(dtype)
    kernel = Gaussian(1.5)
    K = gram_blocks(kernel, da.from_array(X, chunks=(40, 4))).compute()
    assert K.dtype == dtype
    np.testing.assert_allclose(K, gram(kernel, X), rtol=rtol, atol=rtol)
    K_xy = gram_blocks(kernel, da.from_array(X, chunks=(40, 2)), X[:7]).compute()
    np.testing.assert_allclose(K_xy, gram(kernel, X, X[:7]), rtol=rtol, atol=rtol)


def test_row_block_sums_equal_the_full_product(client, points):
    kernel, centres, v = Gaussian(1.0), points[:9], np.arange(18.0).reshape(9, 2)

    def contribution(block, C, V):
        K_bm = gram(kernel, block, C)
        return K_bm.T @ (K_bm @ V), K_bm.sum(axis=0)

    parts = sum_over_row_blocks(contribution, da.from_array(points, chunks=(32, 4)), centres, v)
    K_nm = gram(kernel, points, centres)
    np.testing.assert_allclose(parts[0], K_nm.T @ (K_nm @ v), rtol=1e-12)
    np.testing.assert_allclose(parts[1], K_nm.sum(axis=0), rtol=1e-12)


@pytest.mark.parametrize(("dtype", "rtol"), [(np.float64, 1e-10), (np.float32, 1e-5)])
def test_nystrom_features_on_dask_equal_in_memory(client, points, dtype, rtol):
    X = points.astype(dtype)
    X_dask = da.from_array(X, chunks=(40, 4))
    local = NystromFeatures(Gaussian(2.0), n_centers=25, random_state=3).fit(X)
    remote = NystromFeatures(Gaussian(2.0), n_centers=25, random_state=3).fit(X_dask)
    np.testing.assert_array_equal(remote.component_indices_, local.component_indices_)
    Z = remote.transform(X_dask)
    assert isinstance(Z, da.Array) and Z.chunks[0] == X_dask.chunks[0]
    np.testing.assert_allclose(Z.compute(), local.transform(X), rtol=rtol, atol=rtol)


def test_nystrom_features_of_strings_in_a_bag(client):
    rng = np.random.default_rng(1)
    seqs = ["".join(rng.choice(list("ACGT"), 15)) for _ in range(60)]
    bag = db.from_sequence(seqs, npartitions=4)
    local = NystromFeatures(Spectrum(3), n_centers=12, random_state=1).fit(seqs)
    remote = NystromFeatures(Spectrum(3), n_centers=12, random_state=1).fit(bag)
    np.testing.assert_allclose(remote.transform(bag).compute(), local.transform(seqs), atol=1e-12)


def test_write_gram_stores_blocks_and_never_overwrites(client, points, tmp_path):
    pytest.importorskip("zarr")
    X = da.from_array(points[:60], chunks=(25, 4))
    stored = write_gram(Gaussian(1.0), X, tmp_path / "K.zarr")
    np.testing.assert_allclose(stored.compute(), gram(Gaussian(1.0), points[:60]), atol=1e-12)
    with pytest.raises(FileExistsError, match=r"path: .*overwrite=True"):
        write_gram(Gaussian(1.0), X, tmp_path / "K.zarr")


def test_cluster_keep_budget_is_a_quarter_of_the_workers_memory(client):
    # the session's LocalCluster gives each of its 2 one-thread workers half of Dask's
    # MEMORY_LIMIT (2 cores)
    from distributed.system import MEMORY_LIMIT

    assert cluster_keep_budget(client) == pytest.approx(0.25 * MEMORY_LIMIT, rel=0.01)


def test_cluster_keep_budget_counts_a_host_without_limits_once(client):
    # workers without a memory limit share their host's keep_budget (a quarter of its
    # available memory): counted once per host, read on the host (client.run), added to a
    # quarter of the other workers' limits
    GB = 2**30

    class Mixed:
        def scheduler_info(self):
            return {
                "workers": {
                    "a1": {"host": "a", "memory_limit": 0},
                    "a2": {"host": "a", "memory_limit": None},
                    "b1": {"host": "b", "memory_limit": 0},
                    "c1": {"host": "c", "memory_limit": 4 * GB},
                }
            }

        def run(self, function, workers):
            assert sorted(workers) == ["a1", "a2", "b1"]
            return {"a1": 2 * GB, "a2": 2 * GB, "b1": 4 * GB}  # 0.25 x 8 GB, 16 GB

    assert cluster_keep_budget(Mixed()) == int(0.25 * (4 + 8 + 16) * GB)
    # on the session's cluster, what a worker reads is this host's budget
    for budget in client.run(keep_budget).values():
        assert budget == pytest.approx(keep_budget(), rel=0.2)


def test_named_errors_on_dask_input(points):
    X = da.from_array(points, chunks=(40, 4))
    with pytest.raises(InputError, match=r"centers: expected .uniform., .kpca."):
        NystromFeatures(Gaussian(1.0), centers="greedy").fit(X)
    with pytest.raises(InputError, match=r"X: expected a dask\.array\.Array"):
        sum_over_row_blocks(lambda b: (b,), points)


@pytest.mark.parametrize(
    "make",
    [
        lambda: KernelPCA(Gaussian(1.0), 2),
        lambda: KernelKMeans(2, Gaussian(1.0)),
        lambda: BiasFreeSVC(Gaussian(1.0)),
    ],
)
def test_estimators_without_a_distributed_path_refuse_dask_input(points, make):
    est = make()
    X = da.from_array(points, chunks=(40, 4))
    y = (points[:, 0] > 0).astype(int)
    with pytest.raises(InputError, match=rf"X: {type(est).__name__} has no distributed"):
        est.fit(X, y) if isinstance(est, BiasFreeSVC) else est.fit(X)


def test_dask_not_imported_unless_used():
    code = (
        "import sys, numpy as np, kernelkit\n"
        "from kernelkit import NystromFeatures\n"
        "NystromFeatures(n_centers=5).fit(np.eye(8)).transform(np.eye(8))\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_negative_memory_budget_is_named(points):
    from kernelkit.gram._distributed_nystrom import DistributedNystromOperator

    X = da.from_array(points, chunks=(50, 4))
    with pytest.raises(InputError, match="memory_budget"):
        DistributedNystromOperator(Gaussian(1.0), X, points[:5], memory_budget=-1)
