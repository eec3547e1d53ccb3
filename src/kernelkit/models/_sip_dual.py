r"""Regularised risk minimisation in the s.i.p. space by its dual coefficients (section 3).

Ma et al. (ICML 2020), eqs. (10)-(15), Theorem 3 and appendix D.  The minimiser of
``(1/n) sum_i loss(y_i, f(x_i)) + lam ||f||_B^2`` (the kernelkit convention of eq. 10, with
``||f||_B^2 = ||f||_H^2 + s R(f)^2``, eq. 2) has the dual form ``f* = sum_j c_j G*_{x_j}``
(eq. 12).  In the Nyström space (section 4, steps 1-3): ``iota*(f*) = a = sum_j c_j k~_j``,
and by Theorem 3 with the polar problem (28) for ``a``,

.. math:: \hat v = \arg\min_{\langle v, a\rangle = 1} J(v), \qquad
          \iota(f) = \hat v / J(\hat v), \qquad f(x_i) = \langle \iota(f), \tilde k_i\rangle,
          \qquad \|f\|_B^2 = \|f^*\|_{B^*}^2 = 1 / J(\hat v).

**Gradient in c (appendix D).**  The paper differentiates the KKT system of the polar
problem (eqs. 163-173).  Equivalently, here: at the certified solution the active
representers ``A`` (with signs ``sigma``) are fixed in a neighbourhood (strict
complementarity), and on them the dual of (28) is the linear system
``(K_AA - h h^T / kappa + E / s) gamma = h / kappa`` (``h = G_A a``, ``kappa = ||a||^2``,
``E`` the signed group coupling; see :mod:`kernelkit.models._sip_polar`), whose solution gives
``J = (1 + h^T gamma) / kappa`` and ``iota(f) = a - G_A^T gamma kappa / (1 + h^T gamma)``.
That map is smooth in ``a``; autograd through it gives the exact gradient in ``c``.  The
objective is not convex in ``c`` (section 3); ``c`` starts from the Nyström kernel ridge
solution (training "without R", as the paper suggests) and is refined by L-BFGS.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from kernelkit.models._sip_polar import embed_max
from kernelkit.solvers import lbfgs
from kernelkit.solvers._cholesky import solve
from kernelkit.utils._errors import InputError

LOSSES = ("squared", "logistic", "squared_hinge")


def _loss(name: str, y: torch.Tensor, f: torch.Tensor) -> torch.Tensor:
    if name == "squared":
        return 0.5 * (y - f) ** 2
    if name == "logistic":
        return torch.nn.functional.softplus(-y * f)
    return torch.clamp(1.0 - y * f, min=0.0) ** 2


def polar_value_and_map(
    a: torch.Tensor,
    G: torch.Tensor,
    groups: torch.Tensor,
    one_sided: torch.Tensor,
    strength: float,
    *,
    K_S: torch.Tensor | None = None,
    tol: float = 1e-10,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``J(v^)`` and ``iota(f) = v^ / J(v^)`` for ``iota*(f*) = a``, differentiable in ``a``.

    The active set comes from the certified solver :func:`~kernelkit.models._sip_polar.
    embed_max` (no gradient); the values are recomputed on it by the smooth linear solve of
    the module docstring, so that autograd yields the derivative of appendix D.  ``K_S``
    (``G G^T``) may be passed to avoid recomputing it.
    """
    with torch.no_grad():
        a0 = a.detach()[None]
        K_S = G @ G.T if K_S is None else K_S
        sol = embed_max(
            K_S,
            a0 @ G.T,
            (a0 * a0).sum(1),
            groups=groups,
            one_sided=one_sided,
            strength=strength,
            tol=tol,
            max_iter=200,
        )
        gamma0 = sol.coef_rep[0]
        active = torch.nonzero(gamma0 != 0).flatten()
        sign = torch.sign(gamma0[active])
    G_A = G[active]
    h = G_A @ a
    kappa = a @ a
    same = groups[active][:, None] == groups[active][None, :]
    Q = G_A @ G_A.T - torch.outer(h, h) / kappa + torch.outer(sign, sign) * same / strength
    gamma = solve(Q, h / kappa, name="Q") if len(active) else h
    J = (1.0 + h @ gamma) / kappa
    iota = a - (G_A.T @ gamma) * kappa / (1.0 + h @ gamma)
    return J, iota


