r"""The choice of Nyström centres among the training points, by kernel evaluations only.

Uniform draws (among distinct points, or weighted by ``sample_weight``), k-means++ D^2
seeding in the kernel's feature space (Arthur and Vassilvitskii, SODA 2007) and the greedy
pivoted Cholesky factorisation: the recipes of course part 3, section 5, slide "Nyström",
that :mod:`kernelkit.gram._nystrom` builds its maps on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from kernelkit.gram._engine import prepare_pair
from kernelkit.kernels._base import Batch, Kernel
from kernelkit.kernels._precomputed import PrecomputedBatch
from kernelkit.kernels._sparse import SparseRows, row_keys
from kernelkit.solvers._kmeans import kmeanspp_seeds
from kernelkit.utils._errors import NotPSDError
from kernelkit.utils._numerics import eps
from kernelkit.utils._seeding import check_random_state
from kernelkit.utils._validation import check_int, check_positive


def take(batch: Batch, index: np.ndarray) -> Batch:
    """Items ``index`` of a prepared batch (tensor index for tensors, NumPy otherwise)."""
    if isinstance(batch, torch.Tensor):
        return batch[torch.as_tensor(index, dtype=torch.long, device=batch.device)]
    if isinstance(batch, PrecomputedBatch):
        return batch[torch.as_tensor(index, dtype=torch.long, device=batch.rows.device)]
    return batch[np.asarray(index)]


# ---------------------------------------------------------------------- bases
def uniform_centres(
    n: int, m: int, random_state: Any = None, *, sample_weight: np.ndarray | None = None
) -> np.ndarray:
    """``min(m, n)`` distinct indices of ``range(n)`` drawn without replacement, uniformly
    (recipe 2) or with probabilities proportional to ``sample_weight``, sorted.

    The draw by *row position*: :func:`draw_by_keys` with the row numbers as keys, so every
    row is a candidate of its own and the draw needs ``n`` only (the Dask draw,
    :func:`~kernelkit.gram._distributed.draw_kept_centres`, is this function, so a Dask fit
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
    """Content keys of the candidate centres: :func:`~kernelkit.kernels._sparse.row_keys` of
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


def kmeanspp_centres(kernel: Kernel, X: Any, m: int, random_state: Any = None) -> np.ndarray:
    """``m`` Nyström centres among the rows of ``X`` by k-means++ seeding in the kernel's
    feature space (:func:`~kernelkit.solvers._kmeans.kmeanspp_seeds`, one candidate per step),
    sorted."""
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


__all__ = [
    "PivotedCholesky",
    "centre_keys",
    "draw_by_keys",
    "kmeanspp_centres",
    "pivoted_cholesky",
    "take",
    "uniform_centres",
    "weighted_centres",
]
