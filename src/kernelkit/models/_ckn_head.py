r"""The linear classifier of a convolutional kernel network on fixed features, and the
internal cross-validation that chooses its ridge penalty (and the feature columns).

* :func:`fit_linear_head`: multinomial logistic regression by L-BFGS, the classifier of the
  unsupervised CKN and the starting point (and, alternating, the exact inner step) of the
  supervised training of :mod:`kernelkit.models._ckn_train` (Mairal 2016, §3-4).
* :func:`cross_validate_lam` / :func:`lam_cv_scores`: stratified ``k``-fold cross-validation
  of ``lam`` (and of column sets), with the one-standard-error rule
  (:func:`parsimonious_choice`, :func:`beats_by_one_se`; Hastie, Tibshirani & Friedman 2009,
  section 7.10).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from kernelkit.models._logistic_path import one_standard_error
from kernelkit.models._ridge import psd_factor, sym_outer
from kernelkit.models._ridge_path import lam_grid
from kernelkit.solvers import lbfgs
from kernelkit.solvers._cholesky import solve_triangular
from kernelkit.solvers._lbfgs import LBFGSResult

__all__ = [
    "beats_by_one_se",
    "cross_validate_lam",
    "cv_folds",
    "fit_linear_head",
    "lam_cv_grid",
    "lam_cv_scores",
    "parsimonious_choice",
    "row_space_features",
    "stratified_folds",
]


def fit_linear_head(
    head: nn.Linear,
    features: torch.Tensor,
    y: torch.Tensor,
    *,
    lam: float,
    max_iter: int = 500,
    warm_start: bool = False,
) -> LBFGSResult:
    r"""Multinomial logistic regression on fixed features, written into ``head``.

    Minimises ``(1/n) sum_i CE(W f_i + b, y_i) + lam ||W||^2`` (the objective of
    :func:`~kernelkit.models._ckn_train.train_classifier` with the network frozen) over
    ``(W, b)`` from zero, in float64, by L-BFGS (:func:`kernelkit.solvers.lbfgs`) on the
    closed-form gradient ``((1/n) R^T F + 2 lam W, (1/n) R^T 1)`` with ``R = softmax(F W^T
    + b) - Y`` (``Y`` the one-hot labels) instead of autograd's: the classifier of the
    unsupervised CKN, the starting point of the end-to-end training (Mairal 2016, §3).
    From zero with more columns than rows (``d > n``), the run is on the rows' span
    coordinates ``R`` (:func:`row_space_features`, ``F = R Q^T``) and ``W = W_R Q^T =
    W_R R^{-1} F``: the same minimiser at ``O(n^2)`` instead of ``O(n d)`` per iteration.

    Parameters
    ----------
    head : nn.Linear
        Receives the solution (cast to its dtype and device).
    features : tensor, shape (n, d)
        Fixed features ``f_i``.
    y : tensor of int, shape (n,)
        Class codes in ``0 .. head.out_features - 1``.
    lam : float
        Ridge penalty on ``W`` (``b`` is not penalised).
    max_iter : int
        L-BFGS iterations.
    warm_start : bool
        Start from the current ``head`` instead of zero (same minimiser: the problem is
        strictly convex in ``W`` for ``lam > 0``).

    Returns
    -------
    LBFGSResult
    """
    F64 = features.detach().to(torch.float64)
    if warm_start or F64.shape[1] <= F64.shape[0]:
        W, b, result = _logistic_lbfgs(head, F64, y, lam, max_iter, warm_start)
    else:  # the same minimiser on the rows' span coordinates, W = W_R R^{-1} F
        R = row_space_features(F64)
        W_R, b, result = _logistic_lbfgs(head, R, y, lam, max_iter, False)
        W = solve_triangular(R.T, W_R.T, upper=True).T @ F64
    with torch.no_grad():
        head.weight.copy_(W.detach().to(head.weight))
        head.bias.copy_(b.detach().to(head.bias))
    return result


def _logistic_lbfgs(
    head: nn.Linear, F64: torch.Tensor, y: torch.Tensor, lam: float, max_iter: int,
    warm_start: bool,
) -> tuple[torch.Tensor, torch.Tensor, LBFGSResult]:  # fmt: skip
    """The L-BFGS run of :func:`fit_linear_head` on float64 features ``F64``: ``(W, b)``."""
    W = torch.zeros(head.out_features, F64.shape[1], dtype=torch.float64, device=F64.device)
    b = torch.zeros(head.out_features, dtype=torch.float64, device=F64.device)
    if warm_start:
        W.copy_(head.weight.detach())
        b.copy_(head.bias.detach())
    n = F64.shape[0]
    onehot = F.one_hot(y.to(F64.device), head.out_features).to(torch.float64)

    def objective() -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        log_p = torch.addmm(b, F64, W.T).log_softmax(1)
        residual = (log_p.exp() - onehot) / n
        value = -(log_p * onehot).sum() / n + lam * (W * W).sum()
        return value, (residual.T @ F64 + (2 * lam) * W, residual.sum(0))

    with one_thread():
        result = lbfgs(
            objective,
            [W, b],
            max_iter=max_iter,
            tolerance_grad=1e-9,
            tolerance_change=1e-12,
            returns_gradient=True,
        )
    return W, b, result


@contextmanager
def one_thread() -> Iterator[None]:
    """Run torch single-threaded inside the block (restored after).

    The classifier's L-BFGS is thousands of small operations; spread over threads each of
    them waits for the others, which on a shared, loaded CPU costs many times the work
    (measured in ``docs/measurements.md``; the result is the same).
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def lam_cv_grid() -> tuple[float, ...]:
    """Ridge penalties tried by :func:`cross_validate_lam`: the decades ``1e-7 .. 1e-1`` of
    the one ``lam`` lattice (:func:`~kernelkit.models._ridge_path.lam_grid`; normalised
    features of norm about 1 need the larger ones, raw mean-pooled k-mer features the smaller
    ones)."""
    return tuple(float(v) for v in lam_grid(1e-7, 1e-1, per_decade=1))


