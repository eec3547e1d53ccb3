r"""``lam="auto"`` of the estimators that refit clones: the library's k-fold path.

:class:`~kernelkit.BiasFreeSVC`, :class:`~kernelkit.SimpleMKL` and
:class:`~kernelkit.ConcatenatedKernelRegressor` choose ``lam`` by the library's k-fold path
(:func:`~kernelkit.models._kfold_path.kfold_path`: one grid, one stopping rule, one results
layout for every loss without a closed-form leave-one-out), scoring each fold with the
estimator's own ``score`` (accuracy for classifiers, R² for regressors) of a clone fitted on
the other folds: on the training Grams computed once (:func:`kfold_lam`), or on the rows
(:func:`kfold_lam_on_rows`, for an estimator whose kernel is learned).  The folds are
stratified for classifiers and drawn with seed 0, so a fit is reproducible.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import torch
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.utils import _safe_indexing

from kernelkit.models._kfold_path import N_FOLDS, kfold_path


def kfold_lam(
    estimator: Any, grams: list[np.ndarray], y: Any, *, diagonal: torch.Tensor, classifier: bool
) -> tuple[float, dict[str, Any]]:
    """``(lam_, cv_results_)`` of the k-fold path for clones of ``estimator`` (its ``lam``
    set to each value) fitted on precomputed training Grams.

    ``grams``: the training Grams ``K_m`` (one for a single kernel, whose clone takes it as
    ``X``; several for :class:`~kernelkit.SimpleMKL`, whose clone takes the list); each fold
    fits on ``K_m[train][:, train]`` and scores on ``K_m[test][:, train]``.  ``diagonal``:
    ``k(x_i, x_i)`` of the training rows (the grid's scale).
    """
    labels = np.asarray(y)
    folds = (StratifiedKFold if classifier else KFold)(N_FOLDS, shuffle=True, random_state=0)
    splits = list(folds.split(np.zeros((len(labels), 1)), labels))

    def view(rows: np.ndarray, cols: np.ndarray) -> Any:
        blocks = [G[np.ix_(rows, cols)] for G in grams]
        return blocks[0] if len(blocks) == 1 else blocks

    def score(f: int, lam: float) -> float:
        tr, te = splits[f]
        model = clone(estimator).set_params(lam=lam).fit(view(tr, tr), labels[tr])
        return float(model.score(view(te, tr), labels[te]))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # the path's loose ends
        return kfold_path(diagonal, len(splits), score)


def kfold_lam_on_rows(
    estimator: Any, X: Any, y: Any, *, diagonal: torch.Tensor
) -> tuple[float, dict[str, Any]]:
    """``(lam_, cv_results_)`` of the k-fold path for clones of the regressor ``estimator``
    (its ``lam`` set to each value) refitted on the rows of ``X`` of the other folds."""
    labels = np.asarray(y)
    folds = KFold(N_FOLDS, shuffle=True, random_state=0)
    splits = list(folds.split(np.zeros((len(labels), 1))))

    def score(f: int, lam: float) -> float:
        tr, te = splits[f]
        model = clone(estimator).set_params(lam=lam)
        model.fit(_safe_indexing(X, tr), labels[tr])
        return float(model.score(_safe_indexing(X, te), labels[te]))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # the path's loose ends
        return kfold_path(diagonal, len(splits), score)


__all__ = ["kfold_lam", "kfold_lam_on_rows"]
