r"""The quadratic (kernel-warping) s.i.p. embedding and the embedding result of every solver.

Ma, Ganapathiraman, Yu and Zhang, *Convex representation learning for generalized invariance
in semi-inner-product space* (ICML 2020), section 4, eqs. (19)-(28); the quadratic case is the
kernel warping of Ma et al. (AISTATS 2019), eq. (1) / eq. (17) of the seed.

Notation used by every function of the ``sip*`` modules:

* ``k~_x = K_z^{-1/2} k_z(x)`` (eqs. 20-21), the base embedding of ``k(., x)`` in ``R^d``
  (:func:`kernelkit.gram._nystrom.nystrom_basis`);
* ``G`` (``m x d``), the rows ``g~_j`` of the finite invariance set ``S`` embedded the same way;
* ``K_S = G G^T`` (``m x m``) and ``h(x) = G k~_x`` (``m``): the solvers of
  :mod:`kernelkit.models._sip_polar` only need these and ``kappa(x) = ||k~_x||^2``;
* an embedding is returned as two coefficient arrays, ``iota(G_x) = coef_k(x) k~_x -
  coef_rep(x)^T G`` (so joint, matrix-valued embeddings of section 5-6 reuse the solvers).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from kernelkit.solvers import cholesky_factor
from kernelkit.utils._numerics import eps


@dataclass(frozen=True)
class Embedding:
    r"""Embeddings ``iota(G_x) = coef_k k~_x - coef_rep^T G`` with their certificates.

    Attributes
    ----------
    coef_k : torch.Tensor
        Shape ``(n,)``.
    coef_rep : torch.Tensor
        Shape ``(n, m)``, coefficients on the invariance representers.
    primal : torch.Tensor
        ``J(v)`` at the returned primal point ``v`` of eq. (28), shape ``(n,)``.
    dual : torch.Tensor
        Value of the dual problem at the returned dual point (a lower bound on the optimum
        of eq. 28), shape ``(n,)``.
    gap : torch.Tensor
        Relative duality gap ``(primal - dual) / primal`` (``>= 0`` up to round-off): the
        optimality certificate of each point.
    iterations : int
        Outer iterations used (0 for closed forms).
    """

    coef_k: torch.Tensor
    coef_rep: torch.Tensor
    primal: torch.Tensor
    dual: torch.Tensor
    gap: torch.Tensor
    iterations: int = 0

    def vectors(self, k_tilde: torch.Tensor, G: torch.Tensor) -> torch.Tensor:
        """``iota(G_x)`` as rows, from ``k~_x`` (``(n, d)``) and the representers ``G``."""
        return self.coef_k[:, None] * k_tilde - self.coef_rep @ G


def embed_quadratic(
    K_S: torch.Tensor, H: torch.Tensor, kappa: torch.Tensor, *, strength: float = 1.0
) -> Embedding:
    r"""Closed-form embedding for the quadratic semi-norm ``R(v)^2 = s sum_j <g_j, v>^2``.

    With ``M = I + s G^T G``, problem (28) ``min v^T M v s.t. <v, k~_x> = 1`` has the
    solution ``v = M^{-1} k~_x / (k~_x^T M^{-1} k~_x)`` and ``J(v) = 1 / (k~_x^T M^{-1} k~_x)``,
    so ``iota(G_x) = v / J(v) = M^{-1} k~_x`` (eq. 26).  By Woodbury,
    ``M^{-1} k~_x = k~_x - G^T (I/s + K_S)^{-1} h(x)``; its pairing with ``k~_y`` is
    ``k(x, y) - z(x)^T (I/s + K_z)^{-1} z(y)``, the warped kernel of eq. (1) / (17) (with
    ``s = 1``, in the Nyström space).

    Parameters
    ----------
    K_S : torch.Tensor
        Representer Gram ``G G^T``, shape ``(m, m)``.
    H : torch.Tensor
        ``h(x) = G k~_x`` as rows, shape ``(n, m)``.
    kappa : torch.Tensor
        ``||k~_x||^2``, shape ``(n,)``.
    strength : float
        ``s > 0``.

    Returns
    -------
    Embedding
        ``coef_k = 1``; the certificate is the relative residual of the normal equations
        ``(I/s + K_S) w = h`` scaled like the gap (exact up to round-off).
    """
    m = K_S.shape[0]
    A = K_S + torch.eye(m, dtype=K_S.dtype, device=K_S.device) / strength
    W = cholesky_factor(A, jitter=0.0, name="K_S + I/strength").solve(H.T).T
    hw = (H * W).sum(1)
    value = kappa - hw  # k~^T M^{-1} k~
    residual = torch.linalg.vector_norm(W @ A - H, dim=1) / torch.linalg.vector_norm(
        H, dim=1
    ).clamp_min(eps(H.dtype))
    primal = 1.0 / value
    return Embedding(
        coef_k=torch.ones_like(kappa),
        coef_rep=W,
        primal=primal,
        dual=primal,
        gap=residual,
    )


def embed_quadratic_primal(
    G: torch.Tensor, points: torch.Tensor, *, strength: float = 1.0
) -> tuple[Embedding, torch.Tensor]:
    r"""The closed form of :func:`embed_quadratic` in feature space, for ``m > D`` representers.

    ``iota(G_x) = M^{-1} k~_x`` with ``M = I + s G^T G`` (``D x D``), by one Cholesky
    factorisation of ``M``: ``O(m D^2 + D^3)`` instead of the ``O(m^2 D + m^3)`` of the
    Woodbury form, and no ``m x m`` Gram (mixup with ``p`` pairs and a grid of ``lambda``
    has ``m = p n_grid`` representers in ``D = d L`` dimensions).

    Parameters
    ----------
    G : torch.Tensor
        Representers, shape ``(m, D)``.
    points : torch.Tensor
        ``k~_x`` as rows, shape ``(n, D)``.
    strength : float
        ``s > 0``.

    Returns
    -------
    (Embedding, torch.Tensor)
        The embedding, with ``J = 1 / (k~^T M^{-1} k~)`` as primal and dual value and the
        relative residual ``||M iota - k~|| / ||k~||`` as certificate (``coef_rep`` is
        empty), and the features ``iota(G_x)``, shape ``(n, D)``.
    """
    M = quadratic_gram(G, strength=strength)
    features = cholesky_factor(M, jitter=0.0, name="I + strength G^T G").solve(points.T).T
    residual = torch.linalg.vector_norm(features @ M - points, dim=1)
    gap = residual / torch.linalg.vector_norm(points, dim=1).clamp_min(eps(points.dtype))
    value = 1.0 / (points * features).sum(1)
    empty = points.new_zeros(points.shape[0], 0)
    return Embedding(1.0 / value, empty, value, value, gap), features


def quadratic_gram(G: torch.Tensor, *, strength: float = 1.0) -> torch.Tensor:
    """``M = I + s G^T G`` (``d x d``): the metric of the quadratic s.i.p. norm."""
    d = G.shape[1]
    return torch.eye(d, dtype=G.dtype, device=G.device) + strength * (G.T @ G)
