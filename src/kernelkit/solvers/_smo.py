r"""Convex quadratic programs with one equality constraint and a box, by SMO.

Solves libsvm's dual form (Chang and Lin, "LIBSVM: a library for support vector machines",
ACM TIST 2(3), 2011, section 4.1)

.. math:: \min_a \tfrac12 a^T Q a + p^T a \quad \text{s.t.} \quad s^T a = 0,
          \quad 0 \le a_t \le u_t, \qquad s_t \in \{-1, +1\},

for a symmetric positive semi-definite ``Q`` given by its columns (so a Gram matrix, or a
low-rank ``Phi Phi^T`` whose columns are formed on demand, is never stored twice).  Each step
updates the pair ``(i, j)`` of the second-order working-set selection of Fan, Chen and Lin
("Working set selection using second order information for training SVM", JMLR 6, 2005,
WSS 2 with ``tau = 1e-12``), solving the two-variable sub-problem exactly and clipping it to
the box as libsvm's ``Solver::Solve`` does; the gradient ``G = Q a + p`` is kept up to date
with two columns of ``Q`` per step.  It stops when the maximal violating pair's gap
``m(a) - M(a)`` is at most ``tol`` (libsvm's ``eps``), and returns the offset ``rho`` of
libsvm's ``calculate_rho`` (the mean of ``s_t G_t`` over the free variables, else the
midpoint of the bounds): the SVR's intercept is ``b = -rho``.  No shrinking: ``O(n)`` NumPy
work per step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from kernelkit.utils._errors import InputError
from kernelkit.utils._validation import check_positive

TAU = 1e-12
"""Curvature used for a pair whose ``Q_ii + Q_jj - 2 s_i s_j Q_ij`` is not positive (libsvm)."""


@dataclass(frozen=True)
class SMOResult:
    """Result of :func:`smo`.

    Attributes
    ----------
    solution : ndarray
        ``a``, shape (N,), feasible.
    gradient : ndarray
        ``Q a + p`` at the solution.
    rho : float
        libsvm's offset (``b = -rho`` for the SVR).
    converged : bool
        Whether the maximal violation fell to ``tol`` before ``max_iter`` steps.
    iterations : int
        Pair updates made.
    violation : float
        The final ``m(a) - M(a)``.
    """

    solution: np.ndarray
    gradient: np.ndarray
    rho: float
    converged: bool
    iterations: int
    violation: float


def _select(
    a: np.ndarray, G: np.ndarray, s: np.ndarray, u: np.ndarray, diag: np.ndarray, column: Callable
) -> tuple[int, int, float, np.ndarray | None]:
    """The working pair ``(i, j)`` of WSS 2, the violation ``m(a) - M(a)`` and column ``i``
    of ``Q`` (``j = -1`` when no pair violates)."""
    up = ((s > 0) & (a < u)) | ((s < 0) & (a > 0))
    low = ((s > 0) & (a > 0)) | ((s < 0) & (a < u))
    score = -s * G
    if not up.any() or not low.any():
        return -1, -1, 0.0, None
    i = int(np.flatnonzero(up)[np.argmax(score[up])])
    g_max = score[i]
    violation = g_max - float(np.min(score[low]))
    b = g_max - score
    candidates = low & (b > 0)
    if not candidates.any():
        return i, -1, violation, None
    Qi = column(i)
    curvature = diag[i] + diag - 2.0 * s[i] * s * Qi
    curvature = np.where(curvature > 0, curvature, TAU)
    gain = np.where(candidates, -(b * b) / curvature, np.inf)
    return i, int(np.argmin(gain)), violation, Qi


def _pair_step(
    a: np.ndarray, G: np.ndarray, s: np.ndarray, u: np.ndarray, i: int, j: int, q: tuple
) -> tuple[float, float]:
    """libsvm's exact two-variable update of ``(a_i, a_j)`` clipped to the box, in place;
    returns the changes.  ``q = (Q_ii, Q_jj, Q_ij)``."""
    q_ii, q_jj, q_ij = q
    ai, aj, ui, uj = a[i], a[j], u[i], u[j]
    old_i, old_j = ai, aj
    if s[i] != s[j]:
        quad = max(q_ii + q_jj + 2.0 * q_ij, TAU)
        delta = (-G[i] - G[j]) / quad
        diff = ai - aj
        ai, aj = ai + delta, aj + delta
        if diff > 0 and aj < 0:
            aj, ai = 0.0, diff
        elif diff <= 0 and ai < 0:
            ai, aj = 0.0, -diff
        if diff > ui - uj and ai > ui:
            ai, aj = ui, ui - diff
        elif diff <= ui - uj and aj > uj:
            aj, ai = uj, uj + diff
    else:
        quad = max(q_ii + q_jj - 2.0 * q_ij, TAU)
        delta = (G[i] - G[j]) / quad
        total = ai + aj
        ai, aj = ai - delta, aj + delta
        if total > ui and ai > ui:
            ai, aj = ui, total - ui
        elif total <= ui and aj < 0:
            aj, ai = 0.0, total
        if total > uj and aj > uj:
            aj, ai = uj, total - uj
        elif total <= uj and ai < 0:
            ai, aj = 0.0, total
    a[i], a[j] = ai, aj
    return ai - old_i, aj - old_j


def _rho(a: np.ndarray, G: np.ndarray, s: np.ndarray, u: np.ndarray) -> float:
    """libsvm's ``calculate_rho``: the mean of ``s_t G_t`` over free ``a_t``, else the
    midpoint of the bounds the variables at their bounds give."""
    yG = s * G
    at_upper, at_lower = a >= u, a <= 0
    free = ~at_upper & ~at_lower
    if free.any():
        return float(yG[free].mean())
    ub_mask = (at_upper & (s < 0)) | (at_lower & ~at_upper & (s > 0))
    lb_mask = (at_upper & (s > 0)) | (at_lower & ~at_upper & (s < 0))
    ub = float(yG[ub_mask].min(initial=np.inf))
    lb = float(yG[lb_mask].max(initial=-np.inf))
    return (ub + lb) / 2


def smo(
    column: Callable[[int], np.ndarray],
    diag: np.ndarray,
    p: np.ndarray,
    signs: np.ndarray,
    upper: np.ndarray,
    *,
    tol: float = 1e-3,
    max_iter: int = -1,
    a0: np.ndarray | None = None,
    callback: Callable[[int, float], None] | None = None,
) -> SMOResult:
    """Minimise ``1/2 a^T Q a + p^T a`` subject to ``signs^T a = 0``, ``0 <= a <= upper``.

    Parameters
    ----------
    column : callable
        ``column(t)``: column ``t`` of ``Q`` as a float64 array of shape (N,).
    diag : ndarray, shape (N,)
        The diagonal of ``Q``.
    p : ndarray, shape (N,)
        Linear term.
    signs : ndarray, shape (N,)
        ``s_t`` in ``{-1, +1}``.
    upper : ndarray, shape (N,)
        Upper bounds ``u_t >= 0`` (``u_t = 0`` pins ``a_t`` at 0).
    tol : float
        Stop when ``m(a) - M(a) <= tol`` (libsvm's ``eps``).
    max_iter : int
        Most pair updates; ``-1``: no limit.
    a0 : ndarray, optional
        A feasible start (``signs^T a0 = 0`` inside the box, e.g. the solution for smaller
        bounds); zeros by default.
    callback : callable, optional
        ``callback(step, violation)`` every ``N`` steps.

    Returns
    -------
    SMOResult
    """
    check_positive(tol, name="tol")
    s = np.asarray(signs, dtype=np.float64)
    u = np.asarray(upper, dtype=np.float64)
    n = len(s)
    if not (np.isin(s, (-1.0, 1.0)).all() and len(p) == n == len(u) == len(diag)):
        raise InputError(
            f"signs: expected N values in {{-1, +1}} with p, upper and diag of length N; got "
            f"lengths {len(s)}, {len(p)}, {len(u)}, {len(diag)}"
        )
    if not (np.isfinite(u).all() and (u >= 0).all()):
        raise InputError(f"upper: expected finite bounds >= 0, got min {u.min():.3g}")
    a = np.zeros(n) if a0 is None else np.clip(np.asarray(a0, dtype=np.float64), 0.0, u)
    G = np.asarray(p, dtype=np.float64).copy()
    for t in np.flatnonzero(a):
        G += a[t] * column(int(t))
    steps, violation = 0, np.inf
    while max_iter < 0 or steps < max_iter:
        i, j, violation, Qi = _select(a, G, s, u, diag, column)
        if Qi is None or violation <= tol:
            break
        Qj = column(j)
        di, dj = _pair_step(a, G, s, u, i, j, (diag[i], diag[j], Qi[j]))
        G += Qi * di + Qj * dj
        steps += 1
        if callback is not None and steps % n == 0:
            callback(steps, violation)
    else:
        violation = _select(a, G, s, u, diag, column)[2]
    return SMOResult(a, G, _rho(a, G, s, u), violation <= tol, steps, float(violation))


__all__ = ["SMOResult", "smo"]
