r"""Spherical k-means: the anchors of the convolutional kernel networks' Nyström layers.

Lloyd iterations for ``max sum_i <x_i, c_{a(i)}>`` over unit centroids (Mairal, NeurIPS
2016, section 3; Chen, Jacob & Mairal 2019 for the products of spheres of CKN-seq), from
k-means++ seeds (Arthur and Vassilvitskii 2007): the library's one seeding and one Lloyd
(:mod:`kernelkit.solvers._kmeans`) in the geometry of the sphere.
"""

from __future__ import annotations

import numpy as np
import torch

from kernelkit.solvers._kmeans import SphereClusters, kmeanspp_seeds, lloyd, normalize_blocks


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
    rescaled to unit norm (:class:`~kernelkit.solvers._kmeans.SphereClusters`), from
    k-means++ seeds (D^2 sampling with ``d^2 = 2 (blocks - <x, c>)``).  With ``blocks > 1``
    rows and centroids are products of ``blocks`` unit spheres (each slice normalised), the
    anchors of :class:`~kernelkit.models.GappedKmerLayer`.  An empty cluster receives the row
    farthest from its centroid; centroids beyond the number of rows are random directions.

    Parameters
    ----------
    X : tensor, shape (N, D)
        Samples (``D`` divisible by ``blocks``).
    n_clusters : int
        Number of centroids.
    n_iter : int
        Most Lloyd iterations.
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
    k = min(n, n_clusters)
    if k == 0:
        C = X[:0]
    else:
        rng = np.random.default_rng(int(torch.randint(2**62, (1,), generator=generator)))
        diag = torch.full((n,), float(blocks), dtype=torch.float64)
        start = kmeanspp_seeds(diag, lambda idx: X @ X[torch.as_tensor(idx)].mT, k, rng)
        C = X[torch.as_tensor(start, device=X.device)]
        if n > n_clusters:
            clusters = SphereClusters(X, k, blocks)
            lloyd(clusters, start, n_iter)
            C = clusters.centres()
    if n < n_clusters:
        extra = torch.randn(n_clusters - n, X.shape[1], generator=generator, dtype=X.dtype)
        C = torch.cat([C, normalize_blocks(extra.to(X.device), blocks)])
    return C


__all__ = ["normalize_blocks", "spherical_kmeans"]
