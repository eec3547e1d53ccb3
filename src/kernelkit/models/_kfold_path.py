r"""The k-fold ``lam`` path: the one cross-validated selector of the losses without a closed-form
leave-one-out.

The squared loss chooses ``lam`` by closed-form leave-one-out / GCV
(:mod:`kernelkit.models._ridge_path`), logistic regression by its held-out path
(:mod:`kernelkit.models._logistic_path`); every other loss (the ε-insensitive and Huber
losses of :mod:`kernelkit.models._erm`, the bias-free SVMs, multiple kernel learning) by
:func:`kfold_path`:

* the grid is the held-out path's, :func:`~kernelkit.models._logistic_path.auto_grid`:
  ``s * {10^-1, 10^-1.5, ..., 10^-9}`` with ``s = mean_i k(x_i, x_i)`` (scaling the kernel by
  ``c`` scales the ``lam`` of the same model by ``c``);
* it is followed from the largest ``lam`` down, each of the :data:`N_FOLDS` folds scored at
  every value (the caller may warm-start a fold from its previous value), and stops
  ``logistic_patience`` values (an option, :func:`kernelkit.get_config`) after the last one
  that raised the mean held-out score;
* the chosen ``lam`` has the best mean score, the largest ``lam`` on ties.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from scipy.stats import rankdata

from kernelkit.models._logistic_path import auto_grid
from kernelkit.utils._config import options

N_FOLDS = 5
"""Folds of the k-fold ``lam`` path."""


def kfold_path(
    diagonal: torch.Tensor,
    n_splits: int,
    score: Callable[[int, float], float],
) -> tuple[float, dict[str, Any]]:
    """``(lam, cv_results)`` of the k-fold path (module docstring).

    Parameters
    ----------
    diagonal : torch.Tensor
        ``k(x_i, x_i)`` of the training rows (the grid's scale).
    n_splits : int
        Number of folds.
    score : callable
        ``score(fold, lam)``: the held-out score (higher is better) of the model fitted on
        the other folds at ``lam``; called for every fold at each ``lam``, from the largest
        down.

    Returns
    -------
    lam : float
        The chosen value.
    cv_results : dict
        scikit-learn's layout over the values visited: ``params``, ``param_lam``,
        ``splitK_test_score``, ``mean_test_score``, ``std_test_score``, ``rank_test_score``.
    """
    rows: list[list[float]] = []
    lams: list[float] = []
    patience = options().logistic_patience
    for lam in sorted((float(v) for v in auto_grid(diagonal)), reverse=True):
        rows.append([score(f, lam) for f in range(n_splits)])
        lams.append(lam)
        mean = np.mean(rows, axis=1)
        if len(rows) - 1 - int(np.argmax(mean)) > patience:
            break
    scores = np.asarray(rows)
    mean = scores.mean(axis=1)
    results: dict[str, Any] = {
        "params": [{"lam": lam} for lam in lams],
        "param_lam": np.asarray(lams),
        **{f"split{f}_test_score": scores[:, f] for f in range(n_splits)},
        "mean_test_score": mean,
        "std_test_score": scores.std(axis=1),
        "rank_test_score": rankdata(-mean, method="min").astype(np.int32),
    }
    return lams[int(np.argmax(mean))], results


__all__ = ["N_FOLDS", "kfold_path"]
