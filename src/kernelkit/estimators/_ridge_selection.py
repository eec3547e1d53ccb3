r"""Hyper-parameter selection and conformal intervals of the exact :class:`KernelRidge`.

``lam`` as a list or ``"auto"``, ``cv`` and ``kernel_params`` of
:class:`~kernelkit.estimators.KernelRidge` are served here; the maths is in
:mod:`kernelkit.models._ridge_path` (one eigendecomposition for the whole ``lam`` path,
closed-form LOO and GCV) and :mod:`kernelkit.models._conformal` (jackknife+ from the
leave-one-out fits, split conformal).

* ``cv="loo"`` / ``"gcv"``: every grid value is scored in closed form from one
  eigendecomposition of the (weighted) Gram; an integer ``cv`` refits on the folds of
  ``KFold(cv)`` (no shuffling, as ``GridSearchCV(cv=int)``), a splitter or a list of
  ``(train, test)`` pairs on theirs (``sklearn.model_selection.check_cv``), one
  eigendecomposition per fold.
* ``lam="auto"``: the grid :func:`~kernelkit.models._ridge_path.lam_grid` (``1e-9 .. 10``,
  21 values), then three zoom rounds in ``log lam`` between the best grid value's neighbours
  on the closed-form criterion (9 values each, scored together by one batched path; the
  options ``lam_zoom_rounds`` and ``lam_zoom_points``) and the
  vertex of the last round's parabola, kept within the grid's range (with refits on folds,
  an int or splitter ``cv``: the best grid value).
* ``cv="loo"`` leaves each group of training inputs the kernel cannot tell apart
  (:func:`~kernelkit.models._ridge_path.duplicate_groups`: identical inputs, equal Gram rows)
  out together, in closed form; ``loo_residuals_`` are those residuals and ``loo_groups_``
  the group labels.  Without such twins it is the plain leave-one-out.
* ``kernel_params``: the kernel's continuous parameters (``"auto"``: all of them, e.g. a
  Gaussian width started at the median heuristic) by a coordinate search in log space
  (Hooke and Jeeves, "Direct search solution of numerical and statistical problems",
  J. ACM 8(2), 1961): each parameter in turn is multiplied by ``2^k`` for the steps
  ``k = +-1, +-2`` of :data:`SEARCH_STEPS` (for one parameter: the grid of its start times
  ``1/4 .. 4``), a trial kept when it lowers the criterion; each trial is scored in closed form by
  the best LOO / GCV value over the ``lam`` grid (one eigendecomposition), so the search
  selects ``(theta, lam)`` jointly as a grid search would; then ``lam`` is chosen again at the
  tuned kernel (with the ``log lam`` refinement for ``"auto"``).  A continuous L-BFGS descent
  of the same criterion over the parameters was measured worse on held-out data (on the
  shipped vector sets: ``docs/model_selection.md``): a criterion minimised over continuous
  hyper-parameters overfits the selection (Cawley and Talbot, "On over-fitting in model
  selection and subsequent selection bias in performance evaluation", JMLR 11, 2010).
* Nyström solvers (``solver_ != "exact"``, :func:`fit_selected_nystrom`): one pass for the
  (weighted) statistics, one ``m x m`` eigendecomposition (:mod:`kernelkit.models._nystrom_path`);
  GCV in closed form, LOO in one more pass for the whole grid; ``lam="auto"`` refines GCV by
  the same zoom, LOO by one zoom round (a second pass over a 9-value grid between the best
  value's neighbours).  No ``kernel_params``, ``cv`` in ``{None, "loo", "gcv"}``.
* ``cv=None`` (the default) is the closed-form criterion of the solver: leave-one-out on the
  exact solver, GCV on the Nyström solvers (no pass over the data beyond the statistics').
"""

from __future__ import annotations

from collections.abc import Callable
from numbers import Real
from typing import Any

import numpy as np
import torch
from scipy.stats import rankdata
from sklearn.model_selection import check_cv

from kernelkit.gram import gram
from kernelkit.kernels import Kernel
from kernelkit.kernels._base import Batch
from kernelkit.models._conformal import conformal_interval, nystrom_interval
from kernelkit.models._falkon import NystromSystem, nystrom_system
from kernelkit.models._hyperparams import continuous_params, kernel_with
from kernelkit.models._nystrom_path import nystrom_path
from kernelkit.models._ridge_path import (
    RidgeSpectrum,
    check_lam_grid,
    duplicate_groups,
    kfold_path_errors,
    lam_grid,
    ridge_spectrum,
)
from kernelkit.utils._config import options
from kernelkit.utils._errors import InputError
from kernelkit.utils._seeding import check_random_state
from kernelkit.utils._validation import like_input

