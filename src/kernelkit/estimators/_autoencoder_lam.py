r"""Choice of the autoencoder's ``lam`` on a held-out split (``KernelAutoencoder(lam="auto")``).

The training data are split once (``validation_fraction`` held out, as scikit-learn's
``MLPRegressor(early_stopping=True)`` does), and ``lam`` is the grid value with the lowest
mean held-out reconstruction error ``||phi(x) - \hat\phi(x)||^2`` (Laforgue et al. 2019,
appendix B.7) of an autoencoder fitted on the rest.

Full-batch fits (:func:`fit_auto`) compute the Gram blocks of all the training data once and
take every fit's and every held-out point's blocks from them; they walk the grid from the
largest ``lam`` down, each fit a plain fit from the model's initialisation on the fit part, or
on a uniform subsample of ``options().autoencoder_grid_rows`` of its rows when it has more
(:func:`grid_rows`: an exact evaluation costs ``O(n^2 (n + r))``, so the grid fits on 500 of
1800 rows cost a twentieth of those on all of them; the held-out rows are all kept),
and stop at the first ``lam`` whose held-out error is not below the best one so far (the
curve falls while ``lam`` over-smooths and rises once the fit memorises).  The best fit is
then refitted on all the training data, starting from its own functions (in exact mode its
expansion widened to all training points with zero coefficients on the others).
Each grid fit starts from the model's initialisation (no warm start), and the best fit is
always refitted on all the data (the measurements behind both rules: ``docs/measurements.md``,
"Choosing the autoencoder's lam").  Minibatch fits (:func:`lam_curve`) fit one clone per grid
value and then refit on all the data.
Below :data:`AUTO_MIN_VALIDATION` held-out points, ``"auto"`` is :data:`AUTO_FALLBACK_LAM`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from sklearn.base import clone
from torch import nn

from kernelkit.estimators._autoencoder_setup import (
    FitSetup,
    build,
    run_training,
    training_grams,
)
from kernelkit.kernels import Precomputed, PrecomputedBatch
from kernelkit.models._autoencoder import AutoencoderData, reconstruction_errors
from kernelkit.models._ridge_path import lam_grid
from kernelkit.solvers._training import TrainResult
from kernelkit.utils._config import options
from kernelkit.utils._errors import InputError
from kernelkit.utils._seeding import as_seed

__all__ = [
    "AUTO_FALLBACK_LAM",
    "AUTO_MIN_VALIDATION",
    "ae_lam_grid",
    "auto_split",
    "fit_auto",
    "grid_rows",
    "held_out_split",
    "lam_curve",
]


def ae_lam_grid() -> tuple[float, ...]:
    """The ``lam`` values of ``lam="auto"``: the decades ``1e-5 .. 1e-1`` of the one ``lam``
    lattice (:func:`~kernelkit.models._ridge_path.lam_grid`)."""
    return tuple(float(v) for v in lam_grid(1e-5, 1e-1, per_decade=1))


AUTO_MIN_VALIDATION = 10
"""Fewest held-out points for which ``lam="auto"`` validates (95 samples at the default
``validation_fraction=0.1``): the mean error of fewer points is too noisy to rank ``lam``."""
AUTO_FALLBACK_LAM = 1e-3
"""``lam`` of ``"auto"`` below :data:`AUTO_MIN_VALIDATION` held-out points: the value
``"auto"`` chose most often on the shipped data (``docs/kae.md``)."""


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


def grid_rows(fit: np.ndarray, seed: int) -> np.ndarray:
    """The rows of the grid fits: ``fit``, or a uniform subsample of
    ``options().autoencoder_grid_rows`` of them (sorted; drawn by
    ``numpy.random.default_rng(seed).permutation``) when there are more."""
    cap = options().autoencoder_grid_rows
    if len(fit) <= cap:
        return fit
    return np.sort(np.random.default_rng(seed).permutation(fit)[:cap])


def auto_split(n: int, fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`held_out_split`, or ``None`` when it would hold out fewer than
    :data:`AUTO_MIN_VALIDATION` points (then ``"auto"`` is :data:`AUTO_FALLBACK_LAM`)."""
    if max(1, round(fraction * n)) < AUTO_MIN_VALIDATION:
        return None
    return held_out_split(n, fraction, seed)


