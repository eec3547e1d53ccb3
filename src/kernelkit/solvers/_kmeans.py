r"""k-means++ seeding and Lloyd's algorithm: the one implementation of the library.

Kernel k-means on a Gram matrix (:class:`~kernelkit.KernelKMeans`), k-means on Nyström
codes (its ``solver="nystrom"``) and the spherical k-means that places the anchors of the
convolutional kernel networks are the same two routines in three geometries:

* :func:`kmeanspp_seeds`: D^2 seeding (Arthur and Vassilvitskii, SODA 2007, section 2.2)
  from the squared distances ``d^2(x, c) = k(x, x) + k(c, c) - 2 k(x, c)``, which each
  geometry supplies through its inner products;
* :func:`lloyd`: alternate "assign each point to its nearest centre" and "move each centre to
  its cluster's mean" until no label changes (Lloyd 1982; course part 1, section 4.3), the
  means kept as running sums that only the points which changed cluster update.

A geometry (:class:`GramClusters`, :class:`FeatureClusters`, :class:`SphereClusters`) holds
the clusters' sums for the current labels and returns the distances to their centres.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np
import torch

from kernelkit.utils._numerics import eps
from kernelkit.utils._progress import Progress

_TILE_BYTES = 4 << 20
"""Bytes of scores per row tile of an assignment in the feature geometries."""


def kmeanspp_seeds(
    diag: torch.Tensor,
    columns: Callable[[np.ndarray], torch.Tensor],
    m: int,
    rng: np.random.Generator,
    *,
    trials: int = 1,
) -> np.ndarray:
    r"""k-means++ D^2 seeding by inner products only.

    Arthur and Vassilvitskii (SODA 2007), section 2.2: the first centre is uniform; each next
    one is drawn with probability proportional to ``D(x)^2``, the squared distance to the
    nearest centre chosen so far,

    .. math:: d^2(x, c) = k(x, x) + k(c, c) - 2 k(x, c),

    set to 0 within round-off (``16 eps (k(x, x) + k(c, c))``), so that a point equal to a
    chosen centre is never drawn again on any device.  With ``trials = t > 1`` it is
    scikit-learn's greedy variant: ``t`` candidates are drawn and the one leaving the least
    potential ``sum_x D(x)^2`` is kept.  When every ``D`` is 0 (fewer distinct points than
    ``m``) the next centre is a uniform draw among the unused points, so the ``m`` indices
    are distinct.

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

    def squared(idx: np.ndarray) -> torch.Tensor:
        block = columns(np.asarray(idx)).detach()
        noise = 16 * eps(block.dtype if block.is_floating_point() else torch.float64)
        cross = block.to("cpu", torch.float64)
        scale = diag[:, None] + diag[idx][None, :]
        d2 = scale - 2 * cross
        return torch.where(d2 > noise * scale, d2, torch.zeros_like(d2))

    chosen = [int(rng.integers(n))]
    closest = squared(np.asarray(chosen))[:, 0]
    for _ in range(1, m):
        total = float(closest.sum())
        if total <= 0:
            chosen.append(int(rng.choice(np.setdiff1d(np.arange(n), chosen))))
            continue
        p = (closest / total).numpy()
        cand = rng.choice(n, size=trials, p=p / p.sum())
        pots = torch.minimum(closest[:, None], squared(cand))
        best = int(pots.sum(0).argmin())
        chosen.append(int(cand[best]))
        closest = pots[:, best]
    return np.asarray(chosen, dtype=np.int64)


class Geometry(Protocol):
    """The clusters of :func:`lloyd` in one geometry: running sums for the current labels."""

    n: int
    k: int

    def seed_distances(self, start: np.ndarray) -> torch.Tensor:
        """Squared distances of every point to the points ``start``, shape (n, k)."""

    def reset(self, labels: torch.Tensor) -> None:
        """Recompute the clusters' sums for ``labels``."""

    def move(self, rows: torch.Tensor, new: torch.Tensor, old: torch.Tensor) -> None:
        """Points ``rows`` leave clusters ``old`` for clusters ``new``."""

    def nearest(self) -> torch.Tensor:
        """The cluster of nearest centre of every point, shape (n,)."""

    def distances(self) -> torch.Tensor:
        """Squared distances of every point to every centre, shape (n, k)."""