SEARCH_STEPS = (-2.0, -1.0, 1.0, 2.0)
"""``kernel_params``: the coordinate search's steps in ``log2`` of each parameter (module
docstring): for one parameter, the grid of its start times ``1/4 .. 4``."""

__all__ = [
    "criterion",
    "fit_selected",
    "fit_selected_nystrom",
    "ridge_interval",
    "selects_hyperparameters",
]


def criterion(est: Any, exact: bool) -> Any:
    """``est.cv``, with ``None`` read as ``"loo"`` on the exact solver and ``"gcv"`` on the
    Nyström solvers (module docstring)."""
    if est.cv is None:
        return "loo" if exact else "gcv"
    return est.cv


def selects_hyperparameters(est: Any) -> bool:
    """Whether ``fit`` chooses ``lam`` or kernel parameters (a grid, ``"auto"``, tuning)."""
    return not isinstance(est.lam, Real) or est.kernel_params is not None


def _grid(est: Any) -> tuple[np.ndarray, bool]:
    if isinstance(est.lam, str):
        return lam_grid(), True
    if isinstance(est.lam, Real):
        return np.array([float(est.lam)]), False
    return check_lam_grid(est.lam), False


def _refine_log_lam(
    score: Callable[[np.ndarray], np.ndarray],
    grid: np.ndarray,
    errors: np.ndarray,
    rounds: int | None = None,
    vertex: bool = True,
) -> float:
    """The best ``lam`` of ``grid`` (criterion ``errors``) refined by zooming in ``log lam``.

    Each of ``rounds`` rounds (default: the option ``lam_zoom_rounds``) scores
    ``lam_zoom_points`` values (an option) evenly spaced in ``log lam`` between the
    best value's neighbours (one batched call of ``score``), then narrows to the new best
    value's neighbours; with ``vertex``, the vertex of the parabola through the last round's
    best value and its two neighbours is scored too (Brent, *Algorithms for Minimization
    without Derivatives*, 1973, chapter 5: successive parabolic interpolation).  A value
    replaces the best one only when its criterion is lower; every value stays within the
    ``grid``'s range."""
    logs = np.log(grid)
    best = int(np.argmin(errors))
    lam, value = float(grid[best]), float(errors[best])
    low, high = logs[max(best - 1, 0)], logs[min(best + 1, len(grid) - 1)]
    trial = values = np.empty(0)
    config = options()
    rounds = config.lam_zoom_rounds if rounds is None else rounds
    for _ in range(rounds if high > low else 0):
        trial = np.linspace(low, high, config.lam_zoom_points)
        values = score(np.exp(trial))
        values = np.where(np.isfinite(values), values, np.inf)
        k = int(np.argmin(values))
        if values[k] < value:
            lam, value = float(np.exp(trial[k])), float(values[k])
        step = trial[1] - trial[0]
        low, high = max(np.log(lam) - step, logs[0]), min(np.log(lam) + step, logs[-1])
    k = int(np.argmin(values)) if len(values) else 0
    if vertex and 0 < k < len(values) - 1 and values[k] == value:
        left, mid, right = values[k - 1 : k + 2]
        curvature = left - 2.0 * mid + right
        if curvature > 0:
            step = trial[1] - trial[0]
            at = float(np.exp(trial[k] + 0.5 * step * (left - right) / curvature))
            at_value = float(score(np.array([at]))[0])
            if at_value < value:
                lam = at
    return lam


def _spectrum(
    kernel: Kernel, Xb: Batch, Y: torch.Tensor, wt: torch.Tensor | None
) -> tuple[torch.Tensor, np.ndarray, RidgeSpectrum]:
    """The Gram of ``kernel`` on ``Xb``, its groups of twins (:func:`duplicate_groups`) and its
    (weighted) eigendecomposition with the targets."""
    K = gram(kernel, Xb)
    groups = duplicate_groups(K)
    return K, groups, ridge_spectrum(K, Y.to(K.device), sample_weight=wt, groups=groups)


def _path_errors(spec: RidgeSpectrum, grid: np.ndarray, cv: str) -> np.ndarray:
    """The closed-form criterion ``cv`` of ``spec`` at every ``lam`` of ``grid``."""
    return spec.path(grid, cv)


