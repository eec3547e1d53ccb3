"""The kept K_nm of the Nyström operator (gram/_streaming.py, models/_falkon.py): the PCG and
Newton-PCG solutions equal the streamed ones, and the kernel is evaluated once per fit."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from kernelkit.gram import gram
from kernelkit.gram._nystrom import centre_indices
from kernelkit.gram._streaming import NystromOperator, keep_budget
from kernelkit.kernels import Gaussian
from kernelkit.models._falkon import nystrom_ridge, nystrom_system
from kernelkit.models._falkon_logistic import nystrom_logistic_fit
from kernelkit.utils._errors import InputError

N, M, D, BLOCK = 500, 40, 3, 64
TILES = math.ceil(N / BLOCK)
LARGE = 1 << 30


def _data(dtype=torch.float64, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, D))
    y = np.sin(2 * X[:, 0]) + 0.5 * X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(N)
    return torch.as_tensor(X, dtype=dtype), torch.as_tensor(y)


@pytest.fixture
def block_calls(monkeypatch):
    """Counts the kernel block evaluations (``block`` and ``block_into``) of the Gaussian."""
    calls = [0]
    for name in ("block", "block_into"):
        original = getattr(Gaussian, name)

        def counted(self, *args, _original=original, **kwargs):
            calls[0] += 1
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(Gaussian, name, counted)
    return calls


def _system(X, budget):
    kernel = Gaussian(1.2)
    idx = centre_indices(kernel, X, M, random_state=0)
    return nystrom_system(kernel, X, idx, block_size=BLOCK, lam=1e-5, memory_budget=budget)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_pcg_with_the_kept_block_equals_the_streamed_pcg(dtype, block_calls, one_torch_thread):
    X, y = _data(dtype)
    coefs, calls = [], []
    for budget in (0, LARGE):
        system = _system(X, budget)
        assert system.op.keeps_block == (budget > 0)
        block_calls[0] = 0
        res = nystrom_ridge(system, y, 1e-5, tol=1e-10, max_iter=200)
        coefs.append(res.coef)
        calls.append((block_calls[0], res.cg.iterations))
    torch.testing.assert_close(coefs[1], coefs[0], rtol=1e-10, atol=0)
    (streamed, iterations), (kept, _) = calls
    assert iterations > 5
    assert streamed == TILES * (1 + iterations)  # the right-hand side, then one per iteration
    assert kept == TILES  # once per fit


def test_kept_block_solves_the_nystrom_normal_equations(one_torch_thread):
    X, y = _data()
    system = _system(X, LARGE)
    lam = 1e-3
    res = nystrom_ridge(system, y, lam, tol=1e-12, max_iter=300)
    C = X[torch.as_tensor(system.indices)]
    K_nm, K_mm = gram(Gaussian(1.2), X, C), gram(Gaussian(1.2), C)
    K_mm = K_mm + system.jitter * torch.eye(M, dtype=torch.float64)
    A = K_nm.T @ K_nm / N + lam * K_mm
    alpha = torch.linalg.solve(A, K_nm.T @ y[:, None] / N)
    torch.testing.assert_close(res.coef, alpha, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fast", [False, True])
def test_newton_pcg_with_the_kept_block_equals_the_streamed_fit(
    fast, block_calls, one_torch_thread
):
    X, y = _data(torch.float32 if fast else torch.float64)
    labels = np.where(y.numpy() > 0, "pos", "neg")
    results, calls = [], []
    for budget in (0, LARGE):
        system = _system(X, budget)
        block_calls[0] = 0
        res = nystrom_logistic_fit(
            Gaussian(1.2),
            None,
            labels,
            system.indices,
            1e-4,
            system=system,
            tol=1e-10,
            fast_products=fast,
        )
        results.append(res)
        calls.append(block_calls[0])
    streamed, kept = results
    torch.testing.assert_close(kept.coef, streamed.coef, rtol=1e-10, atol=0)
    assert (kept.n_newton, kept.n_cg) == (streamed.n_newton, streamed.n_cg)
    assert calls[0] == TILES * (streamed.n_newton + streamed.n_cg)  # gradient + CG passes
    assert calls[1] == TILES


def test_budget_rule_and_bad_budget(one_torch_thread):
    X, _ = _data(torch.float32)
    C = X[:M]
    exact = N * M * 4  # float32 blocks
    assert NystromOperator(Gaussian(1.0), X, C, memory_budget=exact).keeps_block
    assert not NystromOperator(Gaussian(1.0), X, C, memory_budget=exact - 1).keeps_block
    assert not NystromOperator(Gaussian(1.0), X, C).keeps_block  # default: stream
    # the estimators' budget: a quarter of the host's available memory (README, "Scale")
    import psutil

    assert keep_budget() == pytest.approx(0.25 * psutil.virtual_memory().available, rel=0.05)
    with pytest.raises(InputError, match="memory_budget: expected an integer >= 0, got -1"):
        NystromOperator(Gaussian(1.0), X, C, memory_budget=-1)
