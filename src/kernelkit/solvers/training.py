r"""The training loop of the representer engine: full-batch L-BFGS or Adam on a torch module.

The kernel autoencoders and the concatenated regression (:mod:`kernelkit.models`) minimise a
differentiable objective of their representer coefficients (Laforgue, Clémençon and
d'Alché-Buc 2019, objective (4); section 4.2 for the gradient).  :func:`train_module` runs the
optimiser, records the objective at every evaluation, keeps the module at the best finite
objective seen, and stops with a :class:`NonFiniteObjectiveWarning` when the objective turns
NaN or infinite.  It knows nothing of the model: anything with ``parameters()``,
``state_dict()`` and ``load_state_dict()`` and a closure computing its objective.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from kernelkit.solvers.lbfgs import lbfgs
from kernelkit.utils.errors import InputError

__all__ = [
    "NonFiniteObjectiveWarning",
    "TrainResult",
    "progress_reporter",
    "snapshot_state",
    "train_module",
]


class NonFiniteObjectiveWarning(RuntimeWarning):
    """The objective became NaN or infinite; training stopped at the best state seen."""


@dataclass
class TrainResult:
    """Outcome of :func:`train_module`.

    Attributes
    ----------
    history : list of float
        Objective at every evaluation (L-BFGS, including line-search ones) or iteration (Adam).
    best : float
        Lowest finite objective seen; the model is left at the coefficients that gave it.
    n_iter : int
        Iterations: L-BFGS iterations or Adam steps (at most ``max_iter``).
    n_eval : int
        Objective evaluations (L-BFGS: one or more per iteration, in its line search).
    stopped : str
        ``"converged"``, ``"max_iter"`` (the iteration or evaluation limit was reached) or
        ``"non_finite"``.
    """

    history: list[float] = field(default_factory=list)
    best: float = math.inf
    n_iter: int = 0
    n_eval: int = 0
    stopped: str = "max_iter"


class _NonFinite(Exception):
    pass


def snapshot_state(module: Any) -> dict[str, torch.Tensor]:
    """A detached copy of ``module.state_dict()``."""
    return {k: v.detach().clone() for k, v in module.state_dict().items()}


def train_module(
    module: Any,
    objective: Callable[[], torch.Tensor],
    *,
    optimizer: str = "lbfgs",
    max_iter: int = 100,
    tol: float = 1e-7,
    lr: float = 1e-2,
    progress: bool | Callable[[int, float], None] = False,
) -> TrainResult:
    """Minimise ``objective()`` over the trainable parameters of ``module``.

    ``lbfgs``: full-batch L-BFGS (:func:`~kernelkit.solvers.lbfgs`, strong-Wolfe line search,
    history 20), stopping when the change of the objective falls below ``tol * |J_0|`` or the
    gradient below ``tol``, or after ``max_iter`` iterations (``1.25 max_iter + 1`` objective
    evaluations at most); ``adam``: ``max_iter`` full-batch Adam steps of rate ``lr``,
    stopping when the relative decrease over 10 steps is below ``tol``.  The best state is
    kept; if the objective turns NaN or infinite, training stops there, the best state is
    restored and a :class:`NonFiniteObjectiveWarning` says so.
    """
    if optimizer not in ("lbfgs", "adam"):
        raise InputError(f"optimizer: expected 'lbfgs' or 'adam', got {optimizer!r}")
    params = [p for p in module.parameters() if p.requires_grad]
    result = TrainResult()
    best_state = snapshot_state(module)
    report = progress_reporter(progress, max_iter)

    def evaluate() -> torch.Tensor:
        value = objective()
        v = float(value.detach())
        result.history.append(v)
        result.n_eval += 1
        if not math.isfinite(v):
            raise _NonFinite
        if v < result.best:
            result.best = v
            best_state.update(snapshot_state(module))
        report(result.n_eval, v)
        return value

    try:
        if optimizer == "lbfgs":
            with torch.no_grad():
                j0 = abs(float(objective()))
            max_eval = int(max_iter * 1.25) + 1
            run = lbfgs(
                evaluate,
                params,
                max_iter=max_iter,
                max_eval=max_eval,
                tolerance_grad=tol,
                tolerance_change=tol * max(j0, 1e-300),
                history_size=20,
            )
            result.n_iter = run.n_iter
            limit = run.n_iter >= max_iter or result.n_eval >= max_eval
            result.stopped = "max_iter" if limit else "converged"
        else:
            opt = torch.optim.Adam(params, lr=lr)
            for it in range(max_iter):
                result.n_iter += 1
                opt.zero_grad()
                value = evaluate()
                value.backward()
                opt.step()
                h = result.history
                if it >= 10 and h[-11] - h[-1] < tol * abs(h[-11]):
                    result.stopped = "converged"
                    break
    except _NonFinite:
        result.stopped = "non_finite"
        warnings.warn(
            f"the objective became non-finite at evaluation {result.n_eval}; stopped and kept "
            f"the best state (objective {result.best:.6g}). Try a larger lam, a smaller lr or "
            "float64",
            NonFiniteObjectiveWarning,
            stacklevel=3,
        )
    module.load_state_dict(best_state)
    return result


def progress_reporter(progress: bool | Callable[[int, float], None], total: int) -> Callable:
    """``progress`` itself when callable, a no-op when False, else a one-line text bar."""
    if callable(progress):
        return progress
    if not progress:
        return lambda it, value: None
    step = max(1, total // 20)

    def report(it: int, value: float) -> None:
        if it == 1 or it % step == 0:
            bar = "#" * min(20, 20 * it // max(total, 1))
            print(f"\r[{bar:<20}] iter {it:>5}/{total}  objective {value:.6g}", end="", flush=True)

    return report
