"""The polar problem (28): Nyström base, closed-form quadratic case and the certified max solvers.

Oracles: SciPy's SLSQP on the epigraph form of (28), the closed form ``M^{-1} k~`` and the
Nyström kernel computed with ``scipy.linalg``.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import torch
from scipy.optimize import minimize

from kernelkit.gram._nystrom import nystrom_basis
from kernelkit.models._sip import embed_quadratic, embed_quadratic_primal
from kernelkit.models._sip_polar import embed_max
from kernelkit.utils._errors import NotPSDError


@pytest.fixture
def problem():
    gen = torch.Generator().manual_seed(0)
    d, m, n = 7, 12, 4
    G = torch.randn(m, d, generator=gen, dtype=torch.float64) * 0.7
    Kt = torch.randn(n, d, generator=gen, dtype=torch.float64)
    return G, Kt


def _slsqp(k, G, groups, one_sided, strength, blocks=None):
    """Epigraph form: min ||v||^2 + s sum_b t_b^2 s.t. phi(<g_j, v>) <= t_b, <k, v> = 1."""
    d = k.shape[0]
    nb = (groups.max() + 1) if blocks is None else 1
    cons = [{"type": "eq", "fun": lambda z: k @ z[:d] - 1.0}]
    if blocks is None:
        for j in range(G.shape[0]):
            cons.append({"type": "ineq", "fun": lambda z, j=j: z[d + groups[j]] - G[j] @ z[:d]})
            other = (
                (lambda z, j=j: z[d + groups[j]])
                if one_sided
                else (lambda z, j=j: z[d + groups[j]] + G[j] @ z[:d])
            )
            cons.append({"type": "ineq", "fun": other})

        def objective(z):
            return z[:d] @ z[:d] + strength * z[d:] @ z[d:]
    else:  # max_t ||G_t v||^2 <= t
        for idx in blocks:
            cons.append(
                {"type": "ineq", "fun": lambda z, idx=idx: z[d] - np.sum((G[idx] @ z[:d]) ** 2)}
            )

        def objective(z):
            return z[:d] @ z[:d] + strength * z[d]

    z0 = np.r_[k / (k @ k), np.full(nb, 10.0)]
    res = minimize(
        objective, z0, constraints=cons, method="SLSQP", options={"ftol": 1e-14, "maxiter": 1000}
    )
    # SLSQP may stop on "positive directional derivative" at round-off: check feasibility
    assert abs(k @ res.x[:d] - 1.0) < 1e-9 and all(c["fun"](res.x) > -1e-9 for c in cons[1:])
    return res.fun, res.x[:d] / res.fun


@pytest.mark.parametrize(
    ("grouping", "one_sided"),
    [("one", False), ("points", False), ("one", True), ("points", True)],
)
def test_embed_max_matches_slsqp(problem, grouping, one_sided):
    G, Kt = problem
    m = G.shape[0]
    groups = torch.zeros(m, dtype=torch.long) if grouping == "one" else torch.arange(m) % 4
    e = embed_max(
        G @ G.T,
        Kt @ G.T,
        (Kt * Kt).sum(1),
        groups=groups,
        one_sided=one_sided,
        strength=2.0,
        tol=1e-12,
    )
    assert float(e.gap.max()) < 1e-12
    assert bool((e.dual <= e.primal * (1 + 1e-12)).all())
    V = e.vectors(Kt, G)
    for i in range(Kt.shape[0]):
        value, iota = _slsqp(Kt[i].numpy(), G.numpy(), groups.numpy(), one_sided, 2.0)
        assert e.primal[i].item() == pytest.approx(value, rel=1e-7)
        np.testing.assert_allclose(V[i].numpy(), iota, atol=1e-5)


def test_embed_max_feasible_and_gap_is_certificate(problem):
    G, Kt = problem
    e = embed_max(G @ G.T, Kt @ G.T, (Kt * Kt).sum(1), strength=1.0, tol=1e-10)
    V = e.vectors(Kt, G)  # iota = v / J(v): <iota, k~> = 1 / J(v)
    np.testing.assert_allclose((V * Kt).sum(1).numpy(), (1.0 / e.primal).numpy(), rtol=1e-10)
    J = (V * V).sum(1) * e.primal**2 + ((V @ G.T) * e.primal[:, None]).pow(2).max(1).values
    np.testing.assert_allclose(J.numpy(), e.primal.numpy(), rtol=1e-10)


def test_embed_max_without_strength_is_the_base_embedding(problem):
    G, Kt = problem
    e = embed_max(G @ G.T, Kt @ G.T, (Kt * Kt).sum(1), strength=1e-14, tol=1e-8)
    np.testing.assert_allclose(e.vectors(Kt, G).numpy(), Kt.numpy(), atol=1e-8)


def test_quadratic_embedding_is_the_metric_inverse(problem):
    G, Kt = problem
    e = embed_quadratic(G @ G.T, Kt @ G.T, (Kt * Kt).sum(1), strength=3.0)
    M = np.eye(G.shape[1]) + 3.0 * G.numpy().T @ G.numpy()
    expected = scipy.linalg.solve(M, Kt.numpy().T, assume_a="pos").T
    np.testing.assert_allclose(e.vectors(Kt, G).numpy(), expected, atol=1e-12)
    assert float(e.gap.max()) < 1e-12


def test_nystrom_basis_gives_the_nystrom_kernel():
    gen = torch.Generator().manual_seed(1)
    Z = torch.randn(9, 3, generator=gen, dtype=torch.float64)
    X = torch.randn(5, 3, generator=gen, dtype=torch.float64)
    k = lambda A, B: torch.exp(-(torch.cdist(A, B) ** 2) / 2)  # noqa: E731
    basis = nystrom_basis(k(Z, Z))
    F = basis.features(k(X, Z))
    expected = k(X, Z).numpy() @ scipy.linalg.solve(k(Z, Z).numpy(), k(Z, X).numpy())
    np.testing.assert_allclose((F @ F.T).numpy(), expected, atol=1e-9)


def test_nystrom_basis_drops_null_directions():
    A = torch.randn(6, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    basis = nystrom_basis(A @ A.T)  # rank 2
    assert basis.dim == 2


def test_nystrom_basis_rejects_indefinite_gram_with_jitter_in_message():
    K = torch.tensor([[1.0, 2.0], [2.0, 1.0]], dtype=torch.float64)
    with pytest.raises(NotPSDError, match=r"K_zz:.*not positive semi-definite.*jitter"):
        nystrom_basis(K, jitter=1e-9)


def test_quadratic_primal_form_equals_woodbury(problem):
    G, Kt = problem  # m = 12 > d = 7: the feature-space form
    e, V = embed_quadratic_primal(G, Kt, strength=3.0)
    q = embed_quadratic(G @ G.T, Kt @ G.T, (Kt * Kt).sum(1), strength=3.0)
    np.testing.assert_allclose(V.numpy(), q.vectors(Kt, G).numpy(), atol=1e-12)
    np.testing.assert_allclose(e.primal.numpy(), q.primal.numpy(), rtol=1e-12)
    assert float(e.gap.max()) < 1e-13


@pytest.mark.parametrize("one_sided", [False, True])
def test_many_groups_with_duplicated_representers(one_sided, one_torch_thread):
    """Duplicates tie exactly at every point: the warm start hands the ties to the active set.

    Oracle: the same problem without the duplicates (the max over a group is unchanged).
    """
    gen = torch.Generator().manual_seed(5)
    d, n_groups = 10, 30
    G = torch.randn(2 * n_groups, d, generator=gen, dtype=torch.float64) * 0.5
    groups = torch.arange(2 * n_groups) // 2
    Kt = torch.randn(6, d, generator=gen, dtype=torch.float64)
    G_dup = torch.cat([G, G[::2]])  # the first representer of every group twice
    groups_dup = torch.cat([groups, groups[::2]])
    kwargs = {"one_sided": one_sided, "strength": 3.0, "tol": 1e-11}
    plain = embed_max(G @ G.T, Kt @ G.T, (Kt * Kt).sum(1), groups=groups, **kwargs)
    dup = embed_max(G_dup @ G_dup.T, Kt @ G_dup.T, (Kt * Kt).sum(1), groups=groups_dup, **kwargs)
    assert float(torch.maximum(plain.gap, dup.gap).max()) <= 1e-11
    np.testing.assert_allclose(dup.primal.numpy(), plain.primal.numpy(), rtol=1e-9)
    np.testing.assert_allclose(
        dup.vectors(Kt, G_dup).numpy(), plain.vectors(Kt, G).numpy(), atol=1e-8
    )