def lloyd(
    geometry: Geometry, start: np.ndarray, max_iter: int, progress: Progress | None = None
) -> tuple[torch.Tensor, int, float]:
    """Lloyd's algorithm from the points ``start`` as centres.

    The first labels are the nearest of the points ``start``; each iteration moves every
    centre to its cluster's mean and every point to its nearest centre, until no label
    changes or after ``max_iter`` iterations.  An empty cluster receives the point farthest
    from its centre (:func:`fill_empty_clusters`).  The geometry is left holding the sums of
    the returned labels; ``progress`` receives the number of points that changed cluster at
    every iteration.

    Returns
    -------
    labels : torch.Tensor of int, shape (n,)
    iterations : int
    inertia : float
        ``sum_i d^2(x_i, c_{labels_i})``, the distances clipped at 0 against round-off.
    """
    k = geometry.k
    D = geometry.seed_distances(start)
    labels = fill_empty_clusters(D.argmin(1), D, k)
    geometry.reset(labels)
    it = 0
    for it in range(1, max_iter + 1):
        new = geometry.nearest()
        if bool((torch.bincount(new, minlength=k) == 0).any()):
            new = fill_empty_clusters(new, geometry.distances(), k)
        changed = torch.nonzero(new != labels).flatten()
        if progress is not None:
            progress.update(it, changed=len(changed))
        if not len(changed):
            break
        if len(changed) > geometry.n // 4:
            geometry.reset(new)
        else:
            geometry.move(changed, new[changed], labels[changed])
        labels = new
    D = geometry.distances()
    return labels, it, float(D.gather(1, labels[:, None]).clamp_min(0).sum())


def fill_empty_clusters(labels: torch.Tensor, D: torch.Tensor, k: int) -> torch.Tensor:
    """Give each empty cluster the point farthest from its current centre (scikit-learn's
    relocation rule), taking points from clusters of two or more."""
    counts = torch.bincount(labels, minlength=k)
    if bool((counts > 0).all()):
        return labels
    labels = labels.clone()
    far = D.gather(1, labels[:, None])[:, 0].argsort(descending=True).tolist()
    for empty in torch.nonzero(counts == 0).flatten().tolist():
        for i in far:
            if counts[labels[i]] > 1:
                counts[labels[i]] -= 1
                labels[i] = empty
                counts[empty] = 1
                far.remove(i)
                break
    return labels


def one_hot(labels: torch.Tensor, k: int, dtype: torch.dtype) -> torch.Tensor:
    """The assignment matrix ``A``, shape (len(labels), k)."""
    A = torch.zeros((len(labels), k), dtype=dtype, device=labels.device)
    A[torch.arange(len(labels), device=labels.device), labels] = 1.0
    return A


class GramClusters:
    r"""Clusters in the feature space of a Gram matrix ``K``: the sums are ``K A``.

    The squared distance of ``phi(x_i)`` to the mean of cluster ``l`` is
    ``K_ii - (2/|C_l|) (K A)_il + (1/|C_l|^2) (A^T K A)_ll`` (course part 1, section 4.3).
    """

    def __init__(self, K: torch.Tensor, k: int) -> None:
        self.K, self.k, self.n = K, k, K.shape[0]
        self.diag = K.diagonal().clone()

    def seed_distances(self, start: np.ndarray) -> torch.Tensor:
        c = torch.as_tensor(start, device=self.K.device)
        return self.diag[:, None] - 2 * self.K[c].T + self.K[c, c][None, :]

    def reset(self, labels: torch.Tensor) -> None:
        self.A = one_hot(labels, self.k, self.K.dtype)
        self.KA = self.K @ self.A

    def move(self, rows: torch.Tensor, new: torch.Tensor, old: torch.Tensor) -> None:
        delta = one_hot(new, self.k, self.K.dtype) - one_hot(old, self.k, self.K.dtype)
        self.KA += self.K[rows].T @ delta
        self.A[rows] += delta

    def centre_norms(self) -> torch.Tensor:
        """``||mu_l||^2 = (A^T K A)_ll / |C_l|^2``, shape (k,)."""
        sizes = self.A.sum(0)
        return (self.A * self.KA).sum(0) / sizes**2

    def distances(self) -> torch.Tensor:
        sizes = self.A.sum(0)
        return self.diag[:, None] - 2 * self.KA / sizes + self.centre_norms()[None, :]

    def nearest(self) -> torch.Tensor:
        return self.distances().argmin(1)


