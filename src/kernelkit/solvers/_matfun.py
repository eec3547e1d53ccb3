r"""Spectral matrix functions of a symmetric PSD matrix, with a stable gradient.

The Nyström map of a dot-product kernel ``psi(x) = kappa(Z^T Z)^{-1/2} kappa(Z^T x)``
(course part 3, sections 5-7) needs the inverse square root of the anchor Gram, and its
supervised training (section 6, "learning Z") needs its derivative.  With ``A = U diag(w) U^T``
and ``f(w) = 1 / (sqrt(max(w, 0)) + shift)``,

.. math:: f(A) = U \operatorname{diag}(f(w)) U^T,

and the Daleckii-Krein formula gives the derivative
``df(A)[E] = U (F o (U^T E U)) U^T`` with the first divided differences
``F_ij = (f(w_i) - f(w_j)) / (w_i - w_j)``, which for this ``f`` has the closed form

.. math:: F_{ij} = -\frac{1}{(s_i + \epsilon)(s_j + \epsilon)(s_i + s_j)}, \quad s = \sqrt{w},

finite for equal eigenvalues (``F_ii = f'(w_i)``), unlike the generic backward of an
eigendecomposition, whose ``1 / (w_i - w_j)`` blows up on repeated eigenvalues.  The same
regularised root ``(sqrt(w) + shift)^{-1}`` is used by the reference CKN code (Mairal 2016;
course part 3, errata 12, ``shift = 0.01``).
"""

from __future__ import annotations

from typing import Any

import torch

from kernelkit.solvers._eigen import symmetric_eigh
from kernelkit.utils._errors import InputError


def _root_factors(w: torch.Tensor, shift: float, floor: float) -> tuple[torch.Tensor, torch.Tensor]:
    """``s = sqrt(w)`` with eigenvalues below ``floor * max(w)`` treated as null, and ``f(w)``."""
    cutoff = floor * w.abs().max().clamp_min(torch.finfo(w.dtype).tiny)
    kept = w > cutoff
    s = torch.where(kept, w.clamp_min(0.0).sqrt(), torch.zeros_like(w))
    denom = s + shift
    f = torch.where(kept | (shift > 0), 1.0 / denom.clamp_min(torch.finfo(w.dtype).tiny), 0.0)
    return s, f


class _InverseSqrt(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, A: torch.Tensor, shift: float, floor: float) -> torch.Tensor:
        eig = symmetric_eigh(A.detach(), signs=False)
        s, f = _root_factors(eig.values, shift, floor)
        U = eig.vectors
        ctx.save_for_backward(U, s, f)
        ctx.shift = shift
        return (U * f) @ U.mT

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None, None]:
        U, s, f = ctx.saved_tensors
        denom = s[:, None] + s[None, :]
        live = (denom > 0) & (f[:, None] > 0) & (f[None, :] > 0)
        F = -(f[:, None] * f[None, :]) / torch.where(live, denom, torch.ones_like(denom))
        F = torch.where(live, F, torch.zeros_like(F))
        G = U.mT @ ((grad + grad.mT) / 2) @ U
        return U @ (F * G) @ U.mT, None, None


def inverse_sqrt(A: Any, *, shift: float = 0.0, floor: float | None = None) -> torch.Tensor:
    r"""``(A^{1/2} + shift I)^{-1}`` of a symmetric PSD matrix, differentiable in ``A``.

    ``A = U diag(w) U^T`` by :func:`~kernelkit.solvers.symmetric_eigh`; the result is
    ``U diag(1 / (sqrt(w) + shift)) U^T``.  With ``shift = 0`` eigenvalues below
    ``floor * max(w)`` are treated as null and their directions dropped (the pseudo-inverse
    root).  The backward pass uses the closed-form divided differences of the module
    docstring (stable for repeated eigenvalues); pairs of null eigenvalues (below the floor),
    where ``f'`` is infinite, get a zero derivative.

    Parameters
    ----------
    A : tensor, shape (m, m)
        Symmetric positive semi-definite matrix (its symmetric part is used).
    shift : float
        ``epsilon >= 0`` added to the square roots of the eigenvalues.
    floor : float, optional
        Relative eigenvalue floor with ``shift = 0`` (default ``1e-12`` for float64,
        ``1e-6`` for float32).

    Returns
    -------
    torch.Tensor, shape (m, m)
        The symmetric matrix ``(A^{1/2} + shift I)^{-1}`` (``A^{-1/2}`` for ``shift = 0``).
    """
    if not isinstance(A, torch.Tensor) or A.ndim != 2 or A.shape[0] != A.shape[1]:
        shape = tuple(A.shape) if isinstance(A, torch.Tensor) else type(A).__name__
        raise InputError(f"A: expected a square tensor (m x m), got {shape}")
    if shift < 0:
        raise InputError(f"shift: expected a value >= 0, got {shift}")
    if floor is None:
        floor = 1e-12 if A.dtype == torch.float64 else 1e-6
    return _InverseSqrt.apply(A, float(shift), float(floor))


__all__ = ["inverse_sqrt"]
