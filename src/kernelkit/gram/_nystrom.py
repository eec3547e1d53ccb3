r"""Nyström feature maps: ``phi(x) = T^T k_C(x)`` with ``phi(x)^T phi(y) = k_C(x)^T K_CC^+ k_C(y)``.

Course part 3, section 5, "Large-scale kernel learning", slide "Nyström": ``phi(x)`` is
projected on ``F = span(k(c_1, .), ..., k(c_m, .))``, whose coordinates are
``psi(x) = K_CC^{-1/2} k_C(x)`` with ``k_C(x) = [k(c_j, x)]_j`` (Williams and Seeger, NIPS
2001), so that ``K ~ K_XC K_CC^{-1} K_CX``.  The slide's four recipes choose the centres
``C`` among the training points:

* ``"uniform"``: a uniform random subset (recipe 2, "Random subset");
* ``"kmeans++"``: the clustered Nyström of Zhang and Kwok (ICML 2008, recipe 4) with the
  centres seeded by k-means++ D^2 sampling (Arthur and Vassilvitskii, SODA 2007) in the
  kernel's feature space, where ``d^2(x, c) = k(x, x) + k(c, c) - 2 k(x, c)`` needs only
  kernel evaluations, so strings, graphs, molecules and precomputed Grams work too;
* ``"greedy"``: the largest residual ``k(x, x) - k_C(x)^T K_CC^{-1} k_C(x)`` (recipe 3),
  which is the pivoted (incomplete) Cholesky factorisation ``K ~ G G^T``
  (:func:`pivoted_cholesky`);
* ``"kpca"``: KPCA Nyström of rank ``p`` (recipe 1): a uniform subset and only the top ``p``
  eigenpairs of ``K_CC = U Delta U^T``, ``psi(x) = Delta_p^{-1/2} U_p^T k_C(x)``.

Two forms of ``K_CC^{-1/2}`` are kept (they differ by an orthogonal rotation, which changes
no inner product): the eigenbasis ``U Lambda^{-1/2}`` (:class:`NystromBasis`), and the
triangular ``L^{-T}`` of ``K_CC = L L^T`` (:class:`CholeskyBasis`), the natural basis of the
greedy centres.  Both apply the library's ONE regularisation of ``K_CC``,
:func:`~kernelkit.solvers._nystrom_pcg.centre_jitter`'s level ``delta = tau s``
(``s = mean(diag K_CC)``, ``tau = max(m eps_64, eps)``; with a ``lam``: ``eps^2 / lam``): the
directions of ``K_CC`` with eigenvalue below ``delta`` are round-off of ``K_CC`` and of the
kernel blocks, not signal.  The eigenbasis drops them; the Cholesky form adds ``delta I``
(as Falkon's and the one-pass solvers do, where it becomes the penalty
``lam alpha^T (K_CC + delta I) alpha``).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from kernelkit.gram._centres import (
    kmeanspp_centres,
    pivoted_cholesky,
    take,
    uniform_centres,
    weighted_centres,
)
from kernelkit.gram._engine import gram_tensor, prepare_pair
from kernelkit.kernels._base import Batch, Kernel
from kernelkit.kernels._precomputed import PrecomputedBatch
from kernelkit.solvers import symmetric_eigh
from kernelkit.solvers._cholesky import solve_triangular
from kernelkit.solvers._nystrom_pcg import centre_factor, centre_jitter
from kernelkit.solvers._psd import spectrum_check
from kernelkit.utils._errors import InputError, NotPSDError
from kernelkit.utils._numerics import psd_tolerance
from kernelkit.utils._validation import check_int, check_positive

METHODS = ("uniform", "kmeans++", "greedy", "kpca")
"""Centre choices of :func:`nystrom_map` (see the module docstring)."""


@dataclass(frozen=True)
class NystromBasis:
    r"""The map ``k_C(x) -> Lambda^{-1/2} U^T k_C(x)`` (eigenbasis form of ``K_CC^{-1/2}``).

    ``K_CC = U Lambda U^T``; eigenpairs with ``lambda <= delta`` (the one regularisation
    level, module docstring) are dropped, so ``d = len(inv_sqrt_eigenvalues) <= m``, and
    ``<phi(x), phi(y)> = k_C(x)^T K_CC^+ k_C(y)``, the Nyström kernel (Ma et al., ICML 2020,
    eqs. 20-21 use the symmetric root ``K_CC^{-1/2}``; the two differ by the rotation
    ``U``).  Columns are in ascending order of eigenvalue.

    Attributes
    ----------
    eigenvectors : torch.Tensor
        ``U``, shape ``(m, d)``.
    inv_sqrt_eigenvalues : torch.Tensor
        ``lambda^{-1/2}``, shape ``(d,)``.
    jitter : float
        The absolute eigenvalue floor ``delta`` used.
    """

    eigenvectors: torch.Tensor
    inv_sqrt_eigenvalues: torch.Tensor
    jitter: float

    @property
    def dim(self) -> int:
        """Dimension ``d`` of the embedding."""
        return int(self.inv_sqrt_eigenvalues.shape[0])

    def features(self, K_xc: torch.Tensor) -> torch.Tensor:
        """``phi(x)`` for every row of ``K_xc`` (shape ``(n, m)``), shape ``(n, d)``."""
        return (K_xc @ self.eigenvectors) * self.inv_sqrt_eigenvalues


@dataclass(frozen=True)
class CholeskyBasis:
    r"""The map ``k_C(x) -> L^{-1} k_C(x)`` with ``L L^T = K_CC + jitter I`` (``L`` lower).

    Attributes
    ----------
    factor : torch.Tensor
        ``L``, shape ``(m, m)``.
    jitter : float
        Absolute jitter ``delta`` added to the diagonal of ``K_CC`` (the one regularisation;
        0.0 for the pivoted Cholesky factor of the greedy centres, exact on its pivots).
    """

    factor: torch.Tensor
    jitter: float

    @property
    def dim(self) -> int:
        """Dimension ``m`` of the embedding."""
        return int(self.factor.shape[0])

    def features(self, K_xc: torch.Tensor) -> torch.Tensor:
        """``phi(x) = L^{-1} k_C(x)`` for every row of ``K_xc``, shape ``(n, m)``."""
        return solve_triangular(self.factor, K_xc.mT, upper=False).mT


def nystrom_basis(
    K_zz: torch.Tensor, *, jitter: float | None = None, rank: int | None = None
) -> NystromBasis:
    r"""Robust inverse square root of the centre Gram ``K_CC`` in eigenbasis form.

    ``K_CC = U Lambda U^T``; eigenvalues ``<= delta`` are dropped instead of inverted, with
    ``delta = tau s`` the one regularisation level (module docstring,
    :func:`~kernelkit.solvers._nystrom_pcg.centre_jitter`).  With ``rank = p`` only the ``p``
    largest of the kept pairs remain: the KPCA Nyström map of rank ``p`` (course part 3,
    slide "Nyström", recipe 1), ``psi(x) = Delta_p^{-1/2} U_p^T k_C(x)``.

    Parameters
    ----------
    K_zz : torch.Tensor
        Symmetric centre Gram ``K_CC``, shape ``(m, m)``.
    jitter : float, optional
        ``tau`` (relative to ``s = mean(diag K_CC)``); the rule's when None.
    rank : int, optional
        Keep at most this many (largest) eigenpairs.

    Raises
    ------
    NotPSDError
        If ``lambda_min < -max(psd_tolerance, delta / lambda_max) * lambda_max`` (the kernel is
        not p.d. on the centres); the message gives the eigenvalue and the floor used.
    InputError
        If ``K_zz`` is not square or is empty.
    """
    if K_zz.ndim != 2 or K_zz.shape[0] != K_zz.shape[1] or K_zz.shape[0] == 0:
        raise InputError(
            f"K_zz: expected a non-empty square landmark Gram, got shape {tuple(K_zz.shape)}"
        )
    if jitter is None:
        floor = centre_jitter(K_zz)
    else:
        floor = float(jitter) * (float(K_zz.diagonal().abs().mean()) or 1.0)
    eig = symmetric_eigh(K_zz, signs=False, name="K_zz")
    lam, U = eig.values, eig.vectors
    lam_max = float(lam[-1])
    if lam_max <= 0:
        raise NotPSDError(
            f"K_zz: expected a positive semi-definite landmark Gram with a positive "
            f"eigenvalue, got largest eigenvalue {lam_max:.3g} (floor {floor:.1e})"
        )
    verdict = spectrum_check(lam, rtol=max(psd_tolerance(K_zz.dtype), floor / lam_max))
    lam_min, tolerance = float(lam[0]), verdict.tolerance
    if not verdict.is_psd:
        raise NotPSDError(
            f"K_zz: the landmark Gram is not positive semi-definite: smallest eigenvalue "
            f"{lam_min:.3g} = {lam_min / lam_max:.2e} x lambda_max, below the tolerance "
            f"{-tolerance:.1e}; eigenvalue floor (jitter) used: {floor:.3g}. Use a positive "
            "definite kernel, or fewer / distinct landmarks"
        )
    keep = lam > floor
    if rank is not None:
        keep &= torch.arange(len(lam), device=lam.device) >= len(lam) - rank
    return NystromBasis(U[:, keep], lam[keep].rsqrt(), floor)


def cholesky_basis(K_cc: torch.Tensor) -> CholeskyBasis:
    """``L^{-1}`` of ``K_CC + delta I = L L^T`` with the one regularisation ``delta``.

    The factor is Falkon's :func:`~kernelkit.solvers.centre_factor` (float64,
    the solver's jitter ladder added only when ``delta`` is not enough), in the dtype of
    ``K_CC``, stored column-major as LAPACK's ``potrf`` returns it.
    """
    try:
        fac = centre_factor(K_cc)
    except NotPSDError as exc:
        raise NotPSDError(
            f"K_cc: the centre (landmark) Gram is not positive semi-definite; use a positive "
            f"definite kernel. The solver reported: {exc}"
        ) from exc
    return CholeskyBasis(fac.L.to(K_cc.dtype).mT.contiguous().mT, fac.jitter)


# ---------------------------------------------------------------------- centres
@dataclass(frozen=True)
class NystromMap:
    """A fitted Nyström map ``phi(x) = basis.features(K(x, centres))``.

    Attributes
    ----------
    kernel : Kernel
        The kernel.
    centres : batch
        The centres ``C`` (a prepared batch of the kernel's input kind).
    indices : ndarray of int
        Indices of the centres among the points the map was fitted on.
    basis : NystromBasis or CholeskyBasis
        ``K_CC^{-1/2}`` (eigenbasis form, or ``L^{-T}`` for the greedy centres).
    """

    kernel: Kernel
    centres: Batch
    indices: np.ndarray
    basis: NystromBasis | CholeskyBasis

    @property
    def dim(self) -> int:
        """Number of features."""
        return self.basis.dim

    def features(self, X: Any) -> torch.Tensor:
        """``phi(x)`` of the rows of ``X`` (raw or prepared), shape ``(n, dim)``."""
        return self.basis.features(gram_tensor(self.kernel, X, self.centres))


CENTRE_METHODS = ("uniform", "kmeans++", "greedy")
"""Centre choices of :func:`centre_indices`."""


def centre_indices(
    kernel: Kernel, Xb: Batch, m: int, method: str = "uniform", random_state: Any = None
) -> np.ndarray:
    """The one centre dispatcher: indices of ``m`` centres among the prepared points ``Xb``.

    ``"uniform"``: a uniform subset (:func:`uniform_centres`); ``"kmeans++"``: kernel k-means++
    seeding (:func:`kmeanspp_centres`); ``"greedy"``: the
    pivots of the pivoted Cholesky (:func:`pivoted_cholesky`; fewer on a kernel of rank
    ``< m``), sorted.
    """
    if method == "greedy":
        return np.sort(pivoted_cholesky(kernel, Xb, m).pivots)
    if method == "kmeans++":
        return kmeanspp_centres(kernel, Xb, m, random_state)
    if method == "uniform":
        return uniform_centres(len(Xb), m, random_state)
    raise InputError(f"centers: expected one of {CENTRE_METHODS}, got {method!r}")


def centre_count(n_centers: int, centers: Any) -> int:
    """``m``: the number of centres given as points, else ``n_centers``."""
    return int(n_centers) if isinstance(centers, str) else len(centers)


def too_many_centres(m: int, n: int, *, exact: str, stacklevel: int = 3) -> bool:
    """Whether ``n_centers = m`` exceeds the ``n`` points, with the library's one warning.

    Every Nyström-using estimator then fits its exact method (``exact`` names it): the
    Nyström approximation with every point as a centre is exact, so more centres than points
    ask for the exact method.  ``m = n`` is the Nyström method on all the points (equal to the
    exact one up to round-off), without a warning.
    """
    if m <= n:
        return False
    warnings.warn(
        f"n_centers={m} is more than the {n} training points: fitting {exact} instead (the "
        "Nyström approximation with every point as a centre is exact)",
        UserWarning,
        stacklevel=stacklevel,
    )
    return True


@dataclass(frozen=True)
class CentreChoice:
    """Centres chosen by :func:`choose_centres`.

    Attributes
    ----------
    centres : batch
        The centres, prepared for the kernel.
    indices : ndarray of int or None
        Their indices among the training points; ``None`` for centres given as points.
    exact : bool
        ``n_centers`` exceeded the number of points: every point is a centre and the
        estimator fits its exact method.
    """

    centres: Batch
    indices: np.ndarray | None
    exact: bool


def choose_centres(
    kernel: Kernel,
    Xb: Batch,
    n_centers: int,
    centers: Any = "uniform",
    *,
    random_state: Any = None,
    methods: tuple[str, ...] = CENTRE_METHODS,
    exact: str = "the exact method",
    stacklevel: int = 4,
    sample_weight: np.ndarray | None = None,
    distinct: bool = False,
) -> CentreChoice:
    """The centres of every Nyström-using estimator: ``n_centers`` and ``centers``.

    ``centers`` is a method name of ``methods`` (:func:`centre_indices`: ``m = n_centers``
    of the prepared training points ``Xb``) or the centres themselves (an array or sequence of
    points of the input kind, which need not be training points; ``n_centers`` is then
    ignored).  More centres than points: all of them, ``exact=True`` and the one warning of
    :func:`too_many_centres`.  ``distinct=True`` (the estimators that take ``sample_weight``):
    ``"uniform"`` draws among distinct points with probabilities proportional to their weight
    (:func:`weighted_centres`), so integer weights and repeated rows give the same centres.

    Raises
    ------
    InputError
        If ``centers`` is an unknown name, empty, of the wrong width, or points given for a
        precomputed kernel.
    """
    if not isinstance(centers, str):
        if isinstance(Xb, PrecomputedBatch):
            raise InputError(
                "centers: a precomputed kernel takes centre methods, not points; got an array"
            )
        _, Cb = prepare_pair(kernel, Xb, centers)
        if Cb is None or len(Cb) == 0:
            raise InputError("centers: expected at least one centre, got none")
        return CentreChoice(Cb, None, False)
    if centers not in methods:
        raise InputError(
            f"centers: expected one of {methods} or an array of points, got {centers!r}"
        )
    m = check_int(n_centers, name="n_centers", minimum=1)
    n = len(Xb)
    if too_many_centres(m, n, exact=exact, stacklevel=stacklevel):
        index = np.arange(n)
        return CentreChoice(Xb, index, True)
    if centers == "uniform" and distinct:
        index = weighted_centres(Xb, m, sample_weight, random_state)
    else:
        index = centre_indices(kernel, Xb, m, centers, random_state)
    return CentreChoice(take(Xb, index), index, False)


def nystrom_map(
    kernel: Kernel,
    X: Any,
    n_components: int,
    *,
    method: str = "uniform",
    rank: int | None = None,
    jitter: float | None = None,
    random_state: Any = None,
) -> NystromMap:
    """Fit a Nyström map with ``m = min(n_components, n)`` centres among the rows of ``X``.

    Parameters
    ----------
    kernel : Kernel
        Any kernelkit kernel (``method="greedy"`` and ``"kmeans++"`` use ``block_diag``).
    X : array-like or prepared batch
        The ``n`` points the centres are chosen from.
    n_components : int
        Number of centres ``m``.  ``greedy`` stops earlier on a kernel of rank ``< m``.
    method : {"uniform", "kmeans++", "greedy", "kpca"}
        Centre choice (module docstring).
    rank : int, optional
        ``kpca`` only: the number ``p <= m`` of eigenpairs kept (default: all above the floor).
    jitter : float, optional
        ``tau`` of the eigenvalue floor of :func:`nystrom_basis` (all methods but
        ``greedy``); the one regularisation rule's when None.
    random_state : None, int, RandomState or Generator
        Seed of the ``uniform``, ``kpca`` and ``kmeans++`` draws.

    Returns
    -------
    NystromMap
    """
    if method not in METHODS:
        raise InputError(f"method: expected one of {METHODS}, got {method!r}")
    m = check_int(n_components, name="n_components", minimum=1)
    if rank is not None:
        if method != "kpca":
            raise InputError(f"rank: only used with method='kpca', got rank={rank!r}")
        rank = check_int(rank, name="rank", minimum=1)
    if jitter is not None:
        jitter = check_positive(jitter, name="jitter", strict=False)
    Xb, _ = prepare_pair(kernel, X)
    n = len(Xb)
    if too_many_centres(m, n, exact="the exact feature map (every point a centre)", stacklevel=4):
        m = n
    if method == "greedy":  # the factor of the pivoted Cholesky is the basis
        chol = pivoted_cholesky(kernel, Xb, m)
        basis: NystromBasis | CholeskyBasis = CholeskyBasis(chol.factor[chol.pivots], 0.0)
        return NystromMap(kernel, take(Xb, chol.pivots), chol.pivots, basis)
    index = centre_indices(kernel, Xb, m, "uniform" if method == "kpca" else method, random_state)
    return nystrom_map_on_centres(kernel, take(Xb, index), index, jitter=jitter, rank=rank)


def nystrom_map_on_centres(
    kernel: Kernel,
    centres: Any,
    indices: np.ndarray,
    *,
    jitter: float | None = None,
    rank: int | None = None,
) -> NystromMap:
    """The Nyström map of given centres: ``K_CC^{-1/2}`` in the eigenbasis form.

    ``centres`` are the rows ``indices`` of the fitted points (raw or prepared); ``jitter``
    and ``rank`` as in :func:`nystrom_map`.
    """
    centres, _ = prepare_pair(kernel, centres)
    basis = nystrom_basis(gram_tensor(kernel, centres), jitter=jitter, rank=rank)
    return NystromMap(kernel, centres, np.asarray(indices), basis)


__all__ = [
    "CentreChoice",
    "CholeskyBasis",
    "NystromBasis",
    "NystromMap",
    "centre_count",
    "centre_indices",
    "cholesky_basis",
    "choose_centres",
    "nystrom_basis",
    "nystrom_map",
    "nystrom_map_on_centres",
    "too_many_centres",
]