class FeatureClusters:
    """Clusters of the rows of an explicit feature matrix ``Z``: the sums are ``A^T Z`` and
    the centres the means; assignments run in row tiles of :data:`_TILE_BYTES`."""

    def __init__(self, Z: torch.Tensor, k: int) -> None:
        self.Z, self.k, self.n = Z, k, Z.shape[0]
        self.sq = (Z * Z).sum(1)

    def seed_distances(self, start: np.ndarray) -> torch.Tensor:
        return self._to(self.Z[torch.as_tensor(start, device=self.Z.device)])

    def reset(self, labels: torch.Tensor) -> None:
        self.counts = torch.bincount(labels, minlength=self.k)
        self.sums = self.Z.new_zeros(self.k, self.Z.shape[1]).index_add_(0, labels, self.Z)

    def move(self, rows: torch.Tensor, new: torch.Tensor, old: torch.Tensor) -> None:
        Zm = self.Z[rows]
        self.sums.index_add_(0, new, Zm).index_add_(0, old, -Zm)
        self.counts += torch.bincount(new, minlength=self.k) - torch.bincount(old, minlength=self.k)

    def centres(self) -> torch.Tensor:
        return self.sums / self.counts.to(self.Z.dtype)[:, None]

    def _to(self, C: torch.Tensor) -> torch.Tensor:
        return self.sq[:, None] - 2 * (self.Z @ C.mT) + (C * C).sum(1)[None, :]

    def distances(self) -> torch.Tensor:
        return self._to(self.centres())

    def nearest(self) -> torch.Tensor:
        C = self.centres()
        half = (C * C).sum(1) / 2
        rows = max(1, _TILE_BYTES // (8 * max(self.k, 1)))
        return torch.cat([(half - Zb @ C.mT).argmin(1) for Zb in self.Z.split(rows)])


def normalize_blocks(X: torch.Tensor, blocks: int = 1) -> torch.Tensor:
    """Rows of ``X`` (N, D) with each of their ``blocks`` equal slices scaled to unit norm.

    Zero slices stay zero.
    """
    n, d = X.shape
    V = X.reshape(n, blocks, d // blocks)
    norms = torch.linalg.vector_norm(V, dim=2, keepdim=True)
    return (V / torch.where(norms > 0, norms, torch.ones_like(norms))).reshape(n, d)


class SphereClusters(FeatureClusters):
    r"""Clusters of rows on a product of ``blocks`` unit spheres (spherical k-means).

    The centre of a cluster is its mean with each slice rescaled to unit norm, the point of
    the product of spheres nearest the mean (Mairal, NeurIPS 2016, section 3; Chen, Jacob &
    Mairal 2019 for the products of spheres of CKN-seq), and the squared distance is
    ``2 (blocks - <x, c>)``.
    """

    def __init__(self, X: torch.Tensor, k: int, blocks: int = 1) -> None:
        super().__init__(X, k)
        self.blocks = blocks

    def centres(self) -> torch.Tensor:
        return normalize_blocks(self.sums, self.blocks)

    def _to(self, C: torch.Tensor) -> torch.Tensor:
        return 2.0 * (self.blocks - self.Z @ C.mT)

    def nearest(self) -> torch.Tensor:
        C = self.centres()
        rows = max(1, _TILE_BYTES // (8 * max(self.k, 1)))
        return torch.cat([(Zb @ C.mT).argmax(1) for Zb in self.Z.split(rows)])


__all__ = [
    "FeatureClusters",
    "Geometry",
    "GramClusters",
    "SphereClusters",
    "fill_empty_clusters",
    "kmeanspp_seeds",
    "lloyd",
    "normalize_blocks",
    "one_hot",
]
