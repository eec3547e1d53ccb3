r"""L-BFGS: one problem on torch parameters, or many independent problems in a batch.

:func:`lbfgs` minimises a scalar objective of torch parameters by strong-Wolfe L-BFGS
(Nocedal and Wright, *Numerical Optimization*, 2nd ed., 2006, Algorithm 7.5 with the line
search of Algorithm 3.5, :mod:`kernelkit.solvers._wolfe`), step for step as
``torch.optim.LBFGS`` (same iterates) but without ``torch.optim``'s optimiser machinery.
:func:`lbfgs_batched` runs independent L-BFGS problems stacked in the
rows of one tensor (random restarts of a non-convex fit), sharing only the evaluations, and
can stop the rows that reach an optimum already found or that a rule eliminates;
:func:`lbfgs_restarts` runs a pilot of restarts and, as soon as they are certain to disagree,
admits the others and races them by successive halving.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import torch

from kernelkit.solvers._optima import DistinctOptima, Optimum
from kernelkit.solvers._wolfe import strong_wolfe
from kernelkit.utils._errors import InputError

StopRule = Callable[[int, torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]
"""``stop(n_iter, x, values, running) -> mask`` of :func:`lbfgs_batched`."""
AdmitRule = Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]
"""``admit(values, running, held) -> mask`` of :func:`lbfgs_batched`."""

__all__ = [
    "BatchedLBFGSResult",
    "LBFGSResult",
    "halving",
    "lbfgs",
    "lbfgs_batched",
    "lbfgs_restarts",
    "pilot_disagrees",
]


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
    objective: Callable[[], Any],
    params: Iterable[torch.Tensor],
    *,
    max_iter: int = 100,
    max_eval: int | None = None,
    tolerance_grad: float = 1e-7,
    tolerance_change: float = 1e-9,
    history_size: int = 100,
    lr: float = 1.0,
    line_search: str | None = "strong_wolfe",
    tolerance_step: float | None = None,
    returns_gradient: bool = False,
) -> LBFGSResult:
    r"""Minimise ``objective()`` over the tensors ``params`` (in place) by L-BFGS.

    Two-loop recursion on the last ``history_size`` curvature pairs
    :math:`(s_k, y_k)` and a strong-Wolfe line search (Nocedal and Wright 2006, Algorithms
    7.4, 7.5 and 3.5).  Every evaluation recomputes the objective and its gradient, by
    autograd or, with ``returns_gradient``, as ``objective`` returns it.  Stops after
    ``max_iter`` iterations or ``max_eval`` evaluations (default ``max_iter * 5 // 4``),
    when the largest gradient entry is below ``tolerance_grad``, when the change of the
    objective is below ``tolerance_change``, or when the largest entry of the step is below
    ``tolerance_step`` (default ``tolerance_change``, the one tolerance of
    ``torch.optim.LBFGS``; a separate value when ``tolerance_change`` is in the objective's
    units and the parameters have another scale).  Exceptions raised by ``objective``
    propagate (the parameters keep their last values).

    Parameters
    ----------
    objective : callable
        ``() -> scalar tensor`` depending on ``params``; with ``returns_gradient``,
        ``() -> (scalar tensor, gradients)``, one gradient per parameter, same shapes.
    params : iterable of tensors
        Leaf tensors with ``requires_grad=True`` (any tensors with ``returns_gradient``).
    max_iter, max_eval, tolerance_grad, tolerance_change, history_size, lr, line_search :
        As in ``torch.optim.LBFGS`` (``line_search``: its ``line_search_fn``).
    tolerance_step : float, optional
        Threshold of the step test (see above); ``None``: ``tolerance_change``.
    returns_gradient : bool
        Whether ``objective`` returns its gradient too (a closed form, without autograd's
        graph: the same iterates up to rounding, for small problems solved many times).

    Returns
    -------
    LBFGSResult
        Iterations, evaluations and whether a tolerance stopped the run.
    """
    params = list(params)
    max_eval = max_eval if max_eval is not None else max_iter * 5 // 4
    if line_search not in (None, "strong_wolfe"):
        raise InputError(f"line_search: expected 'strong_wolfe' or None, got {line_search!r}")

    def evaluate() -> tuple[float, torch.Tensor]:
        if returns_gradient:
            value, gradients = objective()
            return float(value), torch.cat([g.reshape(-1) for g in gradients])
        for p in params:
            p.grad = None
        with torch.enable_grad():
            value = objective()
            value.backward()
        flat = [torch.zeros_like(p).view(-1) if p.grad is None else p.grad.view(-1) for p in params]
        return float(value), torch.cat(flat)

    def add(step: Any, direction: torch.Tensor) -> None:
        offset = 0
        for p in params:
            p.add_(direction[offset : offset + p.numel()].view_as(p), alpha=step)
            offset += p.numel()

    def along(x: list[torch.Tensor], direction: torch.Tensor) -> Callable[[Any], Any]:
        def phi(step: Any) -> tuple[float, torch.Tensor]:
            add(step, direction)
            out = evaluate()
            for p, saved in zip(params, x, strict=True):
                p.copy_(saved)
            return out

        return phi

    with torch.no_grad():
        n_iter, n_eval = _lbfgs_steps(
            evaluate,
            add,
            along,
            params,
            max_iter,
            max_eval,
            tolerance_grad,
            (tolerance_change, tolerance_change if tolerance_step is None else tolerance_step),
            history_size,
            lr,
            line_search is not None,
        )
    return LBFGSResult(n_iter, n_eval, n_iter < max_iter)


def _lbfgs_steps(
    evaluate: Callable[[], tuple[float, torch.Tensor]],
    add: Callable[[Any, torch.Tensor], None],
    along: Callable[[list[torch.Tensor], torch.Tensor], Callable[[Any], Any]],
    params: list[torch.Tensor],
    max_iter: int,
    max_eval: int,
    tolerance_grad: float,
    tolerances: tuple[float, float],
    history_size: int,
    lr: float,
    wolfe: bool,
) -> tuple[int, int]:
    """The iterations of :func:`lbfgs` (two-loop recursion, Algorithm 7.4): iterations and
    evaluations used; ``tolerances`` are ``(tolerance_change, tolerance_step)``."""
    tolerance_change, tolerance_step = tolerances
    loss, g = evaluate()
    evals = 1
    if g.abs().max() <= tolerance_grad:
        return 0, evals
    dirs: list[torch.Tensor] = []
    steps: list[torch.Tensor] = []
    ro: list[Any] = []
    al: list[Any] = [None] * history_size
    H_diag: Any = 1
    d = t = g_prev = None
    n_iter = 0
    while n_iter < max_iter:
        n_iter += 1
        if n_iter == 1:
            d = g.neg()
        else:
            y, s = g.sub(g_prev), d.mul(t)
            ys = y.dot(s)
            if ys > 1e-10:
                if len(dirs) == history_size:
                    dirs.pop(0), steps.pop(0), ro.pop(0)
                dirs.append(y), steps.append(s), ro.append(1.0 / ys)
                H_diag = ys / y.dot(y)
            q = g.neg()
            for i in range(len(dirs) - 1, -1, -1):
                al[i] = steps[i].dot(q) * ro[i]
                q.add_(dirs[i], alpha=-al[i])
            d = r = torch.mul(q, H_diag)
            for i in range(len(dirs)):
                r.add_(steps[i], alpha=al[i] - dirs[i].dot(r) * ro[i])
        g_prev = g.clone(memory_format=torch.contiguous_format)
        loss_prev = loss
        t = min(1.0, 1.0 / g.abs().sum()) * lr if n_iter == 1 else lr
        gtd = g.dot(d)
        if gtd > -tolerance_change:
            break
        if wolfe:
            x = [p.clone(memory_format=torch.contiguous_format) for p in params]
            loss, g, t, used = strong_wolfe(
                along(x, d), t, d, loss, g, gtd, max_ls=max_eval - evals
            )
            add(t, d)
        else:
            add(t, d)
            used = 0
            if n_iter != max_iter:
                loss, g = evaluate()
                used = 1
        evals += used
        if n_iter == max_iter or evals >= max_eval or g.abs().max() <= tolerance_grad:
            break
        if d.mul(t).abs().max() <= tolerance_step or abs(loss - loss_prev) < tolerance_change:
            break
    return n_iter, evals


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
    eliminated: torch.Tensor | None = None
    """Rows stopped by the ``stop`` rule of :func:`lbfgs_batched` (their values are those at
    elimination; they carry no optimum label)."""
    held: torch.Tensor | None = None
    """Rows of :func:`lbfgs_batched` held back and never admitted (value ``nan``, no label)."""


def lbfgs_batched(
    fun: Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]],
    x0: torch.Tensor,
    *,
    max_iter: int = 200,
    tol: float = 1e-9,
    history_size: int = 10,
    max_ls: int = 30,
    distinct: DistinctOptima | None = None,
    stop: StopRule | None = None,
    hold: torch.Tensor | None = None,
    admit: AdmitRule | None = None,
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

    With a registry ``distinct`` (:class:`~kernelkit.solvers.DistinctOptima`), every
    row that stops is labelled with the optimum it reached (a new one if it matches none),
    and after every iteration a running row whose value and invariant summary match an
    optimum already registered (found by this call or an earlier one on the same registry)
    stops there: it would converge to a copy of it.  ``distinct=None`` runs every row to
    its own stopping rule, bit for bit as without the option.

    A rule ``stop(n_iter, x, values, running) -> mask`` is called after every iteration with
    the iterations of the batch done, all rows, their values and the boolean mask of the rows still
    running (after the merges above); the running rows it marks stop there and are flagged in
    the result's ``eliminated`` (they are not labelled with an optimum).  ``stop=None`` adds
    nothing to the run.

    Rows of the boolean mask ``hold`` start held back: they are neither evaluated nor run
    until a rule ``admit(values, running, held) -> mask`` (called before every iteration,
    held rows have value ``nan``) admits them; an admitted row is evaluated at its starting
    point and runs from then on with an empty history, so its path is the one it follows
    when it runs from the start (its history slots hold zeros, which add nothing to the
    two-loop recursion).  Every row gets ``max_iter`` iterations of its own; ``n_iter`` is
    the most any row ran.  Rows never admitted are flagged in the result's ``held``.
    """
    x = x0.detach().clone()
    b, p = x.shape
    on_x = {"device": x.device}

    def evaluate(rows_x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``fun`` with its values and gradients on ``x``'s device (``fun`` may compute on
        another, e.g. a CPU variable driving a GPU objective)."""
        values, grads = fun(rows_x)
        return values.to(**on_x), grads.to(**on_x)

    held = torch.zeros(b, dtype=torch.bool, **on_x) if hold is None else hold.to(**on_x)
    f, g = x.new_full((b,), math.nan), torch.zeros_like(x)
    res = BatchedLBFGSResult(f)
    S = x.new_zeros(history_size, b, p)
    Yh = x.new_zeros(history_size, b, p)
    rho = x.new_zeros(history_size, b)
    k = 0
    active = torch.zeros(b, dtype=torch.bool, **on_x)
    iters = torch.zeros(b, dtype=torch.long, **on_x)
    labels = torch.full((b,), -1, dtype=torch.long, **on_x)
    eliminated = torch.zeros(b, dtype=torch.bool, **on_x)
    start = ~held
    loops = 0  # iterations of the batch
    while True:
        if bool(start.any()):
            new = start.nonzero()[:, 0]
            f[new], g[new] = evaluate(x[new])
            res.n_eval += 1
            res.n_rows += new.numel()
            active[new] = torch.isfinite(f[new]) & (g[new].abs().amax(1) > tol)
            held &= ~start
            start = torch.zeros_like(start)
        active &= iters < max_iter
        if admit is not None and bool(held.any()):
            start = admit(f, active.clone(), held.clone()) & held
            if bool(start.any()):
                continue
        rows = active.nonzero()[:, 0]
        if rows.numel() == 0:
            break
        iters[rows] += 1
        loops += 1
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
            ft, gt = evaluate(trial)
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
        res.history.append(float(f.masked_fill(held, math.inf).min()))
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
        if stop is not None:
            out = stop(loops, x, f, active.clone()) & active
            eliminated |= out
            active &= ~out
    res.values = f
    res.n_iter = int(iters.max())
    if stop is not None:
        res.eliminated = eliminated
    if hold is not None:
        res.held = held
    if distinct is not None:
        # never active, or still running at max_iter
        left = ((labels < 0) & ~eliminated & ~held).nonzero()[:, 0]
        labels[left] = distinct.assign(x[left], f[left])
        res.labels, res.optima = labels, distinct.optima
    return x, res


def halving(first_round: int) -> StopRule:
    r"""Successive-halving rule for the ``stop`` of :func:`lbfgs_batched`.

    After iterations ``first_round``, ``2 first_round``, ``4 first_round``, ... the ``m``
    rows still running are ranked by their current value (ties by row order) and all but the
    best ``ceil(m / 2)`` stop, until one row runs (successive halving: Jamieson and Talwalkar,
    *Non-stochastic best arm identification and hyperparameter optimization*, AISTATS 2016,
    Algorithm 1, with a budget that doubles per round).
    """
    rounds = [int(first_round)]

    def stop(n_iter: int, x: torch.Tensor, f: torch.Tensor, running: torch.Tensor) -> torch.Tensor:
        out = torch.zeros_like(running)
        if n_iter < rounds[0]:
            return out
        rounds[0] *= 2
        rows = running.nonzero()[:, 0]
        order = rows[torch.argsort(f[rows], stable=True)]
        out[order[math.ceil(rows.numel() / 2) :]] = True
        return out

    return stop


def pilot_disagrees(values: torch.Tensor, running: torch.Tensor, rtol: float) -> bool:
    r"""Whether restarts that are still running or have stopped are certain to end at more than
    one optimum (values within ``rtol``).

    ``values``: current values (final for the stopped rows); ``running``: mask of the rows
    still running.  L-BFGS values only decrease, so with ``s`` the lowest stopped value the
    final values cannot all agree (``max f - min f <= rtol |min f|``) when a stopped value
    is non-finite, the stopped values already spread by more than ``rtol |s|``, or a running
    value ``f_r`` is below ``s`` with ``s - f_r > rtol |f_r|`` (``m -> s - m - rtol |m|``
    decreases, so every final value ``m <= f_r`` keeps ``s - m > rtol |m|``).  ``False``
    while no row has stopped.
    """
    stopped = values[~running]
    if stopped.numel() == 0:
        return False
    if not bool(torch.isfinite(stopped).all()):
        return True
    low = stopped.min()
    if float(stopped.max() - low) > rtol * abs(float(low)):
        return True
    ahead = values[running]
    return bool((low - ahead > rtol * ahead.abs()).any())


def lbfgs_restarts(
    fun: Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]],
    x0: torch.Tensor,
    *,
    patience: int = 8,
    first_round: int = 12,
    rtol: float = 1e-6,
    invariant: Callable[[torch.Tensor], torch.Tensor] | None = None,
    invariant_rtol: float | None = None,
    **options: int | float,
) -> tuple[torch.Tensor, BatchedLBFGSResult]:
    r"""Restarts from the rows of ``x0`` that stop when they agree, raced when they do not.

    One :func:`lbfgs_batched` run in which the rows after the first ``patience`` are held:

    1. *Pilot*: the first ``patience`` rows run.  When all of them stop at finite values
       within ``rtol`` of each other (``max f - min f <= rtol |min f|``: ``patience``
       consecutive restarts that find neither a better nor a worse optimum than the first),
       the run ends there and the other rows are never evaluated.
    2. *Race*: as soon as the pilot is certain to disagree (:func:`pilot_disagrees`, which
       implies the test of 1 fails once the pilot ends), the other rows are admitted, and
       the pilot rows still running go on with their histories.  After ``first_round``,
       ``2 first_round``, ... iterations counted from the admission, the worse half of the
       rows still running (pilot rows included) stops (:func:`halving`), until one runs.

    One :class:`~kernelkit.solvers.DistinctOptima` registry (``rtol``, ``invariant``,
    ``invariant_rtol``) serves both phases, so a row heading to an optimum already found
    stops there.  ``options``: ``max_iter`` (per row), ``tol``, ``history_size``,
    ``max_ls`` of :func:`lbfgs_batched`.  A row that is not eliminated follows exactly its
    path in ``lbfgs_batched`` on all of ``x0``, so the best value is that of the full batch
    (to ``rtol``) whenever a restart reaching the best optimum (or a copy of it) is in an
    agreeing pilot or survives the race.

    Returns
    -------
    x : torch.Tensor
        Final rows of the restarts run, ``(n_run, p)``: the pilot's when it agrees, else all.
    result : BatchedLBFGSResult
        Values (eliminated rows: their value at elimination), ``eliminated`` mask, labels,
        merged count, counters and the distinct optima of the restarts run.
    """
    distinct = DistinctOptima(rtol, invariant, invariant_rtol)
    b = x0.shape[0]
    if b <= patience:
        x, res = lbfgs_batched(fun, x0, distinct=distinct, **options)
        res.eliminated = torch.zeros(b, dtype=torch.bool, device=x.device)
        return x, res
    hold = torch.arange(b, device=x0.device) >= patience
    pilot = ~hold
    admitted_at: list[int] = []  # the batch iteration at which the race starts
    iters_done = [0]
    race = halving(first_round)

    def admit(values: torch.Tensor, running: torch.Tensor, held: torch.Tensor) -> torch.Tensor:
        if pilot_disagrees(values[pilot], running[pilot], rtol):
            admitted_at.append(iters_done[0])
            return held
        return torch.zeros_like(held)

    def stop(n_iter: int, x: torch.Tensor, f: torch.Tensor, running: torch.Tensor) -> torch.Tensor:
        iters_done[0] = n_iter
        if not admitted_at:
            return torch.zeros_like(running)
        return race(n_iter - admitted_at[0], x, f, running)

    x, res = lbfgs_batched(
        fun, x0, distinct=distinct, stop=stop, hold=hold, admit=admit, **options
    )  # fmt: skip
    if admitted_at:
        res.held = None
        return x, res
    assert res.labels is not None and res.eliminated is not None
    res.values, res.labels = res.values[:patience], res.labels[:patience]
    res.eliminated, res.held = res.eliminated[:patience], None
    return x[:patience], res
