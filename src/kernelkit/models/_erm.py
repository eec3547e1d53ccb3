r"""The loss-generic fitting back-end: a loss (:mod:`kernelkit.models._losses`) on a system.

Fits, for a loss ``l`` of the residual, sample weights ``w`` (all 1 by default) and an
unpenalised intercept ``b``, the package's regularised ERM

.. math:: \min_{f \in H, b} \frac{1}{\sum_i w_i} \sum_{i=1}^n w_i\, l(y_i - f(x_i) - b)
          + \lambda \|f\|_H^2,

so integer weights fit the model of repeated rows.  With ``hat w_i = n w_i / sum_j w_j``
(mean 1) it is ``1 / (2 lam)`` times ``1/2 ||f||^2 + C sum_i hat w_i l_i`` with
**``C = 1 / (2 n lam)``**, scikit-learn's ``C`` with ``sample_weight = hat w``.

The *system* is

* **exact**: the Gram ``K`` of the training points, ``f = K alpha`` (representer theorem); or
* **Nyström**: the features ``Phi = K_nC U Lambda^{-1/2}`` of the centres ``C``
  (:func:`~kernelkit.gram._nystrom.nystrom_map_on_centres`, ``K_CC = U Lambda U^T``),
  ``f = Phi w``, ``||f||^2 = ||w||^2``; on a Dask array the same map's features are computed
  on the workers (:func:`~kernelkit.gram._distributed.map_row_blocks`) and gathered, so the
  same centres give the same ``Phi`` and the same model.

Either way the fitted function is ``f(x) = sum_j alpha_j k(x, c_j) + b`` over the training
points or the centres (``alpha = U Lambda^{-1/2} w`` for Nyström).

Solvers, by the loss:

* **smooth** (Huber): damped, regularised Newton steps on ``(w, b)`` over features (for the
  exact system, those of :func:`~kernelkit.gram._nystrom.nystrom_basis` of ``K`` itself,
  ``Phi Phi^T = K`` up to the one eigenvalue floor), gradient
  ``-(1/n) [Phi, 1]^T (hat w l'(r)) + 2 lam (w, 0)``, Hessian
  ``(1/n) [Phi, 1]^T diag(hat w l''(r)) [Phi, 1] + 2 lam diag(1, 0)`` plus
  ``||grad||_inf I`` (a step where no residual is in the curved part), Armijo backtracking,
  from ``f = 0`` and ``b`` the weighted median of ``y``;
  stops when the largest gradient entry is at most ``tol``;
* **non-smooth** (epsilon-insensitive): the loss's dual (``C_i = hat w_i C``) by SMO
  (:func:`~kernelkit.solvers._smo.smo`) on ``Q = K`` (exact; ``alpha = beta``) or on the
  low-rank ``Q = Phi Phi^T``, its columns formed on demand (Nyström; ``w = Phi^T beta``): the
  exact minimiser of the ERM restricted to ``span(Phi)``; ``b = -rho``.

``lam="auto"``: the library's k-fold path (:mod:`kernelkit.models._kfold_path`: the held-out
path's grid ``1e-1, 10^-1.5, ..., 1e-9`` times the kernel's scale ``mean k(x, x)``, from the
largest ``lam`` down, stopped ``logistic_patience`` values past the best) with warm starts in
each fold; the score is minus the weighted mean held-out loss, and the best ``lam`` (the
largest on ties) is refitted on every row.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from kernelkit.gram._distributed import map_row_blocks
from kernelkit.gram._engine import gram_tensor
from kernelkit.gram._nystrom import (
    NystromBasis,
    NystromMap,
    choose_centres,
    nystrom_basis,
    nystrom_map_on_centres,
)
from kernelkit.kernels import PrecomputedBatch
from kernelkit.kernels._base import Batch, Kernel
from kernelkit.models._falkon import choose_solver, forced_solver, keeps_block
from kernelkit.models._kfold_path import N_FOLDS, kfold_path
from kernelkit.models._losses import DualProblem
from kernelkit.solvers._cholesky import solve
from kernelkit.solvers._smo import smo
from kernelkit.utils._progress import Progress
from kernelkit.utils._seeding import check_random_state

ARMIJO = 1e-4
"""Sufficient-decrease constant of the Newton line search."""


@dataclass(frozen=True)
class ErmResult:
    """Result of :func:`solve_erm`.

    Attributes
    ----------
    coef : torch.Tensor
        Coefficients on the system's columns: ``alpha`` (exact), ``w`` (features).
    intercept : float
        ``b``.
    converged : bool
        Whether the stopping test held before ``max_iter``.
    n_iter : int
        Newton steps (smooth losses) or SMO pair updates (dual).
    state : ndarray
        The solver's variables, a warm start for a smaller ``lam``.
    """

    coef: torch.Tensor
    intercept: float
    converged: bool
    n_iter: int
    state: np.ndarray


@dataclass(frozen=True)
class KernelErmModel:
    """A fitted ``f(x) = sum_j coef_j k(x, c_j) + intercept`` (:func:`fit_kernel_erm`).

    Attributes
    ----------
    centres : batch
        The ``c_j``: the training points (exact) or the centres (Nyström).
    indices : ndarray of int or None
        Nyström: the centres' rows among the training points (``None`` for centres given as
        points, or for the exact system).
    coef, intercept, n_iter, converged :
        As :class:`ErmResult`, ``coef`` on the ``c_j``.
    lam : float
        The ``lam`` fitted (chosen by cross-validation for ``lam="auto"``).
    solver : str
        ``"exact"`` or ``"nystrom"``.
    cv_results : dict or None
        ``lam="auto"``: the cross-validation in scikit-learn's layout.
    """

    centres: Batch
    indices: np.ndarray | None
    coef: torch.Tensor
    intercept: float
    n_iter: int
    converged: bool
    lam: float
    solver: str
    cv_results: dict[str, Any] | None


@dataclass(frozen=True)
class ErmOptions:
    """How a fit runs (the estimator's settings, passed through the back-end unchanged).

    Attributes
    ----------
    weights : ndarray or None
        Non-negative sample weights (None: unweighted).
    random_state : None, int, RandomState or Generator
        Seed of the centre draw and of the folds of ``lam="auto"``.
    tol, max_iter :
        The solver's stopping rule (:func:`solve_erm`).
    progress : Progress or None
        Receives the solver's progress.
    """

    weights: np.ndarray | None = None
    random_state: Any = None
    tol: float = 1e-6
    max_iter: int = 100
    progress: Progress | None = None


def _unit_weights(weights: np.ndarray | None, n: int) -> np.ndarray:
    """``hat w = n w / sum w`` (ones when unweighted)."""
    if weights is None:
        return np.ones(n)
    w = np.asarray(weights, dtype=np.float64)
    return w * (n / w.sum())


def _newton(
    loss: Any,
    Phi: torch.Tensor,
    y: torch.Tensor,
    hw: torch.Tensor,
    lam: float,
    tol: float,
    max_iter: int,
    start: np.ndarray | None,
    progress: Progress | None,
) -> tuple[torch.Tensor, bool, int]:
    """Damped Newton on ``theta = (w, b)`` (module docstring); ``(theta, converged, steps)``."""
    n, d = Phi.shape
    like = {"dtype": Phi.dtype, "device": Phi.device}
    A = torch.cat([Phi, torch.ones(n, 1, **like)], dim=1)
    ridge = torch.full((d + 1,), 2.0 * lam, **like)
    ridge[-1] = 0.0
    if start is None:  # f = 0 and b the weighted median of y
        theta = torch.zeros(d + 1, **like)
        order = torch.argsort(y)
        half = torch.searchsorted(torch.cumsum(hw[order], 0), hw.sum() / 2)
        theta[-1] = y[order[min(int(half), n - 1)]]
    else:
        theta = torch.as_tensor(start).to(**like)

    def objective(t: torch.Tensor) -> tuple[float, torch.Tensor]:
        r = y - A @ t
        return float((hw * loss.value(r)).mean() + lam * (t[:-1] @ t[:-1])), r

    J, r = objective(theta)
    steps, converged = 0, False
    while True:
        grad = -(A.T @ (hw * loss.derivative(r))) / n + ridge * theta
        if float(grad.abs().max()) <= tol:
            converged = True
            break
        if steps >= max_iter:
            break
        # regularised Newton (Li, Fukushima, Qi and Yamashita, Comput. Optim. Appl. 28, 2004):
        # + ||grad|| I keeps a step where no residual is in the loss's curved part (the
        # intercept's curvature 0), and vanishes at the optimum
        shift = ridge + float(grad.abs().max())
        H = (A.T * (hw * loss.curvature(r))) @ A / n + torch.diag(shift)
        delta = -solve(H, grad, name="Hessian")
        slope, step = float(grad @ delta), 1.0
        while True:
            J_new, r_new = objective(theta + step * delta)
            if J_new <= J + ARMIJO * step * slope or step < 1e-10:
                break
            step /= 2
        if J_new >= J:  # no decrease even at a tiny step: optimal to round-off
            converged = True
            break
        theta, J, r, steps = theta + step * delta, J_new, r_new, steps + 1
        if progress is not None:
            progress.update(steps, objective=J)
    return theta, converged, steps


def _dual(
    dual: DualProblem,
    Z: np.ndarray,
    gram: bool,
    tol: float,
    max_iter: int,
    start: np.ndarray | None,
    progress: Progress | None,
) -> tuple[np.ndarray, float, bool, int, np.ndarray]:
    """SMO on the dual with ``Q_tt' = s_t s_t' Z_row Z_row'^T`` (``Z`` the Gram or the
    features); ``(beta, b, converged, steps, a)``."""
    rows, s = dual.rows, dual.signs

    def column(t: int) -> np.ndarray:
        base = Z[:, rows[t]] if gram else Z @ Z[rows[t]]
        return s[t] * s * base[rows]

    diag = (np.diag(Z) if gram else np.einsum("ij,ij->i", Z, Z))[rows]
    report = None if progress is None else (lambda k, v: progress.update(k, violation=v))
    res = smo(
        column,
        diag,
        dual.linear,
        s,
        dual.upper,
        tol=tol,
        max_iter=max_iter,
        a0=start,
        callback=report,
    )
    beta = dual.coefficients(res.solution, len(Z))
    return beta, -res.rho, res.converged, res.iterations, res.solution


def solve_erm(
    loss: Any,
    Z: torch.Tensor,
    y: torch.Tensor,
    lam: float,
    *,
    gram: bool,
    weights: np.ndarray | None = None,
    tol: float = 1e-6,
    max_iter: int = 100,
    start: np.ndarray | None = None,
    progress: Progress | None = None,
) -> ErmResult:
    """Minimise the weighted ERM (module docstring) on one system.

    Parameters
    ----------
    loss : loss object
        :mod:`kernelkit.models._losses`.
    Z : torch.Tensor
        The Gram ``K`` (``gram=True``, shape (n, n)) or the features ``Phi`` (shape (n, d)).
    y : torch.Tensor, shape (n,)
        Targets.
    lam : float
        ``lam > 0``.
    weights : ndarray, optional
        Non-negative sample weights (rows of weight 0 are left out of the dual).
    tol, max_iter :
        Stopping rule of the solver (``max_iter < 0``: no limit, dual only).
    start : ndarray, optional
        :attr:`ErmResult.state` of a fit of the same system at a larger ``lam``.
    progress : Progress, optional
        Receives the objective (Newton) or the KKT violation (SMO).
    """
    Z = Z.to(torch.float64)
    y = y.to(torch.float64)
    n = len(y)
    hw = _unit_weights(weights, n)
    if not loss.smooth:
        keep = np.flatnonzero(hw > 0)
        Zk = Z[keep][:, keep] if gram else Z[keep]
        dual = loss.dual(y.cpu().numpy()[keep], hw[keep] / (2.0 * n * lam))
        beta_k, b, converged, steps, state = _dual(
            dual, Zk.cpu().numpy(), gram, tol, max_iter, start, progress
        )
        beta = np.zeros(n)
        beta[keep] = beta_k
        beta_t = torch.as_tensor(beta, device=Z.device)
        coef = beta_t if gram else Z.T @ beta_t
        return ErmResult(coef, b, converged, steps, state)
    basis = nystrom_basis(Z) if gram else None
    Phi = basis.features(Z) if basis is not None else Z
    theta, converged, steps = _newton(
        loss,
        Phi,
        y,
        torch.as_tensor(hw, device=Z.device),
        lam,
        tol,
        max(max_iter, 0),
        start,
        progress,
    )
    w = theta[:-1]
    coef = w if basis is None else basis_coefficients(basis, w)
    return ErmResult(coef, float(theta[-1]), converged, steps, theta.cpu().numpy())


def basis_coefficients(basis: NystromBasis, w: torch.Tensor) -> torch.Tensor:
    """``alpha = U Lambda^{-1/2} w``: the kernel coefficients of ``f = phi(.)^T w`` (float64)."""
    scaled = basis.inv_sqrt_eigenvalues.to(torch.float64) * w.to(torch.float64)
    return basis.eigenvectors.to(torch.float64) @ scaled


def select_lam(
    loss: Any,
    Z: torch.Tensor,
    y: torch.Tensor,
    *,
    gram: bool,
    weights: np.ndarray | None = None,
    random_state: Any = None,
    tol: float = 1e-6,
    max_iter: int = 100,
) -> tuple[float, dict[str, Any]]:
    """``lam="auto"``: the k-fold path (:func:`~kernelkit.models._kfold_path.kfold_path`)
    on the system ``Z``, each fold warm-started from its solution at the previous ``lam``,
    scored by minus its weighted mean held-out loss; returns the chosen ``lam`` and
    ``cv_results`` (the values visited).  Folds: a random permutation (``random_state``)
    dealt into :data:`~kernelkit.models._kfold_path.N_FOLDS` parts."""
    n = len(y)
    k = min(N_FOLDS, n)
    fold = np.empty(n, dtype=np.int64)
    fold[check_random_state(random_state).permutation(n)] = np.arange(n) % k
    hw = _unit_weights(weights, n)
    splits = [(np.flatnonzero(fold != f), np.flatnonzero(fold == f)) for f in range(k)]
    states: list[np.ndarray | None] = [None] * k

    def score(f: int, lam: float) -> float:
        tr, out = splits[f]
        res = solve_erm(
            loss, Z[tr][:, tr] if gram else Z[tr], y[tr], lam, gram=gram, weights=hw[tr],
            tol=tol, max_iter=max_iter, start=states[f],
        )  # fmt: skip
        states[f] = res.state
        r = y[out] - ((Z[out][:, tr] if gram else Z[out]) @ res.coef + res.intercept)
        w_out = torch.as_tensor(hw[out], device=Z.device)
        return -float((w_out * loss.value(r)).sum() / w_out.sum().clamp_min(1e-300))

    return kfold_path(_system_diagonal(Z, gram), k, score)


def _system_diagonal(Z: torch.Tensor, gram: bool) -> torch.Tensor:
    """``k(x_i, x_i)`` of the exact system, its Nyström approximation ``||phi(x_i)||^2``."""
    return Z.diagonal() if gram else (Z * Z).sum(1)


def _fit_system(
    loss: Any,
    Z: torch.Tensor,
    y: torch.Tensor,
    lam: float | str,
    options: ErmOptions,
    *,
    gram: bool,
    to_centres: Callable[[torch.Tensor], torch.Tensor],
    centres: Batch,
    indices: np.ndarray | None,
) -> KernelErmModel:
    """``lam`` (chosen by :func:`select_lam` when ``"auto"``), then the fit on every row."""
    cv = None
    weights, tol, max_iter = options.weights, options.tol, options.max_iter
    if isinstance(lam, str):
        if options.progress is not None:
            options.progress.stage(f"lam: {N_FOLDS}-fold cross-validation")
        lam, cv = select_lam(
            loss, Z, y, gram=gram, weights=weights, random_state=options.random_state,
            tol=tol, max_iter=max_iter,
        )  # fmt: skip
    res = solve_erm(
        loss, Z, y, float(lam), gram=gram, weights=weights, tol=tol, max_iter=max_iter,
        progress=options.progress,
    )  # fmt: skip
    solver = "exact" if gram else "nystrom"
    return KernelErmModel(
        centres, indices, to_centres(res.coef), res.intercept, res.n_iter, res.converged,
        float(lam), solver, cv,
    )  # fmt: skip


def _fit_on_map(
    loss: Any,
    fmap: NystromMap,
    Phi: torch.Tensor,
    y: torch.Tensor,
    lam: float | str,
    options: ErmOptions,
) -> KernelErmModel:
    """:func:`_fit_system` on the features ``Phi`` of the Nyström map ``fmap``."""
    return _fit_system(
        loss, Phi.to(torch.float64), y, lam, options, gram=False,
        to_centres=lambda w: basis_coefficients(fmap.basis, w), centres=fmap.centres,
        indices=fmap.indices,
    )  # fmt: skip


def _centre_rows(indices: np.ndarray | None, m: int) -> np.ndarray:
    """The centres' rows among the training points, -1 for centres given as points."""
    return np.full(m, -1) if indices is None else np.asarray(indices)


