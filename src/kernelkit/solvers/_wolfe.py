r"""The strong-Wolfe line search of :func:`kernelkit.solvers.lbfgs`.

Nocedal and Wright, *Numerical Optimization*, 2nd ed., 2006: Algorithm 3.5 (bracketing) and
3.6 (zoom) with the safeguarded cubic interpolation of section 3.5 (eq. 3.59), step by step
as ``torch.optim.LBFGS``'s ``line_search_fn="strong_wolfe"`` (same trial steps, same
bracket updates), so that a run gives the same iterates as that optimiser.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

__all__ = ["cubic_minimiser", "strong_wolfe"]

Scalar = Any
"""A float or a 0-d tensor: directional derivatives stay tensors, in the parameters' dtype."""
Directional = Callable[[Scalar], tuple[float, torch.Tensor]]
"""``phi(t) -> (f(x + t d), grad f(x + t d))`` along the search direction ``d``."""


def cubic_minimiser(
    x1: Scalar,
    f1: Scalar,
    g1: Scalar,
    x2: Scalar,
    f2: Scalar,
    g2: Scalar,
    bounds: tuple[Scalar, Scalar] | None = None,
) -> Scalar:
    r"""Minimiser of the cubic interpolating ``f`` and ``f'`` at ``x1`` and ``x2`` (eq. 3.59),
    clipped to ``bounds`` (default: the interval between the points); the middle of the
    bounds when the cubic has no minimiser (``d_1^2 < g_1 g_2``)."""
    lo, hi = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square < 0:
        return (lo + hi) / 2.0
    d2 = d2_square**0.5
    if x1 <= x2:
        pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(pos, lo), hi)


def strong_wolfe(
    phi: Directional,
    t: Scalar,
    d: torch.Tensor,
    f: float,
    g: torch.Tensor,
    gtd: Scalar,
    *,
    c1: float = 1e-4,
    c2: float = 0.9,
    tolerance_change: float = 1e-9,
    max_ls: int = 25,
) -> tuple[float, torch.Tensor, Scalar, int]:
    r"""A step ``t`` satisfying the strong Wolfe conditions
    ``f(x + t d) <= f + c1 t g^T d`` and ``|grad f(x + t d)^T d| <= c2 |g^T d|``.

    Returns the value, gradient and step of the accepted point and the evaluations used (at
    most ``max_ls``); the zoom stops early when the bracket is narrower than
    ``tolerance_change`` (in the largest entry of ``t d``).
    """
    d_norm = d.abs().max()
    f_new, g_new = phi(t)
    evals, ls_iter = 1, 0
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    done = False
    bracket: list[Scalar] = []
    bracket_f: list[float] = []
    bracket_g: list[torch.Tensor] = []
    bracket_gtd: list[Scalar] = []
    while ls_iter < max_ls:
        rise = f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= f_prev)
        if not rise and abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g, done = [t], [f_new], [g_new], True
            break
        if rise or gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new], [gtd_prev, gtd_new]
            break
        t_next = cubic_minimiser(
            t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(t + 0.01 * (t - t_prev), t * 10)
        )
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new, gtd_new
        t = t_next
        f_new, g_new = phi(t)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0.0, t], [f, f_new], [g, g_new]
    insufficient = False
    low, high = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = cubic_minimiser(
            bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1]
        )
        top, bottom = max(bracket), min(bracket)
        eps = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < eps:
            if insufficient or t >= top or t <= bottom:
                t = top - eps if abs(t - top) < abs(t - bottom) else bottom + eps
                insufficient = False
            else:
                insufficient = True
        else:
            insufficient = False
        f_new, g_new = phi(t)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > f + c1 * t * gtd or f_new >= bracket_f[low]:
            bracket[high], bracket_f[high] = t, f_new
            bracket_g[high], bracket_gtd[high] = g_new, gtd_new
            low, high = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bracket_f[high] = bracket[low], bracket_f[low]
                bracket_g[high], bracket_gtd[high] = bracket_g[low], bracket_gtd[low]
            bracket[low], bracket_f[low] = t, f_new
            bracket_g[low], bracket_gtd[low] = g_new, gtd_new
    return bracket_f[low], bracket_g[low], bracket[low], evals
