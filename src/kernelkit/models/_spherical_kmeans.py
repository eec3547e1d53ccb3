r"""Spherical k-means: the anchors of the convolutional kernel networks' Nyström layers.

Lloyd iterations for ``max sum_i <x_i, c_{a(i)}>`` over unit centroids (Mairal, NeurIPS
2016, section 3; Chen, Jacob & Mairal 2019 for the products of spheres of CKN-seq), from
k-means++ seeds (Arthur and Vassilvitskii 2007) drawn with the distance of the sphere.
"""

from __future__ import annotations

import torch


def normalize_blocks(X: torch.Tensor, blocks: int = 1) -> torch.Tensor:
    """Rows of ``X`` (N, D) with each of their ``blocks`` equal slices scaled to unit norm.

    Zero slices stay zero.
    """
    n, d = X.shape
    V = X.reshape(n, blocks, d // blocks)
    norms = torch.linalg.vector_norm(V, dim=2, keepdim=True)
    return (V / torch.where(norms > 0, norms, torch.ones_like(norms))).reshape(n, d)


def spherical_kmeans(
    X: torch.Tensor,
    n_clusters: int,
    *,
    n_iter: int = 10,
    generator: torch.Generator,
    blocks: int = 1,
) -> torch.Tensor:
    r"""Centroids of spherical k-means on the rows of ``X`` (normalised here).

    Lloyd iterations for ``max sum_i <x_i, c_{a(i)}>`` over unit centroids: assign each row
    to the centroid of largest inner product, then set each centroid to its rows' mean
    rescaled to unit norm, from k-means++ seeds (D^2 sampling with ``d^2 = 2 (blocks - <x, c>)``,
    Arthur and Vassilvitskii 2007).  With ``blocks > 1`` rows and centroids are products of
    ``blocks`` unit spheres (each slice normalised), the anchors of
    :class:`~kernelkit.models.GappedKmerLayer`.  Empty clusters are re-seeded with
    the rows worst represented by their centroid; centroids beyond the number of rows are
    random directions.

    Parameters
    ----------
    X : tensor, shape (N, D)
        Samples (``D`` divisible by ``blocks``).
    n_clusters : int
        Number of centroids.
    n_iter : int
        Lloyd iterations.
    generator : torch.Generator
        Source of the initial draw.
    blocks : int
        Number of unit-norm slices of a centroid.

    Returns
    -------
    torch.Tensor, shape (n_clusters, D)
    """
    X = normalize_blocks(X, blocks)
    n = X.shape[0]
    C = _seed_centroids(X, min(n, n_clusters), generator, blocks)
    if n < n_clusters:
        extra = torch.randn(n_clusters - n, X.shape[1], generator=generator, dtype=X.dtype)
        C = torch.cat([C, normalize_blocks(extra.to(X.device), blocks)])
    for _ in range(n_iter if n > n_clusters else 0):
        S = X @ C.T
        best, assign = S.max(1)
        sums = torch.zeros_like(C).index_add_(0, assign, X)
        counts = torch.bincount(assign, minlength=n_clusters)
        empty = torch.nonzero(counts == 0).flatten()
        if len(empty):
            sums[empty] = X[torch.argsort(best, stable=True)[: len(empty)]]
        C = normalize_blocks(sums, blocks)
    return C


def _seed_centroids(
    X: torch.Tensor, k: int, generator: torch.Generator, blocks: int
) -> torch.Tensor:
    """k-means++ seeding on (products of) spheres: each new seed drawn with probability
    proportional to its squared distance ``2 (blocks - max_c <x, c>)`` to the seeds so far
    (0 within ``16 eps blocks`` of 0; a uniform draw when every distance is 0)."""
    if k == 0:
        return X[:0]
    first = int(torch.randint(X.shape[0], (1,), generator=generator))
    chosen = [first]
    best = X @ X[first]
    # a distance within round-off of 0 is 0: a point equal to a seed (or one of its copies)
    # is never drawn again, on any device (the rounding of X @ x differs between them)
    noise = 16 * torch.finfo(X.dtype).eps * blocks
    for _ in range(1, k):
        d2 = 2.0 * (blocks - best)
        d2 = torch.where(d2 > noise, d2, torch.zeros_like(d2))
        if float(d2.sum()) <= 0:
            nxt = int(torch.randint(X.shape[0], (1,), generator=generator))
        else:
            nxt = int(torch.multinomial(d2.cpu().double(), 1, generator=generator))
        chosen.append(nxt)
        best = torch.maximum(best, X @ X[nxt])
    return X[torch.as_tensor(chosen, device=X.device)]


__all__ = ["normalize_blocks", "spherical_kmeans"]
