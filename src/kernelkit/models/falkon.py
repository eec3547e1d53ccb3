r"""Nyström kernel ridge regression by preconditioned CG (Falkon), and its ``lam`` path.

Rudi, Carratino and Rosasco, "FALKON: An Optimal Large Scale Kernel Method" (NeurIPS 2017),
Algorithm 1.  With ``m`` centres ``C`` chosen among the training points by the maps of
:mod:`kernelkit.gram.nystrom` (course part 3, section 5, slide "Nyström": uniform subset,
k-means++ or greedy pivoted Cholesky), the estimator ``f(x) = sum_j alpha_j k(x, c_j)``
minimises the course's objective (part 1, section 3.1; weighted: section 3.2)

.. math:: \frac1n \sum_i w_i (y_i - f(x_i))^2 + \lambda \|f\|_H^2
          \;\Longleftrightarrow\;
          \Big(\frac1n K_{nm}^T W K_{nm} + \lambda K_{mm}\Big) \alpha = \frac1n K_{nm}^T W y,

the same ``lam`` as the exact :class:`~kernelkit.KernelRidge` (with ``m = n`` the two
coincide).  The products with ``K_nm`` are streamed (:mod:`kernelkit.gram.streaming`), the
preconditioner and CG are :mod:`kernelkit.solvers.nystrom_pcg`.  Memory: ``O(n c + m^2)``;
time: ``O(n m (d + c))`` per CG iteration plus ``O(m^3)`` once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from kernelkit.gram.engine import gram_tensor, prepare_pair
from kernelkit.gram.nystrom import kmeanspp_centres, pivoted_cholesky, take, uniform_centres
from kernelkit.gram.streaming import NystromOperator
from kernelkit.kernels.base import Batch, Kernel
from kernelkit.solvers.nystrom_pcg import (
    CentreFactor,
    NystromPCGResult,
    centre_factor,
    nystrom_pcg,
    nystrom_preconditioner,
)
from kernelkit.utils.errors import InputError

CENTRE_METHODS = ("uniform", "kmeans++", "greedy")
"""Centre choices of :func:`select_centres`."""


def select_centres(
    kernel: Kernel, Xb: Batch, n_centers: Any, *, method: str = "uniform", random_state: Any = None
) -> np.ndarray:
    """Indices of ``m = n_centers`` Nyström centres among the ``n`` prepared points ``Xb``.

    ``"uniform"``: a uniform subset; ``"kmeans++"``: kernel k-means++ seeding (may return
    fewer, merging repeated draws); ``"greedy"``: the pivots of the pivoted Cholesky (fewer on
    a kernel of rank ``< m``).  See :mod:`kernelkit.gram.nystrom`.

    Raises
    ------
    InputError
        If ``n_centers`` is not an integer in ``[1, n]`` or ``method`` is unknown.
    """
    n = len(Xb)
    if isinstance(n_centers, bool) or not isinstance(n_centers, (int, np.integer)) or n_centers < 1:
        raise InputError(f"n_centers: expected an integer >= 1, got {n_centers!r}")
    if n_centers > n:
        raise InputError(
            f"n_centers: expected at most the number of training points (n_samples = {n}), "
            f"got {n_centers}; use fewer centres or the exact solver"
        )
    if method not in CENTRE_METHODS:
        raise InputError(f"centers: expected one of {CENTRE_METHODS}, got {method!r}")
    m = int(n_centers)
    if method == "greedy":
        return np.sort(pivoted_cholesky(kernel, Xb, m).pivots)
    if method == "kmeans++":
        return kmeanspp_centres(kernel, Xb, m, random_state)
    return uniform_centres(n, m, random_state)


def centre_gram(kernel: Kernel, centres: Batch) -> torch.Tensor:
    """``K_mm`` in float64 (vector centres are cast up before the kernel is evaluated)."""
    if isinstance(centres, torch.Tensor) and centres.is_floating_point():
        centres = centres.to(torch.float64)
    return gram_tensor(kernel, centres).to(torch.float64)


@dataclass(frozen=True)
class NystromSystem:
    """The streamed ``K_nm`` and the factor of ``K_mm`` of one training set and centre set.

    Attributes
    ----------
    op : NystromOperator
        ``K_nm`` (training rows x centres).
    factor : CentreFactor
        ``T`` of Falkon (shared by every ``lam`` and weighting).
    indices : ndarray of int
        The centres' indices among the training points.
    """

    op: NystromOperator
    factor: CentreFactor
    indices: np.ndarray

    @property
    def n(self) -> int:
        """Number of training points."""
        return self.op.shape[0]


def nystrom_system(
    kernel: Kernel,
    X: Any,
    indices: np.ndarray,
    *,
    block_size: int | None = None,
    lam: float | None = None,
) -> NystromSystem:
    """Prepare ``K_nm`` (streamed) and ``T = chol(K_mm)`` for the centres ``X[indices]``.

    ``lam`` (the smallest ``lam`` the system will be solved for) sets the jitter of ``T``
    for float32 blocks (:func:`~kernelkit.solvers.nystrom_pcg.centre_factor`).
    """
    Xb, _ = prepare_pair(kernel, X)
    centres = take(Xb, np.asarray(indices))
    op = NystromOperator(kernel, Xb, centres, block_size=block_size)
    block_dtype = Xb.dtype if isinstance(Xb, torch.Tensor) else torch.float64
    factor = centre_factor(centre_gram(kernel, centres), block_dtype=block_dtype, lam=lam)
    return NystromSystem(op, factor, np.asarray(indices))


def _as_columns(Y: torch.Tensor) -> torch.Tensor:
    return (Y[:, None] if Y.ndim == 1 else Y).to(torch.float64)


def nystrom_ridge(
    system: NystromSystem,
    Y: torch.Tensor,
    lam: float | Sequence[float],
    *,
    sample_weight: torch.Tensor | None = None,
    tol: float = 1e-6,
    max_iter: int = 100,
    callback: Callable[[int, torch.Tensor], None] | None = None,
) -> NystromPCGResult:
    r"""Falkon's solve of ``(K_nm^T W K_nm / n + lam K_mm) alpha = K_nm^T W Y / n``.

    Parameters
    ----------
    system : NystromSystem
        ``K_nm`` and ``T``.
    Y : torch.Tensor
        Targets, shape ``(n,)`` or ``(n, c)``.
    lam : float or sequence of float
        ``lam > 0``; a sequence solves every value in the same CG run (one pass over the data
        per iteration for the whole path: the ``g`` values are ``g`` column groups sharing
        ``T``, each with its own ``A``).
    sample_weight : torch.Tensor, optional
        Non-negative weights ``w``, shape ``(n,)``.
    tol, max_iter : float, int
        CG stopping rule (:func:`~kernelkit.solvers.nystrom_pcg.nystrom_pcg`).
    callback : callable, optional
        ``callback(k, rel)`` after every CG iteration.

    Returns
    -------
    NystromPCGResult
        ``coef`` of shape ``(m, g c)``: the columns of ``lam[0]`` first.
    """
    Yc = _as_columns(Y)
    lams = [float(lam)] if np.isscalar(lam) else [float(v) for v in lam]  # type: ignore[union-attr]
    w = None if sample_weight is None else sample_weight.to(torch.float64)
    rhs = system.op.rmatmat(Yc if w is None else Yc * w[:, None])
    centre_w = None if w is None else w[torch.as_tensor(system.indices)]
    precond = nystrom_preconditioner(system.factor, lams, centre_w)

    def normal(V: torch.Tensor) -> torch.Tensor:
        return system.op.normal_matmat(V, weights=w)[0]

    return nystrom_pcg(
        normal,
        rhs.repeat(1, len(lams)),
        precond,
        n=system.n,
        tol=tol,
        max_iter=max_iter,
        callback=callback,
    )


def nystrom_validation_errors(
    system: NystromSystem,
    Y: torch.Tensor,
    X_val: Batch,
    Y_val: torch.Tensor,
    lams: Sequence[float],
    *,
    tol: float = 1e-6,
    max_iter: int = 100,
) -> np.ndarray:
    r"""Held-out mean squared error of the Nyström KRR for every ``lam`` of a grid.

    Model selection at scale: ``T = chol(K_mm)`` and ``K_nm^T Y`` are computed once, every
    ``lam`` runs in the same CG (one pass over the training rows per iteration for the whole
    grid, :func:`nystrom_ridge`), and the predictions of all ``lam`` on the validation rows
    come from one streamed pass.  Returns the ``len(lams)`` errors (mean over outputs).
    """
    Yc, Yv = _as_columns(Y), _as_columns(Y_val)
    res = nystrom_ridge(system, Yc, lams, tol=tol, max_iter=max_iter)
    val = NystromOperator(system.op.kernel, X_val, system.op.centres)
    pred = val.matmat(res.coef).reshape(len(Yv), len(lams), Yc.shape[1])
    return ((pred - Yv[:, None, :]) ** 2).mean((0, 2)).numpy()


def nystrom_predict(
    kernel: Kernel, X: Any, centres: Batch, coef: torch.Tensor, *, block_size: int | None = None
) -> torch.Tensor:
    """``f(x) = sum_j coef_j k(x, c_j)`` in row tiles (float64, shaped like ``coef``'s columns)."""
    return NystromOperator(kernel, X, centres, block_size=block_size).matmat(coef)


__all__ = [
    "CENTRE_METHODS",
    "NystromSystem",
    "centre_gram",
    "nystrom_predict",
    "nystrom_ridge",
    "nystrom_system",
    "nystrom_validation_errors",
    "select_centres",
]
