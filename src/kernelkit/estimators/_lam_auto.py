r"""``lam="auto"`` of the estimators whose loss has no closed-form leave-one-out: k-fold CV.

The estimators with a squared loss choose ``lam`` by closed-form leave-one-out / GCV
(:mod:`kernelkit.estimators._ridge_selection`), kernel logistic regression by its held-out
path (:mod:`kernelkit.models.logistic_path`); the others (:class:`~kernelkit.BiasFreeSVC`,
:class:`~kernelkit.SimpleMKL`) by :func:`kfold_lam`: the ``n_folds``-fold cross-validated
score (the estimator's ``score``: accuracy for classifiers, R² for regressors) of every
``lam`` of one grid, the one of the held-out path,

.. math:: \Lambda = s \cdot \{10^{-1}, 10^{-1.5}, \dots, 10^{-9}\} \quad (17 \text{ values}),

scaled by the kernel's scale ``s = mean_i k(x_i, x_i)`` (:func:`~kernelkit.models.logistic_path.
auto_grid`: scaling the kernel by ``c`` scales the ``lam`` of the same model by ``c``).  The
folds are stratified for classifiers and drawn with seed 0, so a fit is reproducible; ties
go to the larger ``lam`` (the first in grid order).
Every fold fits on the precomputed training Grams, so the kernels are evaluated once; the
estimator then refits on all rows at ``lam_``.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import torch
from scipy.stats import rankdata
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import KFold, StratifiedKFold

from kernelkit.models.logistic_path import auto_grid

N_FOLDS = 5
"""Folds of :func:`kfold_lam`."""


def kfold_lam(
    estimator: Any, grams: list[np.ndarray], y: Any, *, diagonal: torch.Tensor, classifier: bool
) -> tuple[float, dict[str, Any]]:
    """``(lam_, cv_results_)``: the ``lam`` of the grid with the best mean ``N_FOLDS``-fold
    score of clones of ``estimator`` (its ``lam`` set to each value), fitted on precomputed
    training Grams.

    ``grams``: the training Grams ``K_m`` (one for a single kernel, whose clone takes it as
    ``X``; several for :class:`~kernelkit.SimpleMKL`, whose clone takes the list); each fold
    fits on ``K_m[train][:, train]`` and scores on ``K_m[test][:, train]``.  ``diagonal``:
    ``k(x_i, x_i)`` of the training rows (the grid's scale).  ``cv_results_`` has
    scikit-learn's keys (``params``, ``param_lam``, ``splitK_test_score``,
    ``mean_test_score``, ``std_test_score``, ``rank_test_score``).
    """
    grid = [float(v) for v in auto_grid(diagonal)]
    labels = np.asarray(y)
    folds = (StratifiedKFold if classifier else KFold)(N_FOLDS, shuffle=True, random_state=0)
    splits = list(folds.split(np.zeros((len(labels), 1)), labels))
    scores = np.empty((len(grid), len(splits)))

    def view(rows: np.ndarray, cols: np.ndarray) -> Any:
        blocks = [G[np.ix_(rows, cols)] for G in grams]
        return blocks[0] if len(blocks) == 1 else blocks

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # the path's loose ends
        for j, (tr, te) in enumerate(splits):
            for i, lam in enumerate(grid):
                model = clone(estimator).set_params(lam=lam).fit(view(tr, tr), labels[tr])
                scores[i, j] = model.score(view(te, tr), labels[te])
    mean = scores.mean(1)
    results: dict[str, Any] = {
        "params": [{"lam": lam} for lam in grid],
        "param_lam": np.array(grid),
        **{f"split{j}_test_score": scores[:, j] for j in range(len(splits))},
        "mean_test_score": mean,
        "std_test_score": scores.std(1),
        "rank_test_score": rankdata(-mean, method="min").astype(np.int32),
    }
    return grid[int(np.argmax(mean))], results


__all__ = ["N_FOLDS", "kfold_lam"]
