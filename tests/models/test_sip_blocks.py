"""Newton's method on the simplex dual of the block-max polar problem (28).

Oracles: SciPy's SLSQP on the small quadratic programme and on the epigraph form of (28), and
the closed form ``M^{-1} k~`` of the quadratic semi-norm (one block, or identical blocks).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.optimize import minimize

from kernelkit.models._sip import embed_quadratic
from kernelkit.models._sip_blocks import MAX_BLOCKS, _faces, embed_block_max, simplex_qp
from kernelkit.models._sip_polar import EmbeddingConvergenceWarning
from kernelkit.utils._errors import InputError


def _blocks_problem(T: int, seed: int = 0, d: int = 6, n: int = 5):
    gen = torch.Generator().manual_seed(seed)
    G = [torch.randn(3, d, generator=gen, dtype=torch.float64) for _ in range(T)]
    Kt = torch.randn(n, d, generator=gen, dtype=torch.float64)
    return G, Kt


@pytest.mark.parametrize("T", [1, 2, 4, 5])
def test_simplex_qp_matches_slsqp(T):
    rng = np.random.default_rng(T)
    n = 6
    B = rng.normal(size=(n, T, T))
    H = B @ B.transpose(0, 2, 1)
    H[0] = np.outer(B[0, :, 0], B[0, :, 0])  # rank one: a singular Hessian
    c = rng.normal(size=(n, T)) * 3
    z = simplex_qp(
        torch.as_tensor(c), torch.as_tensor(H), _faces(T, torch.float64, torch.device("cpu"))
    ).numpy()
    for i in range(n):
        obj = lambda x, i=i: c[i] @ x + 0.5 * x @ H[i] @ x  # noqa: E731
        ref = minimize(
            obj,
            np.full(T, 1.0 / T),
            method="SLSQP",
            bounds=[(0, 1)] * T,
            constraints=[{"type": "eq", "fun": lambda x: x.sum() - 1.0}],
            options={"ftol": 1e-15, "maxiter": 500},
        )
        assert z[i].min() >= 0 and z[i].sum() == pytest.approx(1.0, abs=1e-12)
        assert obj(z[i]) <= ref.fun + 1e-9


def test_one_block_is_the_quadratic_closed_form():
    G, Kt = _blocks_problem(1)
    e, V = embed_block_max(G, Kt, strength=0.7, tol=1e-12)
    q = embed_quadratic(G[0] @ G[0].T, Kt @ G[0].T, (Kt * Kt).sum(1), strength=0.7)
    np.testing.assert_allclose(V.numpy(), q.vectors(Kt, G[0]).numpy(), atol=1e-12)
    np.testing.assert_allclose(e.primal.numpy(), q.primal.numpy(), rtol=1e-12)


def test_identical_blocks_tie_everywhere():
    G, Kt = _blocks_problem(1)
    e, V = embed_block_max(G * 3, Kt, strength=0.7, tol=1e-12)
    q = embed_quadratic(G[0] @ G[0].T, Kt @ G[0].T, (Kt * Kt).sum(1), strength=0.7)
    np.testing.assert_allclose(V.numpy(), q.vectors(Kt, G[0]).numpy(), atol=1e-10)
    assert float(e.gap.max()) <= 1e-12


@pytest.mark.parametrize(("T", "strength"), [(3, 0.5), (5, 4.0)])
def test_block_max_matches_slsqp_with_certificate(T, strength, one_torch_thread):
    G, Kt = _blocks_problem(T, seed=T)
    e, V = embed_block_max(G, Kt, strength=strength, tol=1e-10)
    assert float(e.gap.max()) <= 1e-10 and float(e.gap.min()) >= 0.0
    d = Kt.shape[1]
    blocks = [g.numpy() for g in G]
    for i in range(Kt.shape[0]):
        k = Kt[i].numpy()
        cons = [{"type": "eq", "fun": lambda z, k=k: k @ z[:d] - 1.0}] + [
            {"type": "ineq", "fun": lambda z, g=g: z[d] - np.sum((g @ z[:d]) ** 2)} for g in blocks
        ]
        ref = minimize(
            lambda z: z[:d] @ z[:d] + strength * z[d],
            np.r_[k / (k @ k), 10.0],
            constraints=cons,
            method="SLSQP",
            options={"ftol": 1e-15, "maxiter": 1000},
        )
        assert e.primal[i].item() == pytest.approx(ref.fun, rel=1e-7)
        v = ref.x[:d]
        np.testing.assert_allclose(V[i].numpy(), v / ref.fun, atol=1e-5)
        # the returned point is feasible and its objective is the reported primal value
        v_ours = V[i].numpy() * e.primal[i].item()
        assert k @ v_ours == pytest.approx(1.0, abs=1e-10)
        J = v_ours @ v_ours + strength * max(np.sum((g @ v_ours) ** 2) for g in blocks)
        assert J == pytest.approx(e.primal[i].item(), rel=1e-10)


def test_block_max_chunks_agree():
    G, Kt = _blocks_problem(4, d=5, n=7)
    e1, V1 = embed_block_max(G, Kt, strength=2.0, tol=1e-10)
    e2, V2 = embed_block_max(G, Kt, strength=2.0, tol=1e-10, memory_budget=1.0)
    np.testing.assert_allclose(V1.numpy(), V2.numpy(), atol=1e-8)
    assert float(torch.maximum(e1.gap, e2.gap).max()) <= 1e-10


def test_block_max_warns_and_refuses():
    G, Kt = _blocks_problem(4, seed=3)
    with pytest.warns(EmbeddingConvergenceWarning, match="max_iter=1"):
        embed_block_max(G, Kt, strength=50.0, tol=1e-15, max_iter=1)
    with pytest.raises(InputError, match="G_blocks: expected at least one block"):
        embed_block_max([], Kt)
    with pytest.raises(InputError, match=f"at most {MAX_BLOCKS} blocks"):
        embed_block_max(G * 4, Kt)
