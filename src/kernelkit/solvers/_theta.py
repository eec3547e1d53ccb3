r"""Lovász's theta number and the SVM-theta program of a graph.

Two convex programs behind the global graph kernels of Johansson, Jethava, Dubhashi &
Bhattacharyya ("Global graph kernels using geometric embeddings", ICML 2014):

* :func:`lovasz_theta`: the Lovász number (Lovász, "On the Shannon capacity of a graph", IEEE
  Trans. Inf. Theory 25, 1979, Theorem 3) by its semidefinite program

  .. math:: \vartheta(G) = \min\{t : tI + \textstyle\sum_{ij \in E} y_{ij} (E_{ij} + E_{ji})
            - J \succeq 0\},

  the dual of :math:`\max\{\langle J, B\rangle : B \succeq 0, \operatorname{tr} B = 1,
  B_{ij} = 0\ (ij \in E)\}`, solved by CVXOPT's interior-point SDP solver (the optional
  ``cvxopt`` package, extra ``graphs``).  From the optimal slack :math:`Z = tI + \sum y E - J
  \succeq 0` the vectors :math:`u_i = (c + v_i)/\sqrt{t}` (:math:`V^T V = Z`, :math:`c \perp
  v_i` a unit vector) form an orthonormal representation (unit vectors, :math:`u_i \perp u_j`
  for non-adjacent :math:`i, j`) with handle :math:`c`, :math:`1/(c^T u_i)^2 = \vartheta`;
  only their Gram matrix :math:`U^T U = (J + Z)/t` is returned.
* :func:`max_margin_value`: :math:`\omega(K) = \max_{\alpha \ge 0} 2 e^T \alpha - \alpha^T K
  \alpha` for a PSD ``K`` with a positive diagonal, the SVM-theta number of Jethava et al.
  ("Lovász theta function, SVMs and finding dense subgraphs", JMLR 14, 2013, eq. (7)) for
  :math:`K = I + A/\rho`, and the squared secant of the minimum cone enclosing unit vectors
  with Gram ``K`` (:math:`\min \|c\|^2` s.t. :math:`U^T c \ge e` has this dual, optimum
  :math:`c = U \alpha`, :math:`\|c\|^2 = e^T \alpha`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from kernelkit.solvers._boxqp import box_qp
from kernelkit.solvers._spectra import symmetric_eigvalsh
from kernelkit.utils._errors import ConvergenceError, InputError
from kernelkit.utils._optional import require

__all__ = ["ThetaResult", "lovasz_theta", "max_margin_value", "max_margin_values", "svm_theta"]

_SDP_TOLS = (1e-9, 1e-8, 1e-7)
_SDP_MAXITERS = 40


@dataclass(frozen=True)
class ThetaResult:
    """Result of :func:`lovasz_theta`.

    Attributes
    ----------
    theta : float
        The Lovász number :math:`\\vartheta(G)`.
    gram : np.ndarray
        Gram matrix :math:`U^T U = (J + Z)/\\vartheta` of the optimal orthonormal
        representation, shape ``(n, n)`` (unit diagonal, zero on non-adjacent pairs).
    """

    theta: float
    gram: np.ndarray


def _check_adjacency(A: np.ndarray) -> np.ndarray:
    A = np.asarray(A, dtype=np.float64)
    if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] == 0:
        raise InputError(f"A: expected a non-empty square adjacency matrix, got shape {A.shape}")
    return A


def lovasz_theta(A: np.ndarray) -> ThetaResult:
    """Lovász number and optimal orthonormal representation of the graph with adjacency ``A``.

    Parameters
    ----------
    A : np.ndarray, shape (n, n)
        Symmetric adjacency; off-diagonal non-zeros are edges, the diagonal is ignored.

    Returns
    -------
    ThetaResult

    Raises
    ------
    ConvergenceError
        When CVXOPT does not reach an optimal solution.
    """
    A = _check_adjacency(A)
    n = A.shape[0]
    iu, ju = np.nonzero(np.triu(A != 0, k=1))
    if len(iu) == 0:  # no edge: theta = n, the u_i are orthonormal
        return ThetaResult(float(n), np.eye(n))
    if len(iu) == n * (n - 1) // 2:  # complete graph: theta = 1, all u_i equal
        return ThetaResult(1.0, np.ones((n, n)))
    cvxopt = require("cvxopt", purpose="the Lovász theta SDP")
    m = len(iu)
    # G x <= h in the cone: -(t I + sum_e y_e (E_ij + E_ji)) <= -J, column-major vec(n x n)
    rows = np.concatenate([iu + n * ju, ju + n * iu, np.arange(n) * (n + 1)])
    cols = np.concatenate([np.arange(m), np.arange(m), np.full(n, m)])
    G = cvxopt.spmatrix(-1.0, rows.tolist(), cols.tolist(), (n * n, m + 1))
    h = cvxopt.matrix(-np.ones((n, n)))
    c = cvxopt.matrix(np.r_[np.zeros(m), 1.0])
    x = None
    for tol in _SDP_TOLS:  # the tightest tolerances the interior-point iterations reach
        options = {"show_progress": False, "abstol": tol, "reltol": tol, "feastol": tol,
                   "maxiters": _SDP_MAXITERS}  # fmt: skip
        try:
            sol = cvxopt.solvers.sdp(c, Gs=[G], hs=[h], options=options)
        except ArithmeticError:  # a scaling step broke down below the round-off floor
            continue
        if sol["status"] == "optimal":
            x = np.asarray(sol["x"]).ravel()
            break
    if x is None:
        raise ConvergenceError(
            f"lovasz_theta: the SDP solver did not converge at tolerances {_SDP_TOLS}"
        )
    t = float(x[-1])
    Z = t * np.eye(n) - np.ones((n, n))
    Z[iu, ju] += x[:m]
    Z[ju, iu] += x[:m]
    return ThetaResult(t, (1.0 + Z) / t)


def _active_set(K: np.ndarray, tol: float) -> np.ndarray | None:
    """Lawson-Hanson active-set iterations for the non-negative QP of :func:`max_margin_value`
    (``None`` when they do not reach the optimality conditions)."""
    n = K.shape[0]
    alpha = np.zeros(n)
    ones = np.ones(n)
    rcond = 10 * tol  # directions below the accuracy of K count as null (duplicate vectors)
    free = np.zeros(n, dtype=bool)
    for _ in range(3 * n + 3):
        g = K @ alpha - 1.0
        add = ~free & (g < -tol)
        if not add.any():
            # a least-squares solve of a nearly singular K_FF leaves a residual ~ sqrt(tol)
            return alpha if np.abs(g[free]).max(initial=0.0) <= np.sqrt(tol) else None
        free[int(np.argmin(np.where(add, g, np.inf)))] = True
        for _ in range(n + 1):
            z = np.zeros(n)
            z[free] = np.linalg.lstsq(K[np.ix_(free, free)], ones[: int(free.sum())], rcond=rcond)[
                0
            ]
            if (z[free] > 0).all():
                alpha = z
                break
            bad = free & (z <= 0)
            step = float(np.min(alpha[bad] / np.maximum(alpha[bad] - z[bad], 1e-300)))
            alpha = alpha + step * (z - alpha)
            free &= alpha > 0
            alpha[~free] = 0.0
        else:
            return None
    return None


def max_margin_value(K: np.ndarray, *, tol: float = 1e-9) -> tuple[float, np.ndarray]:
    r""":math:`\omega(K) = \max_{\alpha \ge 0} 2 e^T\alpha - \alpha^T K \alpha` and its
    maximiser.

    The Lawson-Hanson active-set method (Lawson & Hanson, "Solving least squares problems",
    1974, chapter 23) on :math:`\min \tfrac12 \alpha^T K \alpha - e^T \alpha`,
    :math:`\alpha \ge 0`: the most violated bound is freed, the optimality system
    :math:`K_{FF}\alpha_F = e` of the free set is solved by least squares, and a step back to
    the feasible segment drops variables that turn negative; exact after finitely many steps.
    When it does not meet the optimality conditions (:math:`\alpha \ge 0`,
    :math:`(K\alpha)_i \ge 1 - \mathrm{tol}` off the support, :math:`|(K\alpha)_i - 1| \le
    \sqrt{\mathrm{tol}}` on it: the least-squares residual of a nearly singular
    :math:`K_{FF}`), exact coordinate descent (:func:`kernelkit.solvers.box_qp`) is used.
    At the optimum :math:`\omega = e^T \alpha`.

    Parameters
    ----------
    K : np.ndarray, shape (n, n)
        Symmetric PSD matrix with a positive diagonal.
    tol : float
        Tolerance of the optimality conditions; singular values of :math:`K_{FF}` below
        ``10 tol`` (relative) are treated as zero, so nearly repeated columns (equal vectors
        known to the accuracy of ``K``) do not blow the solve up.

    Returns
    -------
    value, alpha : float, np.ndarray
    """
    K = np.asarray(K, dtype=np.float64)
    alpha = _active_set(K, tol)
    if alpha is None:
        alpha = box_qp(K, 1.0, np.inf, tol=tol, max_iter=2_000).solution.numpy()
    return float(alpha.sum()), alpha


_ENUMERATE_MAX = 10
"""Up to this order :func:`max_margin_values` enumerates the supports."""


def max_margin_values(Ks: np.ndarray, *, tol: float = 1e-9) -> np.ndarray:
    r""":math:`\omega(K_b)` of a stack of small matrices ``(B, d, d)`` at once.

    For :math:`d \le 10` every support :math:`S` is tried (:math:`2^d - 1` of them): the
    stationary point :math:`K_{SS}\alpha_S = e` (solved for all matrices and supports in one
    batched LU, with a ridge of ``tol`` so that repeated columns stay solvable) is feasible
    when :math:`\alpha_S \ge 0`, and :math:`\omega` is the largest objective
    :math:`2 e^T\alpha - \alpha^T K\alpha` over the feasible points: the maximiser is the
    stationary point of its own support, and every feasible point is a lower bound.  Larger
    orders go matrix by matrix through :func:`max_margin_value`.
    """
    Ks = np.asarray(Ks, dtype=np.float64)
    B, d = Ks.shape[0], Ks.shape[-1]
    if d > _ENUMERATE_MAX:
        return np.array([max_margin_value(K, tol=tol)[0] for K in Ks])
    masks = (np.arange(1, 2**d)[:, None] >> np.arange(d)[None, :]) & 1  # (S, d) supports
    masks = masks.astype(np.float64)
    best = np.zeros(B)
    eye = np.eye(d)
    for start in range(0, B, max(1, 4096 // len(masks))):
        K = Ks[start : start + max(1, 4096 // len(masks))]  # (b, d, d)
        # K_SS on the support, identity elsewhere: (b, S, d, d); right-hand side = the mask
        M = K[:, None] * (masks[:, :, None] * masks[:, None, :]) + eye * (1.0 - masks)[:, :, None]
        M = M + tol * eye
        alpha = np.linalg.solve(M, np.broadcast_to(masks, M.shape[:-1])[..., None])[..., 0]
        alpha *= masks
        value = 2.0 * alpha.sum(-1) - np.einsum("bsi,bij,bsj->bs", alpha, K, alpha)
        value[alpha.min(-1) < -tol] = 0.0
        best[start : start + len(K)] = value.max(-1)
    return best


def svm_theta(A: np.ndarray) -> tuple[float, np.ndarray]:
    r"""SVM-theta of a graph: :math:`\omega(K)` for :math:`K = I + A/\rho`,
    :math:`\rho = -\lambda_{\min}(A)`.

    Jethava et al., JMLR 14 (2013), section 3, eq. (7) (:math:`\rho \ge -\lambda_{\min}(A)`
    makes :math:`K` PSD; the smallest such :math:`\rho` is taken).  A graph without edges has
    :math:`K = I` and :math:`\omega = n`.

    Returns
    -------
    omega, alpha : float, np.ndarray
        The value and the maximiser :math:`\alpha \ge 0` (:math:`\omega = \sum_i \alpha_i`).
    """
    A = _check_adjacency(A).copy()
    np.fill_diagonal(A, 0.0)
    n = A.shape[0]
    if not A.any():
        return float(n), np.ones(n)
    rho = -float(symmetric_eigvalsh(torch.as_tensor(A))[0])
    return max_margin_value(np.eye(n) + A / rho)