def stratified_folds(y: torch.Tensor, n_folds: int, generator: torch.Generator) -> torch.Tensor:
    """Fold index (``0 .. n_folds - 1``) of every sample, each class dealt round-robin over
    the folds in a random order, so every fold holds ``floor`` or ``ceil`` of ``n_c / n_folds``
    members of class ``c``."""
    fold = torch.empty_like(y)
    for c in torch.unique(y):
        members = torch.nonzero(y == c).flatten()
        members = members[torch.randperm(len(members), generator=generator).to(y.device)]
        fold[members] = torch.arange(len(members), device=y.device) % n_folds
    return fold


def cv_folds(n_samples: int) -> int:
    """Folds of the internal cross-validation: 5 below 1000 samples, where 3 folds'
    accuracies are too coarse to rank the candidates, else 3."""
    return 5 if n_samples < 1000 else 3


def lam_cv_scores(
    features: torch.Tensor,
    y: torch.Tensor,
    n_classes: int,
    fold: torch.Tensor,
    *,
    column_sets: tuple[torch.Tensor | None, ...] = (None,),
    grid: tuple[float, ...] | None = None,
    max_iter: int = 50,
) -> list[tuple[tuple[float, float, int, float], tuple[float, int]]]:
    r"""Cross-validated scores of the multinomial logistic regression :func:`fit_linear_head`
    on fixed ``features``, for every column set and ``lam`` of ``grid`` (default
    :func:`lam_cv_grid`).

    ``fold`` holds the fold index of every sample (:func:`stratified_folds`); ``column_sets``
    are boolean masks of the feature columns to use (``None``: all).  In each fold the grid
    is followed from the largest ``lam`` down, each fit (at most ``max_iter`` L-BFGS
    iterations) warm-started at the previous solution.  A column set of more columns than
    samples is replaced by its rows' coordinates in their span (:func:`row_space_features`:
    the same minimisers and held-out logits, so the same scores up to where the ``max_iter``
    iterations stop, at ``O(n^2)`` instead of ``O(n d)`` per iteration).

    Returns
    -------
    list of ``(key, (lam, index))``
        ``key = (-correct, cross_entropy, index, lam)``: minus the held-out correct
        predictions and the summed held-out cross-entropy over the folds, then the column set's
        position in ``column_sets`` and ``lam``, so the smallest key is the best accuracy,
        ties going to the lower loss, then to the earlier column set and the smaller ``lam``.
    """
    order = sorted(lam_cv_grid() if grid is None else grid, reverse=True)
    n_folds = int(fold.max()) + 1 if len(fold) else 0
    scores = []
    for s, columns in enumerate(column_sets):
        F_s = features if columns is None else features[:, columns]
        if F_s.shape[1] > F_s.shape[0]:
            F_s = row_space_features(F_s)
        accuracy = torch.zeros(len(order), dtype=torch.float64)
        entropy = torch.zeros(len(order), dtype=torch.float64)
        head = nn.Linear(F_s.shape[1], n_classes, dtype=torch.float64, device=F_s.device)
        for f in range(n_folds):
            train, test = fold != f, fold == f
            if not bool(test.any()) or not bool(train.any()):
                continue
            torch.nn.init.zeros_(head.weight)
            torch.nn.init.zeros_(head.bias)
            for i, lam in enumerate(order):
                fit_linear_head(
                    head, F_s[train], y[train], lam=lam, max_iter=max_iter, warm_start=True
                )
                with torch.no_grad():
                    logits = head(F_s[test].to(torch.float64))
                    accuracy[i] += float((logits.argmax(1) == y[test]).sum())
                    entropy[i] += float(F.cross_entropy(logits, y[test], reduction="sum"))
        scores += [((-float(accuracy[i]), float(entropy[i]), s, lam), (lam, s))
                   for i, lam in enumerate(order)]  # fmt: skip
    return scores


