r"""Conformal prediction intervals of ridge-type kernel regressors (KRR, Gaussian processes).

**Jackknife+** (Barber, Candès, Ramdas and Tibshirani, *Predictive inference with the
jackknife+*, Annals of Statistics 49(1), 2021, eq. (6)).  With the leave-one-out models
``f^{(-i)}`` and their residuals ``R_i = |y_i - f^{(-i)}(x_i)|``, the interval at ``x`` is

.. math:: \Big[\hat q^-_{\alpha}\{f^{(-i)}(x) - R_i\},\;
          \hat q^+_{\alpha}\{f^{(-i)}(x) + R_i\}\Big],

``q^-`` the ``floor(alpha (n + 1))``-th smallest value and ``q^+`` the
``ceil((1 - alpha)(n + 1))``-th smallest (``-inf`` / ``+inf`` when the rank falls outside
``1..n``).  For exchangeable data it covers a new response with probability at least
``1 - 2 alpha`` whatever the distribution (their Theorem 1), and about ``1 - alpha`` in
practice.

For a fit ``alpha = G y`` with ``G = W^{1/2} (K_w + mu I)^{-1} W^{1/2}`` (KRR: ``mu = n lam``;
a Gaussian process: ``K`` the scaled kernel and ``mu`` the noise variance) no refit is needed:
removing point ``i`` equals replacing ``y_i`` by ``f^{(-i)}(x_i)``, so

.. math:: r_i = y_i - f^{(-i)}(x_i) = \alpha_i / G_{ii}, \qquad
          f^{(-i)}(x) = f(x) - r_i\, (k(x)^T G)_i,

one factorisation and one ``(m x n) (n x n)`` product for ``m`` test points.

The **Nyström** model with fixed centres is ridge regression on the features
``Phi = K_nc L^{-T}`` (``L L^T = K_cc + tau I``): ``beta = A^{-1} Phi^T W y`` with
``A = Phi^T W Phi + mu I``.  Removing point ``i`` is a rank-one downdate of ``A``
(Sherman-Morrison), so with the leverages ``h_i = w_i phi_i^T A^{-1} phi_i``

.. math:: r_i = \frac{y_i - \phi_i^T\beta}{1 - h_i}, \qquad
          f^{(-i)}(x) = f(x) - r_i\, w_i\, \phi(x)^T A^{-1} \phi_i,

two streamed passes over the training rows and ``O(m n c)`` for ``m`` test points and
``c`` centres (:func:`nystrom_interval`).

**Split conformal** (Papadopoulos et al. 2002; Lei, G'Sell, Rinaldo, Tibshirani and Wasserman,
JASA 2018, Algorithm 2): fit on one part, take the ``ceil((1 - alpha)(n_cal + 1))``-th
smallest absolute residual ``q`` on the other part (``n_cal`` points); ``f(x) +- q`` covers with
probability at least ``1 - alpha``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from kernelkit.kernels._base import Batch
from kernelkit.models._falkon import NystromSystem, nystrom_statistics
from kernelkit.models._gp_nystrom import row_tiles
from kernelkit.solvers import cholesky_factor
from kernelkit.solvers._cholesky import solve_triangular
from kernelkit.utils._errors import InputError

METHODS = ("jackknife+", "split")
"""Interval methods of ``predict_interval``."""

__all__ = [
    "check_alpha",
    "conformal_interval",
    "jackknife_plus",
    "loo_operator",
    "nystrom_interval",
    "split_conformal",
]


def check_alpha(alpha: float) -> float:
    """``alpha`` in (0, 1), else a named error."""
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise InputError(f"alpha: expected a miscoverage level in (0, 1), got {alpha!r}")
    return float(alpha)


def loo_operator(
    K: torch.Tensor, shift: float, *, root_w: torch.Tensor | None = None
) -> torch.Tensor:
    """``G = W^{1/2} (K_w + shift I)^{-1} W^{1/2}`` (``W = I`` when ``root_w`` is None)."""
    Kw = K if root_w is None else K * root_w[:, None] * root_w[None, :]
    fac = cholesky_factor(Kw, shift=shift, name="K")
    G = fac.inverse()
    return G if root_w is None else G * root_w[:, None] * root_w[None, :]


def _kth(values: torch.Tensor, k: int, fill: float) -> torch.Tensor:
    """The ``k``-th smallest value of each row (1-based), ``fill`` when ``k`` is out of range."""
    if 1 <= k <= values.shape[1]:
        return values.kthvalue(k, dim=1).values
    return torch.full((values.shape[0],), fill, dtype=values.dtype, device=values.device)


def jackknife_plus(
    center: torch.Tensor, influence: torch.Tensor, r: torch.Tensor, alpha: float
) -> torch.Tensor:
    """Jackknife+ intervals (module docstring), shape ``(m, 2)``.

    Parameters
    ----------
    center : torch.Tensor, shape (m,)
        ``f(x)`` at the test points.
    influence : torch.Tensor, shape (m, n)
        ``f(x) - f^{(-i)}(x) = r_i influence[x, i]``: ``k(x)^T G`` for KRR.
    r : torch.Tensor, shape (n,)
        Leave-one-out residuals ``y_i - f^{(-i)}(x_i)`` (zero-weight points left out of
        both arguments by the caller).
    alpha : float
        Miscoverage level.
    """
    loo = center[:, None] - influence * r[None, :]
    R = r.abs()[None, :]
    n = len(r)
    lower = _kth(loo - R, math.floor(alpha * (n + 1)), -math.inf)
    upper = _kth(loo + R, math.ceil((1 - alpha) * (n + 1)), math.inf)
    return torch.stack([lower, upper], 1)


def split_conformal(
    center: torch.Tensor, calibration_residuals: torch.Tensor, alpha: float
) -> torch.Tensor:
    """Split-conformal intervals ``f(x) +- q`` (module docstring), shape ``(m, 2)``."""
    R = calibration_residuals.abs()
    k = math.ceil((1 - alpha) * (len(R) + 1))
    q = R.sort().values[k - 1] if k <= len(R) else torch.tensor(math.inf, dtype=R.dtype)
    return torch.stack([center - q, center + q], 1)


def conformal_interval(
    K: torch.Tensor,
    Kt: torch.Tensor,
    y: torch.Tensor,
    *,
    shift: float,
    alpha: float,
    method: str,
    rng: np.random.Generator,
    per_point: bool = False,
    root_w: torch.Tensor | None = None,
) -> torch.Tensor:
    """Intervals of the fit ``alpha = G y`` at the rows ``Kt = k(X_test, X_train)``, ``(m, 2)``.

    ``shift`` is ``mu`` of ``G`` (module docstring); with ``per_point`` it is ``mu / n``
    times the number of points fitted (KRR's ``n lam``: the split method's half-size fit
    uses ``n_half lam``, as a refit would).  ``"split"`` fits on a random half drawn from
    ``rng`` and calibrates on the other half (unweighted residuals).
    """
    alpha = check_alpha(alpha)
    if method not in METHODS:
        raise InputError(f"method: expected 'jackknife+' or 'split', got {method!r}")
    n = K.shape[0]
    if method == "jackknife+":
        G = loo_operator(K, shift, root_w=root_w)
        coef = G @ y
        keep = G.diagonal() > 0  # a zero weight leaves its point out
        r = coef[keep] / G.diagonal()[keep]
        return jackknife_plus(Kt @ coef, (Kt @ G)[:, keep], r, alpha)
    if n < 2:
        raise InputError(f"method: 'split' needs at least 2 training points, got {n}")
    perm = torch.as_tensor(rng.permutation(n), device=K.device)
    train, cal = perm[: n // 2], perm[n // 2 :]
    rw = None if root_w is None else root_w[train]
    mu = shift * len(train) / n if per_point else shift
    coef = loo_operator(K[train][:, train], mu, root_w=rw) @ y[train]
    residuals = y[cal] - K[cal][:, train] @ coef
    return split_conformal(Kt[:, train] @ coef, residuals, alpha)


def nystrom_interval(
    system: NystromSystem,
    Xt: Batch,
    y: torch.Tensor,
    *,
    shift: float,
    alpha: float,
    method: str,
    rng: np.random.Generator,
    sample_weight: torch.Tensor | None = None,
) -> torch.Tensor:
    """Intervals at ``Xt`` of the Nyström ridge fit on ``system`` (its centres fixed), shape
    ``(m, 2)``.

    ``"jackknife+"``: the leave-one-out models of the module docstring, from the one-pass
    statistics (:func:`~kernelkit.models._falkon.nystrom_statistics`) and a second pass for
    the residuals and influences; ``"split"``: the statistics of a random half (the other
    half weighted 0) with ``shift`` scaled to its size, calibrated on the other half.
    ``shift`` is ``mu = n lam``, ``sample_weight`` of mean 1 (zero-weight points are left out
    of the residuals).
    """
    alpha = check_alpha(alpha)
    if method not in METHODS:
        raise InputError(f"method: expected 'jackknife+' or 'split', got {method!r}")
    n, op = system.n, system.op
    y = y.to(torch.float64)
    w = torch.ones(n, dtype=y.dtype) if sample_weight is None else sample_weight.to(y)

    def fit(weights: torch.Tensor, mu: float) -> tuple[Any, Any, torch.Tensor, torch.Tensor]:
        """``L``, the factor of ``A = H + mu I``, ``beta`` and the test features."""
        stats = nystrom_statistics(system, y, sample_weight=weights)
        factor = cholesky_factor(stats.H[0], shift=mu, name="A")
        Phi_t = solve_triangular(stats.basis, op.kernel.block(Xt, op.centres).to(y).mT).mT
        return stats.basis, factor, factor.solve(stats.r)[:, 0], Phi_t

    def features(L: torch.Tensor, index: np.ndarray) -> torch.Tensor:
        return solve_triangular(L, op.take_rows(index).mT).mT

    if method == "split":
        if n < 2:
            raise InputError(f"method: 'split' needs at least 2 training points, got {n}")
        perm = rng.permutation(n)
        train, cal = perm[: n // 2], perm[n // 2 :]
        half = torch.zeros_like(w)
        half[train] = w[train]
        L, _, beta, Phi_t = fit(half, shift * len(train) / n)
        residuals = y[cal] - features(L, cal) @ beta
        return split_conformal(Phi_t @ beta, residuals, alpha)
    L, factor, beta, Phi_t = fit(w, shift)
    T = factor.solve(Phi_t.mT).mT  # phi(x)^T A^{-1}
    r_parts, influence_parts = [], []
    for i, j in row_tiles(n, len(beta)):
        part = np.arange(i, j)[w[i:j].cpu().numpy() > 0]
        Phi = features(L, part)
        h = w[part] * (factor.solve(Phi.mT).mT * Phi).sum(1)
        r_parts.append((y[part] - Phi @ beta) / (1 - h))
        influence_parts.append(T @ (Phi * w[part, None]).mT)
    return jackknife_plus(Phi_t @ beta, torch.cat(influence_parts, 1), torch.cat(r_parts), alpha)
