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
:func:`~kernelkit.solvers.nystrom_pcg.centre_jitter`'s level ``delta = tau s``
(``s = mean(diag K_CC)``, ``tau = max(m eps_64, eps)``; with a ``lam``: ``eps^2 / lam``): the
directions of ``K_CC`` with eigenvalue below ``delta`` are round-off of ``K_CC`` and of the
kernel blocks, not signal.  The eigenbasis drops them; the Cholesky form adds ``delta I``
(as Falkon's and the one-pass solvers do, where it becomes the penalty
``lam alpha^T (K_CC + delta I) alpha``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from kernelkit.gram.engine import gram_tensor, prepare_pair
from kernelkit.kernels.base import Batch, Kernel
from kernelkit.kernels.precomputed import PrecomputedBatch
from kernelkit.kernels.sparse import SparseRows, row_keys
from kernelkit.solvers import solve_triangular, symmetric_eigh
from kernelkit.solvers.nystrom_pcg import centre_factor, centre_jitter
from kernelkit.solvers.psd import spectrum_check
from kernelkit.utils.errors import InputError, NotPSDError
from kernelkit.utils.numerics import eps, psd_tolerance
from kernelkit.utils.seeding import check_random_state
from kernelkit.utils.validation import check_int, check_positive

METHODS = ("uniform", "kmeans++", "greedy", "kpca")
"""Centre choices of :func:`nystrom_map` (see the module docstring)."""


def take(batch: Batch, index: np.ndarray) -> Batch:
    """Items ``index`` of a prepared batch (tensor index for tensors, NumPy otherwise)."""
    if isinstance(batch, torch.Tensor):
        return batch[torch.as_tensor(index, dtype=torch.long, device=batch.device)]
    if isinstance(batch, PrecomputedBatch):
        return batch[torch.as_tensor(index, dtype=torch.long, device=batch.rows.device)]
    return batch[np.asarray(index)]


# ---------------------------------------------------------------------- bases
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
    :func:`~kernelkit.solvers.nystrom_pcg.centre_jitter`).  With ``rank = p`` only the ``p``
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

    The factor is Falkon's :func:`~kernelkit.solvers.nystrom_pcg.centre_factor` (float64,
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
def uniform_centres(
    n: int, m: int, random_state: Any = None, *, sample_weight: np.ndarray | None = None
) -> np.ndarray:
    """``min(m, n)`` distinct indices of ``range(n)`` drawn without replacement, uniformly
    (recipe 2) or with probabilities proportional to ``sample_weight``, sorted.

    The draw by *row position*: :func:`draw_by_keys` with the row numbers as keys, so every
    row is a candidate of its own and the draw needs ``n`` only (the Dask draw,
    :func:`~kernelkit.gram.distributed.draw_kept_centres`, is this function, so a Dask fit
    draws the rows an in-memory one does).  :func:`draw_by_keys` on content keys is the draw
    among *distinct* points (the estimators that take ``sample_weight``, for which repeated
    rows and integer weights must give the same centres); both are the one Efraimidis and
    Spirakis draw.  Unweighted, every key is ``u^(1/1) = u``: the rows of the ``m`` largest
    of ``n`` uniforms drawn in row order, taken here (and by :func:`draw_by_keys` for
    increasing keys without weights, which calls this function); weighted, it is
    :func:`draw_by_keys` on the row numbers.
    """
    if sample_weight is None:
        return np.sort(_largest(check_random_state(random_state).random(n), m))
    return draw_by_keys(np.arange(n, dtype=np.uint64), m, sample_weight, random_state)


def centre_keys(Xb: Batch) -> np.ndarray:
    """Content keys of the candidate centres: :func:`~kernelkit.kernels.sparse.row_keys` of
    vectors and sparse rows, the row numbers of any other batch."""
    if isinstance(Xb, SparseRows) or (isinstance(Xb, torch.Tensor) and Xb.ndim == 2):
        return row_keys(Xb)
    return np.arange(len(Xb), dtype=np.uint64)