@dataclass
class DualRRMResult:
    """Dual coefficients of the s.i.p. regularised risk minimiser.

    Attributes
    ----------
    coef : torch.Tensor
        ``c`` of ``f* = sum_j c_j G*_{x_j}``, shape ``(n,)``.
    iota : torch.Tensor
        ``iota(f)``: ``f(x) = <iota(f), k~_x>``, shape ``(d,)``.
    objective : list of float
        Objective after each L-BFGS step.
    converged : bool
        Whether L-BFGS met its tolerance before ``max_iter``.
    """

    coef: torch.Tensor
    iota: torch.Tensor
    objective: list[float] = field(default_factory=list)
    converged: bool = False


def dual_rrm(
    k_train: torch.Tensor,
    y: torch.Tensor,
    G: torch.Tensor,
    *,
    groups: torch.Tensor | None = None,
    one_sided: bool | torch.Tensor = False,
    strength: float = 1.0,
    lam: float = 1e-3,
    loss: str = "logistic",
    max_iter: int = 50,
    tol: float = 1e-6,
) -> DualRRMResult:
    r"""Train the dual coefficients ``c`` of eq. (12) by L-BFGS (section 3, appendix D).

    Parameters
    ----------
    k_train : torch.Tensor
        Nyström features ``k~_{x_j}`` of the training points, shape ``(n, d)``.
    y : torch.Tensor
        Targets, shape ``(n,)``; ``+-1`` for the classification losses.
    G : torch.Tensor
        Invariance representers, shape ``(m, d)``.
    groups, one_sided, strength :
        The semi-norm, as in :func:`~kernelkit.models._sip_polar.embed_max`.
    lam : float
        ``lam > 0`` of ``(1/n) sum loss + lam ||f||_B^2``.
    loss : {"squared", "logistic", "squared_hinge"}
        The loss.
    max_iter : int
        L-BFGS iterations.
    tol : float
        Tolerance on the gradient and the change of the objective.
    """
    if loss not in LOSSES:
        raise InputError(f"loss: expected one of {LOSSES}, got {loss!r}")
    n = k_train.shape[0]
    if y.shape != (n,):
        raise InputError(f"y: expected shape ({n},), got {tuple(y.shape)}")
    m = G.shape[0]
    groups = torch.zeros(m, dtype=torch.long) if groups is None else groups
    n_groups = int(groups.max()) + 1 if m else 1
    one_sided = torch.as_tensor(one_sided).expand(n_groups)
    K = k_train @ k_train.T
    K_S = G @ G.T
    eye = torch.eye(n, dtype=K.dtype)
    coef = solve(K + n * lam * eye, y.to(K.dtype), name="K + n lam I").requires_grad_(True)
    history: list[float] = []

    def objective() -> torch.Tensor:
        J, iota = polar_value_and_map(k_train.T @ coef, G, groups, one_sided, strength, K_S=K_S)
        value = _loss(loss, y, k_train @ iota).mean() + lam / J
        history.append(value.detach().item())
        return value

    run = lbfgs(
        objective, [coef], max_iter=max_iter, tolerance_grad=tol, tolerance_change=tol * 1e-3
    )
    with torch.no_grad():
        _, iota = polar_value_and_map(k_train.T @ coef, G, groups, one_sided, strength, K_S=K_S)
    return DualRRMResult(
        coef=coef.detach(),
        iota=iota.detach(),
        objective=history,
        converged=run.converged,
    )
