r"""Closed-form ridge last layers, solved inside an objective (variable projection).

A kernel ridge last layer ``f_L(z) = sum_i k_L(z, s_i) phi_i`` fitted to outputs ``o_i`` (the
inputs ``x_i`` of a KAE, their feature maps ``phi(x_i)`` for a K2AE, targets ``y_i`` for a
supervised head) minimises, with the ERM convention of kernelkit,

.. math:: \frac1n \sum_i \|o_i - f_L(z_i)\|^2 + \lambda \|f_L\|^2 .

Only the output Gram ``K_out = [<o_i, o_j>]`` enters, through a factor ``B`` (``n x r``) with
``B B^T = K_out``.  The optimum is ``Phi_L = W^{-1} B`` (in the coordinates of ``B``) with
``W = K_L + n lam I`` (Laforgue et al. 2019, eqs. 13 and 55; ``N_L = Phi_L Phi_L^T =
W^{-1} K_out W^{-1}`` is eq. 54), and because ``K_L`` and ``W`` commute the residual operator is
``I - K_L W^{-1} = n lam W^{-1}``: the data term ``n lam^2 tr(W^{-2} K_out)`` plus the penalty
``lam tr(N_L K_L)`` collapse to

.. math:: J_L = \lambda \,\mathrm{tr}(W^{-1} K_{out}) = \lambda \|C^{-1} B\|_F^2, \quad W = C C^T,

one Cholesky factorisation and one triangular solve per evaluation (DESIGN.md, section 5).
Its gradient is ``dJ_L/dK_L = -lam W^{-1} K_out W^{-1} = -lam N_L``; by the envelope theorem
it is the exact gradient of the inner layers' objective (the last layer being at its optimum).
:class:`RidgeTrace` implements it as an autograd function with that explicit backward (one
more triangular solve and one product), instead of differentiating through the Cholesky.

With explicit features or landmarks (``f_L(z) = c(z)^T Phi`` with ``C = [c(z_i)]`` of shape
``n x m`` and penalty ``tr(Phi^T K_mm Phi)``), the same optimum has the ``m x m`` form

.. math:: J_L = \frac1n\Big(\mathrm{tr} K_{out} - \mathrm{tr}\big(M^{-1} P^T P\big)\Big),
          \quad M = C^T C + n\lambda K_{mm}, \quad P = B^T C,

(:func:`ridge_loss_projected`), which reduces to the formula above when ``C = K_mm = K_L``,
and allows ``lam = 0`` (the ridgeless projection) when ``C`` has full column rank.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from kernelkit.solvers import cholesky_factor, cholesky_solve
from kernelkit.solvers._cholesky import CholeskyFactor, CholeskyResult, solve_triangular


def kernel_ridge_coefficients(
    K: torch.Tensor, Y: torch.Tensor, *, lam: float, overwrite_K: bool = False
) -> CholeskyResult | None:
    r"""Dual coefficients of kernel ridge regression, ``alpha = (K + n lam I)^{-1} Y``.

    Minimiser of the regularised empirical risk (course part 1, slide "Kernel ridge regression
    (KRR)")

    .. math:: \min_{f \in H} \frac{1}{n} \sum_{i=1}^n (y_i - f(x_i))^2 + \lambda \|f\|_H^2,

    whose representer form ``f = sum_i alpha_i k(x_i, .)`` has the stationarity condition
    ``(2/n) K [(K + n lam I) alpha - Y] = 0``, hence ``alpha = (K + n lam I)^{-1} Y``
    (scikit-learn's ``KernelRidge(alpha=n * lam)``).  For several output columns this is the
    vector-valued RKHS ridge with the identity operator: one solve, one column per output.

    Parameters
    ----------
    K : torch.Tensor
        Training Gram matrix, shape ``(n, n)``.
    Y : torch.Tensor
        Targets, shape ``(n,)`` or ``(n, n_outputs)``.
    lam : float
        Regularisation ``lam >= 0`` (``lam = 0`` interpolates, with the jitter ladder of
        :func:`kernelkit.solvers.cholesky_solve` when ``K`` is singular).
    overwrite_K : bool
        Fast path for large ``n``: shift the diagonal and factorise ``K`` *in place* (no
        second ``n x n`` buffer, no validation pass).  ``K`` is destroyed, and the function
        returns ``None`` when ``K + n lam I`` is not numerically positive definite; the caller
        then rebuilds ``K`` and calls again without ``overwrite_K`` (jitter ladder).

    Returns
    -------
    CholeskyResult or None
        ``solution`` holds ``alpha`` (same shape as ``Y``); ``jitter`` the jitter used.
    """
    n = K.shape[0]
    if not overwrite_K:
        return cholesky_solve(K, Y, shift=n * lam)
    fac = cholesky_factor(K, shift=n * lam, jitter=0.0, overwrite=True, strict=False)
    if not fac.success:
        return None
    X = fac.solve(Y)
    if not bool(torch.isfinite(X).all()):
        return None
    return CholeskyResult(X, fac.factor, 0.0, n * lam)


def weighted_kernel_ridge(
    make_gram: Callable[[], torch.Tensor], Y: torch.Tensor, w: Any = None, *, lam: float
) -> tuple[torch.Tensor, float]:
    r"""Kernel ridge with sample weights on the exact Gram: ``(alpha, jitter)``.

    Minimises ``(1 / sum w) sum_i w_i ||y_i - f(x_i)||^2 + lam ||f||^2`` with unit-mean
    weights ``w`` (``None``: all 1): with ``W = diag(w)``, ``alpha = W^{1/2} (W^{1/2} K W^{1/2}
    + n lam I)^{-1} W^{1/2} Y`` (:func:`kernel_ridge_coefficients` on the weighted system;
    integer weights give the fit of the repeated rows).  ``make_gram()`` returns a fresh Gram:
    it is factorised in place, and rebuilt once for the jitter ladder when it is not
    numerically positive definite.
    """
    K = make_gram()
    Y = Y.to(K.device)
    root_w = None if w is None else torch.as_tensor(np.sqrt(w), dtype=K.dtype, device=K.device)
    Y = _weigh(Y, root_w)
    result = kernel_ridge_coefficients(_weigh_gram_(K, root_w), Y, lam=lam, overwrite_K=True)
    del K
    if result is None:  # not numerically PD: rebuild K and climb the jitter ladder
        result = kernel_ridge_coefficients(_weigh_gram_(make_gram(), root_w), Y, lam=lam)
    return _weigh(result.solution, root_w), float(result.jitter)


def _weigh(Y: torch.Tensor, root_w: torch.Tensor | None) -> torch.Tensor:
    """``W^{1/2} Y`` (rows scaled by the square roots of the weights); ``Y`` when unweighted."""
    if root_w is None:
        return Y
    return Y * (root_w if Y.ndim == 1 else root_w[:, None])


def _weigh_gram_(K: torch.Tensor, root_w: torch.Tensor | None) -> torch.Tensor:
    """``W^{1/2} K W^{1/2}`` in place; ``K`` when unweighted."""
    if root_w is None:
        return K
    return K.mul_(root_w[:, None]).mul_(root_w[None, :])


__all__ = [
    "RidgeTrace",
    "kernel_ridge_coefficients",
    "psd_factor",
    "ridge_coefficients",
    "ridge_coefficients_projected",
    "ridge_loss_projected",
    "ridge_trace_loss",
    "sym_outer",
]


def psd_factor(K: torch.Tensor, *, name: str = "K_out") -> torch.Tensor:
    """A factor ``B`` with ``B B^T = K`` (+ a relative jitter of ~eps when ``K`` is singular).

    The lower Cholesky factor, with the jitter ladder of
    :func:`kernelkit.solvers.cholesky_factor`; the jitter shifts ``tr(K)`` by ``n * jitter``,
    far below the tolerance of any objective.
    """
    return cholesky_factor(K, name=name).factor


def sym_outer(V: torch.Tensor, block: int = 1024) -> torch.Tensor:
    """``V V^T`` computing only the block upper triangle (about half the flops of a GEMM)."""
    n = V.shape[-2]
    if n <= block or V.dim() > 2:
        return V @ V.mT
    out = V.new_empty(n, n)
    for i in range(0, n, block):
        j = min(i + block, n)
        R = V[i:j] @ V[i:].mT
        out[i:j, i:] = R
        out[j:, i:j] = R[:, j - i :].mT
    return out


class RidgeTrace(torch.autograd.Function):
    r"""``t(K) = tr((K + shift I)^{-1} B B^T)`` with the explicit gradient ``-N``.

    Forward: ``C = chol(K + shift I)``, ``T = C^{-1} B``, ``t = ||T||_F^2``.  Backward:
    ``V = C^{-T} T = W^{-1} B``, ``dt/dK = -V V^T = -W^{-1} K_out W^{-1}`` (Laforgue et al.,
    eq. 54 gives ``N_L = V V^T``).  ``K`` must be symmetric (only its lower triangle is read);
    ``B`` and ``shift`` are constants.  A batch ``K`` of shape ``(b, n, n)`` (``B`` of shape
    ``(n, r)`` or ``(b, n, r)``) gives the ``b`` traces at once (batched Cholesky; used by the
    random restarts of :mod:`kernelkit.models._concatenated`).
    """

    @staticmethod
    def forward(ctx: Any, K: torch.Tensor, B: torch.Tensor, shift: float) -> torch.Tensor:
        C = cholesky_factor(K, shift=shift, name="K_L").factor
        T = solve_triangular(C, B)
        ctx.save_for_backward(C, T)
        return (T * T).sum((-2, -1))

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None, None]:
        C, T = ctx.saved_tensors
        V = solve_triangular(C.mT, T, upper=True)
        return -grad[..., None, None] * sym_outer(V), None, None


def ridge_trace_loss(K: torch.Tensor, B: torch.Tensor, lam: float) -> torch.Tensor:
    r"""Data term plus penalty of a ridge last layer at its optimum: ``lam tr(W^{-1} B B^T)``.

    ``W = K + n lam I`` (ERM convention ``(1/n) sum ||o_i - f(z_i)||^2 + lam ||f||^2``;
    scikit-learn's ``KernelRidge(alpha=n * lam)``).  Needs ``lam > 0``; see the module
    docstring for the derivation (Laforgue et al. 2019, eqs. 13, 54, 55).
    """
    n = K.shape[0]
    return lam * RidgeTrace.apply(K, B, n * lam)


def ridge_coefficients(K: torch.Tensor, B: torch.Tensor, lam: float) -> torch.Tensor:
    """Optimal last-layer coefficients ``Phi_L = (K + n lam I)^{-1} B`` (eq. 55)."""
    return cholesky_factor(K, shift=K.shape[0] * lam, name="K").solve(B)


def _projected_system(C: torch.Tensor, K_mm: torch.Tensor | None, lam: float) -> CholeskyFactor:
    n, m = C.shape
    M = C.mT @ C
    if lam > 0:
        reg = torch.eye(m, dtype=C.dtype, device=C.device) if K_mm is None else K_mm
        M = M + (n * lam) * reg
    M = 0.5 * (M + M.mT)
    return cholesky_factor(M, name="C^T C + n lam K_mm")


def ridge_loss_projected(
    C: torch.Tensor,
    K_mm: torch.Tensor | None,
    B: torch.Tensor,
    lam: float,
    trace_out: float | torch.Tensor,
) -> torch.Tensor:
    r"""Data term plus penalty of a ridge last layer restricted to ``m`` basis functions.

    ``f(z_i) = C_i Phi`` with penalty ``tr(Phi^T K_mm Phi)`` (``K_mm = None``: identity, the
    primal form of a linear kernel on explicit features).  At the optimum
    ``Phi = M^{-1} C^T B``, ``M = C^T C + n lam K_mm``, the objective is

    .. math:: \frac1n\big(\mathrm{tr} K_{out} - \mathrm{tr}(M^{-1} C^T B B^T C)\big),

    by substitution (``(1/n)||B - C Phi||^2 + lam tr(Phi^T K_mm Phi)`` with the normal
    equations ``M Phi = C^T B``).  ``trace_out`` is ``tr(K_out)``; it may exceed ``||B||^2``
    when ``B`` is a Nyström factor, the difference being the (constant) part of the outputs
    orthogonal to the landmarks' span.  Cost ``O(n m (m + r))``.  Differentiable by autograd.
    """
    n = C.shape[0]
    F = _projected_system(C, K_mm, lam).factor
    T = solve_triangular(F, C.mT @ B)
    return (trace_out - (T * T).sum()) / n


def ridge_coefficients_projected(
    C: torch.Tensor, K_mm: torch.Tensor | None, B: torch.Tensor, lam: float
) -> torch.Tensor:
    """Optimal coefficients ``Phi = (C^T C + n lam K_mm)^{-1} C^T B`` of the projected ridge."""
    return _projected_system(C, K_mm, lam).solve(C.mT @ B)
