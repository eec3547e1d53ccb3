"""The multi-output (ICM) and per-point-noise routes of the GaussianProcessRegressor.

The maths is in :mod:`kernelkit.models._gp_icm`; this module validates the targets (NaN marks a
missing entry), the task covariance and the noise, learns the hyper-parameters and predicts.
"""

from __future__ import annotations

from numbers import Real
from typing import Any

import numpy as np
import torch

from kernelkit.estimators._base import result_dtype, to_numpy
from kernelkit.gram import gram
from kernelkit.kernels._base import Batch, ScaledKernel
from kernelkit.models._gp import GPFit
from kernelkit.models._gp_icm import icm_fit, icm_predict, observed_entries, task_covariance
from kernelkit.models._hyperparams import continuous_params, differentiable_params, kernel_with
from kernelkit.solvers import lbfgs, symmetric_eigh
from kernelkit.utils._errors import InputError
from kernelkit.utils._validation import like_input


def is_auto(value: Any) -> bool:
    """Whether a hyper-parameter is to be learned (``"auto"``; arrays are not)."""
    return isinstance(value, str) and value == "auto"


def point_noise(noise: Any, n: int, dtype: torch.dtype) -> torch.Tensor | None:
    """``noise`` as a tensor of ``n`` positive finite variances when it is an array, else
    ``None`` (``"auto"`` or one float)."""
    if isinstance(noise, str) or isinstance(noise, Real):
        return None
    arr = np.asarray(to_numpy(noise), dtype=np.float64)
    if arr.shape != (n,):
        raise InputError(
            f"noise: expected 'auto', a positive float or one variance per training point "
            f"(shape ({n},)), got shape {arr.shape}"
        )
    bad = ~(np.isfinite(arr) & (arr > 0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"noise: expected positive finite variances, got {arr[i]!r} at index {i}")
    return torch.as_tensor(arr, dtype=dtype)


def _targets_with_missing(y: Any, n: int, dtype: torch.dtype) -> torch.Tensor:
    """``y`` as an ``(n, p)`` tensor in which NaN marks a missing entry (no infinities)."""
    if y is None:
        raise InputError("y: GaussianProcessRegressor requires y to be passed, got None")
    arr = np.asarray(to_numpy(y), dtype=np.float64)
    arr = arr[:, None] if arr.ndim == 1 else arr
    if arr.ndim != 2 or arr.shape[0] != n:
        raise InputError(
            f"y: expected {n} rows of targets (one per sample of X, NaN for a missing "
            f"entry), got shape {np.shape(y)}"
        )
    if np.isinf(arr).any():
        raise InputError("y: expected finite targets or NaN (missing), got an infinity")
    if np.isnan(arr).all():
        raise InputError("y: every entry is missing (NaN); nothing to fit")
    return torch.as_tensor(arr, dtype=dtype)


def _fixed_task_covariance(value: Any, p: int) -> torch.Tensor:
    """A given task covariance checked: ``p x p``, symmetric, positive semi-definite."""
    B = np.asarray(to_numpy(value), dtype=np.float64)
    if B.shape != (p, p) or not np.isfinite(B).all():
        raise InputError(
            f"task_covariance: expected None, 'icm' or a finite {p} x {p} matrix (one row "
            f"per column of y), got shape {B.shape}"
        )
    if not np.allclose(B, B.T, atol=1e-12 * max(1.0, np.abs(B).max())):
        raise InputError("task_covariance: expected a symmetric matrix, got an asymmetric one")
    if float(symmetric_eigh(B).values.min()) < -1e-10 * max(1.0, np.abs(B).max()):
        raise InputError("task_covariance: expected a positive semi-definite matrix")
    return torch.as_tensor(B)


def _initial_factors(Y: torch.Tensor, rank: int, floor: float) -> tuple[torch.Tensor, ...]:
    """``W`` (``p x rank``) and ``log v`` from the pairwise-complete covariance of ``Y``."""
    Yc = Y - torch.nanmean(Y, 0)
    obs = (~torch.isnan(Yc)).to(Y.dtype)
    Z = torch.nan_to_num(Yc)
    C = (Z.mT @ Z) / (obs.mT @ obs).clamp_min(1.0)
    C = (C + C.mT) / 2 + floor * torch.eye(C.shape[0], dtype=Y.dtype)
    eig = symmetric_eigh(C, signs=False)
    vals, vecs = eig.values, eig.vectors
    r = min(rank, C.shape[0])
    top = vals.flip(0)[:r].clamp_min(0.0)
    W = torch.zeros(C.shape[0], rank, dtype=Y.dtype)
    W[:, :r] = vecs.flip(1)[:, :r] * torch.sqrt(0.9 * top)
    v = (C.diagonal() - (W * W).sum(1)).clamp_min(0.1 * C.diagonal())
    return W, torch.log(v)


def fit_tasks(est: Any, X: Any, Xb: Batch, y: Any, max_iter: int) -> None:
    """Fit ``est`` (a GaussianProcessRegressor with ``task_covariance`` set) by the ICM."""
    if est.solver == "nystrom":
        raise InputError("solver: task_covariance needs solver='exact' or 'auto', got 'nystrom'")
    if point_noise(est.noise, len(Xb), torch.float64) is not None:
        raise InputError(
            "noise: with task_covariance, expected 'auto' or one positive float, got an array"
        )
    Y = _targets_with_missing(y, len(Xb), result_dtype(Xb))
    p = Y.shape[1]
    est.y_train_ = like_input(Y, X)
    if est.normalize_y:
        mean = torch.nan_to_num(torch.nanmean(Y, 0))
        std = torch.nan_to_num(torch.nanmean((Y - mean) ** 2, 0).sqrt())
        std = torch.where(std > 0, std, torch.ones_like(std))
    else:
        mean, std = torch.zeros(p, dtype=Y.dtype), torch.ones(p, dtype=Y.dtype)
    est._y_mean, est._y_std = mean, std
    Yn = (Y - mean) / std
    rows, tasks = observed_entries(Yn)
    var = float(torch.nan_to_num(torch.nanmean((Yn - torch.nanmean(Yn, 0)) ** 2, 0)).mean())
    amp0 = var if var > 0 else 1.0
    learn_b = isinstance(est.task_covariance, str)
    fixed_b = None if learn_b else _fixed_task_covariance(est.task_covariance, p).to(Y.dtype)
    amp_start = 1.0 if learn_b else amp0
    amplitude = amp_start if is_auto(est.amplitude) else float(est.amplitude)
    noise = 0.1 * amp0 if is_auto(est.noise) else float(est.noise)
    constant = est.mean == "constant"
    base = est.kernel_
    names: list[str] = []
    scalars: list[str] = []
    W, log_v = _initial_factors(Yn, int(est.task_rank), 1e-3 * amp0)
    if est.optimizer is not None:
        names = differentiable_params(base, Xb, continuous_params(base, "auto"))
        scalars = [k for k in ("amplitude", "noise") if is_auto(getattr(est, k))]
        if learn_b:
            scalars = [k for k in scalars if k != "amplitude"]
        params = base.get_params(deep=True)
        start = {**{n: float(params[n]) for n in names}, "amplitude": amplitude, "noise": noise}
        t = torch.log(torch.tensor([start[k] for k in names + scalars], dtype=Y.dtype))
        t.requires_grad_(True)
        leaves = [t]
        if learn_b:
            W.requires_grad_(True)
            log_v.requires_grad_(True)
            leaves += [W, log_v]
        K0 = None if names else gram(base, Xb).to(Y.dtype)

        def objective() -> torch.Tensor:
            v = dict(zip(names + scalars, torch.exp(t), strict=True))
            K = K0 if K0 is not None else kernel_with(base, {n: v[n] for n in names}).block(Xb, Xb)
            B = task_covariance(W, log_v) if learn_b else fixed_b
            amp = v.get("amplitude", amplitude)
            fit = icm_fit(amp * K, B, Yn, rows, tasks, v.get("noise", noise), constant)
            return -fit.log_marginal_likelihood

        lbfgs(objective, leaves, max_iter=max_iter, tolerance_grad=1e-9)
        found = dict(zip(names + scalars, torch.exp(t.detach()).tolist(), strict=True))
        amplitude, noise = found.get("amplitude", amplitude), found.get("noise", noise)
        if names:
            base = base.set_params(**{n: found[n] for n in names})
    B = task_covariance(W.detach(), log_v.detach()) if learn_b else fixed_b
    est.amplitude_, est.noise_ = float(amplitude), float(noise)
    est.kernel_ = ScaledKernel(base, est.amplitude_)
    est.task_covariance_ = like_input(B.clone(), X)
    est._task_B, est._rows, est._tasks = B, rows, tasks
    fit = icm_fit(gram(est.kernel_, Xb).to(Y.dtype), B, Yn, rows, tasks, noise, constant)
    est._factor, est._coef = fit.factor, fit.coef
    est._offset = fit.mean if fit.mean is not None else torch.zeros(p, dtype=Y.dtype)
    est.mean_ = like_input(est._offset * std + mean, X)
    est.alpha_ = like_input(fit.coef, X)
    est.log_marginal_likelihood_value_ = float(fit.log_marginal_likelihood)
    est.X_fit_ = Xb
    est.solver_ = "exact"


def predict_tasks(est: Any, X: Any, Xb: Batch, return_std: bool, return_cov: bool) -> Any:
    """Posterior mean ``(m, p)`` of the ICM fit, with standard deviations ``(m, p)`` or
    covariances ``(m, m, p)`` of the latent outputs."""
    Ks = gram(est.kernel_, Xb, est.X_fit_)
    diag = est.kernel_.block_diag(Xb).to(Ks.dtype) if return_std else None
    cov = gram(est.kernel_, Xb) if return_cov else None
    lml = torch.tensor(est.log_marginal_likelihood_value_)
    fit = GPFit(est._factor, est._coef, lml, 0.0, est._offset)
    mean, spread = icm_predict(fit, est._task_B.to(Ks), Ks, est._rows, est._tasks, diag, cov)
    mean = mean * est._y_std + est._y_mean
    if spread is None:
        return like_input(mean, X)
    if return_std:
        return like_input(mean, X), like_input(spread.sqrt() * est._y_std, X)
    return like_input(mean, X), like_input(spread * est._y_std**2, X)
