r"""Regression losses of the loss-generic ERM back-end (:mod:`kernelkit.models._erm`).

A loss is a small object of the residual ``r = y - f(x)``: ``value(r)``, and either

* ``smooth = True``: its first and second derivatives in ``r`` (``derivative``,
  ``curvature``), which the back-end's Newton solver uses on the primal; or
* ``smooth = False``: its dual, a :class:`DualProblem` in libsvm's form
  ``min 1/2 a^T Q a + p^T a``, ``s^T a = 0``, ``0 <= a <= u`` with
  ``Q_tt' = s_t s_t' K(x_{row t}, x_{row t'})``, which the back-end hands to
  :func:`~kernelkit.solvers._smo.smo`; the representer coefficients are
  ``beta_i = sum_{t: row t = i} s_t a_t``.

Both take the regularised ERM of the package, ``(1 / sum_i w_i) sum_i w_i loss(r_i) +
lam ||f||^2`` with an intercept ``b`` (``f + b`` fitted, ``b`` not penalised).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch


@dataclass(frozen=True)
class DualProblem:
    """A dual in libsvm's form (module docstring).

    Attributes
    ----------
    rows : ndarray of int, shape (N,)
        The training row of each dual variable.
    signs : ndarray, shape (N,)
        ``s_t`` in ``{-1, +1}``.
    linear : ndarray, shape (N,)
        ``p``.
    upper : ndarray, shape (N,)
        ``u``.
    """

    rows: np.ndarray
    signs: np.ndarray
    linear: np.ndarray
    upper: np.ndarray

    def coefficients(self, a: np.ndarray, n: int) -> np.ndarray:
        """``beta_i = sum_{t: row t = i} s_t a_t``, shape (n,)."""
        return np.bincount(self.rows, weights=self.signs * a, minlength=n)


@dataclass(frozen=True)
class EpsilonInsensitiveLoss:
    r"""Vapnik's epsilon-insensitive loss ``max(0, |r| - epsilon)`` (support vector regression).

    Dual with intercept (Smola and Schölkopf, "A tutorial on support vector regression",
    Statistics and Computing 14, 2004, eq. 10; libsvm's epsilon-SVR, Chang and Lin 2011,
    section 2.3): with ``C_i`` the penalty of row ``i`` and ``a = (alpha, alpha^*)``,

    .. math:: \min_{a} \tfrac12 (\alpha - \alpha^*)^T K (\alpha - \alpha^*)
              + \varepsilon \sum_i (\alpha_i + \alpha^*_i) - \sum_i y_i (\alpha_i - \alpha^*_i),
              \quad \sum_i (\alpha_i - \alpha^*_i) = 0,\ 0 \le \alpha_i, \alpha^*_i \le C_i,

    i.e. ``p = (epsilon - y, epsilon + y)``, ``s = (+1, -1)``, and
    ``beta = alpha - alpha^*`` (``f = K beta``).
    """

    epsilon: float
    smooth: ClassVar[bool] = False

    def value(self, r: torch.Tensor) -> torch.Tensor:
        """``max(0, |r| - epsilon)``."""
        return (r.abs() - self.epsilon).clamp_min(0.0)

    def dual(self, y: np.ndarray, bound: np.ndarray) -> DualProblem:
        """The dual for targets ``y`` and per-row penalties ``C_i = bound``."""
        n = len(y)
        ones = np.ones(n)
        return DualProblem(
            np.concatenate([np.arange(n), np.arange(n)]),
            np.concatenate([ones, -ones]),
            np.concatenate([self.epsilon - y, self.epsilon + y]),
            np.concatenate([bound, bound]),
        )


@dataclass(frozen=True)
class HuberLoss:
    r"""Huber's loss with fixed scale, scikit-learn's ``H_epsilon``:

    .. math:: \ell(r) = \begin{cases} r^2 & |r| \le \varepsilon \\
              2 \varepsilon |r| - \varepsilon^2 & |r| > \varepsilon \end{cases}

    (Huber, "Robust estimation of a location parameter", Ann. Math. Statist. 35, 1964, with
    the factor 2 of ``sklearn.linear_model.HuberRegressor``'s objective at scale
    ``sigma = 1``): quadratic within ``epsilon`` of the target, linear beyond.  Once
    differentiable: ``l'(r) = 2 clip(r, -epsilon, epsilon)``, ``l''(r) = 2 [|r| <= epsilon]``.
    """

    epsilon: float
    smooth: ClassVar[bool] = True

    def value(self, r: torch.Tensor) -> torch.Tensor:
        """``l(r)``."""
        a = r.abs()
        return torch.where(a <= self.epsilon, r * r, 2.0 * self.epsilon * a - self.epsilon**2)

    def derivative(self, r: torch.Tensor) -> torch.Tensor:
        """``l'(r) = 2 clip(r, -epsilon, epsilon)``."""
        return 2.0 * r.clamp(-self.epsilon, self.epsilon)

    def curvature(self, r: torch.Tensor) -> torch.Tensor:
        """``l''(r) = 2`` inside ``[-epsilon, epsilon]``, 0 outside."""
        return 2.0 * (r.abs() <= self.epsilon).to(r.dtype)


__all__ = ["DualProblem", "EpsilonInsensitiveLoss", "HuberLoss"]