# ---------------------------------------------------------------------- minibatch fits
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
    return _rows(X, fit), _rows(X, val)


def _rows(X: Any, index: np.ndarray) -> Any:
    """The rows ``index`` of ``X`` in its own container: pandas (by position), arrays and
    sparse matrices by fancy indexing, sequences (strings, graphs, SMILES) as a list."""
    if hasattr(X, "iloc"):
        return X.iloc[index]
    if hasattr(X, "shape"):
        return X[index]
    return [X[int(i)] for i in index]


def lam_curve(
    estimator: Any, X: Any, seed: int, split: tuple[np.ndarray, np.ndarray]
) -> list[tuple[float, float]]:
    """``[(lam, mean held-out reconstruction error)]`` over :func:`ae_lam_grid` (minibatch fits).

    Every candidate is ``clone(estimator)`` with that ``lam`` and ``random_state=seed``,
    fitted on the fit part of ``split``.
    """
    kernel = estimator.input_kernel
    precomputed = isinstance(kernel, Precomputed) or kernel == "precomputed"
    X_fit, X_val = _split(X, *split, precomputed)
    curve = []
    for lam in ae_lam_grid():
        model = clone(estimator).set_params(lam=lam, random_state=seed).fit(X_fit)
        err = model.reconstruction_error(X_val)
        err = err.detach().cpu().numpy() if torch.is_tensor(err) else np.asarray(err)
        curve.append((lam, float(np.mean(err))))
    return curve


# ---------------------------------------------------------------------- full-batch fits
def _pad_supports(model: Any, fit: np.ndarray, n: int) -> None:
    """Expand every layer of ``model`` from the supports ``fit`` to all ``n`` training points
    (exact mode), with zero coefficients on the others: the layers' functions, and their
    norms, are unchanged."""
    index = torch.as_tensor(fit, dtype=torch.long)
    layers = [*model.chain.layers, *([] if model.head is None else [model.head])]
    for layer in layers:
        coef = layer.coef.detach()
        padded = torch.zeros(n, coef.shape[1], dtype=coef.dtype, device=coef.device)
        padded[index] = coef
        layer.coef = nn.Parameter(padded)


def fit_auto(
    est: Any, setup: FitSetup, split: tuple[np.ndarray, np.ndarray]
) -> tuple[Any, TrainResult, AutoencoderData, list[tuple[float, float]], float]:
    """``lam="auto"`` for a full-batch fit.

    Returns the model refitted on all the training data from the best ``lam``'s fit on the
    fit part (or its subsample, :func:`grid_rows`), the refit's training result, the data of
    all the training points, the validation curve (``(lam, mean held-out error)`` in the
    order fitted, largest ``lam`` first) and the chosen ``lam``.  Landmarks, if any, lie in
    the fit part.
    """
    fit = grid_rows(split[0], as_seed(setup.random_state))
    grams = training_grams(est, setup)
    part = grams.rows(fit)
    data, basis = part.data()
    held = grams.rows(split[1], fit)
    with torch.no_grad():
        if held.targets is not None:
            out_rows, out_diag = held.targets, None
        else:
            assert held.K_in is not None and held.k_diag is not None
            out_rows = basis.features(held.K_in)
            out_diag = held.k_diag.to(out_rows.dtype)
    curve: list[tuple[float, float]] = []
    best: tuple[float, float, Any] | None = None
    for lam in sorted(ae_lam_grid(), reverse=True):
        model = build(est, setup, data, [lam] * (len(setup.dims) + 1))
        run_training(est, model, data)
        coef, supports = model.head_coefficients(data)
        with torch.no_grad():
            err = reconstruction_errors(
                model, coef, supports, grams.exact, held.K1, out_rows, out_diag
            )
        curve.append((lam, float(err.mean())))
        if best is not None and curve[-1][1] >= best[1]:
            break
        best = (lam, curve[-1][1], model)
    assert best is not None
    lam, _, model = best
    if grams.exact:
        _pad_supports(model, fit, len(grams.K1))
    data, est.ref_basis_ = grams.data()
    return model, run_training(est, model, data), data, curve, lam
