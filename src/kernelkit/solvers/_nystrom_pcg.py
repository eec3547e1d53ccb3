r"""Falkon's preconditioned conjugate gradients for Nyström kernel ridge regression.

Rudi, Carratino and Rosasco, "FALKON: An Optimal Large Scale Kernel Method" (NeurIPS 2017),
Algorithm 1 and section 3.  With ``m`` centres, ``K_nm = [k(x_i, c_j)]`` and weights
``W = diag(w)`` (all ones for plain ridge), the Nyström estimator
``f(x) = sum_j alpha_j k(x, c_j)`` of

.. math:: \min_\alpha \frac1n \sum_i w_i (y_i - f(x_i))^2 + \lambda \|f\|_H^2,
          \qquad \|f\|_H^2 = \alpha^T K_{mm} \alpha,

solves ``H alpha = K_nm^T W y / n`` with ``H = K_nm^T W K_nm / n + lam K_mm``.  The
preconditioner approximates ``K_nm^T W K_nm`` by ``(n/m) K_mm W_m K_mm`` (``W_m``: the weights
at the centres, which are training points) and is applied through two Cholesky factors,

.. math:: T^T T = K_{mm} + \varepsilon m I, \qquad A^T A = \frac1m T W_m T^T + \lambda I,
          \qquad B = T^{-1} A^{-1},

(``T``, ``A`` upper triangular; Algorithm 1 has ``W_m = I``; the weighted ``A`` is the
preconditioner of the logistic variant, Meanti, Carratino, Rosasco and Rudi, "Kernel methods
through the roof", NeurIPS 2020, section 3 and appendix).  CG runs on the preconditioned
normal equations ``B^T H B beta = B^T K_nm^T W y / n``, and ``alpha = B beta``.  Because
``K_mm ~ T^T T``, the penalty part is ``B^T (lam T^T T) B = lam A^{-T} A^{-1}``; with ``m = n``
and unit weights ``B^T H B = I`` exactly.

This module takes the product ``V -> K_nm^T W K_nm V`` as a callable (it never sees a kernel:
:mod:`kernelkit.gram._streaming` streams it over row tiles) and holds only ``m x m`` matrices.
Several systems (output columns, ``lam`` values, one-vs-rest classes) run together as columns:
column ``j`` belongs to group ``j // q`` (``q`` columns per group), each group with its own
``lam`` and weights at the centres, hence its own ``A``; ``T`` is shared by all of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from kernelkit.solvers._cg import CGResult, conjugate_gradient
from kernelkit.solvers._cholesky import cholesky_factor, solve_triangular
from kernelkit.utils._errors import InputError
from kernelkit.utils._numerics import eps


@dataclass(frozen=True)
class CentreFactor:
    """``K_mm + jitter I = L L^T`` (Falkon's ``T = L^T``), shared by every ``lam`` and weight.

    Attributes
    ----------
    L : torch.Tensor, shape (m, m)
        Lower Cholesky factor (float64).
    jitter : float
        Absolute jitter on the diagonal: Falkon's ``eps m`` times ``mean(diag K_mm)``, plus the
        solver ladder's when that was not enough.
    """

    L: torch.Tensor
    jitter: float

    @property
    def m(self) -> int:
        """Number of centres."""
        return int(self.L.shape[0])


def centre_jitter(
    K_mm: torch.Tensor, *, block_dtype: torch.dtype | None = None, lam: float | None = None
) -> float:
    r"""The one regularisation of ``K_mm`` in every Nyström solver: ``tau s`` on its diagonal.

    ``s = mean(diag K_mm)``, ``tau = max(m eps_64, eps_b^2 / lam)``.  ``m eps_64`` is
    Falkon's jitter ``eps m`` in the dtype of the factors and of the streamed products
    (float64 whatever the dtype of the kernel blocks, :mod:`kernelkit.gram._streaming`).
    ``eps_b`` is the machine epsilon of ``block_dtype``, the dtype the ``K_nm`` blocks are
    computed in (default: that of ``K_mm``): kernel values rounded at ``eps_b s`` add about
    ``eps_b^2 s^2 I`` to ``K_nm^T K_nm / n``, a noise floor that the exact ``K_mm`` does not
    see; ``lam tau >= eps_b^2 s`` bounds the solution's components in those directions (with
    float64 blocks the term is below ``m eps_64``).  Without ``lam``, ``eps_b^2 / lam`` is
    replaced by ``eps_b``.  Meaning: every Nyström solver (Falkon's PCG and the one-pass
    normal equations, :mod:`kernelkit.solvers._nystrom_normal`) penalises
    ``lam alpha^T (K_mm + tau s I) alpha``, so the jitter is part of the objective and the
    solvers agree on it.  Measured with float32 blocks on benchmarks/bench_falkon.py's
    problem (n = 2e4, m = 1000, ``lam = 1e-6``): test MSE 0.011317 as the float64 fit
    (``tau = eps_b``: 0.011318; Falkon's ``m eps_b = 1.2e-4``: 0.01173); on a 4-D problem
    (Gaussian(3), n = 2000, m = 200, ``lam = 1e-6``; float64: 0.01035) 0.0108 against 0.0111
    with ``tau = eps_b``, and 101 CG iterations where no jitter in the penalty took 247.
    """
    if K_mm.ndim != 2 or K_mm.shape[0] != K_mm.shape[1] or K_mm.shape[0] == 0:
        raise InputError(f"K_mm: expected a non-empty square matrix, got {tuple(K_mm.shape)}")
    m = K_mm.shape[0]
    scale = float(K_mm.diagonal().abs().mean()) or 1.0
    eps_b = eps(block_dtype or K_mm.dtype)
    floor = eps_b if lam is None else eps_b**2 / float(lam)
    return max(eps(torch.float64) * m, floor) * scale


def centre_factor(
    K_mm: torch.Tensor, *, block_dtype: torch.dtype | None = None, lam: float | None = None
) -> CentreFactor:
    r"""``T`` of Algorithm 1: Cholesky of ``K_mm + tau s I`` in float64 (:func:`centre_jitter`).

    The penalty of the CG system is ``lam T^T T``, so the jitter enters the objective; the
    solver's jitter ladder adds more when the factorisation still breaks down.
    """
    shift = centre_jitter(K_mm, block_dtype=block_dtype, lam=lam)
    fac = cholesky_factor(K_mm.to(torch.float64), shift=shift, name="K_mm")
    return CentreFactor(fac.factor, shift + fac.jitter)


@dataclass(frozen=True)
class NystromPreconditioner:
    r"""Falkon's ``B = T^{-1} A^{-1}`` for ``g`` groups of ``q`` columns (module docstring).

    Attributes
    ----------
    centre : CentreFactor
        ``T = L^T``.
    A : torch.Tensor, shape (g, m, m)
        Lower factors ``A_low`` with ``A_low A_low^T = L^T W_m L / m + lam I`` (Falkon's
        ``A = A_low^T``).
    lam : torch.Tensor, shape (g,)
        Regularisation of each group.
    """

    centre: CentreFactor
    A: torch.Tensor
    lam: torch.Tensor

    @property
    def groups(self) -> int:
        """Number of groups ``g``."""
        return int(self.A.shape[0])

    def _split(self, U: torch.Tensor) -> torch.Tensor:
        """``(m, g q)`` columns as ``(g, m, q)`` per-group blocks."""
        m, cols = U.shape
        g = self.groups
        if cols % g:
            raise InputError(
                f"U: expected a multiple of {g} columns (one block per group), got {cols}"
            )
        return U.reshape(m, g, cols // g).permute(1, 0, 2)

    @staticmethod
    def _join(U: torch.Tensor) -> torch.Tensor:
        g, m, q = U.shape
        return U.permute(1, 0, 2).reshape(m, g * q)

    def apply(self, U: torch.Tensor) -> torch.Tensor:
        """``B U = T^{-1} A^{-1} U`` (two upper-triangular solves)."""
        V = solve_triangular(self.A.mT, self._split(U), upper=True)
        return self._join(solve_triangular(self.centre.L.mT, V, upper=True))

    def apply_t(self, U: torch.Tensor) -> torch.Tensor:
        """``B^T U = A^{-T} T^{-T} U`` (two lower-triangular solves)."""
        V = solve_triangular(self.centre.L, self._split(U), upper=False)
        return self._join(solve_triangular(self.A, V, upper=False))

    def inverse(self, alpha: torch.Tensor) -> torch.Tensor:
        """``B^{-1} alpha = A T alpha`` (a warm start in the coordinates of CG)."""
        V = self.centre.L.mT @ alpha
        return self._join(self.A.mT @ self._split(V))

    def penalty(self, U: torch.Tensor) -> torch.Tensor:
        """``lam A^{-T} A^{-1} U``, the ``lam K_mm`` part of ``B^T H B``."""
        V = solve_triangular(self.A.mT, self._split(U), upper=True)
        V = solve_triangular(self.A, V, upper=False)
        return self._join(V * self.lam[:, None, None])


def nystrom_preconditioner(
    centre: CentreFactor,
    lam: Any,
    centre_weights: torch.Tensor | None = None,
    *,
    hessian: torch.Tensor | None = None,
) -> NystromPreconditioner:
    r"""Build ``A`` for each group: ``A_low A_low^T = T W_m T^T / m + lam I`` (``T = L^T``).

    Falkon's ``T W_m T^T / m = L^{-1} (K_mm W_m K_mm / m) L^{-T}`` stands for the
    data term ``L^{-1} (K_nm^T W K_nm / n) L^{-T}`` of the system in the coordinates of ``T``,
    estimated on the centres (Rudi, Carratino and Rosasco, "FALKON", NeurIPS 2017, section 3).
    Given that term's ``hessian = K_nm^T W K_nm / n`` itself (one weighted pass,
    :meth:`kernelkit.gram.NystromOperator.normal_equations`), ``A_low A_low^T =
    L^{-1} hessian L^{-T} + lam I`` makes ``B^T H B`` the identity up to the jitter of ``L``
    for the weights it was formed at: CG then converges in a few iterations while the
    weights stay near them (a lagged-Hessian preconditioner of Newton-CG: Nocedal and Wright,
    *Numerical Optimization*, 2nd ed., section 7.1).

    Parameters
    ----------
    centre : CentreFactor
        The shared factor of ``K_mm``.
    lam : float or sequence of float
        ``lam > 0`` of each group (one value: one group).
    centre_weights : torch.Tensor, optional
        Weights at the centres, shape ``(m,)`` (shared) or ``(g, m)`` (one row per group).
    hessian : torch.Tensor, optional
        ``K_nm^T W_g K_nm / n`` of each group, shape ``(g, m, m)`` (float64); replaces
        Falkon's estimate (``centre_weights`` is then ignored).
    """
    L = centre.L
    m = centre.m
    lam_t = torch.as_tensor(lam, dtype=torch.float64, device=L.device).reshape(-1)
    if not bool((lam_t > 0).all()) or not bool(torch.isfinite(lam_t).all()):
        raise InputError(f"lam: expected positive finite values for the preconditioner, got {lam}")
    g = len(lam_t)
    if hessian is not None:
        if hessian.shape != (g, m, m):
            raise InputError(f"hessian: expected shape ({g}, {m}, {m}), got {tuple(hessian.shape)}")
        # L^{-1} S L^{-T} of a symmetric S: two lower-triangular solves
        half = solve_triangular(L, hessian.to(device=L.device, dtype=torch.float64), upper=False)
        M = solve_triangular(L, half.mT, upper=False)
        M = (M + M.mT) / 2
    elif centre_weights is None:
        M = (L.mT @ L / m).expand(g, m, m)
    else:
        w = centre_weights.to(device=L.device, dtype=torch.float64)
        w = w.expand(g, m) if w.ndim == 1 else w
        if w.shape != (g, m):
            raise InputError(
                f"centre_weights: expected shape ({m},) or ({g}, {m}), got {tuple(w.shape)}"
            )
        M = (L.mT[None] * w[:, None, :]) @ L[None] / m
    eye = torch.eye(m, dtype=torch.float64, device=L.device)
    A = cholesky_factor(M + lam_t[:, None, None] * eye, name="T W_m T^T / m + lam I").factor
    return NystromPreconditioner(centre, A, lam_t)


@dataclass(frozen=True)
class NystromPCGResult:
    """Result of :func:`nystrom_pcg`.

    Attributes
    ----------
    coef : torch.Tensor, shape (m, g q)
        ``alpha = B beta``.
    cg : CGResult
        The CG run on ``beta`` (iterations, residual ``||B^T (b - H alpha)|| / ||B^T b||``).
    image : torch.Tensor or None
        ``G alpha`` when ``normal`` also returned ``G V`` (``image=True``); None without
        ``image``, or when no CG step ran from ``x0 = 0`` (then ``alpha = 0``).
    """

    coef: torch.Tensor
    cg: CGResult
    image: torch.Tensor | None = None


def nystrom_pcg(
    normal: Callable[[torch.Tensor], Any],
    rhs: torch.Tensor,
    precond: NystromPreconditioner,
    *,
    n: int,
    tol: float | Callable[[torch.Tensor], float] = 1e-6,
    max_iter: int = 100,
    x0: torch.Tensor | None = None,
    penalty_at: torch.Tensor | None = None,
    image: bool = False,
    callback: Callable[[int, torch.Tensor], None] | None = None,
) -> NystromPCGResult:
    r"""Solve ``(K_nm^T W K_nm / n + lam K_mm) alpha = rhs / n - lam K_mm a`` by Falkon's CG.

    Parameters
    ----------
    normal : callable
        ``V -> K_nm^T W K_nm V`` for ``V`` of shape ``(m, c)`` (float64 in and out); with
        ``image``, ``V -> (K_nm^T W K_nm V, G V)`` for a linear map ``G`` (``K_nm`` itself:
        the tile pass computes ``K_nm V`` on the way).
    rhs : torch.Tensor, shape (m, c)
        ``K_nm^T W Y`` (not yet divided by ``n``).
    precond : NystromPreconditioner
        ``B``; ``c`` must be a multiple of its number of groups.
    n : int
        Number of training points.
    tol, max_iter : float or callable, int
        Stopping rule of :func:`~kernelkit.solvers.conjugate_gradient` on ``beta``: relative
        residual ``||B^T (rhs - n H alpha)|| / ||B^T rhs||`` per column.  A callable gets the
        norms ``||B^T rhs||`` of the columns (after the ``penalty_at`` term) and returns the
        tolerance (the forcing term of an inexact Newton step).
    x0 : torch.Tensor, optional
        Starting ``alpha`` (warm start), mapped to ``beta_0 = A T alpha``.
    penalty_at : torch.Tensor, optional
        ``a`` (default 0): a Newton step ``delta`` of a penalised loss at ``a`` solves this
        system with ``rhs`` the loss part of the negative gradient times ``n``; the term
        enters the preconditioned right-hand side as ``B^T lam T^T T a = lam A^{-T} T a``.
    image : bool
        Carry ``G alpha`` along the CG steps from the ``G V`` of every product
        (:func:`~kernelkit.solvers.conjugate_gradient`'s ``on_step``): no extra product.
    callback : callable, optional
        ``callback(k, rel)`` after every CG iteration.
    """
    latest: list[torch.Tensor] = []
    carried: list[torch.Tensor] = []

    def operator(U: torch.Tensor) -> torch.Tensor:
        out = normal(precond.apply(U))
        if image:
            out, GV = out
            if not latest and x0 is not None:  # the first product is the one with beta_0
                carried.append(GV)
            latest[:] = [GV]
        return precond.apply_t(out / n) + precond.penalty(U)

    def on_step(step: torch.Tensor) -> None:
        increment = latest[0] * step
        carried[:] = [increment if not carried else carried[0] + increment]

    rhs = rhs.to(torch.float64)
    b = precond.apply_t(rhs / n)
    if penalty_at is not None:
        b = b - precond.penalty(precond.inverse(penalty_at.to(torch.float64)))
    if callable(tol):
        tol = tol(torch.linalg.vector_norm(b, dim=0))
    beta0 = None if x0 is None else precond.inverse(x0.to(torch.float64))
    res = conjugate_gradient(
        operator,
        b,
        tol=tol,
        max_iter=max_iter,
        x0=beta0,
        callback=callback,
        on_step=on_step if image else None,
    )
    G_alpha = carried[0] if carried else None
    return NystromPCGResult(precond.apply(res.solution), res, G_alpha)


__all__ = [
    "CentreFactor",
    "NystromPCGResult",
    "NystromPreconditioner",
    "centre_factor",
    "centre_jitter",
    "nystrom_pcg",
    "nystrom_preconditioner",
]