def draw_by_keys(
    keys: np.ndarray, m: int, sample_weight: np.ndarray | None = None, random_state: Any = None
) -> np.ndarray:
    """Indices of at most ``m`` distinct points, drawn without replacement with probabilities
    proportional to their total weight (uniform when unweighted); ``keys`` identify the
    points (:func:`centre_keys`).

    Rows of one key are one candidate whose weight is the sum of theirs (its count when
    unweighted); candidates of weight 0 are never drawn.  The draw is Efraimidis and
    Spirakis' ("Weighted random sampling with a reservoir", Inf. Process. Lett. 97(5), 2006,
    algorithm A): keys ``u_g^(1 / W_g)``, ``u_g`` uniform, the ``m`` largest kept, with the
    uniforms drawn in the order of the content keys.  So the centres, as points, depend on
    the data as a weighted set only: integer weights and repeated rows, or a permutation of
    the rows, give the same centres for one ``random_state``.  Fewer than ``m`` come back
    when fewer distinct points carry weight.  Returns the first row of each drawn point,
    sorted.
    """
    n = len(keys)
    increasing = n > 1 and bool(np.all(keys[1:] > keys[:-1]))  # row numbers: no groups
    if increasing and sample_weight is None:  # every weight 1
        return uniform_centres(n, m, random_state)
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    if increasing:
        weight, first = w, np.arange(n)
    else:
        order = np.lexsort((np.arange(n), keys))  # by key, first rows first
        group_keys, starts, group = np.unique(keys[order], return_index=True, return_inverse=True)
        weight = np.bincount(group.ravel(), weights=w[order], minlength=len(group_keys))
        first = order[starts]
    live = np.flatnonzero(weight > 0)
    rng = check_random_state(random_state)
    score = np.log(rng.random(len(live))) / weight[live]  # log of u^(1/W)
    return np.sort(first[live[_largest(score, m)]])


def _largest(score: np.ndarray, m: int) -> np.ndarray:
    """Positions of the ``m`` largest scores, ties to the lower position (the set of
    ``argsort(-score, kind="stable")[:m]``), by a partition instead of a sort."""
    k = len(score) - m
    if k <= 0:
        return np.arange(len(score))
    threshold = np.partition(score, k)[k]
    above = np.flatnonzero(score > threshold)
    return np.concatenate([above, np.flatnonzero(score == threshold)[: m - len(above)]])


def weighted_centres(
    Xb: Batch, m: int, sample_weight: np.ndarray | None = None, random_state: Any = None
) -> np.ndarray:
    """:func:`draw_by_keys` on the :func:`centre_keys` of the prepared points ``Xb``."""
    return draw_by_keys(centre_keys(Xb), m, sample_weight, random_state)


def kmeanspp_seeds(
    diag: torch.Tensor,
    columns: Callable[[np.ndarray], torch.Tensor],
    m: int,
    rng: np.random.Generator,
    *,
    trials: int = 1,
) -> np.ndarray:
    r"""k-means++ D^2 seeding by kernel evaluations only: the one implementation of the library.

    Arthur and Vassilvitskii (SODA 2007), section 2.2: the first centre is uniform; each next
    one is drawn with probability proportional to ``D(x)^2``, the squared feature-space
    distance to the nearest centre chosen so far,

    .. math:: d^2(x, c) = k(x, x) + k(c, c) - 2 k(x, c)

    (clipped at 0 against round-off).  With ``trials = t > 1`` it is scikit-learn's greedy
    variant: ``t`` candidates are drawn and the one leaving the least potential
    ``sum_x D(x)^2`` is kept (``t = 2 + floor(log m)`` in :class:`~kernelkit.KernelKMeans`).
    A point already chosen has ``D = 0`` and is never drawn again; when every ``D`` is 0
    (fewer distinct points than ``m``) the next centre is a uniform draw among the unused
    points, so the ``m`` indices are distinct.

    Parameters
    ----------
    diag : torch.Tensor, shape (n,)
        ``k(x_i, x_i)``.
    columns : callable
        ``columns(idx)`` returns ``[k(x_i, x_j)]`` for every ``i`` and ``j in idx``, shape
        ``(n, len(idx))``.
    m : int
        Number of centres (at most ``n``).
    rng : numpy.random.Generator
        Source of the draws.
    trials : int, default 1
        Candidates per step.

    Returns
    -------
    ndarray of int, shape (m,)
        The centres in the order chosen.
    """
    n = int(diag.shape[0])
    diag = diag.detach().to("cpu", torch.float64)
    chosen = [int(rng.integers(n))]
    closest = (diag + diag[chosen[0]] - 2 * _column_block(columns, chosen)[:, 0]).clamp_min(0)
    for _ in range(1, m):
        total = float(closest.sum())
        if total <= 0:
            chosen.append(int(rng.choice(np.setdiff1d(np.arange(n), chosen))))
            continue
        p = (closest / total).numpy()
        cand = rng.choice(n, size=trials, p=p / p.sum())
        dist = (diag[:, None] + diag[cand][None, :] - 2 * _column_block(columns, cand)).clamp_min(0)
        pots = torch.minimum(closest[:, None], dist)
        best = int(pots.sum(0).argmin())
        chosen.append(int(cand[best]))
        closest = pots[:, best]
    return np.asarray(chosen, dtype=np.int64)


def _column_block(columns: Callable[[np.ndarray], torch.Tensor], idx: Any) -> torch.Tensor:
    return columns(np.asarray(idx)).detach().to("cpu", torch.float64)


