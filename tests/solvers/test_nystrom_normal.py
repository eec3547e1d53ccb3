"""One-pass Nyström normal equations (solvers/_nystrom_normal.py, gram/_streaming.py's
``normal_equations``, models/_falkon.py's ``nystrom_ridge_onepass``) against exact KRR,
dense products, scikit-learn and Falkon's PCG."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg
import torch
from sklearn.kernel_ridge import KernelRidge as SkKernelRidge

from kernelkit import KernelRidge
from kernelkit.gram._streaming import NystromOperator
from kernelkit.kernels import Gaussian, Laplacian
from kernelkit.models import _falkon as falkon
from kernelkit.models._falkon import (
    nystrom_ridge,
    nystrom_ridge_onepass,
    nystrom_statistics,
    nystrom_system,
)
from kernelkit.models._falkon_logistic import (
    nystrom_logistic_decision,
    nystrom_logistic_fit,
    nystrom_logistic_onepass,
)
from kernelkit.solvers._nystrom_normal import (
    NystromStatistics,
    nystrom_normal_solve,
    symmetric_from_upper,
    syrk_,
    to_features,
    unmapped_error_bound,
)
from kernelkit.solvers._nystrom_pcg import nystrom_preconditioner
from kernelkit.utils._errors import InputError


def _data(n=400, d=4, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, d, dtype=torch.float64, generator=g)
    y = torch.sin(X.sum(1)) + 0.1 * torch.randn(n, dtype=torch.float64, generator=g)
    return X.to(dtype), y


def test_syrk_updates_the_upper_triangle_as_the_dense_product():
    A = torch.randn(300, 40, dtype=torch.float64)
    C = torch.zeros(40, 40, dtype=torch.float64)
    syrk_(C, A)
    syrk_(C, A[:7].contiguous())
    syrk_(C, A[7:20].mT.contiguous().mT)  # Fortran order: a triangular solve's output
    ref = A.T @ A + A[:7].T @ A[:7] + A[7:20].T @ A[7:20]
    torch.testing.assert_close(symmetric_from_upper(C), ref, rtol=1e-12, atol=1e-11)
    C32 = torch.zeros(40, 40, dtype=torch.float64)  # float32 rows: ssyrk, summed in float64
    syrk_(C32, A.float())
    syrk_(C32, A.float())
    A32 = A.float().double()
    torch.testing.assert_close(symmetric_from_upper(C32), 2 * A32.T @ A32, rtol=1e-5, atol=1e-4)
    C16 = torch.zeros(40, 40, dtype=torch.float64)  # other dtypes: the addmm path
    syrk_(C16, A.bfloat16())
    A16 = A.bfloat16().double()
    torch.testing.assert_close(symmetric_from_upper(C16), A16.T @ A16)
    with pytest.raises(InputError, match="A: expected shape"):
        syrk_(C, A[:, :3])


@pytest.mark.parametrize("block_size", [None, 37])
def test_one_pass_statistics_equal_the_dense_products(block_size):
    X, _ = _data(300, 3)
    C = X[:25]
    k = Gaussian(1.3)
    op = NystromOperator(k, X, C, block_size=block_size)
    K = k.block(X, C)
    w = torch.rand(300, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    W2 = torch.stack([w, 1 - w], 1)
    U = torch.randn(300, 2, dtype=torch.float64)
    V = torch.randn(25, 3, dtype=torch.float64)
    H, R, KV = op.normal_equations(U, W2, V=V)
    assert H.shape == (2, 25, 25)
    torch.testing.assert_close(H[0], K.T @ (w[:, None] * K))
    torch.testing.assert_close(H[1], K.T @ ((1 - w)[:, None] * K))
    torch.testing.assert_close(R, K.T @ U)
    torch.testing.assert_close(KV, K @ V)
    H1, _, none = op.normal_equations(U)
    assert none is None
    torch.testing.assert_close(H1[0], K.T @ K)

    def rows(kv, U_b):  # per-tile weights from K_b V (the Newton form), U's rows of the tile
        return torch.sigmoid(kv[:, 0]), U_b

    Hr, Rr, KVr = op.normal_equations(
        None, V=V[:, :1], rows=rows, row_data=(U,), groups=1, columns=2
    )
    torch.testing.assert_close(Rr, K.T @ U)
    s = torch.sigmoid(K @ V[:, 0])
    torch.testing.assert_close(Hr[0], K.T @ (s[:, None] * K))
    torch.testing.assert_close(KVr, K @ V[:, :1])


def test_fast_float32_tiles_equal_the_float64_products_of_the_same_blocks():
    X, _ = _data(500, 3, dtype=torch.float32)
    C = X[:40]
    k = Gaussian(1.3)
    K = k.block(X, C).double()  # the float32 blocks, products in float64
    L = torch.linalg.cholesky(k.block(C, C).double() + 1e-4 * torch.eye(40, dtype=torch.float64))
    Phi = torch.linalg.solve_triangular(L.mT, K, upper=True, left=False)
    U = torch.ones(500, 1, dtype=torch.float64)
    op = NystromOperator(k, X, C, block_size=64)
    H, R, _ = op.normal_equations(U, basis=L, fast=True)
    H64, R64, _ = op.normal_equations(U, basis=L)  # default: float64 products
    assert H.dtype == R.dtype == torch.float64
    for A, B in [(H[0], Phi.T @ Phi), (R, Phi.T @ U)]:
        torch.testing.assert_close(A, B, rtol=1e-5, atol=1e-5 * float(B.abs().max()))
    for A, B in [(H64[0], Phi.T @ Phi), (R64, Phi.T @ U)]:  # blocks equal to float32 rounding
        torch.testing.assert_close(A, B, rtol=1e-6, atol=1e-6 * float(B.abs().max()))


@pytest.mark.parametrize("kernel", [Gaussian(2.0), Laplacian(3.0)])
def test_m_equals_n_is_exact_krr_to_1e8(kernel):
    X, y = _data(300, 3)
    Xt, _ = _data(200, 3, seed=5)
    n, lam = len(X), 1e-3
    system = nystrom_system(kernel, X, np.arange(n), lam=lam)
    res = nystrom_ridge_onepass(system, y, lam)
    K = kernel.block(X, X).numpy()
    gamma = kernel.block(Xt, X).numpy()
    exact = scipy.linalg.solve(K + n * lam * np.eye(n), y.numpy(), assume_a="pos")
    pred = gamma @ res.coef[:, 0].numpy()
    np.testing.assert_allclose(pred, gamma @ exact, rtol=1e-8, atol=1e-8 * np.abs(pred).max())
    if isinstance(kernel, Gaussian):  # and scikit-learn's KernelRidge(alpha = n lam)
        sk = SkKernelRidge(alpha=n * lam, kernel="rbf", gamma=1 / (2 * 2.0**2))
        sk_pred = sk.fit(X.numpy(), y.numpy()).predict(Xt.numpy())
        np.testing.assert_allclose(pred, sk_pred, rtol=1e-8, atol=1e-8 * np.abs(pred).max())


def _preconditioned_residual(system, coef, Y, lam, w=None):
    """Falkon's CG stopping measure ``|B^T (rhs - n H alpha)| / |B^T rhs|`` (exact products)."""
    pre = nystrom_preconditioner(system.factor, [lam])
    L = system.factor.L
    Yc = Y[:, None] if Y.ndim == 1 else Y
    rhs = system.op.rmatmat(Yc if w is None else w[:, None] * Yc)
    Ha = system.op.normal_matmat(coef, weights=w)[0] + system.n * lam * (L @ (L.T @ coef))
    return float(pre.apply_t(rhs - Ha).norm() / pre.apply_t(rhs).norm())


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("weighted", [False, True])
def test_one_pass_equals_falkon_pcg_to_the_cg_tolerance(dtype, weighted):
    X, y = _data(2000, 5)
    Y = torch.stack([y, torch.cos(X[:, 0])], 1)
    w = None
    if weighted:
        w = 0.2 + torch.rand(2000, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    idx = np.arange(0, 2000, 4)
    kernel = Gaussian(2.0)
    for lam, tol in [(1e-3, 1e-8), (1e-6, 1e-8)]:
        system = nystrom_system(kernel, X.to(dtype), idx, lam=lam)
        one = nystrom_ridge_onepass(system, Y, lam, sample_weight=w)
        pcg = nystrom_ridge(system, Y, lam, sample_weight=w, tol=tol, max_iter=1000)
        assert pcg.cg.converged
        # the one-pass solution passes Falkon's own stopping test at the CG tolerance (it is
        # formed in the Nyström feature coordinates; measured 3e-12 to 1.4e-9)
        assert _preconditioned_residual(system, one.coef, Y, lam, w) <= tol
        Kn = kernel.block(X, X[idx])
        rel = (Kn @ (one.coef - pcg.coef)).norm() / (Kn @ pcg.coef).norm()
        assert float(rel) <= 10 * tol


def test_statistics_are_reusable_for_a_lam_path():
    X, y = _data(600, 3)
    idx = np.arange(0, 600, 5)
    system = nystrom_system(Gaussian(1.5), X, idx, lam=1e-2)
    stats = nystrom_statistics(system, y)
    assert isinstance(stats, NystromStatistics)
    K = Gaussian(1.5).block(X, X[idx])
    assert stats.basis is not None  # feature coordinates: H = Phi^T Phi, Phi = K L^-T
    Phi = torch.linalg.solve_triangular(stats.basis, K.T, upper=False).T
    torch.testing.assert_close(stats.H[0], Phi.T @ Phi)
    penalty = stats.K_mm + stats.jitter * torch.eye(len(idx), dtype=torch.float64)
    for lam in (1e-2, 1e-1):
        got = nystrom_normal_solve(stats, lam).coef[:, 0]
        A = K.T @ K / 600 + lam * penalty
        ref = torch.linalg.solve(A, K.T @ y / 600)
        torch.testing.assert_close(K @ got, K @ ref, rtol=1e-5, atol=1e-7)
    with pytest.raises(InputError, match="lam: expected at least"):
        nystrom_ridge_onepass(system, y, 1e-3)
    with pytest.raises(InputError, match="rhs: expected shape"):
        nystrom_normal_solve(stats, 1e-3, rhs=torch.ones(3, 1))


def _benchmark_problem(n, dtype):
    """benchmarks/bench_falkon.py's data generator and settings (d = 10, Gaussian(5), its
    ``lam``s), loaded from the script itself."""
    path = Path(__file__).parents[2] / "benchmarks" / "bench_falkon.py"
    spec = importlib.util.spec_from_file_location("bench_falkon", path)
    bench = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))  # its helpers module
    try:
        spec.loader.exec_module(bench)
    finally:
        sys.path.remove(str(path.parent))
    X, y, Xt, *_ = bench._data(n, 500)
    kernel = Gaussian(bench.SIGMA)
    return bench, kernel, torch.as_tensor(X).to(dtype), torch.as_tensor(y), torch.as_tensor(Xt)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("tol", [1e-4, 1e-8])
