r"""Features on which a linear model sees the s.i.p. geometry: ``M^{-1/2} k~_x``.

Ma, Ganapathiraman, Yu and Zhang (ICML 2020), section 4: the s.i.p. kernel is the pairing
``G(x, y) = <iota(G_x), k~_y>`` (eqs. 18, 25-26), not the Euclidean inner product of the
``iota``.  Our derivation of the features that carry it to a linear model:

* **Quadratic semi-norm** (kernel warping, Ma et al. 2019, eq. 1).  The s.i.p. norm is
  ``J(v) = v^T M v`` with ``M = I + s G^T G``, so ``iota(G_x) = M^{-1} k~_x`` and
  ``G(x, y) = k~_x^T M^{-1} k~_y``.  A linear model ``f(x) = <w, phi(x)>`` with
  ``phi(x) = M^{-1/2} k~_x`` is the function ``f = <v, k~_.>`` of coefficients
  ``v = M^{-1/2} w``, and its ridge penalty is ``||w||^2 = v^T M v = ||f||^2 + s R(f)^2``:
  the warped norm, and ``phi(x)^T phi(y) = G(x, y)``.  On ``iota`` itself the penalty is
  ``v^T M^2 v``, the semi-norm applied twice.
* **Max aggregation.**  ``R(v)^2 = max_{p in P} sum_j p_j <g_j, v>^2`` over a product of
  simplices ``P`` (one per group of the max), so ``J(v) = max_p v^T M_p v`` with
  ``M_p = I + s G^T diag(p) G``, and problem (28) is the saddle point
  ``min_v max_p`` whose solution is ``iota(G_x) = M_{p(x)}^{-1} k~_x`` for the worst-case
  weights ``p(x)`` of the point.  The analogue of the quadratic map is
  ``phi(x) = M_{p(x)}^{-1/2} k~_x``: its norm is exact, ``||phi(x)||^2 = G(x, x) =
  ||G_x||_B^2``, and ``phi(x)^T phi(y) = G(x, y)`` for every pair of points that share their
  weights ``p`` (in particular everywhere in the quadratic case, where ``p`` is constant).

The weights come from the solvers: with ``iota = c_k k~ - G^T c`` (representer-space
solvers), stationarity ``M_p iota = c_k k~`` gives ``s p_j = c_j / <g_j, iota>`` on the
active representers.  ``M_p^{-1/2}`` is applied in representer space: with
``B = diag(s p)^{1/2} G_a`` and ``B B^T = U Lambda U^T``,

.. math:: M_p^{-1/2} u = u - B^T U\, \mathrm{diag}(f(\Lambda))\, U^T B u, \qquad
          f(\lambda) = \frac{1 - (1 + \lambda)^{-1/2}}{\lambda}
                     = \frac{1}{\sqrt{1+\lambda}\,(\sqrt{1+\lambda} + 1)} .

Cost: one ``m x m`` (or ``D x D``) eigendecomposition for the quadratic case; per point
``O(a^2 d + a^3)`` for ``a`` active representers in the max case.
"""

from __future__ import annotations

import torch

from kernelkit.solvers import symmetric_eigh


def _shrink(values: torch.Tensor) -> torch.Tensor:
    """``f(lambda) = (1 - (1 + lambda)^{-1/2}) / lambda`` without cancellation."""
    root = torch.sqrt(1.0 + values.clamp_min(0.0))
    return 1.0 / (root * (root + 1.0))


def inverse_root_apply(B: torch.Tensor, U: torch.Tensor) -> torch.Tensor:
    r"""Rows ``u^T (I + B^T B)^{-1/2}`` for the rows ``u`` of ``U`` (``B``: ``(a, d)``).

    Representer-space form of the module docstring: one ``a x a`` eigendecomposition.
    """
    eig = symmetric_eigh(B @ B.T, signs=False, name="B B^T")
    coords = (U @ B.T) @ eig.vectors
    return U - ((coords * _shrink(eig.values)) @ eig.vectors.T) @ B


def quadratic_metric_features(
    points: torch.Tensor, G: torch.Tensor, *, strength: float
) -> torch.Tensor:
    r"""``phi(x) = M^{-1/2} k~_x`` with ``M = I + s G^T G`` (quadratic semi-norm).

    In representer space (``m x m`` eigendecomposition of ``s G G^T``) when ``m <= D``, in
    feature space (``M = V diag(mu) V^T``, ``phi = k~ V diag(mu^{-1/2}) V^T``) otherwise.

    Parameters
    ----------
    points : torch.Tensor
        ``k~_x`` as rows, shape ``(n, D)``.
    G : torch.Tensor
        Representers, shape ``(m, D)``.
    strength : float
        ``s > 0``.

    Returns
    -------
    torch.Tensor
        Shape ``(n, D)``; ``phi(x)^T phi(y) = k~_x^T M^{-1} k~_y``, the warped kernel.
    """
    m, D = G.shape
    if m <= D:
        return inverse_root_apply(strength**0.5 * G, points)
    M = torch.eye(D, dtype=G.dtype, device=G.device) + strength * (G.T @ G)
    eig = symmetric_eigh(M, signs=False, name="I + strength G^T G")
    return ((points @ eig.vectors) * eig.values.rsqrt()) @ eig.vectors.T


def local_metric_features(
    points: torch.Tensor,
    iota: torch.Tensor,
    coef_rep: torch.Tensor,
    G: torch.Tensor,
) -> torch.Tensor:
    r"""``phi(x) = M_{p(x)}^{-1/2} k~_x`` for the max aggregation (module docstring).

    Parameters
    ----------
    points, iota : torch.Tensor
        ``k~_x`` and ``iota(G_x) = c_k k~_x - G^T c`` as rows, shape ``(n, D)``.
    coef_rep : torch.Tensor
        The solver's representer coefficients ``c``, shape ``(n, m)``.
    G : torch.Tensor
        Representers, shape ``(m, D)``.

    Returns
    -------
    torch.Tensor
        Shape ``(n, D)``; the weights ``s p_j = c_j / <g_j, iota>`` of the active
        representers (``c_j != 0``) define each point's metric ``M_{p(x)}``
        (``M_p iota = c_k k~``; ``c_k = 1`` at the optimum).
    """
    out = points.clone()
    for i in range(points.shape[0]):
        active = torch.nonzero(coef_rep[i]).flatten()
        if active.numel() == 0:
            continue
        Ga = G[active]
        inner = Ga @ iota[i]
        weights = torch.where(
            inner.abs() > 0, coef_rep[i, active] / inner, inner.new_zeros(())
        ).clamp_min(0.0)
        B = weights.sqrt()[:, None] * Ga
        out[i] = inverse_root_apply(B, points[i : i + 1])[0]
    return out


__all__ = ["inverse_root_apply", "local_metric_features", "quadratic_metric_features"]
