r"""Choice of the autoencoder's ``lam`` on a held-out split (``KernelAutoencoder(lam="auto")``).

The training data are split once (``validation_fraction`` held out, as scikit-learn's
``MLPRegressor(early_stopping=True)`` does); one autoencoder per ``lam`` of the grid is fitted
on the rest, and the ``lam`` with the lowest mean held-out reconstruction error
``||phi(x) - \hat\phi(x)||^2`` (Laforgue et al. 2019, appendix B.7) is kept.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from sklearn.base import clone
from sklearn.utils import _safe_indexing

from kernelkit.kernels import Precomputed, PrecomputedBatch
from kernelkit.utils.errors import InputError

__all__ = ["LAM_GRID", "held_out_split", "lam_curve"]

LAM_GRID = (1e-5, 1e-4, 1e-3, 1e-2, 1e-1)


def held_out_split(n: int, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Sorted ``(fit, validation)`` indices: ``max(1, round(fraction * n))`` held out,
    drawn by ``numpy.random.default_rng(seed).permutation(n)``."""
    n_val = max(1, round(fraction * n))
    if n_val >= n - 1:
        raise InputError(
            f"validation_fraction: expected a fraction leaving at least 2 training samples of "
            f"{n}, got {fraction}"
        )
    order = np.random.default_rng(seed).permutation(n)
    return np.sort(order[n_val:]), np.sort(order[:n_val])


def _split(X: Any, fit: np.ndarray, val: np.ndarray, precomputed: bool) -> tuple[Any, Any]:
    """``X`` restricted to the fit rows, and the validation rows (against the fit columns
    with ``k(x, x)`` for a Gram matrix ``X``)."""
    if precomputed:
        K = X.rows if isinstance(X, PrecomputedBatch) else torch.as_tensor(np.asarray(X))
        if K.shape[0] != K.shape[1]:
            raise InputError(f"X: expected a square Gram matrix, got shape {tuple(K.shape)}")
        return K[fit][:, fit], PrecomputedBatch(K[val][:, fit], diag=K.diagonal()[val])
    if isinstance(X, torch.Tensor):
        return X[torch.as_tensor(fit)], X[torch.as_tensor(val)]
    return _safe_indexing(X, fit), _safe_indexing(X, val)


def lam_curve(estimator: Any, X: Any, seed: int) -> list[tuple[float, float]]:
    """``[(lam, mean held-out reconstruction error)]`` over :data:`LAM_GRID`.

    Every candidate is ``clone(estimator)`` with that ``lam`` and ``random_state=seed``,
    fitted on the fit part of :func:`held_out_split`.
    """
    kernel = estimator.input_kernel
    precomputed = isinstance(kernel, Precomputed) or kernel == "precomputed"
    n = len(X.rows) if isinstance(X, PrecomputedBatch) else len(X)
    fit, val = held_out_split(n, estimator.validation_fraction, seed)
    X_fit, X_val = _split(X, fit, val, precomputed)
    curve = []
    for lam in LAM_GRID:
        model = clone(estimator).set_params(lam=lam, random_state=seed).fit(X_fit)
        err = model.reconstruction_error(X_val)
        err = err.detach().cpu().numpy() if torch.is_tensor(err) else np.asarray(err)
        curve.append((lam, float(np.mean(err))))
    return curve