def _tune_kernel(
    est: Any, Xb: Batch, Y: torch.Tensor, wt: torch.Tensor | None, grid: np.ndarray, cv: str
) -> tuple[Kernel, tuple[torch.Tensor, np.ndarray, RidgeSpectrum]]:
    """The kernel's continuous parameters by a coordinate search in log space (module
    docstring), each trial scored by the best closed-form criterion over ``grid``; returns the
    tuned kernel and its :func:`_spectrum`."""
    kernel: Kernel = est.kernel_
    names = continuous_params(kernel, est.kernel_params)
    params = kernel.get_params(deep=True)
    values = {n: float(params[n]) for n in names}

    def score(trial: dict[str, float]) -> tuple[float, Any]:
        try:
            parts = _spectrum(kernel_with(kernel, trial), Xb, Y, wt)
        except (InputError, ValueError):  # a value the kernel refuses
            return float("inf"), None
        errors = _path_errors(parts[2], grid, cv)
        return float(np.min(np.where(np.isfinite(errors), errors, np.inf))), parts

    best, parts = score(values)
    for name in names:
        centre = values[name]
        for step in SEARCH_STEPS:
            trial = {**values, name: centre * 2.0**step}
            error, trial_parts = score(trial)
            if error < best:
                best, values, parts = error, trial, trial_parts
    tuned = kernel.set_params(**values)
    return tuned, parts if parts is not None else _spectrum(tuned, Xb, Y, wt)


def _cv_results(grid: np.ndarray, errors: np.ndarray) -> dict[str, Any]:
    """``cv_results_`` in scikit-learn's layout, scores ``-MSE`` (``errors``: folds x lams)."""
    mean = -errors.mean(0)
    results: dict[str, Any] = {
        "params": [{"lam": float(v)} for v in grid],
        "param_lam": np.ma.MaskedArray(grid.copy(), mask=False),
        "mean_test_score": mean,
        "rank_test_score": rankdata(-mean, method="min").astype(np.int32),
    }
    if errors.shape[0] > 1:
        for j, row in enumerate(errors):
            results[f"split{j}_test_score"] = -row
        results["std_test_score"] = errors.std(0)
    return results


def smallest_lam(est: Any) -> float:
    """The smallest ``lam`` a selection (or a fixed ``lam``) solves for: what the Nyström
    system is prepared for."""
    return float(_grid(est)[0].min())


def check_nystrom_selection(est: Any, distributed: bool = False) -> str:
    """The criterion of a Nyström ``lam`` path (``"gcv"`` or ``"loo"``; a Dask fit: GCV only,
    from the one-pass statistics, since leave-one-out needs another pass over the data).

    Raises
    ------
    InputError
        ``kernel_params``, a fold ``cv``, or (Dask) ``cv="loo"``.
    """
    cv = criterion(est, False)
    allowed = ("gcv",) if distributed else ("loo", "gcv")
    if est.kernel_params is not None or cv not in allowed:
        where = (
            "a Dask fit selects lam by cv=None or 'gcv'"
            if distributed
            else ("the Nyström lam path selects lam by cv=None, 'loo' or 'gcv'")
        )
        raise InputError(
            f"cv: {where}, without kernel_params; got cv={est.cv!r}, "
            f"kernel_params={est.kernel_params!r}"
            + ("" if distributed else " (use solver='exact')")
        )
    return cv


def fit_selected_nystrom(
    est: Any,
    Xb: Batch | None,
    Y: torch.Tensor,
    w: np.ndarray | None,
    X: Any,
    system: NystromSystem | None = None,
) -> Any:
    """Fit a Nyström ``est`` choosing ``lam`` from the one-pass statistics (module docstring)
    of ``system`` (default: the in-memory system of ``Xb``; a Dask fit passes its own and
    ``Xb=None``: GCV only)."""
    cv = check_nystrom_selection(est, distributed=Xb is None)
    grid, auto = _grid(est)
    if system is None:
        system = est._nystrom_system(Xb, w, float(grid.min()))
    weights = None if w is None else torch.as_tensor(w, dtype=torch.float64)
    path = nystrom_path(system, Y, sample_weight=weights)
    centres = system.op.centres

    def score(lams: np.ndarray) -> np.ndarray:
        if cv == "gcv":
            return path.gcv(lams).cpu().numpy()
        return path.loo(lams, est.kernel_, Xb, centres, Y, sample_weight=weights)

    errors = score(grid)
    lam = float(grid[errors.argmin()])
    if auto:  # leave-one-out is a pass over the data per round: one round, no vertex
        lam = _refine_log_lam(
            score, grid, errors, *((None, True) if cv == "gcv" else (1, False))
        )
    coef = path.coef(max(lam, float(grid.min())))
    est.lam_ = lam
    est.cv_results_ = _cv_results(grid, errors[None, :])
    est.X_fit_ = centres
    est.center_indices_ = system.indices
    est.dual_coef_ = like_input((coef[:, 0] if Y.ndim == 1 else coef).to(Y.dtype), X)
    est.jitter_ = system.jitter
    est.n_iter_ = 1
    return est


