r"""Kernels of infinitely wide one-hidden-layer networks: arc-cosine and the ReLU NTK.

Course part 3, section 6 ("Deep kernel machines"): a random-feature kernel is
``K(x, y) = E_{w ~ N(0, I)}[sigma(w^T x) sigma(w^T y)]`` (Neal 1996).  Closed forms, with
``theta = arccos(x^T y / (||x|| ||y||))``:

* :class:`ArcCosine` of order ``n`` (Cho & Saul 2009), ``sigma(u) = sqrt(2) u^n 1[u > 0]``;
* :class:`ReLUNTK`, the neural tangent kernel of ``f(x) = m^{-1/2} sum_i v_i relu(w_i^T x)``
  at initialisation ``(v, w) ~ N(0, I)`` (Jacot, Gabriel & Hongler 2018).

Both are p.d. (expectations of products of features) and positively homogeneous.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from kernelkit.kernels._base import Kernel
from kernelkit.utils._errors import InputError


def _angles(X: torch.Tensor, Y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(||x|| ||y||, theta)`` for every pair; ``theta = pi / 2`` when a norm is 0.

    ``theta = 2 atan2(||u - v||, ||u + v||)`` with ``u = x / ||x||``, ``v = y / ||y||``, from
    direct differences: accurate at every angle, where ``arccos`` of a rounded cosine is
    off by ``sqrt(eps)`` near ``theta = 0`` and ``pi``.
    """
    nx, ny = X.norm(dim=1), Y.norm(dim=1)
    ux = X / torch.where(nx > 0, nx, torch.ones_like(nx))[:, None]
    uy = Y / torch.where(ny > 0, ny, torch.ones_like(ny))[:, None]
    mode = "donot_use_mm_for_euclid_dist"
    theta = 2.0 * torch.atan2(
        torch.cdist(ux, uy, compute_mode=mode), torch.cdist(ux, -uy, compute_mode=mode)
    )
    norms = nx[:, None] * ny[None, :]
    return norms, torch.where(norms > 0, theta, torch.full_like(theta, math.pi / 2))


def _diag_parts(X: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(||x||^2, theta = 0)`` for the pairs ``(x, x)`` (``pi / 2`` for ``x = 0``)."""
    sq = (X * X).sum(1)
    theta = torch.where(sq > 0, torch.zeros_like(sq), torch.full_like(sq, math.pi / 2))
    return sq, theta


def arccos_j(order: int, theta: torch.Tensor) -> torch.Tensor:
    r"""Cho & Saul's angular part ``J_n(theta)`` for ``n = 0, 1, 2``.

    ``J_0 = pi - theta``, ``J_1 = sin theta + (pi - theta) cos theta``,
    ``J_2 = 3 sin theta cos theta + (pi - theta)(1 + 2 cos^2 theta)``.
    """
    s, c = torch.sin(theta), torch.cos(theta)
    if order == 0:
        return math.pi - theta
    if order == 1:
        return s + (math.pi - theta) * c
    return 3.0 * s * c + (math.pi - theta) * (1.0 + 2.0 * c * c)


class ArcCosine(Kernel):
    r"""The arc-cosine kernel of order ``n`` in {0, 1, 2} (Cho & Saul 2009, eq. 1-3).

    .. math:: k_n(x, y) = \frac{1}{\pi} \|x\|^n \|y\|^n J_n(\theta)
              = \mathbb{E}_{w \sim N(0, I)}\big[\sigma_n(w^\top x) \sigma_n(w^\top y)\big],
              \qquad \sigma_n(u) = \tfrac{1}{\sqrt 2} u^n (1 + \mathrm{sign}\,u),

    i.e. ``sigma_n = sqrt(2) u^n 1[u > 0]`` (course part 3, section 6).  So ``k_1 = 2
    E[relu(w^T x) relu(w^T y)]``: the factor 2 the course text drops (part 3, erratum 3).
    ``n = 0`` is ``1 - theta / pi`` (step features), ``n = 1`` the ReLU kernel.  For ``x = 0``
    the angle is taken as ``pi / 2`` (``k_0 = 1/2``; ``k_n = 0`` for ``n >= 1``).

    Parameters
    ----------
    order : {0, 1, 2}
        The degree ``n`` of the rectified monomial.
    """

    def __init__(self, order: int = 1):
        super().__init__()
        if order not in (0, 1, 2) or isinstance(order, bool):
            raise InputError(f"order: expected 0, 1 or 2, got {order!r}")
        self.order = int(order)

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        g = torch.Generator().manual_seed(0)
        X = torch.randn(9, 3, generator=g, dtype=torch.float64)
        Y = torch.randn(5, 3, generator=g, dtype=torch.float64)
        return [(cls(n), X, Y) for n in (0, 1, 2)]

    def block(self, X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
        norms, theta = _angles(X, Y)
        return norms**self.order * arccos_j(self.order, theta) / math.pi

    def block_diag(self, X: torch.Tensor) -> torch.Tensor:
        sq, theta = _diag_parts(X)
        return sq**self.order * arccos_j(self.order, theta) / math.pi


class ReLUNTK(Kernel):
    r"""The neural tangent kernel of a one-hidden-layer ReLU network (Jacot et al. 2018).

    For ``f_theta(x) = m^{-1/2} sum_{i=1}^m v_i relu(w_i^T x)`` with ``(v_i, w_i) ~ N(0, I)``,
    the limit ``m -> inf`` of ``<grad_theta f(x), grad_theta f(y)>`` is (course part 3,
    section 6, "NTK")

    .. math:: K(x, y) = \mathbb{E}_w\big[\mathrm{relu}(w^\top x)\,\mathrm{relu}(w^\top y)
              + (x^\top y)\, \mathbb{1}[w^\top x > 0]\, \mathbb{1}[w^\top y > 0]\big]
              = \frac{1}{2\pi}\Big(\|x\| \|y\| J_1(\theta) + (x^\top y)(\pi - \theta)\Big),

    the first term from the output weights ``v`` (``k_1 / 2``), the second from the hidden
    weights ``w`` (``x^T y k_0 / 2``), with the ``J_n`` of :class:`ArcCosine`.
    """

    @classmethod
    def _check_example(cls) -> tuple[Kernel, Any, Any]:
        g = torch.Generator().manual_seed(1)
        X = torch.randn(9, 4, generator=g, dtype=torch.float64)
        return cls(), X, torch.randn(5, 4, generator=g, dtype=torch.float64)

    def block(self, X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
        norms, theta = _angles(X, Y)
        return (norms * arccos_j(1, theta) + (X @ Y.T) * (math.pi - theta)) / (2.0 * math.pi)

    def block_diag(self, X: torch.Tensor) -> torch.Tensor:
        sq, theta = _diag_parts(X)
        return (sq * arccos_j(1, theta) + sq * (math.pi - theta)) / (2.0 * math.pi)


__all__ = ["ArcCosine", "ReLUNTK", "arccos_j"]