def kmeanspp_centres(kernel: Kernel, X: Any, m: int, random_state: Any = None) -> np.ndarray:
    """``m`` Nyström centres among the rows of ``X`` by k-means++ seeding in the kernel's
    feature space (:func:`kmeanspp_seeds`, one candidate per step), sorted."""
    Xb, _ = prepare_pair(kernel, X)
    diag = kernel.block_diag(Xb)
    seeds = kmeanspp_seeds(
        diag, lambda idx: kernel.block(Xb, take(Xb, idx)), m, check_random_state(random_state)
    )
    return np.sort(seeds)


@dataclass(frozen=True)
class PivotedCholesky:
    """Result of :func:`pivoted_cholesky`.

    Attributes
    ----------
    pivots : ndarray of int, shape (k,)
        Chosen points in the order chosen.
    factor : torch.Tensor, shape (n, k)
        ``G`` with ``K ~ G G^T``; ``G[pivots]`` is lower triangular.
    residual : torch.Tensor, shape (n,)
        ``diag(K - G G^T)`` after the last step.
    """

    pivots: np.ndarray
    factor: torch.Tensor
    residual: torch.Tensor


def pivoted_cholesky(
    kernel: Kernel, X: Any, rank: int, *, tol: float | None = None
) -> PivotedCholesky:
    r"""Greedy Nyström centres: pivoted (incomplete) Cholesky on the largest residual.

    Course part 3, slide "Nyström", recipe 3 ("Greedy (largest residual)"): pick
    ``z_k = argmax_i K(x_i, x_i) - k_Z(x_i)^T K_Z^{-1} k_Z(x_i)``, and update ``K_Z^{-1}`` by
    its Schur complement ``s = K(z, z) - k_Z(z)^T K_Z^{-1} k_Z(z)`` instead of inverting it
    again.  In factor form (Fine and Scheinberg, JMLR 2001; Harbrecht, Peters and Schneider,
    Appl. Numer. Math. 2012), with ``K_Z = L L^T`` and ``G = K_{XZ} L^{-T}`` the residual is
    ``d_i = K_ii - ||G_i||^2`` and adding ``z`` (its residual ``d_z = s``) appends the column

    .. math:: g = \big(K(\cdot, z) - G\, G_z^T\big) / \sqrt{s}, \qquad d \leftarrow d - g^2,

    which is the Schur update of the slide: ``O(n k)`` flops and ``n`` kernel evaluations per
    step, ``O(p^2 n)`` flops and ``O(p n)`` kernel evaluations in all.  The pivots and ``G``
    are those of LAPACK's ``dpstrf`` (complete pivoting; ties go to the first index).

    Parameters
    ----------
    kernel : Kernel
        Any kernel with ``block_diag``.
    X : array-like or prepared batch
        The ``n`` points.
    rank : int
        Most pivots ``p``.
    tol : float, optional
        Stop when the largest residual is ``<= tol``; default ``n eps max_i K_ii`` (LAPACK's
        default), so a kernel of rank ``r < p`` stops after ``r`` pivots.

    Returns
    -------
    PivotedCholesky
        Pivots, factor ``G`` (``n x k``, ``k <= p``) and residual diagonal.
    """
    rank = check_int(rank, name="rank", minimum=1)
    Xb, _ = prepare_pair(kernel, X)
    n = len(Xb)
    d = kernel.block_diag(Xb).detach().clone()
    if not d.is_floating_point():
        d = d.to(torch.float64)
    limit = n * eps(d.dtype) * float(d.max()) if tol is None else check_positive(tol, name="tol")
    G = d.new_zeros(n, min(rank, n))
    pivots: list[int] = []
    for k in range(min(rank, n)):
        i = int(torch.argmax(d))
        s = float(d[i])
        if s <= limit:
            break
        col = kernel.block(Xb, take(Xb, np.array([i])))[:, 0].detach().to(d.dtype)
        g = (col - G[:, :k] @ G[i, :k]) / math.sqrt(s)
        G[:, k] = g
        pivots.append(i)
        d.sub_(g * g).clamp_min_(0)
        d[pivots] = 0
    k = len(pivots)
    if k == 0:
        raise NotPSDError(
            f"kernel: expected a positive diagonal k(x, x) for the greedy centres, got a "
            f"largest value {float(kernel.block_diag(Xb).max()):.3g} (tolerance {limit:.3g})"
        )
    return PivotedCholesky(np.array(pivots, dtype=np.int64), G[:, :k], d)


# ---------------------------------------------------------------------- the map
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
    "PivotedCholesky",
    "centre_count",
    "centre_indices",
    "centre_keys",
    "cholesky_basis",
    "choose_centres",
    "draw_by_keys",
    "kmeanspp_centres",
    "kmeanspp_seeds",
    "nystrom_basis",
    "nystrom_map",
    "nystrom_map_on_centres",
    "pivoted_cholesky",
    "take",
    "too_many_centres",
    "weighted_centres",
]