def fit_selected(est: Any, Xb: Batch, Y: torch.Tensor, w: np.ndarray | None, X: Any) -> Any:
    """Fit ``est`` choosing ``lam`` (and kernel parameters): see the module docstring."""
    grid, auto = _grid(est)
    cv = criterion(est, True)
    closed = isinstance(cv, str)
    if est.kernel_params is not None and not closed:
        raise InputError(
            f"cv: kernel_params use the closed-form criteria, expected cv=None, 'loo' or "
            f"'gcv', got cv={est.cv!r}"
        )
    wt = None if w is None else torch.as_tensor(w, dtype=Y.dtype)
    if est.kernel_params is not None:
        est.kernel_, (K, groups, spec) = _tune_kernel(est, Xb, Y, wt, grid, cv)
    else:
        K, groups, spec = _spectrum(est.kernel_, Xb, Y, wt)
    Y = Y.to(K.device)
    if closed:
        errors = _path_errors(spec, grid, cv)[None]
    else:
        folds = list(check_cv(cv).split(np.zeros((len(Y), 1))))
        errors = kfold_path_errors(K, Y, grid, folds, sample_weight=wt)
    lam = float(grid[errors.mean(0).argmin()])
    if auto and closed:
        lam = _refine_log_lam(lambda lams: spec.path(lams, cv), grid, errors[0])
    fit = spec.fit(lam)
    est.lam_ = lam
    est.cv_results_ = _cv_results(grid, errors)
    est.dual_coef_ = like_input(fit.coef, X)
    est.loo_residuals_ = like_input(fit.loo_residuals, X)
    est.loo_groups_ = groups
    est.jitter_ = 0.0
    est.n_iter_ = 1
    return est


def ridge_interval(est: Any, X: Any, alpha: float, method: str) -> Any:
    """Conformal intervals of a fitted single-output KernelRidge, shape ``(m, 2)``: the exact
    model's, or the Nyström model's with its centres
    (:func:`~kernelkit.models._conformal.nystrom_interval`)."""
    if est.solver_ != "exact" and "_X_train" not in est.__dict__:
        raise InputError(
            "predict_interval: a Nyström fit of a Dask collection keeps no training rows; "
            "fit in memory or with solver='exact'"
        )
    if est._y_fit.ndim != 1:
        raise InputError(
            f"y: predict_interval needs a single-output fit, got {est._y_fit.shape[1]} outputs"
        )
    Xt = est._predict_X(X)
    lam = float(getattr(est, "lam_", est.lam))
    if est.solver_ != "exact":
        w = est._sample_weight
        system = nystrom_system(  # the fit's: its centres, the jitter of its smallest lam
            est.kernel_,
            est._X_train,
            est.__dict__.get("center_indices_"),
            centres=est.X_fit_,
            block_size=est.block_size,
            lam=smallest_lam(est),
        )
        out = nystrom_interval(
            system,
            Xt,
            est._y_fit,
            shift=len(est._y_fit) * lam,
            alpha=alpha,
            method=method,
            rng=check_random_state(est.random_state),
            sample_weight=None if w is None else torch.as_tensor(w, dtype=torch.float64),
        )
        return like_input(out, X)
    K = gram(est.kernel_, est.X_fit_)
    Kt = gram(est.kernel_, Xt, est.X_fit_)
    w = est._sample_weight
    root_w = None if w is None else torch.as_tensor(np.sqrt(w), dtype=K.dtype, device=K.device)
    out = conformal_interval(
        K,
        Kt,
        est._y_fit.to(device=K.device, dtype=K.dtype),
        shift=K.shape[0] * lam,
        alpha=alpha,
        method=method,
        rng=check_random_state(est.random_state),
        per_point=True,
        root_w=root_w,
    )
    return like_input(out, X)
