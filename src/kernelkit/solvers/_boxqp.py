r"""Box-constrained convex quadratic programs by exact coordinate descent.

Solves

.. math:: \min_{x} \tfrac12 x^T Q x - c^T x \quad \text{s.t.} \quad 0 \le x_i \le u_i,

for a symmetric positive semi-definite ``Q`` with a positive diagonal, ``u_i`` finite or
``+inf``: the dual of the bias-free SVM (course part 1, section 3.6: ``min 1/2 a^T K a - a^T y``
with ``0 <= y_i a_i <= C``, written in ``x_i = y_i a_i``) and of the squared-hinge SVM
(``K + n lam I``, no upper bound).  Each step minimises the objective exactly in one
coordinate, :math:`x_i \leftarrow \mathrm{clip}(x_i - g_i / Q_{ii}, 0, u_i)` with the gradient
:math:`g = Q x - c` kept up to date (one column of ``Q`` per step): the dual coordinate
descent of Hsieh et al. (ICML 2008, Algorithm 1) on a dense ``Q``, with the greedy
Gauss-Southwell-q choice of the coordinate (the one whose exact step decreases the objective
most, :math:`-(g_i + Q_{ii} \delta_i / 2)\,\delta_i`; Nutini et al., ICML 2015), the
one-variable form of the second-order working-set selection of SMO (Fan, Chen and Lin, JMLR
2005).  On the rank-deficient Grams of string kernels it needs far fewer steps than cyclic
sweeps (promoter set, spectrum k = 3, lam = 1e-3: 19 sweeps against 247 to a gap of 1e-6).
``n`` steps make a sweep.  Without an equality constraint a single
coordinate is a feasible direction, which is why the bias-free dual needs no SMO pairs.

Stopping: after each sweep, either a caller's ``certificate(x, g)`` (for the SVM: the
duality gap, an upper bound on the suboptimality of the primal point built from ``x``,
course part 1, section 3.5) or, by default, the largest violation of the optimality
conditions (the projected gradient) is compared with ``tol``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from kernelkit.utils._errors import InputError
from kernelkit.utils._validation import check_int, check_positive, to_tensor


@dataclass(frozen=True)
class BoxQPResult:
    """Result of :func:`box_qp`.

    Attributes
    ----------
    solution : torch.Tensor
        ``x``, shape (n,), inside the box.
    gradient : torch.Tensor
        ``Q x - c`` at the solution.
    converged : bool
        Whether the stopping quantity reached ``tol``.
    iterations : int
        Sweeps over the coordinates.
    certificate : float
        The final stopping quantity (the caller's certificate, or the largest projected-gradient
        violation).
    """

    solution: torch.Tensor
    gradient: torch.Tensor
    converged: bool
    iterations: int
    certificate: float


def projected_gradient(x: np.ndarray, g: np.ndarray, upper: np.ndarray) -> float:
    """Largest violation of the KKT conditions of the box QP at ``x`` with gradient ``g``:
    ``|g_i|`` inside the box, ``max(-g_i, 0)`` at 0 and ``max(g_i, 0)`` at the upper bound."""
    pg = np.where(x <= 0, np.minimum(g, 0.0), np.where(x >= upper, np.maximum(g, 0.0), g))
    return float(np.abs(pg).max(initial=0.0))


def box_qp(
    Q: Any,
    c: Any,
    upper: Any,
    *,
    tol: float = 1e-8,
    max_iter: int = 1000,
    x0: Any = None,
    certificate: Callable[[np.ndarray, np.ndarray], float] | None = None,
) -> BoxQPResult:
    r"""Minimise ``1/2 x^T Q x - c^T x`` over ``0 <= x <= upper`` by exact coordinate descent.

    Parameters
    ----------
    Q : tensor or array-like, shape (n, n)
        Symmetric positive semi-definite matrix with a positive diagonal.
    c : tensor or array-like, shape (n,)
        Linear term.
    upper : float or array-like, shape (n,)
        Upper bounds ``u_i > 0`` (``inf`` for none).
    tol : float
        Stop when the stopping quantity (see ``certificate``) is at most ``tol``.
    max_iter : int
        Most sweeps over the ``n`` coordinates.
    x0 : array-like, optional
        Feasible start (clipped into the box); zeros by default.
    certificate : callable, optional
        ``certificate(x, g) -> float`` evaluated after each sweep on NumPy copies of ``x`` and
        ``g = Q x - c``; by default the projected-gradient violation
        (:func:`projected_gradient`).

    Returns
    -------
    BoxQPResult
    """
    Qt = to_tensor(Q, name="Q", dtype=torch.float64, ndim=2)
    n = Qt.shape[0]
    if Qt.shape != (n, n):
        raise InputError(f"Q: expected a square matrix (n x n), got shape {tuple(Qt.shape)}")
    Qn = Qt.detach().cpu().numpy()
    cn = np.broadcast_to(np.asarray(_numpy(c), dtype=np.float64), (n,)).copy()
    un = np.broadcast_to(np.asarray(_numpy(upper), dtype=np.float64), (n,)).copy()
    if np.isnan(un).any() or (un <= 0).any():
        raise InputError(f"upper: expected bounds > 0 (inf for none), got min {un.min():.3g}")
    diag = np.diag(Qn).copy()
    if not (diag > 0).all():
        raise InputError(
            f"Q: expected a positive diagonal, got min Q_ii = {diag.min():.3g}; a zero diagonal "
            "entry means a point whose kernel row is zero (remove it or add a ridge)"
        )
    check_positive(tol, name="tol", strict=False)
    max_iter = check_int(max_iter, name="max_iter", minimum=1)
    x = np.zeros(n) if x0 is None else np.clip(np.asarray(_numpy(x0), float), 0, un)
    g = Qn @ x - cn
    stop = certificate or (lambda xs, gs: projected_gradient(xs, gs, un))
    value, sweeps = float("inf"), 0
    for sweeps in range(1, max_iter + 1):  # noqa: B007 - reported to the caller
        for _ in range(n):
            step = np.clip(x - g / diag, 0.0, un) - x
            gain = -(g + 0.5 * diag * step) * step  # decrease of the exact step in each x_i
            i = int(gain.argmax())
            if not gain[i] > 0:  # no coordinate step decreases the objective: optimal
                break
            x[i] += step[i]
            g += step[i] * Qn[:, i]
        value = float(stop(x.copy(), g.copy()))
        if value <= tol or not gain[i] > 0:
            break
    dtype = Qt.dtype
    return BoxQPResult(
        torch.as_tensor(x, dtype=dtype),
        torch.as_tensor(g, dtype=dtype),
        value <= tol,
        sweeps,
        value,
    )


def _numpy(value: Any) -> Any:
    """A tensor as a NumPy array (other values unchanged)."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    return value


__all__ = ["BoxQPResult", "box_qp", "projected_gradient"]
