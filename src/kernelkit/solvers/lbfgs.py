r"""L-BFGS: one problem on torch parameters, or many independent problems in a batch.

:func:`lbfgs` minimises a scalar objective of torch parameters with the strong-Wolfe L-BFGS of
``torch.optim.LBFGS`` (Nocedal and Wright, *Numerical Optimization*, 2nd ed., 2006,
Algorithm 7.5 with the line search of Algorithm 3.5); it is the one place where that
optimiser is driven.  :func:`lbfgs_batched` runs independent L-BFGS problems stacked in the
rows of one tensor (random restarts of a non-convex fit), sharing only the evaluations, and
can stop the rows that reach an optimum already found; :func:`lbfgs_restarts` runs such
restarts in batches until ``patience`` consecutive ones find no better optimum.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import torch

from kernelkit.solvers.optima import DistinctOptima, Optimum

__all__ = ["BatchedLBFGSResult", "LBFGSResult", "lbfgs", "lbfgs_batched", "lbfgs_restarts"]


@dataclass(frozen=True)
class LBFGSResult:
    """Outcome of :func:`lbfgs`.

    Attributes
    ----------
    n_iter : int
        L-BFGS iterations run.
    n_eval : int
        Objective evaluations (line-search ones included).
    converged : bool
        Whether a tolerance stopped the run before ``max_iter`` iterations.
    """

    n_iter: int
    n_eval: int
    converged: bool


def lbfgs(
    objective: Callable[[], torch.Tensor],
    params: Iterable[torch.Tensor],
    *,
    max_iter: int = 100,
    max_eval: int | None = None,
    tolerance_grad: float = 1e-7,
    tolerance_change: float = 1e-9,
    history_size: int = 100,
    lr: float = 1.0,
    line_search: str | None = "strong_wolfe",
) -> LBFGSResult:
    r"""Minimise ``objective()`` over the tensors ``params`` (in place) by L-BFGS.

    Two-loop recursion on the last ``history_size`` curvature pairs
    :math:`(s_k, y_k)` and a strong-Wolfe line search (Nocedal and Wright 2006, Algorithms
    7.4, 7.5 and 3.5).  Every evaluation recomputes the objective and its gradient by
    autograd.  Stops after ``max_iter`` iterations or ``max_eval`` evaluations (default
    ``max_iter * 5 // 4``), when the largest gradient entry is below ``tolerance_grad``, or
    when the step or the change of the objective is below ``tolerance_change``.  Exceptions
    raised by ``objective`` propagate (the parameters keep their last values).

    Parameters
    ----------
    objective : callable
        ``() -> scalar tensor`` depending on ``params``.
    params : iterable of tensors
        Leaf tensors with ``requires_grad=True``.
    max_iter, max_eval, tolerance_grad, tolerance_change, history_size, lr, line_search :
        As in ``torch.optim.LBFGS`` (``line_search``: its ``line_search_fn``).

    Returns
    -------
    LBFGSResult
        Iterations, evaluations and whether a tolerance stopped the run.
    """
    params = list(params)
    optimizer = torch.optim.LBFGS(
        params,
        lr=lr,
        max_iter=max_iter,
        max_eval=max_eval,
        tolerance_grad=tolerance_grad,
        tolerance_change=tolerance_change,
        history_size=history_size,
        line_search_fn=line_search,
    )

    def closure() -> torch.Tensor:
        optimizer.zero_grad()
        value = objective()
        value.backward()
        return value

    optimizer.step(closure)
    state = optimizer.state[params[0]]
    n_iter = int(state.get("n_iter", 0))
    return LBFGSResult(n_iter, int(state.get("func_evals", 0)), n_iter < max_iter)


@dataclass
class BatchedLBFGSResult:
    """Outcome of :func:`lbfgs_batched` / :func:`lbfgs_restarts`: final values per restart,
    counters and, when distinct optima are tracked, the optimum each restart reached."""

    values: torch.Tensor
    n_iter: int = 0
    n_eval: int = 0
    n_rows: int = 0
    """Row evaluations: the sum over evaluations of the number of rows evaluated."""
    history: list[float] = field(default_factory=list)
    labels: torch.Tensor | None = None
    """Index into ``optima`` of the optimum each row reached (``-1``: non-finite)."""
    optima: list[Optimum] = field(default_factory=list)
    """The distinct optima, in the order they were found."""
    n_merged: int = 0
    """Rows stopped before convergence because they had reached an optimum already found."""


def lbfgs_batched(
    fun: Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]],
    x0: torch.Tensor,
    *,
    max_iter: int = 200,
    tol: float = 1e-9,
    history_size: int = 10,
    max_ls: int = 30,
    distinct: DistinctOptima | None = None,
) -> tuple[torch.Tensor, BatchedLBFGSResult]:
    r"""Independent L-BFGS runs (Nocedal and Wright 2006, Algorithm 7.4/7.5) on the rows of ``x0``.

    ``fun(x)`` returns the values ``(m,)`` and gradients ``(m, p)`` of ``m`` independent
    problems at the ``m`` rows of ``x`` (any subset of the problems: a row carries everything
    that defines its problem); every row keeps its own curvature pairs ``(s, y)`` (skipped when
    ``s^T y <= 0``), its own initial scaling ``s^T y / y^T y`` and its own backtracking (Armijo,
    ``c1 = 1e-4``, safeguarded quadratic interpolation of the step within ``[0.1 t, 0.5 t]``)
    step, so the result of each row is that of a separate run; only the evaluations are shared.
    Each evaluation carries only the rows that still need one: converged rows leave the batch,
    and a line-search trial re-evaluates only the rows whose step was rejected.
    A row stops when its largest gradient entry is below ``tol``, when its relative decrease
    falls below ``tol`` or when the line search fails; non-finite trial values are rejected.

    With a registry ``distinct`` (:class:`~kernelkit.solvers.optima.DistinctOptima`), every
    row that stops is labelled with the optimum it reached (a new one if it matches none),
    and after every iteration a running row whose value and invariant summary match an
    optimum already registered (found by this call or an earlier one on the same registry)
    stops there: it would converge to a copy of it.  ``distinct=None`` runs every row to
    its own stopping rule, bit for bit as without the option.
    """
    x = x0.detach().clone()
    b, p = x.shape
    f, g = fun(x)
    res = BatchedLBFGSResult(f.clone(), n_eval=1, n_rows=b)
    S = x.new_zeros(history_size, b, p)
    Yh = x.new_zeros(history_size, b, p)
    rho = x.new_zeros(history_size, b)
    k = 0
    active = torch.isfinite(f) & (g.abs().amax(1) > tol)
    labels = torch.full((b,), -1, dtype=torch.long)
    for _ in range(max_iter):
        rows = active.nonzero()[:, 0]
        if rows.numel() == 0:
            break
        res.n_iter += 1
        g_r = g[rows]
        q = g_r.clone()
        idx = [(k - 1 - i) % history_size for i in range(min(k, history_size))]
        alphas = []
        for j in idx:
            a = rho[j, rows] * (S[j, rows] * q).sum(1)
            q -= a[:, None] * Yh[j, rows]
            alphas.append(a)
        gamma = 1.0 / g_r.norm(dim=1).clamp_min(1e-300)
        if idx:
            j = idx[0]
            yy = (Yh[j, rows] ** 2).sum(1)
            ok = (rho[j, rows] > 0) & (yy > 0)
            gamma = torch.where(ok, 1.0 / (rho[j, rows] * yy).clamp_min(1e-300), gamma)
        r = gamma[:, None] * q
        for j, a in zip(reversed(idx), reversed(alphas), strict=True):
            beta = rho[j, rows] * (Yh[j, rows] * r).sum(1)
            r += S[j, rows] * (a - beta)[:, None]
        d = -r
        gd = (g_r * d).sum(1)
        uphill = gd >= 0
        if bool(uphill.any()):
            d[uphill] = -g_r[uphill] / g_r[uphill].norm(dim=1, keepdim=True).clamp_min(1e-300)
            gd = (g_r * d).sum(1)
        x_r, f_r = x[rows], f[rows]
        x_new, f_new, g_new = x_r.clone(), f_r.clone(), g_r.clone()
        t = torch.ones(rows.numel(), dtype=x.dtype, device=x.device)
        pending = torch.arange(rows.numel(), device=x.device)
        for _ls in range(max_ls):
            trial = x_r[pending] + t[pending, None] * d[pending]
            ft, gt = fun(trial)
            res.n_eval += 1
            res.n_rows += pending.numel()
            base, slope = f_r[pending], gd[pending]
            ok = torch.isfinite(ft) & (ft <= base + 1e-4 * t[pending] * slope)
            done = pending[ok]
            x_new[done], f_new[done], g_new[done] = trial[ok], ft[ok], gt[ok]
            if bool(ok.all()):
                pending = pending[:0]
                break
            # safeguarded quadratic interpolation of the step (Nocedal-Wright section 3.5)
            t_p = t[pending]
            curv = ft - base - slope * t_p
            t_q = -slope * t_p * t_p / (2.0 * curv.clamp_min(1e-300))
            t_q = torch.where(torch.isfinite(ft) & (curv > 0), t_q, 0.5 * t_p)
            t[pending] = torch.minimum(torch.maximum(t_q, 0.1 * t_p), 0.5 * t_p)
            pending = pending[~ok]
        s, yv = x_new - x_r, g_new - g_r
        sy = (s * yv).sum(1)
        slot = k % history_size
        S[slot, rows], Yh[slot, rows] = s, yv
        rho[slot, rows] = torch.where(
            sy > 1e-12 * s.norm(dim=1) * yv.norm(dim=1), 1.0 / sy, torch.zeros_like(sy)
        )
        k += 1
        small = (f_r - f_new).abs() <= tol * f_r.abs().clamp_min(1e-300)
        x[rows], f[rows], g[rows] = x_new, f_new, g_new
        still = ~small & (g_new.abs().amax(1) > tol)
        still[pending] = False  # the line search failed for these rows
        active[rows] = still
        res.history.append(float(f.min()))
        if distinct is not None:
            stopped = rows[~still]
            labels[stopped] = distinct.assign(x[stopped], f[stopped])
            running = active.nonzero()[:, 0]
            if len(distinct) and running.numel():
                found = distinct.assign(x[running], f[running], add=False)
                hit = found >= 0
                labels[running[hit]] = found[hit]
                active[running[hit]] = False
                res.n_merged += int(hit.sum())
    res.values = f
    if distinct is not None:
        left = (labels < 0).nonzero()[:, 0]  # never active, or still running at max_iter
        labels[left] = distinct.assign(x[left], f[left])
        res.labels, res.optima = labels, distinct.optima
    return x, res


def lbfgs_restarts(
    fun: Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]],
    x0: torch.Tensor,
    *,
    batch_size: int = 8,
    patience: int = 8,
    rtol: float = 1e-6,
    invariant: Callable[[torch.Tensor], torch.Tensor] | None = None,
    invariant_rtol: float | None = None,
    **options: int | float,
) -> tuple[torch.Tensor, BatchedLBFGSResult]:
    r"""Restarts from the rows of ``x0``, ``batch_size`` at a time, until they stop improving.

    Each batch is one :func:`lbfgs_batched` call (``options``: its ``max_iter``, ``tol``,
    ``history_size``, ``max_ls``) sharing one
    :class:`~kernelkit.solvers.optima.DistinctOptima` registry (``rtol``, ``invariant``,
    ``invariant_rtol``), so a restart heading to an optimum found by an earlier batch stops
    there.  Taking the restarts in row order, restart ``i`` *improves* when its final value
    ``f_i`` is finite and ``f_i < f_best - rtol |f_best|`` (``f_best``: the lowest value of
    the restarts before it; the first finite one always improves).  After every batch the run
    stops once the last ``patience`` restarts have not improved, or when the rows of ``x0``
    are used up.  The rows run are a prefix of ``x0``, so the best value is at most that of
    ``lbfgs_batched`` on all of ``x0`` plus ``rtol`` relative when the best optimum is
    reached within the prefix.

    Returns
    -------
    x : torch.Tensor
        Final rows of the restarts run, ``(n_run, p)``.
    result : BatchedLBFGSResult
        Values, labels and merged counts of the restarts run; iterations, evaluations and
        row evaluations summed over the batches; the distinct optima found.
    """
    distinct = DistinctOptima(rtol, invariant, invariant_rtol)
    xs, results = [], []
    best, since = math.inf, 0
    for start in range(0, x0.shape[0], batch_size):
        x, res = lbfgs_batched(fun, x0[start : start + batch_size], distinct=distinct, **options)
        xs.append(x)
        results.append(res)
        for v in res.values.tolist():
            improves = math.isfinite(v) and (best == math.inf or v < best - rtol * abs(best))
            best, since = (v, 0) if improves else (best, since + 1)
        if since >= patience:
            break
    out = BatchedLBFGSResult(
        torch.cat([r.values for r in results]),
        n_iter=sum(r.n_iter for r in results),
        n_eval=sum(r.n_eval for r in results),
        n_rows=sum(r.n_rows for r in results),
        history=[h for r in results for h in r.history],
        labels=torch.cat([r.labels for r in results if r.labels is not None]),
        optima=distinct.optima,
        n_merged=sum(r.n_merged for r in results),
    )
    return torch.cat(xs), out
