r"""The one training loop of kernelkit: best state, non-finite stop, stopping rules, progress.

Every iterative training of a torch model goes through :func:`train_loop`: the kernel
autoencoders (full-batch Adam, the alternating Algorithm 1 and minibatch epochs; Laforgue,
Clémençon and d'Alché-Buc 2019, objective (4)), the CKN's supervised training (Mairal 2016,
§3-4) and the MMD generative model (course part 3, section 2).  One iteration is one call of
``evaluate(it)`` (a gradient step's objective, or a whole epoch of minibatch steps ending in
the epoch's objective), optionally followed by ``advance(value)`` (the descent step on that
value, taken after the state that produced it was recorded).  The loop

* records the objective of every iteration (``history``), the iteration 0 objective too when
  the caller gives a ``start`` value;
* keeps the state of the module(s) at the lowest selection key seen (the objective, or a key
  the iteration returns, e.g. a held-out loss) and restores it at the end;
* stops at the first NaN or infinite objective with one :class:`NonFiniteObjectiveWarning`
  (the best state restored);
* stops when a stopping rule holds (:func:`relative_decrease`, :func:`patience`) or after
  ``max_iter`` iterations;
* reports each iteration to a :class:`~kernelkit.utils._progress.Progress`.

:func:`train_module` is the full-batch entry: L-BFGS (:func:`~kernelkit.solvers.lbfgs`,
whose line search evaluates the objective several times per iteration; each evaluation is
recorded by the same bookkeeping) or first-order steps (:func:`train_loop`).
:func:`descend` is the one place a first-order optimiser takes a step.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from kernelkit.solvers._lbfgs import lbfgs
from kernelkit.solvers._optimizers import first_order_optimizer
from kernelkit.utils._errors import InputError
from kernelkit.utils._progress import Progress

__all__ = [
    "NonFiniteObjectiveWarning",
    "Step",
    "TrainResult",
    "descend",
    "patience",
    "relative_decrease",
    "snapshot_state",
    "train_loop",
    "train_module",
]


class NonFiniteObjectiveWarning(RuntimeWarning):
    """The objective became NaN or infinite; training stopped at the best state seen."""


@dataclass
class TrainResult:
    """Outcome of :func:`train_loop` and :func:`train_module`.

    Attributes
    ----------
    history : list of float
        Objective of every recorded evaluation: the start (when given), then every iteration
        (L-BFGS: every evaluation, line-search ones included); a non-finite last entry when
        training stopped on it.
    best : float
        Objective of the kept state (the lowest finite objective when the selection key is
        the objective).
    best_key : Any
        Selection key of the kept state (lower is better; None before the first record).
    best_iter : int
        Iteration of the kept state (0: the start).
    best_payload : Any
        The :attr:`Step.payload` of the kept iteration.
    n_iter : int
        Iterations run (L-BFGS iterations, gradient steps or epochs; at most ``max_iter``).
    n_eval : int
        Objective evaluations (L-BFGS: one or more per iteration).
    stale : int
        Iterations since the selection key last fell by more than the loop's ``improvement``.
    stopped : str
        ``"converged"`` (a stopping rule held), ``"max_iter"`` or ``"non_finite"``.
    """

    history: list[float] = field(default_factory=list)
    best: float = math.inf
    best_key: Any = None
    best_iter: int = 0
    best_payload: Any = None
    n_iter: int = 0
    n_eval: int = 0
    stale: int = 0
    stopped: str = "max_iter"


@dataclass
class Step:
    """What one iteration of :func:`train_loop` reports (``evaluate`` may also return the
    objective alone, a float or a 0-d tensor).

    Attributes
    ----------
    objective : float or tensor
        The iteration's objective (recorded; a non-finite one stops training).
    key : Any, optional
        Selection key of the best state, lower is better (default: the objective); e.g.
        ``(-held_out_accuracy, held_out_loss)``.
    values : dict
        Further quantities shown by the progress report (``accuracy=...``).
    payload : Any
        Kept with the best state (:attr:`TrainResult.best_payload`).
    """

    objective: Any
    key: Any = None
    values: dict[str, float] = field(default_factory=dict)
    payload: Any = None


StopRule = Callable[[TrainResult], bool]
"""``stop(result) -> bool``, asked after every iteration of :func:`train_loop`."""


def relative_decrease(tol: float, window: int = 10) -> StopRule:
    """Stop when the objective fell by less than ``tol`` times its value ``window``
    iterations ago: ``h[-window-1] - h[-1] < tol |h[-window-1]|`` (a rise stops too)."""

    def stop(result: TrainResult) -> bool:
        h = result.history
        return len(h) > window and h[-window - 1] - h[-1] < tol * abs(h[-window - 1])

    return stop


def patience(n: int) -> StopRule:
    """Stop after ``n`` iterations in a row without the selection key falling by more than
    the loop's ``improvement`` (scikit-learn's ``n_iter_no_change``)."""
    return lambda result: result.stale >= n


def snapshot_state(module: Any) -> dict[str, torch.Tensor]:
    """A detached copy of ``module.state_dict()``."""
    return {k: v.detach().clone() for k, v in module.state_dict().items()}


def descend(optimizer: torch.optim.Optimizer, loss: torch.Tensor, schedule: Any = None) -> None:
    """One first-order step on ``loss``: clear the gradients, backpropagate, step (and step
    the learning-rate ``schedule`` when given)."""
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if schedule is not None:
        schedule.step()


class _NonFinite(Exception):
    pass


class _Run:
    """The bookkeeping shared by the loop and the L-BFGS closure."""

    def __init__(self, modules: Sequence[Any], progress: Progress | None, keep_best: bool):
        self.modules = modules
        self.progress = progress
        self.keep_best = keep_best
        self.result = TrainResult()
        self.best_states = [snapshot_state(m) for m in modules] if keep_best else []

    def record(self, it: int, step: Step, improvement: float = 0.0) -> None:
        r = self.result
        v = math.nan
        if step.objective is not None:
            o = step.objective
            v = float(o.detach() if torch.is_tensor(o) else o)
            r.history.append(v)
            r.n_eval += 1
            if not math.isfinite(v):
                raise _NonFinite
        key = v if step.key is None else step.key
        first = r.best_key is None
        lower = first or key < r.best_key
        r.stale = (
            0
            if first or (key < r.best_key - improvement if improvement else lower)
            else r.stale + 1
        )
        if lower or not self.keep_best:
            r.best, r.best_key, r.best_iter, r.best_payload = v, key, it, step.payload
            if self.keep_best:
                self.best_states = [snapshot_state(m) for m in self.modules]
        if self.progress is not None and it > 0:
            self.progress.update(it, objective=v, **step.values)

    def finish(self, what: str) -> TrainResult:
        r = self.result
        count = r.n_eval if what == "evaluation" else r.n_iter
        if r.stopped == "non_finite":
            warnings.warn(
                f"the objective became non-finite at {what} {count}; stopped and kept the "
                f"best state (objective {r.best:.6g}). Try a larger lam, a smaller lr or float64",
                NonFiniteObjectiveWarning,
                stacklevel=4,
            )
        if self.keep_best:
            for m, state in zip(self.modules, self.best_states, strict=True):
                m.load_state_dict(state)
        if self.progress is not None:
            self.progress.done(count, r.stopped)
        return r


def _as_step(value: Any) -> Step:
    return value if isinstance(value, Step) else Step(value)


def train_loop(
    modules: Any,
    evaluate: Callable[[int], Any],
    *,
    max_iter: int,
    advance: Callable[[Any], None] | None = None,
    stop: StopRule | None = None,
    improvement: float = 0.0,
    start: Any = None,
    keep_best: bool = True,
    progress: Progress | None = None,
    unit: str = "iteration",
) -> TrainResult:
    """Run ``max_iter`` iterations of ``evaluate(it)`` (``it = 1, 2, ...``) on ``modules``.

    Parameters
    ----------
    modules : module or sequence of modules
        Whatever has ``state_dict()``/``load_state_dict()``: the state kept at the best
        iteration and restored at the end.
    evaluate : callable
        ``evaluate(it)`` runs iteration ``it`` and returns its objective or a :class:`Step`.
    max_iter : int
        Most iterations.
    advance : callable, optional
        ``advance(objective)`` after the iteration was recorded (the gradient step on the
        returned objective tensor; see :func:`descend`).
    stop : callable, optional
        Stopping rule asked after every iteration (:func:`relative_decrease`,
        :func:`patience`); ``stopped = "converged"`` when it holds.
    improvement : float
        Least fall of the selection key that resets :attr:`TrainResult.stale`.
    start : float, tensor or Step, optional
        The objective of the starting point (iteration 0): recorded and eligible as best (a
        ``Step`` with ``objective=None`` and a ``key``: only the key competes).
    keep_best : bool
        Keep and restore the best state (False: the last state is kept and is "best").
    progress : Progress, optional
        Receives every iteration and the final ``done`` line.
    unit : str
        Word of the non-finite warning (``"epoch"``, ``"step"``).
    """
    if isinstance(modules, torch.nn.Module) or hasattr(modules, "state_dict"):
        modules = [modules]
    run = _Run(list(modules), progress, keep_best)
    result = run.result
    try:
        if start is not None:
            run.record(0, _as_step(start), improvement)
            result.stale = 0
        for it in range(1, max_iter + 1):
            result.n_iter = it
            step = _as_step(evaluate(it))
            run.record(it, step, improvement)
            if advance is not None:
                advance(step.objective)
            if stop is not None and stop(result):
                result.stopped = "converged"
                break
    except _NonFinite:
        result.stopped = "non_finite"
    return run.finish(unit)


def train_module(
    module: Any,
    objective: Callable[[], torch.Tensor],
    *,
    optimizer: str = "lbfgs",
    max_iter: int = 100,
    tol: float = 1e-7,
    lr: float = 1e-2,
    progress: Progress | None = None,
) -> TrainResult:
    """Minimise ``objective()`` over the trainable parameters of ``module``.

    ``lbfgs``: full-batch L-BFGS (:func:`~kernelkit.solvers.lbfgs`, strong-Wolfe line search,
    history 20), stopping when the change of the objective falls below ``tol * |J_0|``, the
    gradient below ``tol`` or the step's largest entry below ``tol`` times the parameters'
    largest initial entry (each test in its own units), or after ``max_iter`` iterations
    (``1.25 max_iter + 1`` objective evaluations at most); ``adam`` (or ``sgd``):
    ``max_iter`` full-batch steps of rate ``lr`` by :func:`train_loop`, stopping when the
    relative decrease over 10 steps is below ``tol`` (:func:`relative_decrease`).  The best
    state is kept; if the objective turns NaN or infinite, training stops there, the best
    state is restored and a :class:`NonFiniteObjectiveWarning` says so.  ``progress``
    receives every evaluation.
    """
    if optimizer not in ("lbfgs", "adam", "sgd"):
        raise InputError(f"optimizer: expected 'lbfgs', 'adam' or 'sgd', got {optimizer!r}")
    params = [p for p in module.parameters() if p.requires_grad]
    if optimizer != "lbfgs":
        opt = first_order_optimizer(optimizer, params, lr=lr)
        return train_loop(
            module,
            lambda it: objective(),
            max_iter=max_iter,
            advance=lambda value: descend(opt, value),
            stop=relative_decrease(tol),
            progress=progress,
            unit="step",
        )
    run = _Run([module], progress, keep_best=True)
    result = run.result

    def evaluate() -> torch.Tensor:
        value = objective()
        run.record(result.n_eval + 1, Step(value))
        return value

    with torch.no_grad():
        j0 = abs(float(objective()))
        x0 = max((float(p.abs().max()) for p in params if p.numel()), default=0.0)
    max_eval = int(max_iter * 1.25) + 1
    try:
        out = lbfgs(
            evaluate,
            params,
            max_iter=max_iter,
            max_eval=max_eval,
            tolerance_grad=tol,
            tolerance_change=tol * max(j0, 1e-300),
            tolerance_step=tol * x0,
            history_size=20,
        )
        result.n_iter = out.n_iter
        limit = out.n_iter >= max_iter or result.n_eval >= max_eval
        result.stopped = "max_iter" if limit else "converged"
    except _NonFinite:
        result.stopped = "non_finite"
    return run.finish("evaluation")
