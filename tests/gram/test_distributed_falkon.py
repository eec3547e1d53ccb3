"""Falkon's Nyström-PCG ridge and logistic fits on a Dask cluster equal the in-memory fits,
and survive a worker killed in the middle of the fit."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest
import torch

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

from kernelkit import (  # noqa: E402
    KernelLogisticRegression,
    KernelRidge,
    NystromFeatures,
    get_config,
)
from kernelkit.gram import _distributed_nystrom as distributed_nystrom  # noqa: E402
from kernelkit.gram._centres import draw_by_keys, uniform_centres  # noqa: E402
from kernelkit.kernels import Gaussian  # noqa: E402
from kernelkit.models import _falkon_distributed as falkon_distributed  # noqa: E402
from kernelkit.models._falkon import choose_solver, nystrom_ridge, nystrom_system  # noqa: E402
from kernelkit.models._falkon_distributed import distributed_nystrom_system  # noqa: E402
from kernelkit.models._falkon_logistic import (  # noqa: E402
    nystrom_logistic_decision,
    nystrom_logistic_fit,
)
from kernelkit.utils._errors import InputError  # noqa: E402

ONEPASS = dict(solver="nystrom", nystrom_method="onepass")
PCG = dict(solver="nystrom", nystrom_method="pcg")


@pytest.fixture
def client(dask_client):
    return dask_client


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 5))
    return X, np.sin(X.sum(1)) + 0.1 * rng.normal(size=600)


@pytest.mark.parametrize(("dtype", "rtol"), [(np.float64, 1e-10), (np.float32, 1e-5)])
def test_kernel_ridge_on_dask_equals_in_memory(client, data, dtype, rtol):
    X, y = data[0].astype(dtype), data[1]
    params = dict(solver="nystrom", nystrom_method="pcg", lam=1e-2, tol=1e-14, max_iter=15)
    X_dask = da.from_array(X, chunks=(170, 5)).persist()
    with pytest.warns(UserWarning, match="CG"):  # tol=1e-14: all 15 iterations run on both sides
        remote = KernelRidge(Gaussian(2.0), n_centers=40, random_state=2, **params).fit(
            X_dask, da.from_array(y, chunks=170)
        )
    # the Dask draw: 40 rows by position (the row numbers as keys), no pass over X for it
    index = draw_by_keys(np.arange(len(X), dtype=np.uint64), 40, None, 2)
    np.testing.assert_array_equal(remote.center_indices_, index)
    with pytest.warns(UserWarning, match="CG"):
        local = KernelRidge(Gaussian(2.0), centers=X[index], **params).fit(X, y)
    pred = remote.predict(X_dask)
    assert isinstance(pred, da.Array) and pred.chunks[0] == X_dask.chunks[0]
    atol = rtol * np.abs(y).max()
    np.testing.assert_allclose(pred.compute(), local.predict(X), rtol=0, atol=atol)
    if dtype == np.float64:  # float32 coefficients are determined to ~1e-4 only (CG on noise)
        scale = np.abs(local.dual_coef_).max()
        np.testing.assert_allclose(remote.dual_coef_, local.dual_coef_, rtol=0, atol=rtol * scale)


@pytest.mark.parametrize(("dtype", "rtol"), [(np.float64, 1e-10), (np.float32, 1e-5)])
def test_logistic_on_dask_equals_in_memory(client, data, dtype, rtol):
    # Each distributed product equals the in-memory one to ~1e-15; CG iterated to the limit of
    # float64 amplifies such last-bit differences (here to ~1e-10 after 20 iterations, as a
    # change of the in-memory tile size does), so the Newton steps run 5 CG iterations each.
    X, y = data[0].astype(dtype), (data[1] > 0).astype(int)
    kernel, index = Gaussian(2.0), uniform_centres(len(X), 40, 1)
    local = nystrom_logistic_fit(kernel, X, y, index, 1e-1, tol=1e-12, max_iter=5)
    system = distributed_nystrom_system(
        kernel, da.from_array(X, chunks=(170, 5)), 40, random_state=1
    )
    remote = nystrom_logistic_fit(kernel, X, y, index, 1e-1, tol=1e-12, max_iter=5, system=system)
    assert remote.n_newton == local.n_newton
    f_local = nystrom_logistic_decision(kernel, X, local)
    f_remote = nystrom_logistic_decision(kernel, X, remote)
    scale = float(f_local.abs().max())
    torch.testing.assert_close(f_remote, f_local, rtol=0, atol=rtol * scale)


def test_fit_survives_a_killed_worker(client, data):
    X, y = data
    kernel, index = Gaussian(2.0), uniform_centres(len(X), 40, 3)
    X_dask = da.from_array(X, chunks=(100, 5)).persist()
    distributed.wait(X_dask)
    Y = torch.as_tensor(y)
    undisturbed = nystrom_ridge(
        distributed_nystrom_system(kernel, X_dask, 40, random_state=3),
        Y,
        1e-2,
        tol=1e-14,
        max_iter=12,
    )
    pids = client.run(os.getpid)
    killed = []

    def kill_one_worker(k: int, rel: torch.Tensor) -> None:
        if k == 4 and not killed:
            victim = sorted(pids)[0]
            os.kill(pids[victim], signal.SIGKILL)
            killed.append(victim)

    system = distributed_nystrom_system(kernel, X_dask, 40, random_state=3)
    assert system.op.keeps_block  # the lost worker's kept K_b are recomputed from X's graph
    disturbed = nystrom_ridge(
        system,
        Y,
        1e-2,
        tol=1e-14,
        max_iter=12,
        callback=kill_one_worker,
    )
    assert killed
    assert disturbed.cg.iterations == undisturbed.cg.iterations == 12
    # equal up to the last-bit differences any two runs of BLAS on fresh buffers show
    scale = float(undisturbed.coef.abs().max())
    torch.testing.assert_close(disturbed.coef, undisturbed.coef, rtol=0, atol=1e-10 * scale)
    in_memory = nystrom_ridge(nystrom_system(kernel, X, index), Y, 1e-2, tol=1e-14, max_iter=12)
    torch.testing.assert_close(disturbed.coef, in_memory.coef, rtol=0, atol=1e-10 * scale)


def test_one_pass_on_dask_is_one_map_reduce_equal_to_in_memory(client, data):
    X, y = data
    X_dask = da.from_array(X, chunks=(170, 5)).persist()
    remote = KernelRidge(Gaussian(2.0), n_centers=40, lam=1e-3, random_state=2).fit(
        X_dask, da.from_array(y, chunks=170)
    )
    assert remote.nystrom_method_ == "onepass"  # "auto" on a Dask array: never the exact solver
    centres = X[remote.center_indices_]
    local = KernelRidge(
        Gaussian(2.0), solver="nystrom", nystrom_method="onepass", centers=centres, lam=1e-3
    ).fit(X, y)
    scale = np.abs(local.dual_coef_).max()
    np.testing.assert_allclose(remote.dual_coef_, local.dual_coef_, rtol=0, atol=1e-10 * scale)


def test_named_errors_for_dask_ridge(data):
    X_dask = da.from_array(data[0], chunks=(200, 5))
    with pytest.raises(InputError, match="solver='auto' or 'nystrom'"):
        KernelRidge(Gaussian(1.0), solver="exact").fit(X_dask, data[1])
    with pytest.raises(InputError, match="n_centers"):
        KernelRidge(Gaussian(1.0), solver="nystrom", nystrom_method="pcg", n_centers=601).fit(
            X_dask, data[1]
        )


def test_kernel_ridge_on_a_bag_of_strings_equals_in_memory(client):
    db = pytest.importorskip("dask.bag")
    from kernelkit.kernels import Spectrum

    rng = np.random.default_rng(4)
    seqs = ["".join(rng.choice(list("ACGT"), 20)) for _ in range(120)]
    y = np.array([s.count("GC") - s.count("AT") for s in seqs], dtype=float)
    params = dict(
        solver="nystrom",
        nystrom_method="pcg",
        n_centers=30,
        lam=1e-2,
        tol=1e-14,
        max_iter=10,
        random_state=5,
    )
    with pytest.warns(UserWarning, match="CG"):
        local = KernelRidge(Spectrum(3), **params).fit(seqs, y)
    bag = db.from_sequence(seqs, npartitions=4)
    with pytest.warns(UserWarning, match="CG"):
        remote = KernelRidge(Spectrum(3), **params).fit(bag, y)
    np.testing.assert_array_equal(remote.center_indices_, local.center_indices_)
    # the 4 partitions and the in-memory tiles sum K_nm^T v in different orders; ten CG
    # iterations amplify those last bits (measured up to 1.2e-10 of max |alpha| on CI)
    scale = np.abs(local.dual_coef_).max()
    np.testing.assert_allclose(remote.dual_coef_, local.dual_coef_, rtol=0, atol=1e-9 * scale)
    pred = remote.predict(bag)
    expected = local.predict(seqs)
    np.testing.assert_allclose(pred.compute(), expected, rtol=0, atol=1e-9 * np.abs(y).max())


@pytest.mark.parametrize("solver", ["onepass", "pcg"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_logistic_estimator_on_dask_fits_on_the_workers(
    client, data, monkeypatch, solver, n_classes
):
    X, t = data
    y = np.digitize(t, np.quantile(t, np.linspace(0, 1, n_classes + 1)[1:-1]))
    # Newton to 1e-12: the inexact CG steps stop at iteration counts that last-bit differences
    # can shift, so both fits are run to convergence (measured agreement ~1e-10)
    params = dict(
        solver="nystrom", nystrom_method=solver, n_centers=40, lam=1e-3, random_state=2, tol=1e-12
    )
    # the Dask draw: 40 rows by position; the in-memory fit on the same centres is the oracle
    index = draw_by_keys(np.arange(len(X), dtype=np.uint64), 40, None, 2)
    local = KernelLogisticRegression(Gaussian(2.0), **params, centers=X[index]).fit(X, y)
    X_dask = da.from_array(X, chunks=(170, 5)).persist()
    passes = []

    def no_gather(method):  # X itself is never computed on the client
        def checked(self, *args, **kwargs):
            assert self.name != X_dask.name, "X was gathered to the client"
            return method(self, *args, **kwargs)

        return checked

    def counted(*args, **kwargs):
        passes.append(args[0].__name__)
        return run(*args, **kwargs)

    run = distributed_nystrom.run_row_blocks
    monkeypatch.setattr(da.Array, "compute", no_gather(da.Array.compute))
    monkeypatch.setattr(da.Array, "__array__", no_gather(da.Array.__array__))
    monkeypatch.setattr(distributed_nystrom, "run_row_blocks", counted)
    remote = KernelLogisticRegression(Gaussian(2.0), **params).fit(X_dask, da.from_array(y, 170))
    monkeypatch.undo()
    assert remote.nystrom_method_ == local.nystrom_method_ == solver
    np.testing.assert_array_equal(remote.center_indices_, index)
    np.testing.assert_array_equal(remote.classes_, local.classes_)
    if solver == "onepass":  # PCG: in process, the row-sampled preconditioner can take
        # other inexact steps (a cluster's operator cannot read single rows)
        assert remote.n_iter_ == local.n_iter_
    if solver == "onepass":  # one map-reduce per Newton pass: the start and each step but the last
        assert passes == ["_normal_task"] * local.n_iter_
    else:  # one per gradient and per CG iteration
        assert len(passes) == remote.n_iter_ + remote.n_cg_
    f_local = local.decision_function(X)
    scale = np.abs(f_local).max()
    np.testing.assert_allclose(remote.decision_function(X), f_local, rtol=0, atol=1e-8 * scale)
    np.testing.assert_array_equal(remote.predict(X), local.predict(X))
    # and predicted on the workers: Dask arrays with the row chunks of X
    for method in ("decision_function", "predict", "predict_proba", "predict_log_proba"):
        out = getattr(remote, method)(X_dask)
        assert isinstance(out, da.Array) and out.chunks[0] == X_dask.chunks[0]
        expected = getattr(local, method)(X)
        if method == "predict":
            np.testing.assert_array_equal(out.compute(), expected)
        else:
            np.testing.assert_allclose(out.compute(), expected, rtol=0, atol=1e-8 * scale)


def test_named_errors_for_dask_logistic(data):
    X_dask = da.from_array(data[0], chunks=(200, 5))
    y = (data[1] > 0).astype(int)
    with pytest.raises(InputError, match="solver='auto' or 'nystrom'"):
        KernelLogisticRegression(Gaussian(1.0), solver="exact").fit(X_dask, y)
    with pytest.raises(InputError, match="centers='uniform'"):
        KernelLogisticRegression(Gaussian(1.0), centers="greedy").fit(X_dask, y)
    with pytest.raises(InputError, match="n_centers"):
        KernelLogisticRegression(Gaussian(1.0), n_centers=601).fit(X_dask, y)
    with pytest.raises(InputError, match="y: expected 600 targets"):
        KernelLogisticRegression(Gaussian(1.0), n_centers=20).fit(X_dask, y[:-1])


def test_auto_on_dask_logistic_records_the_cheaper_nystrom_solver(data):
    import dask

    X_dask = da.from_array(data[0], chunks=(200, 5))
    y = (data[1] > 0).astype(int)
    with dask.config.set(scheduler="threads"):  # the threaded scheduler: no cluster needed
        # a fixed lam: the default lam="auto" holds out rows drawn by random_state
        auto = KernelLogisticRegression(Gaussian(1.0), 1e-3, n_centers=20, random_state=0)
        auto.fit(X_dask, y)
    steps = get_config()["logistic_newton_steps"]
    expected = choose_solver(600, 20, d=5, newton_steps=steps, exact=False)
    assert auto.nystrom_method_ == expected and expected != "exact"
    centres = data[0][auto.center_indices_]
    local = KernelLogisticRegression(
        Gaussian(1.0), 1e-3, solver="nystrom", nystrom_method=expected, centers=centres
    )
    f_local = local.fit(data[0], y).decision_function(data[0])
    scale = np.abs(f_local).max()
    np.testing.assert_allclose(auto.decision_function(data[0]), f_local, rtol=0, atol=1e-8 * scale)


@contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    """Fail instead of hanging: SIGALRM interrupts the client's wait after ``seconds``."""

    def expire(signum, frame):
        raise TimeoutError(f"Dask computation still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture
def counting_X(data, tmp_path):
    """``open_counted(name) -> (X_dask, reads)``: ``X`` stored in six zarr chunks of 100 rows,
    opened through a :class:`~kernelkit.testing._stores.CountingStore` that logs to
    ``tmp_path/name``; ``reads()`` gives the reads of each chunk and the chunk bytes returned
    so far, to any process (workers and client)."""
    pytest.importorskip("zarr", minversion="3")
    import zarr
    from zarr.storage import LocalStore

    from kernelkit.testing._stores import CountingStore, read_log

    X = data[0]
    z = zarr.create_array(
        LocalStore(tmp_path / "X.zarr"), shape=X.shape, chunks=(100, 5), dtype="f8",
        compressors=None,
    )  # fmt: skip
    z[:] = X
    chunks = [f"c/{k}/0" for k in range(6)]

    def open_counted(name):
        log = tmp_path / name
        log.mkdir()
        store = CountingStore(LocalStore(tmp_path / "X.zarr", read_only=True), log)

        def reads():
            counts = read_log(log)
            assert counts.chunk_bytes == sum(counts.chunk_reads.values()) * 100 * 5 * 8
            return [counts.chunk_reads.get(k, 0) for k in chunks], counts.chunk_bytes

        return da.from_zarr(zarr.open_array(store, mode="r")), reads

    return open_counted


def test_one_pass_reads_each_chunk_once_and_pcg_once_per_iteration(
    client, data, counting_X, monkeypatch
):
    # Bytes of X's chunks returned by the zarr store to any process (workers and client),
    # counted by a store wrapper.  The uniform draw reads only the chunks that hold a centre
    # and keeps them on the workers until the fit ends: the one-pass fit reads every chunk
    # exactly once in all; PCG keeps K_nm on the workers (it fits cluster_keep_budget), so
    # it reads every chunk once too; streaming (a budget of 0), it reads the chunks holding
    # a centre once and every other chunk once for K_nm^T y and once per CG iteration.
    # Centres given as points read nothing beforehand.
    X, y = data

    def fit(name, estimator=KernelRidge, target=y, **params):
        X_dask, reads = counting_X(name)
        settings = dict(max_iter=100, tol=1e-7) if estimator is KernelRidge else {}
        model = estimator(Gaussian(2.0), lam=1e-2, **settings, **params)
        with _deadline(300):
            model.fit(X_dask, target)
        return model, *reads()

    one, one_reads, one_bytes = fit("onepass", **ONEPASS, n_centers=40, random_state=2)
    assert one_reads == [1] * 6 and one_bytes == X.nbytes  # X read once: its stored bytes
    np.testing.assert_array_equal(
        one.center_indices_, draw_by_keys(np.arange(600, dtype=np.uint64), 40, None, 2)
    )
    # equal to the in-memory fit on the same centres (float64)
    centres = X[one.center_indices_]
    local = KernelRidge(
        Gaussian(2.0), lam=1e-2, solver="nystrom", nystrom_method="onepass", centers=centres
    ).fit(X, y)
    scale = np.abs(local.dual_coef_).max()
    np.testing.assert_allclose(one.dual_coef_, local.dual_coef_, rtol=0, atol=1e-8 * scale)
    _, given_reads, _ = fit("given", **ONEPASS, centers=centres)
    assert given_reads == [1] * 6

    kept, kept_reads, _ = fit("kept", **PCG, centers=centres)
    assert kept.n_iter_ >= 2 and kept_reads == [1] * 6
    monkeypatch.setattr(falkon_distributed, "cluster_keep_budget", lambda client=None: 0)
    pcg, pcg_reads, _ = fit("pcg", **PCG, centers=centres)
    assert pcg.n_iter_ >= 2 and pcg_reads == [pcg.n_iter_ + 1] * 6
    scale = np.abs(pcg.dual_coef_).max()  # the same tiles: equal up to the sums' order
    np.testing.assert_allclose(kept.dual_coef_, pcg.dual_coef_, rtol=0, atol=1e-10 * scale)
    # PCG on 3 drawn centres: the chunks holding them read once, the others once per pass
    few, few_reads, _ = fit("few", **PCG, n_centers=3, random_state=0)
    held = set(few.center_indices_ // 100)
    assert 0 < len(held) < 6
    assert few_reads == [1 if k in held else few.n_iter_ + 1 for k in range(6)]
    monkeypatch.undo()
    # logistic regression draws the same centres and keeps the same chunks: with a centre in
    # every chunk, its Newton steps (one pass each) read X once in all
    labels = (y > 0).astype(int)
    klr, klr_reads, _ = fit(
        "klr", KernelLogisticRegression, labels, **ONEPASS, n_centers=40, random_state=2
    )
    np.testing.assert_array_equal(klr.center_indices_, one.center_indices_)
    assert klr.n_iter_ >= 2 and klr_reads == [1] * 6
    # and the two solvers agree to the order of the CG tolerance (1e-7) on the fitted values
    f_one, f_pcg = one.predict(X), pcg.predict(X)
    assert np.linalg.norm(f_one - f_pcg) <= 1e-6 * np.linalg.norm(f_pcg)  # measured 5e-8


def test_nystrom_features_on_dask_read_each_chunk_once(client, data, counting_X):
    # NystromFeatures draws its centres as KernelRidge does: fit reads the chunks that hold
    # a centre, once, and no other; fit_transform keeps them on the workers for the features,
    # so it reads every chunk once in all (a centre chunk read again would count 2)
    X = data[0]
    X_dask, reads = counting_X("fit")
    with _deadline(300):
        few = NystromFeatures(Gaussian(2.0), n_centers=3, random_state=0).fit(X_dask)
    held = set(few.component_indices_ // 100)
    assert 0 < len(held) < 6
    assert reads()[0] == [int(k in held) for k in range(6)]
    X_dask, reads = counting_X("fit_transform")
    with _deadline(300):
        Z = NystromFeatures(Gaussian(2.0), n_centers=3, random_state=0).fit_transform(X_dask)
        assert isinstance(Z, da.Array) and Z.chunks[0] == X_dask.chunks[0]
        Z = Z.compute()
    assert reads() == ([1] * 6, X.nbytes)
    np.testing.assert_allclose(Z, few.transform(X), rtol=0, atol=1e-12)
    # centres given as points: fit reads nothing, fit_transform each chunk once
    X_dask, reads = counting_X("given")
    given = NystromFeatures(Gaussian(2.0), centers=X[:7] + 0.5)
    with _deadline(300):
        given.fit(X_dask)
        assert reads() == ([0] * 6, 0)
        Z = given.fit_transform(X_dask).compute()
    assert reads() == ([1] * 6, X.nbytes)
    local = NystromFeatures(Gaussian(2.0), centers=X[:7] + 0.5).fit(X)
    np.testing.assert_allclose(Z, local.transform(X), rtol=0, atol=1e-12)


def test_nystrom_features_on_dask_draw_the_centres_of_kernel_ridge(data):
    # one Dask centre draw (by row position): NystromFeatures, KernelRidge and
    # KernelLogisticRegression draw the same rows for one random_state, the rows the
    # in-memory NystromFeatures draws; oracle for the rule: draw_by_keys on the row numbers
    import dask

    X, y = data
    X_dask = da.from_array(X, chunks=(170, 5))
    params = dict(n_centers=40, random_state=2)
    with dask.config.set(scheduler="threads"):  # the threaded scheduler: no cluster needed
        feats = NystromFeatures(Gaussian(2.0), **params).fit(X_dask)
        ridge = KernelRidge(
            Gaussian(2.0), lam=1e-2, solver="nystrom", nystrom_method="onepass", **params
        )
        ridge.fit(X_dask, y)
        klr = KernelLogisticRegression(
            Gaussian(2.0), lam=1e-2, solver="nystrom", nystrom_method="onepass", **params
        )
        klr.fit(X_dask, (y > 0).astype(int))
    index = draw_by_keys(np.arange(len(X), dtype=np.uint64), 40, None, 2)
    np.testing.assert_array_equal(feats.component_indices_, index)
    np.testing.assert_array_equal(ridge.center_indices_, index)
    np.testing.assert_array_equal(klr.center_indices_, index)
    local = NystromFeatures(Gaussian(2.0), **params).fit(X)
    np.testing.assert_array_equal(local.component_indices_, index)


@pytest.mark.parametrize("estimator", [KernelRidge, KernelLogisticRegression])
def test_given_centres_on_dask(client, data, estimator):
    X, y = data
    if estimator is KernelLogisticRegression:
        y = (y > 0).astype(int)
    X_dask = da.from_array(X, chunks=(200, 5))
    centres = np.random.default_rng(1).normal(size=(30, 5))  # not training points
    remote = estimator(Gaussian(2.0), **ONEPASS, centers=centres, lam=1e-3)
    remote.fit(X_dask, y)
    local = estimator(Gaussian(2.0), **ONEPASS, centers=centres, lam=1e-3).fit(X, y)
    assert remote.center_indices_ is None and local.center_indices_ is None
    scale = np.abs(local.dual_coef_).max()
    np.testing.assert_allclose(remote.dual_coef_, local.dual_coef_, rtol=0, atol=1e-8 * scale)
    with pytest.raises(InputError, match="centers: expected points with the 5 features"):
        estimator(Gaussian(2.0), centers=centres[:, :3]).fit(X_dask, y)
    with pytest.raises(InputError, match="centers: expected at least one centre"):
        estimator(Gaussian(2.0), centers=centres[:0]).fit(X_dask, y)


def test_default_lam_auto_on_dask_is_the_in_memory_gcv_path(client, data):
    # lam="auto" (the default) on Dask: GCV on the one-pass statistics formed on the workers;
    # the in-memory fit on the same centres is the oracle (lam_, cv_results_, coefficients)
    X, y = data
    X_dask = da.from_array(X, chunks=(170, 5))
    remote = KernelRidge(Gaussian(2.0), n_centers=40, random_state=2).fit(X_dask, y)
    assert remote.nystrom_method_ == "onepass"
    local = KernelRidge(
        Gaussian(2.0), centers=X[remote.center_indices_], solver="nystrom", nystrom_method="onepass"
    )
    local.fit(X, y)
    assert remote.lam_ == pytest.approx(local.lam_, rel=1e-8)
    np.testing.assert_allclose(
        remote.cv_results_["mean_test_score"], local.cv_results_["mean_test_score"], rtol=1e-9
    )
    scale = np.abs(local.dual_coef_).max()
    np.testing.assert_allclose(remote.dual_coef_, local.dual_coef_, rtol=0, atol=1e-8 * scale)
    with pytest.raises(InputError, match="cv: a Dask fit selects lam by cv=None or 'gcv'"):
        KernelRidge(Gaussian(2.0), n_centers=40, cv="loo").fit(X_dask, y)


def test_auto_on_dask_prices_pcg_as_streamed(client):
    # bench_distributed.py --passes --n 200000 --m 500 --lam 1e-4 --tol 1e-3 (2 workers):
    # the unmapped one-pass fit took 2.2 s, PCG on the K_nm kept on the workers 3.1 s (each
    # of its 11 passes a scheduler round trip); "auto" first picks PCG, then the unmapped
    # one-pass once the factor allows it: priced on the kept block it would stay with PCG
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200_000, 10)).astype(np.float32)
    y = np.sin(X @ np.linspace(-1, 1, 10) / 4) + 0.1 * rng.standard_normal(200_000)
    assert choose_solver(200_000, 500, d=10, tol=1e-3, exact=False, lam=1e-4) == "pcg"
    X_dask = da.from_array(X, chunks=(25_000, 10)).persist()
    model = KernelRidge(Gaussian(5.0), lam=1e-4, tol=1e-3, n_centers=500, random_state=0)
    assert model.fit(X_dask, da.from_array(y, chunks=25_000)).nystrom_method_ == "onepass"


def test_kept_blocks_are_released_when_the_fit_ends(client, data):
    # PCG keeps each block's K_b on its worker for the fit; the scheduler forgets them once
    # the fit's system is gone (the release is asynchronous: polled for up to 10 s)
    X, y = data
    X_dask = da.from_array(X, chunks=(100, 5)).persist()

    def kept_tasks():
        return client.run_on_scheduler(
            lambda dask_scheduler: sum("_kept_operator" in str(k) for k in dask_scheduler.tasks)
        )

    system = distributed_nystrom_system(Gaussian(2.0), X_dask, 40, random_state=0)
    nystrom_ridge(system, torch.as_tensor(y), 1e-2, max_iter=3)
    assert kept_tasks() == 6  # one kept operator per block during the fit
    del system
    KernelRidge(
        Gaussian(2.0),
        lam=1e-2,
        solver="nystrom",
        nystrom_method="pcg",
        n_centers=40,
        random_state=0,
    ).fit(X_dask, da.from_array(y, chunks=100))
    with _deadline(10):
        while kept_tasks():
            time.sleep(0.05)