def test_one_pass_equals_pcg_on_the_benchmark_problem(dtype, tol, one_torch_thread):
    # the ridge rows of benchmarks/bench_falkon.py at reduced n (its lam = 1e-6, float32 data;
    # tol = 1e-4 its CG tolerance): the one-pass solution passes Falkon's stopping test at the
    # CG tolerance and its predictions equal PCG's to it
    bench, kernel, X, y, Xt = _benchmark_problem(3000, dtype)
    idx = np.arange(0, 3000, 10)
    system = nystrom_system(kernel, X, idx, lam=bench.LAM)
    one = nystrom_ridge_onepass(system, y, bench.LAM)
    pcg = nystrom_ridge(system, y, bench.LAM, tol=tol, max_iter=2000)
    assert pcg.cg.converged
    assert _preconditioned_residual(system, one.coef, y, bench.LAM) <= tol
    Kt = kernel.block(Xt.to(dtype), X[idx]).double()
    rel = (Kt @ (one.coef - pcg.coef)).norm() / (Kt @ pcg.coef).norm()
    assert float(rel) <= 10 * tol


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_one_pass_newton_equals_newton_pcg_on_the_benchmark_problem(dtype, one_torch_thread):
    # the logistic rows of benchmarks/bench_falkon.py at reduced n: both solvers to a Newton
    # decrement of 1e-12 with CG at 1e-8 give the same minimiser (decision values to 1e-6);
    # Newton-PCG's default float32 Hessian products (``fast_products``) stop it short of the
    # minimiser by their rounding (measured 9e-5 in the decision values, the objective
    # 5e-6 above), the one-pass Newton's float64 products do not
    bench, kernel, X, y, Xt = _benchmark_problem(3000, dtype)
    labels = (y > y.median()).long().numpy()
    idx = np.arange(0, 3000, 10)
    lam = bench.LAM_LOGISTIC
    system = nystrom_system(kernel, X, idx, lam=lam)
    one = nystrom_logistic_onepass(system, labels, lam, newton_tol=1e-12)
    assert one.converged
    f_one = nystrom_logistic_decision(kernel, Xt.to(dtype), one)
    for fast, close in [(False, 1e-6), (True, 1e-3)]:
        pcg = nystrom_logistic_fit(
            kernel, None, labels, idx, lam, tol=1e-8, max_iter=500, newton_tol=1e-12,
            system=system, fast_products=fast,
        )  # fmt: skip
        assert pcg.converged
        f_pcg = nystrom_logistic_decision(kernel, Xt.to(dtype), pcg)
        assert float((f_one - f_pcg).norm() / f_pcg.norm()) <= close
        assert one.objective[0] <= pcg.objective[0] * (1 + 1e-9)
        if not fast or dtype == torch.float64:
            np.testing.assert_allclose(one.objective, pcg.objective, rtol=1e-9)