def row_space_features(features: torch.Tensor) -> torch.Tensor:
    r"""Coordinates ``R`` (n x n) of the rows of ``features`` (n x d, ``d > n``) in their
    span: ``R R^T = F F^T``, the lower Cholesky factor of the linear Gram
    (:func:`~kernelkit.models._ridge.psd_factor`, its jitter of relative order eps).

    ``F = R Q^T`` with ``Q^T = R^{-1} F`` of orthonormal rows, so ``W -> W Q`` maps every
    classifier on ``F`` to one on ``R`` with the same logits on the rows of ``F`` and no
    larger norm; the ridge-penalised logistic regression on any subset of the rows therefore
    has the same minimum and the same logits on all the rows (the representer theorem of
    the linear kernel: its minimiser lies in the span of the training rows).  Its cost per
    iteration drops from ``O(n d)`` to ``O(n^2)``.
    """
    F64 = features.detach().to(torch.float64)
    return psd_factor(sym_outer(F64), name="features")


CVEntry = tuple[tuple[float, float, int, float], tuple[float, int]]


def _first_within_one_se(keys: list[tuple[float, ...]], n_samples: int) -> int:
    """Index of the first :func:`lam_cv_scores` key (in order of preference) whose error
    rate ``e = 1 - correct / n`` is within one binomial standard error ``sqrt(e (1 - e) /
    n)`` of the lowest (:func:`~kernelkit.models._logistic_path.one_standard_error`)."""
    error = np.array([1.0 + key[0] / n_samples for key in keys])
    return one_standard_error(error, np.sqrt(error * (1.0 - error) / n_samples))


