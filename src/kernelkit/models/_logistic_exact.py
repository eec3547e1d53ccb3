r"""Binary kernel logistic regression on the exact Gram: damped Newton (IRLS) steps and the
held-out ``lam`` path (course part 1, section 3.3); the Nyström twin is
:mod:`kernelkit.models._falkon_logistic`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from kernelkit.models._logistic_path import LogisticPath, auto_grid, follow_lam_path
from kernelkit.solvers import cholesky_factor
from kernelkit.solvers._cholesky import CholeskyFactor
from kernelkit.utils._progress import Progress
from kernelkit.utils._validation import check_signs


@dataclass(frozen=True)
class KLRResult:
    """Result of :func:`kernel_logistic_regression`.

    Attributes
    ----------
    coef : torch.Tensor
        ``alpha``, shape (n,): ``f = sum_i alpha_i k(x_i, .)``.
    converged : bool
        Whether ``max_i |grad J(alpha)_i| <= tol``.
    iterations : int
        Newton (IRLS) steps taken.
    objectives : list of float
        ``J`` at ``alpha_0`` (0 unless warm-started) and after every step (non-increasing:
        damped steps).
    gradient : float
        ``max_i |grad J(alpha)_i|`` at the returned ``alpha``.
    """

    coef: torch.Tensor
    converged: bool
    iterations: int
    objectives: list[float]
    gradient: float


def klr_objective(m: torch.Tensor, quad: torch.Tensor, y: torch.Tensor, lam: float) -> torch.Tensor:
    r"""``J = (1/n) sum_i log(1 + exp(-y_i m_i)) + lam quad`` with ``m = K alpha`` and
    ``quad = alpha^T K alpha`` (the softplus form, stable for large margins)."""
    return F.softplus(-y * m).mean() + lam * quad


def kernel_logistic_regression(
    K: torch.Tensor,
    y: torch.Tensor,
    *,
    lam: float,
    tol: float = 1e-8,
    max_iter: int = 100,
    progress: Progress | None = None,
    coef0: torch.Tensor | None = None,
) -> KLRResult:
    r"""Binary kernel logistic regression by damped Newton steps (IRLS).

    Minimises (course part 1, section 3.3)

    .. math:: J(\alpha) = \frac1n \sum_{i=1}^n \log(1 + e^{-y_i [K\alpha]_i})
              + \lambda \alpha^T K \alpha, \qquad y_i \in \{-1, +1\},

    the package's convention ``(1/n) sum loss + lam ||f||^2`` (the course's KLR slide writes
    ``lam_c / 2``, so ``lam_c = 2 lam``).  With ``s = 2 n lam``, the gradient is
    ``grad J = (1/n) K (P y + s alpha)`` and the Hessian ``(1/n) K (W K + s I)``, where
    ``m = K alpha``, ``P_i = -sigma(-y_i m_i)`` and ``W_i = sigma(m_i) sigma(-m_i)``.  The
    Newton step is the course's IRLS step ``alpha_{t+1} = solveWKRR(K, W, z)``,
    ``z_i = m_i + y_i / sigma(y_i m_i)``: the weighted kernel ridge regression of section 3.2
    (shift ``s``).  It is computed as the direction ``Delta`` with ``(W K + s I) Delta = r``,
    ``r = -(P y + s alpha)``, by the Woodbury form

    .. math:: \Delta = \frac{1}{s}\big(r - W^{1/2} (W^{1/2} K W^{1/2} + s I)^{-1}
              W^{1/2} K r\big),

    which is the weighted-KRR system but never divides by ``W_i`` (``W_i -> 0`` and
    ``z_i -> inf`` on confidently classified points, the pitfall the course names).  A step
    that does not decrease ``J`` enough (Armijo, ``c = 1e-4``) is halved until it does (damped
    Newton), so ``J`` decreases monotonically.  Starts at ``alpha = 0`` or at ``coef0``.

    Parameters
    ----------
    K : torch.Tensor, shape (n, n)
        Training Gram matrix.
    y : torch.Tensor, shape (n,)
        Labels in ``{-1, +1}``.
    lam : float
        Regularisation ``lam > 0`` of ``lam ||f||^2``.
    tol : float
        Stop when ``max_i |grad J(alpha)_i| <= tol``.
    max_iter : int
        Most Newton steps.
    progress : Progress, optional
        Receives the objective after every Newton step.
    coef0 : torch.Tensor, optional, shape (n,)
        Warm start ``alpha_0`` (default 0), e.g. the solution at a nearby ``lam``.

    Returns
    -------
    KLRResult

    Raises
    ------
    InputError
        If ``y`` holds values other than -1 and +1.
    """
    K = K.to(torch.float64)
    y = check_signs(y).to(K.device)
    n = K.shape[0]
    nlam = 2 * n * lam  # the shift s = 2 n lam of the Newton systems
    alpha = torch.zeros(n, dtype=K.dtype, device=K.device)
    if coef0 is not None:
        alpha = torch.as_tensor(coef0).to(alpha).reshape(n).clone()
    m = K @ alpha
    quad = alpha @ m
    objectives = [float(klr_objective(m, quad, y, lam))]
    grad = float("inf")
    for it in range(max_iter + 1):
        r = y * torch.sigmoid(-y * m) - nlam * alpha  # r = -(P y + 2 n lam alpha)
        Kr = K @ r
        grad = float(Kr.abs().max()) / n
        if grad <= tol or it == max_iter:
            break
        sw = torch.sqrt(torch.sigmoid(m) * torch.sigmoid(-m))
        fac = _weighted_factor(K, sw, nlam)
        delta = (r - sw * fac.solve(sw * Kr)) / nlam
        Kd = K @ delta
        slope = -float(Kr @ delta) / n  # grad J . delta < 0
        step, J0 = 1.0, objectives[-1]
        while True:
            m_new = m + step * Kd
            quad_new = quad + 2 * step * (delta @ m) + step**2 * (delta @ Kd)
            J = float(klr_objective(m_new, quad_new, y, lam))
            if J <= J0 + 1e-4 * step * slope or step < 1e-10:
                break
            step /= 2
        if J > J0:  # no decrease even at a tiny step: alpha is optimal to round-off
            break
        alpha, m, quad = alpha + step * delta, m_new, quad_new
        objectives.append(J)
        if progress is not None:
            progress.update(len(objectives) - 1, objective=J)
        if step < 1e-10:  # the line search stalled at round-off
            grad = _gradient_norm(K, y, m, alpha, nlam)
            break
    return KLRResult(alpha, grad <= tol, len(objectives) - 1, objectives, grad)


def _gradient_norm(
    K: torch.Tensor, y: torch.Tensor, m: torch.Tensor, alpha: torch.Tensor, nlam: float
) -> float:
    """``max_i |grad J(alpha)_i|``, ``grad J = -(1/n) K r``,
    ``r = y sigma(-y m) - 2 n lam alpha`` (``nlam = 2 n lam``)."""
    return float((K @ (y * torch.sigmoid(-y * m) - nlam * alpha)).abs().max()) / K.shape[0]


def _weighted_factor(K: torch.Tensor, sw: torch.Tensor, shift: float) -> CholeskyFactor:
    """Cholesky factor of ``W^{1/2} K W^{1/2} + shift I``, factorised in place in one ``n x n``
    buffer; the jitter ladder on a fresh copy if that first attempt fails."""
    B = (K * sw[:, None]).mul_(sw[None, :])
    fac = cholesky_factor(B, shift=shift, overwrite=True, strict=False)
    if fac.success:
        return fac
    B = (K * sw[:, None]).mul_(sw[None, :])
    return cholesky_factor(B, shift=shift, name="W^1/2 K W^1/2")


def exact_lam_path(
    K: torch.Tensor,
    Y: torch.Tensor,
    held_out: np.ndarray,
    lams: Any = None,
    *,
    patience: int | None = None,
) -> LogisticPath:
    """The held-out ``lam`` path of :mod:`kernelkit.models._logistic_path` for the exact
    solver (``lams`` default: :func:`~kernelkit.models._logistic_path.auto_grid` of the
    diagonal of ``K``): one warm-started IRLS step (:func:`kernel_logistic_regression`) per
    ``lam`` on the Gram of the rows not ``held_out``, scored on the held-out rows by their
    kernel rows.

    ``Y``: ``+-1`` targets, shape ``(n, c)`` (one column per one-vs-rest problem).  The
    path's ``coef`` is the chosen iterate (one-standard-error rule) padded with zeros at the
    held-out rows (a warm start of the fit on every row) and ``scores`` its ``K coef``;
    ``patience`` default: the option ``logistic_patience`` (:func:`kernelkit.get_config`).
    """
    lams = auto_grid(K.diagonal()) if lams is None else np.asarray(lams, dtype=np.float64)
    tr, out = torch.as_tensor(~held_out), torch.as_tensor(held_out)
    K_tr, K_out = K[tr][:, tr], K[out][:, tr]
    Y_tr, Y_out = Y[tr].to(K), Y[out].to(K)
    coef = torch.zeros(K_tr.shape[0], Y.shape[1], dtype=K.dtype, device=K.device)

    def step(lam: float) -> tuple[torch.Tensor, torch.Tensor]:
        nonlocal coef
        coef = torch.stack(
            [
                kernel_logistic_regression(
                    K_tr, Y_tr[:, j], lam=lam, max_iter=1, coef0=coef[:, j]
                ).coef
                for j in range(Y.shape[1])
            ],
            dim=1,
        )
        return K_out @ coef, coef

    *scored, chosen = follow_lam_path(lams, step, Y_out, patience)
    full = torch.zeros(K.shape[0], Y.shape[1], dtype=K.dtype, device=K.device)
    full[tr] = chosen
    return LogisticPath(*scored, full, K @ full, len(scored[0]), 0)


__all__ = ["KLRResult", "exact_lam_path", "kernel_logistic_regression", "klr_objective"]
