r"""Learning the anchors of a convolutional kernel network (course part 3, sections 6-7).

* Unsupervised: spherical k-means on patches sampled from the previous layer's map
  (:func:`spherical_kmeans`, :func:`fit_image_anchors`), as in the reference implementation
  (course part 3, section 7 and errata 11: anchors of unit norm, clustered on normalised
  patches).
* Supervised (:func:`train_classifier`): backpropagation through the whole network with a
  linear classifier on top, minimising ``(1/n) sum_i L(y_i, W psi_Z(x_i) + b) + lam ||W||^2``
  over ``Z`` and ``(W, b)`` with ``L`` the multinomial logistic loss ("end-to-end kernel
  learning = learning a linear subspace of the RKHS", part 3, section 6; Mairal 2016, §3),
  by minibatch Adam.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from kernelkit.models.ckn import CKN, extract_patches
from kernelkit.utils.errors import InputError


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
    :class:`~kernelkit.models.ckn_seq.GappedKmerLayer`.  Empty clusters are re-seeded with
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
            sums[empty] = X[torch.argsort(best)[: len(empty)]]
        C = normalize_blocks(sums, blocks)
    return C


def _seed_centroids(
    X: torch.Tensor, k: int, generator: torch.Generator, blocks: int
) -> torch.Tensor:
    """k-means++ seeding on (products of) spheres: each new seed drawn with probability
    proportional to its squared distance ``2 (blocks - max_c <x, c>)`` to the seeds so far."""
    if k == 0:
        return X[:0]
    first = int(torch.randint(X.shape[0], (1,), generator=generator))
    chosen = [first]
    best = X @ X[first]
    for _ in range(1, k):
        d2 = (2.0 * (blocks - best)).clamp_min(0.0)
        if float(d2.sum()) <= 0:
            nxt = int(torch.randint(X.shape[0], (1,), generator=generator))
        else:
            nxt = int(torch.multinomial(d2.cpu().double(), 1, generator=generator))
        chosen.append(nxt)
        best = torch.maximum(best, X @ X[nxt])
    return X[torch.as_tensor(chosen, device=X.device)]


def sample_rows(rows: torch.Tensor, n_samples: int, generator: torch.Generator) -> torch.Tensor:
    """``n_samples`` rows drawn without replacement (all when fewer), zero rows excluded."""
    keep = torch.linalg.vector_norm(rows, dim=1) > 0
    rows = rows[keep] if bool(keep.any()) else rows
    if rows.shape[0] > n_samples:
        rows = rows[torch.randperm(rows.shape[0], generator=generator)[:n_samples].to(rows.device)]
    return rows


def map_in_batches(
    fn: Callable[[torch.Tensor], torch.Tensor], X: torch.Tensor, batch_size: int
) -> torch.Tensor:
    """``fn`` applied to consecutive batches of ``X`` (no gradient), concatenated."""
    with torch.no_grad():
        return torch.cat([fn(X[i : i + batch_size]) for i in range(0, X.shape[0], batch_size)])


def fit_image_anchors(
    ckn: CKN,
    X: torch.Tensor,
    *,
    n_patches: int,
    n_iter: int,
    generator: torch.Generator,
    batch_size: int = 256,
) -> None:
    """Unsupervised CKN: spherical k-means anchors for each layer in turn.

    For layer ``k``, the maps ``x_{k-1}`` of a random subset of images (about ``2 n_patches``
    patch positions) are computed with the layers already fitted, ``n_patches`` non-zero
    patches are drawn from them, and their spherical k-means centroids become the anchors.
    """
    n = X.shape[0]
    for depth, layer in enumerate(ckn.layers):
        _, h, w = ckn.output_shape(X.shape[2], X.shape[3], depth)
        n_images = min(n, max(1, math.ceil(2 * n_patches / (h * w))))
        idx = torch.randperm(n, generator=generator)[:n_images].to(X.device)
        maps = map_in_batches(lambda b, d=depth: ckn(b, depth=d), X[idx], batch_size)
        P = extract_patches(maps, layer.patch_size)
        rows = sample_rows(P.permute(0, 2, 1).reshape(-1, layer.patch_dim), n_patches, generator)
        layer.set_anchors(
            spherical_kmeans(rows, layer.n_filters, n_iter=n_iter, generator=generator)
        )


def train_classifier(
    network: nn.Module,
    head: nn.Linear,
    X: torch.Tensor,
    y: torch.Tensor,
    *,
    lam: float,
    n_epochs: int,
    lr: float,
    batch_size: int,
    generator: torch.Generator,
) -> list[float]:
    r"""Minibatch Adam on ``(1/n) sum_i CE(head(network(x_i)), y_i) + lam ||W||^2``.

    ``network`` maps a batch to features ``(b, d)`` (flattened inside); every trainable
    parameter of ``network`` (the anchors) and of ``head`` moves.  The learning rate decays
    as a cosine from ``lr`` to 0 over the epochs.

    Returns
    -------
    list of float
        The mean objective of each epoch.
    """
    if X.shape[0] != y.shape[0]:
        raise InputError(f"y: expected {X.shape[0]} labels, got {y.shape[0]}")
    params = [p for p in (*network.parameters(), *head.parameters()) if p.requires_grad]
    opt = torch.optim.Adam(params, lr=lr)
    n = X.shape[0]
    steps = n_epochs * math.ceil(n / batch_size)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda t: 0.5 * (1.0 + math.cos(math.pi * min(t, steps) / max(steps, 1)))
    )
    history = []
    for _ in range(n_epochs):
        perm = torch.randperm(n, generator=generator).to(X.device)
        total = 0.0
        for start in range(0, n, batch_size):
            idx = perm[start : start + batch_size]
            logits = head(network(X[idx]).flatten(1))
            loss = F.cross_entropy(logits, y[idx]) + lam * (head.weight**2).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            schedule.step()
            total += float(loss.detach()) * len(idx)
        history.append(total / n)
    return history


__all__ = [
    "fit_image_anchors",
    "map_in_batches",
    "normalize_blocks",
    "sample_rows",
    "spherical_kmeans",
    "train_classifier",
]