def parsimonious_choice(scores: list[CVEntry], n_samples: int) -> CVEntry:
    r"""The one-standard-error rule over :func:`lam_cv_scores` entries of ``n_samples``
    held-out predictions: the first column set (the most parsimonious, e.g. the fewest
    pyramid levels) whose best cross-validated accuracy is within one binomial standard
    error of the best over all sets, then that set's smallest key.

    Hastie, Tibshirani & Friedman, *The Elements of Statistical Learning*, 2nd ed., section
    7.10: the simplest model within one standard error of the lowest estimated error.
    """
    best: dict[int, CVEntry] = {}
    for entry in scores:
        s = entry[1][1]
        best[s] = min(best[s], entry) if s in best else entry
    sets = sorted(best)
    return best[sets[_first_within_one_se([best[s][0] for s in sets], n_samples)]]


def beats_by_one_se(new: tuple[float, ...], old: tuple[float, ...], n_samples: int) -> bool:
    """Whether the :func:`lam_cv_scores` key ``new`` replaces the earlier (preferred) ``old``:
    its error rate is lower by more than one standard error of the difference of two
    binomial proportions, ``sqrt((e_1 (1 - e_1) + e_2 (1 - e_2)) / n)`` (two estimates, each
    with the noise of its own fold draw and fits; :func:`parsimonious_choice`)."""
    e_new, e_old = (1.0 + key[0] / n_samples for key in (new, old))
    return e_old - e_new > math.sqrt((e_new * (1 - e_new) + e_old * (1 - e_old)) / n_samples)


def cross_validate_lam(
    features: torch.Tensor,
    y: torch.Tensor,
    n_classes: int,
    *,
    generator: torch.Generator,
    column_sets: tuple[torch.Tensor | None, ...] = (None,),
    n_folds: int | None = None,
    grid: tuple[float, ...] | None = None,
    max_iter: int = 50,
    parsimony: bool = False,
    n_repeats: int = 1,
) -> tuple[float, int]:
    r"""The ``lam`` of ``grid`` (default :func:`lam_cv_grid`) and the column set of best
    ``n_folds``-fold cross-validated accuracy of the multinomial logistic regression
    :func:`fit_linear_head` on fixed ``features`` (:func:`lam_cv_scores`).

    ``column_sets`` are boolean masks of the feature columns to use (``None``: all), e.g.
    the levels of a pyramid of position bins kept.  Folds are stratified
    (:func:`stratified_folds`), ``n_folds`` of them (default :func:`cv_folds`); ties in mean
    accuracy go to the lower mean held-out cross-entropy, then to the earlier column set and
    the smaller ``lam``; with ``parsimony`` the column set is the one-standard-error rule's
    (:func:`parsimonious_choice`).  This is the internal cross-validation of the classifier's
    regularisation that the string kernels' table gets from its inner grid search over ``C``
    (``docs/strings.md``; ``C = 1 / (2 n lam)``), on the CKN features.

    With ``n_repeats > 1`` the correct predictions and cross-entropies are summed over that
    many independent draws of the folds (repeated stratified ``k``-fold cross-validation:
    the variance of the estimate that comes from one partition averages out; Kohavi, IJCAI
    1995, section 3; Kim, *Comput. Stat. Data Anal.* 53, 2009).  The one-standard-error rule
    then counts the ``n_repeats n`` held-out predictions as independent, a narrower error
    bar than the truth.

    Returns
    -------
    lam : float
        The chosen penalty.
    index : int
        The position of the chosen column set in ``column_sets``.
    """
    n_folds = cv_folds(len(y)) if n_folds is None else n_folds
    scores: list[CVEntry] = []
    for _ in range(n_repeats):
        fold = stratified_folds(y, n_folds, generator)
        draw = lam_cv_scores(
            features, y, n_classes, fold, column_sets=column_sets, grid=grid, max_iter=max_iter
        )
        scores = draw if not scores else [
            ((old[0] + new[0], old[1] + new[1], *old[2:]), choice)
            for (old, choice), (new, _) in zip(scores, draw, strict=True)
        ]  # fmt: skip
    n = n_repeats * len(y)
    return (parsimonious_choice(scores, n) if parsimony else min(scores))[1]
