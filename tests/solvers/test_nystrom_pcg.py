"""Falkon's preconditioner and CG (solvers/_nystrom_pcg.py) against dense solves."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import torch

from kernelkit.solvers._nystrom_pcg import centre_factor, nystrom_pcg, nystrom_preconditioner
from kernelkit.utils._errors import InputError


def _problem(n=120, m=15, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    C = X[rng.choice(n, m, replace=False)]
    d2 = ((X[:, None] - C[None]) ** 2).sum(-1)
    Knm = torch.as_tensor(np.exp(-d2 / 2))
    Kmm = torch.as_tensor(np.exp(-((C[:, None] - C[None]) ** 2).sum(-1) / 2))
    return Knm, Kmm, torch.as_tensor(rng.standard_normal((n, 2)))


def test_preconditioned_operator_is_the_identity_when_centres_are_all_points():
    X = np.random.default_rng(3).standard_normal((30, 2))
    K = torch.as_tensor(np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 2))
    n, lam = 30, 1e-2
    pre = nystrom_preconditioner(centre_factor(K), lam)
    Ln = pre.centre.L
    Kj = Ln @ Ln.T  # K_mm with the jitter of T
    H = K @ K / n + lam * Kj
    B = pre.apply(torch.eye(n, dtype=torch.float64))
    torch.testing.assert_close(B.T @ H @ B, torch.eye(n, dtype=torch.float64), atol=1e-8, rtol=0)
    torch.testing.assert_close(pre.apply_t(torch.eye(n, dtype=torch.float64)), B.T)


@pytest.mark.parametrize("weighted", [False, True])
def test_solution_equals_the_dense_normal_equations_for_a_lam_path(weighted):
    Knm, Kmm, Y = _problem()
    n = Knm.shape[0]
    w = torch.rand(n, dtype=torch.float64, generator=torch.Generator().manual_seed(1)) * weighted
    w = w + (1.0 if not weighted else 0.1)
    lams = [1e-1, 1e-3]
    factor = centre_factor(Kmm)
    pre = nystrom_preconditioner(factor, lams, torch.ones(15))  # B changes speed, not alpha
    rhs = Knm.T @ (w[:, None] * Y)

    def normal(V):
        return Knm.T @ (w[:, None] * (Knm @ V))

    res = nystrom_pcg(normal, rhs.repeat(1, 2), pre, n=n, tol=1e-12, max_iter=500)
    assert res.cg.converged
    for g, lam in enumerate(lams):
        H = (Knm.T * w) @ Knm / n + lam * Kmm
        ref = scipy.linalg.lstsq(H.numpy(), (rhs / n).numpy())[0]
        got = res.coef[:, 2 * g : 2 * g + 2]
        np.testing.assert_allclose((Knm @ got).numpy(), Knm.numpy() @ ref, rtol=1e-6, atol=1e-8)


def test_newton_step_form_with_penalty_at():
    Knm, Kmm, Y = _problem()
    n, lam = Knm.shape[0], 1e-2
    a = torch.randn(15, 1, dtype=torch.float64)
    pre = nystrom_preconditioner(centre_factor(Kmm), lam)
    rhs = Knm.T @ Y[:, :1]
    res = nystrom_pcg(lambda V: Knm.T @ (Knm @ V), rhs, pre, n=n, tol=1e-13, penalty_at=a)
    H = Knm.T @ Knm / n + lam * Kmm
    ref = np.linalg.solve(H.numpy(), (rhs / n - lam * Kmm @ a).numpy())
    np.testing.assert_allclose((Knm @ res.coef).numpy(), Knm.numpy() @ ref, rtol=1e-6, atol=1e-8)


def test_image_and_forcing_term():
    """``image=True``: ``K_nm alpha`` carried from the products equals the dense product; a
    callable ``tol`` gets the norms of the preconditioned right-hand side's columns."""
    Knm, Kmm, Y = _problem()
    n, lam = Knm.shape[0], 1e-3
    pre = nystrom_preconditioner(centre_factor(Kmm), lam)
    rhs = Knm.T @ Y
    seen = []

    def tol(norms):
        seen.append(norms)
        return 1e-12

    res = nystrom_pcg(
        lambda V: (Knm.T @ (Knm @ V), Knm @ V), rhs, pre, n=n, tol=tol, max_iter=500, image=True
    )
    torch.testing.assert_close(res.image, Knm @ res.coef, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(seen[0], torch.linalg.vector_norm(pre.apply_t(rhs / n), dim=0))
    assert res.cg.residual <= 1e-12
    warm = nystrom_pcg(
        lambda V: (Knm.T @ (Knm @ V), Knm @ V), rhs, pre, n=n, tol=1e-12, x0=res.coef, image=True
    )
    torch.testing.assert_close(warm.image, Knm @ warm.coef, rtol=1e-10, atol=1e-10)


def test_bad_lam_and_weights_are_named():
    _, Kmm, _ = _problem()
    factor = centre_factor(Kmm)
    with pytest.raises(ValueError, match=r"^lam: expected positive"):
        nystrom_preconditioner(factor, 0.0)
    with pytest.raises(ValueError, match=r"^centre_weights: expected shape"):
        nystrom_preconditioner(factor, [1.0, 2.0], torch.ones(3, 15))


def test_given_hessian_makes_the_preconditioned_system_the_identity():
    """With the data term ``S = K_nm^T W K_nm / n`` itself, ``B^T (S + lam K_mm) B = I`` up to
    the jitter of ``T`` (``K_mm`` read as ``L L^T``)."""
    Knm, Kmm, _ = _problem()
    n, m = Knm.shape
    w = torch.rand(n, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    S = Knm.T @ (w[:, None] * Knm) / n
    lam = 1e-3
    pre = nystrom_preconditioner(centre_factor(Kmm), lam, hessian=S[None])
    L = pre.centre.L
    B = pre.apply(torch.eye(m, dtype=torch.float64))
    H = S + lam * (L @ L.T)
    torch.testing.assert_close(B.T @ H @ B, torch.eye(m, dtype=torch.float64), atol=1e-8, rtol=0)
    with pytest.raises(InputError, match=r"hessian: expected shape \(1, 15, 15\)"):
        nystrom_preconditioner(centre_factor(Kmm), lam, hessian=S)