def test_unmapped_error_bound_is_eps_times_the_condition_number():
    # oracle: NumPy's exact 1-norm condition number; dpocon's estimate may only fall short
    X, _ = _data(200, 4)
    P = Gaussian(2.0).block(X, X) + 1e-9 * torch.eye(200, dtype=torch.float64)
    L = torch.linalg.cholesky(P)
    exact = np.finfo(float).eps * np.linalg.cond(P.numpy(), 1) * float(P.diagonal().mean()) / 1e-3
    got = unmapped_error_bound(P, L, 1e-3)
    assert exact / 3 <= got <= exact * (1 + 1e-6)
    with pytest.raises(InputError, match="lam: expected lam > 0"):
        unmapped_error_bound(P, L, 0.0)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("lam", [1e-3, 1e-6])
def test_unmapped_statistics_are_the_mapped_ones_within_the_bound(dtype, lam, monkeypatch):
    # benchmarks/bench_falkon.py's problem: the statistics summed unmapped and mapped once give
    # the solution of the per-tile map to well inside unmapped_error_bound (measured 100 to
    # 10^5 times inside on this problem at n = 10^5, m = 200-2000), and nystrom_statistics
    # takes that form exactly when the bound is within tol
    _, kernel, X, y, _ = _benchmark_problem(3000, dtype)
    system = nystrom_system(kernel, X, np.arange(0, 3000, 10), lam=lam)
    L = system.factor.L
    P = L @ L.T
    bound = unmapped_error_bound(P, L, lam)
    assert system.unmapped_bound_times_lam / lam == pytest.approx(bound, rel=1e-12)
    calls = []
    monkeypatch.setattr(falkon, "to_features", lambda *a: calls.append(1) or to_features(*a))
    mapped = nystrom_ridge_onepass(system, y, lam, tol=bound / 2)
    assert not mapped.statistics.unmapped and not calls
    unmapped = nystrom_ridge_onepass(system, y, lam, tol=2 * bound)
    assert unmapped.statistics.unmapped and calls == [1]
    rel = (unmapped.solution - mapped.solution).norm() / mapped.solution.norm()
    assert float(rel) <= bound / 10
    # fewer than unmapped_rows_per_centre rows per centre: the final 2 m^3 map would cost more
    few = nystrom_system(kernel, X[:1000], np.arange(0, 1000, 3), lam=lam)
    assert not nystrom_ridge_onepass(few, y[:1000], lam, tol=float("inf")).statistics.unmapped


def test_one_pass_with_its_tolerance_equals_pcg_through_the_estimator(monkeypatch):
    # KernelRidge(solver="onepass", tol) against PCG run to 1e-10 on the same centres: the
    # unmapped sums (taken at lam = 1e-4, tol = 1e-3) keep the predictions within tol
    _, kernel, X, y, Xt = _benchmark_problem(4000, torch.float32)
    calls = []
    monkeypatch.setattr(falkon, "to_features", lambda *a: calls.append(1) or to_features(*a))
    common = {"lam": 1e-4, "n_centers": 300, "random_state": 0}
    one = KernelRidge(kernel, solver="nystrom", nystrom_method="onepass", tol=1e-3, **common).fit(
        X.numpy(), y.numpy()
    )
    assert calls == [1]
    pcg = KernelRidge(
        kernel, solver="nystrom", nystrom_method="pcg", tol=1e-10, max_iter=1000, **common
    )
    pcg.fit(X.numpy(), y.numpy())
    a, b = one.predict(Xt.numpy()), pcg.predict(Xt.numpy())
    assert np.abs(a - b).max() <= 1e-3 * np.abs(b).max()
