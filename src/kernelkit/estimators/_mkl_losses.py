r"""The single-kernel problems inside multiple kernel learning, one per loss.

For a fixed Gram ``K`` (the weighted sum ``K_eta``) each function solves (course part 3,
section 4, "Base problem")

.. math:: J(K) = \min_{f \in H} R(f^n) + \lambda \|f\|_H^2,\qquad
          f = \sum_j \gamma_j K(x_j, \cdot) (+ b),

and returns ``gamma``, the intercept ``b`` (0 except for the hinge loss) and ``J``.  The
gradient of ``J(K_eta)`` in the kernel weights is then ``-lam gamma^T K_i gamma`` for every
loss (Danskin; the ``b`` term does not depend on ``eta``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from sklearn.svm import SVC

from kernelkit.solvers import cholesky_solve

NEWTON_MAX_ITER = 100
"""Most damped-Newton (IRLS) steps of the logistic problem."""


@dataclass(frozen=True)
class InnerSolution:
    """``gamma`` (n,), intercept ``b`` and objective value ``J`` of one single-kernel fit."""

    gamma: torch.Tensor
    intercept: float
    objective: float


def squared_solution(K: torch.Tensor, y: torch.Tensor, lam: float) -> InnerSolution:
    r"""KRR, ``R = (1/n) sum (u_i - y_i)^2``: ``gamma = (K + n lam I)^{-1} y`` and
    ``J = lam y^T gamma`` (course part 3, section 4, "KRR closed form")."""
    n = K.shape[0]
    gamma = cholesky_solve(K, y, shift=n * lam).solution
    return InnerSolution(gamma, 0.0, float(lam * (y @ gamma)))


def hinge_solution(K: torch.Tensor, y: torch.Tensor, lam: float, tol: float) -> InnerSolution:
    r"""SVM, ``R = (1/n) sum max(0, 1 - y_i u_i)``, solved by libsvm's C-SVM.

    ``C = 1 / (2 n lam)`` (course part 1, section 3.6, "C-SVM"), with libsvm's intercept ``b``
    as in SimpleMKL (Rakotomamonjy et al. 2008, eq. 5); ``gamma`` are libsvm's ``y_i alpha_i``
    and ``J`` is the primal value at the returned ``(gamma, b)``.
    """
    n = K.shape[0]
    Kn = K.detach().cpu().numpy()
    svc = SVC(kernel="precomputed", C=1.0 / (2.0 * n * lam), tol=tol).fit(Kn, y.cpu().numpy())
    coef = np.zeros(n)
    sign = 1.0 if svc.classes_[1] > 0 else -1.0  # libsvm's decision is for classes_[1]
    coef[svc.support_] = sign * svc.dual_coef_[0]
    gamma = torch.as_tensor(coef, dtype=K.dtype)
    b = sign * float(svc.intercept_[0])
    u = K @ gamma + b
    hinge = torch.clamp(1.0 - y * u, min=0.0).mean()
    return InnerSolution(gamma, b, float(hinge + lam * (gamma @ K @ gamma)))


def _logistic_objective(K: torch.Tensor, y: torch.Tensor, gamma: torch.Tensor, lam: float) -> float:
    u = K @ gamma
    return float(torch.nn.functional.softplus(-y * u).mean() + lam * (gamma @ u))


def logistic_solution(K: torch.Tensor, y: torch.Tensor, lam: float, tol: float) -> InnerSolution:
    r"""Kernel logistic regression, ``R = (1/n) sum log(1 + exp(-y_i u_i))``, by damped IRLS.

    Newton's step on ``R + lam ||f||^2`` is the weighted KRR (course part 1, section 3.3, with
    the penalty ``lam ||f||^2``, hence ``2 lam`` in the weighted ridge)

    .. math:: \gamma^+ = W^{1/2} (W^{1/2} K W^{1/2} + 2 n \lambda I)^{-1} W^{1/2} z,\quad
              W = \mathrm{diag}(\sigma(u)\sigma(-u)),\ z = u + y / \sigma(y u),

    from ``gamma = 0``; a step that does not decrease the objective is halved (damped Newton).
    Stops when the objective decreases by less than ``tol`` (relative).
    """
    n = K.shape[0]
    gamma = torch.zeros(n, dtype=K.dtype)
    value = _logistic_objective(K, y, gamma, lam)
    for _ in range(NEWTON_MAX_ITER):
        u = K @ gamma
        w = (torch.sigmoid(u) * torch.sigmoid(-u)).clamp(min=1e-12)
        z = u + y / torch.sigmoid(y * u).clamp(min=1e-300)
        root = w.sqrt()
        step = cholesky_solve(root[:, None] * K * root[None, :], root * z, shift=2 * n * lam)
        target = root * step.solution
        t, new_value = 1.0, value
        for _ in range(30):
            candidate = gamma + t * (target - gamma)
            new_value = _logistic_objective(K, y, candidate, lam)
            if new_value <= value:
                break
            t /= 2.0
        else:
            break
        gamma, decrease, value = candidate, value - new_value, new_value
        if decrease <= tol * max(abs(value), 1e-12):
            break
    return InnerSolution(gamma, 0.0, value)


__all__ = ["InnerSolution", "hinge_solution", "logistic_solution", "squared_solution"]