def erm_solver(solver: str, Xb: Batch, m: int) -> str:
    """``"exact"`` or ``"nystrom"``: ``solver``, or for ``"auto"`` the exact system while
    :func:`~kernelkit.models._falkon.choose_solver` (KernelRidge's cost model and memory budget)
    keeps it; a forced ``"nystrom"`` with more centres than points is the exact solver."""
    n = len(Xb)
    if solver == "auto":
        if isinstance(Xb, PrecomputedBatch):
            return "exact"
        d = Xb.shape[1] if isinstance(Xb, torch.Tensor) and Xb.ndim == 2 else 0
        chosen = choose_solver(n, m, d=d, keep=keeps_block(Xb, m))
        return "exact" if chosen == "exact" else "nystrom"
    return forced_solver(solver, n, m, stacklevel=6)


def fit_kernel_erm(
    loss: Any,
    kernel: Kernel,
    Xb: Batch,
    y: torch.Tensor,
    lam: float | str,
    options: ErmOptions,
    *,
    solver: str,
    n_centers: int = 1000,
    centers: Any = "uniform",
) -> KernelErmModel:
    """Fit ``loss`` in memory on the prepared points ``Xb``: the exact system or the Nyström
    features of ``n_centers`` / ``centers`` (:func:`~kernelkit.gram._nystrom.choose_centres`,
    drawn by weight among distinct points), ``solver`` one of ``"exact"``, ``"nystrom"``."""
    if solver == "nystrom":
        choice = choose_centres(
            kernel, Xb, n_centers, centers, random_state=options.random_state, distinct=True,
            sample_weight=options.weights, exact="the exact solver", stacklevel=5,
        )  # fmt: skip
        if not choice.exact:
            rows = _centre_rows(choice.indices, len(choice.centres))
            fmap = nystrom_map_on_centres(kernel, choice.centres, rows)
            return _fit_on_map(loss, fmap, fmap.features(Xb), y, lam, options)
    K = gram_tensor(kernel, Xb).to(torch.float64)
    return _fit_system(
        loss, K, y, lam, options, gram=True, to_centres=lambda a: a, centres=Xb, indices=None
    )


