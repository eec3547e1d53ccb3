r"""The regularisation of Nyström kernel logistic regression chosen on held-out data.

``lam="auto"`` of :class:`~kernelkit.estimators.KernelLogisticRegression`: a random fraction
``logistic_holdout`` (an option, :func:`kernelkit.get_config`) of the training rows is held
out, the objective of :mod:`kernelkit.models._falkon_logistic` restricted to the other rows,

.. math:: J_\lambda(\alpha) = \frac{1}{n_\text{tr}} \sum_{i \in \text{tr}}
          \log\big(1 + e^{-y_i f(x_i)}\big) + \lambda \alpha^T K_{mm} \alpha,

is followed along the decreasing grid :func:`relative_grid` with one warm-started Newton step per
value (the homotopy of logistic Falkon: Meanti, Carratino, Rosasco and Rudi, "Kernel methods
through the roof", NeurIPS 2020, section 3 and appendix; one Newton step per penalty of a
geometrically decreasing list keeps the iterate in the region of quadratic convergence of the
next one: Marteau-Ferey, Bach and Rudi, "Globally convergent Newton methods for
ill-conditioned generalized self-concordant losses", NeurIPS 2019, section 4), and every
iterate is scored by its mean logistic loss on the held-out rows (hold-out validation of the
regularisation: Hastie, Tibshirani and Friedman, *The Elements of Statistical Learning*,
2nd ed., section 7.2); the chosen ``lam`` is the largest whose loss is within one standard
error of the lowest (the one-standard-error rule, ibid. section 7.10).  The held-out rows
stay in the passes over ``K_nm`` with sample weight 0 (the training rows weigh
``n / n_tr``), so their decision values come with every pass at no extra kernel
evaluation.  The path stops ``logistic_patience`` (an option) values after the last one that
lowered the held-out loss by more than a standard error (past it no value can change the
rule's choice by much, and each smaller ``lam`` costs more CG iterations).  The chosen
``lam`` is then fitted on all the rows, warm-started at the path's iterate.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from scipy.stats import rankdata

from kernelkit.models._falkon import NystromSystem
from kernelkit.models._falkon_logistic import (
    HessianSample,
    NystromLogisticResult,
    logistic_preconditioner,
    nystrom_logistic_fit,
    nystrom_logistic_onepass,
    preconditioner_due,
    rebuild_passes,
    sample_passes,
)
from kernelkit.models._ridge_path import lam_grid
from kernelkit.utils._config import deprecated_options, options
from kernelkit.utils._errors import InputError
from kernelkit.utils._seeding import check_random_state
from kernelkit.utils._validation import EncodedLabels


def relative_grid() -> np.ndarray:
    """``lam`` values of ``lam="auto"`` relative to the kernel's scale (:func:`auto_grid`):
    the one ``lam`` lattice up to ``1e-1`` (:func:`~kernelkit.models._ridge_path.lam_grid`;
    ``1e-1 .. 1e-9`` in half decades), decreasing (the homotopy's order)."""
    return lam_grid(high=1e-1)[::-1].copy()


__getattr__ = deprecated_options(
    __name__,
    {
        "HOLDOUT": "logistic_holdout",
        "PATIENCE": "logistic_patience",
        "PATH_CG_TOL": "logistic_path_cg_tol",
        "REBUILD": "logistic_rebuild",
    },
)
"""The path's constants of the previous release, now options (``kernelkit.get_config``):
importable with a ``FutureWarning`` for one release."""


@dataclass(frozen=True)
class LogisticPath:
    """Result of :func:`logistic_lam_path`.

    Attributes
    ----------
    lams : ndarray
        The ``lam`` values visited, decreasing.
    loss : ndarray
        Mean held-out logistic loss (summed over one-vs-rest columns) at each.
    error : ndarray
        Held-out misclassification rate at each.
    se : ndarray
        Standard error of each ``loss`` (:func:`held_out_scores`).
    best : int
        Index chosen by the one-standard-error rule (:func:`one_standard_error`).
    coef, scores : torch.Tensor
        ``alpha`` and ``f = K_nm alpha`` (every row) of the iterate at ``lams[best]``.
    n_newton, n_cg : int
        Newton steps and CG iterations along the path.
    """

    lams: np.ndarray
    loss: np.ndarray
    error: np.ndarray
    se: np.ndarray
    best: int
    coef: torch.Tensor
    scores: torch.Tensor
    n_newton: int
    n_cg: int

    @property
    def lam(self) -> float:
        """The chosen ``lam``."""
        return float(self.lams[self.best])

    def cv_results(self) -> dict[str, Any]:
        """The path in scikit-learn's ``cv_results_`` layout (one split, the held-out rows):
        ``params``, ``param_lam``, ``mean_test_score`` (minus the held-out log loss, as
        scikit-learn's ``"neg_log_loss"``), ``rank_test_score``, ``sem_test_score`` (its
        standard error) and ``mean_test_error``."""
        score = -self.loss
        return {
            "params": [{"lam": float(v)} for v in self.lams],
            "param_lam": np.ma.MaskedArray(self.lams.copy(), mask=False),
            "mean_test_score": score,
            "rank_test_score": rankdata(-score, method="min").astype(np.int32),
            "sem_test_score": self.se.copy(),
            "mean_test_error": self.error.copy(),
        }


def auto_grid(diagonal: torch.Tensor) -> np.ndarray:
    """:func:`relative_grid` times the kernel's scale ``mean_i k(x_i, x_i)`` (over ``diagonal``,
    the centres' or the points'): scaling the kernel by ``c`` scales the ``lam`` of the same
    model by ``c`` (``lam alpha^T K alpha`` with ``f = K alpha``), so the grid follows it;
    1 for the Gaussian kernel.  At the grid's top, ``1e-1`` of the scale, the first Newton
    step from ``f = 0`` stays near 0 (the penalty's Hessian ``2 lam K_mm`` outweighs the
    loss's ``K_nm^T K_nm / (4 n)``, whose largest eigenvalue is at most the scale times
    ``lambda_max(K_mm)`` over 4)."""
    scale = float(diagonal.double().mean())
    if not scale > 0 or not np.isfinite(scale):
        raise InputError(
            f"kernel: lam='auto' scales its grid by the mean k(x, x); expected it positive "
            f"and finite, got {scale!r}"
        )
    return relative_grid() * scale


def holdout_rows(n: int, random_state: Any = None, fraction: float | None = None) -> np.ndarray:
    """Boolean mask of ``max(1, round(fraction n))`` held-out rows drawn uniformly without
    replacement (at least one row is kept for training); ``fraction`` default: the option
    ``logistic_holdout``.

    An int ``random_state`` seeds the stream ``SeedSequence((seed, 1))``, independent of the
    centres the same seed draws; a generator is consumed (:mod:`kernelkit.utils._seeding`).
    """
    if n < 2:
        raise InputError(f"X: lam='auto' holds out part of the rows; expected n >= 2, got {n}")
    fraction = options().logistic_holdout if fraction is None else fraction
    count = min(n - 1, max(1, round(fraction * n)))
    if isinstance(random_state, (int, np.integer)):
        rng = np.random.default_rng(np.random.SeedSequence((int(random_state), 1)))
    else:
        rng = check_random_state(random_state)
    mask = np.zeros(n, dtype=bool)
    mask[rng.choice(n, size=count, replace=False)] = True
    return mask


def held_out_scores(f: torch.Tensor, Y: torch.Tensor) -> tuple[float, float, float]:
    """Mean logistic loss ``log(1 + exp(-y f))`` (summed over columns), misclassification
    rate (sign for one column, largest ``f`` one-vs-rest) and standard error of the mean loss
    (the rows' losses' standard deviation over ``sqrt(rows)``) of scores ``f`` against
    ``+-1`` targets ``Y``, both ``(n, c)``."""
    rows = torch.nn.functional.softplus(-Y * f).sum(1)
    if Y.shape[1] == 1:
        wrong = (f[:, 0] >= 0) != (Y[:, 0] > 0)
    else:
        wrong = f.argmax(1) != Y.argmax(1)
    se = float(rows.std()) / len(rows) ** 0.5 if len(rows) > 1 else 0.0
    return float(rows.mean()), float(wrong.double().mean()), se


def one_standard_error(loss: np.ndarray, se: np.ndarray) -> int:
    """Index of the largest ``lam`` (first of a decreasing path) whose held-out loss is within
    one standard error of the lowest: the one-standard-error rule (Hastie, Tibshirani and
    Friedman, *The Elements of Statistical Learning*, 2nd ed., section 7.10; Breiman et al.,
    *Classification and Regression Trees*, 1984, section 3.4.3)."""
    low = int(np.argmin(loss))
    return int(np.flatnonzero(loss <= loss[low] + se[low])[0])


def follow_lam_path(
    lams: np.ndarray,
    step: Callable[[float], tuple[torch.Tensor, Any]],
    Y_out: torch.Tensor,
    patience: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, Any]:
    """Follow the decreasing ``lams``: ``step(lam)`` takes the warm-started step(s) at ``lam``
    and returns the held-out rows' scores ``f_out`` and the iterate; each iterate is scored
    against ``Y_out`` (:func:`held_out_scores`), the path stops ``patience`` values (default:
    the option ``logistic_patience``) after the last fall of the loss by more than its
    standard error, and the chosen index is the one-standard-error rule's
    (:func:`one_standard_error`).

    Returns ``(lams visited, loss, error, se, best, iterate at best)``.

    Raises
    ------
    InputError
        If ``lams`` is not a decreasing sequence of positive values.
    """
    lams = np.asarray(lams, dtype=np.float64)
    if lams.ndim != 1 or not len(lams) or not (lams > 0).all() or (np.diff(lams) >= 0).any():
        raise InputError(f"lams: expected decreasing positive values, got {lams!r}")
    patience = options().logistic_patience if patience is None else patience
    loss: list[float] = []
    error: list[float] = []
    se: list[float] = []
    iterates: list[Any] = []
    ref = 0
    for k, lam in enumerate(lams):
        f_out, iterate = step(float(lam))
        l_k, e_k, se_k = held_out_scores(f_out, Y_out)
        loss.append(l_k)
        error.append(e_k)
        se.append(se_k)
        iterates.append(iterate)
        if l_k < loss[ref] - se[ref]:  # a significant improvement
            ref = k
        elif k - ref >= patience:
            break
    best = one_standard_error(np.array(loss), np.array(se))
    return lams[: len(loss)], np.array(loss), np.array(error), np.array(se), best, iterates[best]


def logistic_lam_path(
    system: NystromSystem,
    y: Any,
    held_out: np.ndarray,
    lams: Any = None,
    *,
    solver: str = "pcg",
    patience: int | None = None,
) -> LogisticPath:
    """Follow the decreasing ``lams`` with one warm-started Newton step each on the rows not
    ``held_out`` and score every iterate on the held-out rows (module docstring).

    ``solver``: ``"pcg"`` (Newton-PCG,
    :func:`~kernelkit.models._falkon_logistic.nystrom_logistic_fit`, each step's CG to the
    relative residual of the option ``logistic_path_cg_tol``, the preconditioner rebuilt by
    the rule of ``logistic_rebuild``) or ``"onepass"``
    (:func:`~kernelkit.models._falkon_logistic.nystrom_logistic_onepass`).

    Raises
    ------
    InputError
        If ``held_out`` does not mark some but not all of the ``n`` rows, or ``lams`` is not
        a decreasing sequence of positive values.
    """
    lams = auto_grid(system.K_mm.diagonal()) if lams is None else lams
    n = system.op.shape[0]
    held_out = np.asarray(held_out, dtype=bool)
    if held_out.shape != (n,) or held_out.all() or not held_out.any():
        raise InputError(
            f"held_out: expected a boolean mask of the {n} rows marking some but not all, "
            f"got shape {held_out.shape} with {int(held_out.sum())} marked"
        )
    y = EncodedLabels.of(y)  # once for every step
    Y = y.Y
    out_rows = torch.as_tensor(held_out, device=system.device)
    weights = (~out_rows).double() * (n / int((~out_rows).sum()))
    coef = scores = precond = None
    built, spent, budget = np.inf, 0, rebuild_passes(system, Y.shape[1])
    sample: HessianSample | None = None
    sample_cost = sample_passes(system, Y.shape[1])
    n_newton = n_cg = 0
    opt = options()

    def step(lam: float) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        nonlocal coef, scores, precond, built, spent, sample, n_newton, n_cg
        if solver == "onepass":
            res = nystrom_logistic_onepass(
                system, y, lam, sample_weight=weights, max_newton=1, coef0=coef, scores0=scores
            )
        else:
            due, sample = preconditioner_due(system, sample, spent, n_cg, sample_cost, budget)
            if lam * opt.logistic_rebuild <= built * (1 + 1e-12) or due:
                f = (
                    torch.zeros(n, Y.shape[1], dtype=torch.float64, device=system.device)
                    if scores is None
                    else scores
                )
                # Falkon's: weights at every centre (held-out ones too), the centres sample
                # the rows; the row sample's: the held-out rows weigh 0
                precond = logistic_preconditioner(
                    system, f, lam, None if sample is None else weights, sample=sample
                )
                built, spent = lam, 0
            res = nystrom_logistic_fit(
                None,
                None,
                y,
                system.indices,
                lam,
                sample_weight=weights,
                max_newton=1,
                system=system,
                tol=opt.logistic_path_cg_tol,
                forcing=0.0,
                coef0=coef,
                scores0=scores,
                preconditioner=precond,
            )
        coef, scores = res.coef, res.scores
        if scores is None:
            scores = system.op.matmat(coef)
        n_newton, n_cg, spent = n_newton + res.n_newton, n_cg + res.n_cg, spent + res.n_cg
        return scores[out_rows], (coef, scores)

    Y_out = Y.to(device=system.device, dtype=torch.float64)[out_rows]
    *scored, (coef_best, scores_best) = follow_lam_path(lams, step, Y_out, patience)
    return LogisticPath(*scored, coef_best, scores_best, n_newton, n_cg)


def nystrom_logistic_auto(
    system: NystromSystem,
    y: Any,
    held_out: np.ndarray,
    *,
    solver: str = "pcg",
    lams: Any = None,
    max_newton: int = 30,
    newton_tol: float = 1e-10,
) -> tuple[LogisticPath, NystromLogisticResult]:
    """``lam`` chosen by :func:`logistic_lam_path`, then fitted on every row from the path's
    iterate (Newton to ``newton_tol``; PCG: one preconditioner, built at the start).

    Returns
    -------
    path : LogisticPath
    result : NystromLogisticResult
        The fit at ``path.lam`` on all the rows.
    """
    y = EncodedLabels.of(y)
    path = logistic_lam_path(system, y, held_out, lams, solver=solver)
    start = {"coef0": path.coef, "scores0": path.scores}
    if solver == "onepass":
        res = nystrom_logistic_onepass(
            system, y, path.lam, max_newton=max_newton, newton_tol=newton_tol, **start
        )
    else:
        res = nystrom_logistic_fit(
            None,
            None,
            y,
            system.indices,
            path.lam,
            max_newton=max_newton,
            newton_tol=newton_tol,
            system=system,
            preconditioner=logistic_preconditioner(system, path.scores, path.lam),
            rebuild_after=rebuild_passes(system, path.scores.shape[1]),
            sampled=True,
            **start,
        )
    return path, res


__all__ = [
    "LogisticPath",
    "auto_grid",
    "follow_lam_path",
    "held_out_scores",
    "holdout_rows",
    "logistic_lam_path",
    "nystrom_logistic_auto",
    "one_standard_error",
    "relative_grid",
]