def fit_kernel_erm_distributed(
    loss: Any,
    kernel: Kernel,
    blocks: Any,
    centres: Batch,
    indices: np.ndarray | None,
    y: torch.Tensor,
    lam: float | str,
    options: ErmOptions,
) -> KernelErmModel:
    """Fit ``loss`` on the Nyström features of a Dask array or bag's row ``blocks``
    (:func:`~kernelkit.gram._distributed.row_blocks`), computed on the workers and gathered
    (``n x d`` on the client), for centres drawn or given on the client."""
    fmap = nystrom_map_on_centres(kernel, centres, _centre_rows(indices, len(centres)))

    def block_features(block: Any) -> np.ndarray:
        # a block of array rows comes as a list of rows from persisted (kept) blocks
        listed = isinstance(block, list) and isinstance(block[0], np.ndarray)
        return fmap.features(np.stack(block) if listed else block).double().cpu().numpy()

    Phi = map_row_blocks(block_features, blocks, fmap.dim, np.float64).compute()
    return _fit_on_map(loss, fmap, torch.as_tensor(np.asarray(Phi)), y, lam, options)


__all__ = [
    "ErmOptions",
    "ErmResult",
    "KernelErmModel",
    "basis_coefficients",
    "erm_solver",
    "fit_kernel_erm",
    "fit_kernel_erm_distributed",
    "select_lam",
    "solve_erm",
]
