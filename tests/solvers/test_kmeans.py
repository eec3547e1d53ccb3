"""The one k-means++ and the one Lloyd loop (solvers/_kmeans.py) against independent oracles:
scikit-learn's KMeans from the same centres, the Gram geometry against the feature geometry,
and a plain loop for spherical k-means."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.cluster import KMeans

from kernelkit.solvers._kmeans import (
    FeatureClusters,
    GramClusters,
    SphereClusters,
    kmeanspp_seeds,
    lloyd,
    normalize_blocks,
)


def _blobs(seed: int = 0, n: int = 300, d: int = 5) -> torch.Tensor:
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=3.0, size=(4, d))
    return torch.as_tensor(centres[rng.integers(4, size=n)] + rng.normal(size=(n, d)))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_feature_lloyd_equals_sklearn_kmeans(seed):
    Z = _blobs(seed)
    start = np.random.default_rng(seed).choice(len(Z), size=4, replace=False)
    labels, _, inertia = lloyd(FeatureClusters(Z, 4), start, 300)
    ref = KMeans(4, init=Z[start].numpy(), n_init=1, algorithm="lloyd", tol=0).fit(Z.numpy())
    np.testing.assert_array_equal(labels.numpy(), ref.labels_)
    np.testing.assert_allclose(inertia, ref.inertia_, rtol=1e-10)


def test_gram_geometry_equals_feature_geometry():
    Z = _blobs(3)
    start = np.array([0, 50, 100, 150])
    a = lloyd(FeatureClusters(Z, 4), start, 300)
    b = lloyd(GramClusters(Z @ Z.T, 4), start, 300)
    np.testing.assert_array_equal(a[0].numpy(), b[0].numpy())
    assert a[1] == b[1]
    np.testing.assert_allclose(a[2], b[2], rtol=1e-9)


def _plain_spherical(X: torch.Tensor, start: np.ndarray, blocks: int, n_iter: int):
    C = X[torch.as_tensor(start)]
    labels = (X @ C.T).argmax(1)
    for _ in range(n_iter):
        C = torch.stack(
            [
                normalize_blocks(X[labels == c].sum(0, keepdim=True), blocks)[0]
                for c in range(len(start))
            ]
        )
        new = (X @ C.T).argmax(1)
        if torch.equal(new, labels):
            break
        labels = new
    return labels, C


@pytest.mark.parametrize("blocks", [1, 3])
def test_sphere_geometry_equals_plain_loop(blocks):
    X = normalize_blocks(_blobs(4, d=6), blocks)
    start = np.array([1, 60, 120, 250])
    clusters = SphereClusters(X, 4, blocks)
    labels, _, _ = lloyd(clusters, start, 50)
    ref_labels, ref_C = _plain_spherical(X, start, blocks, 50)
    np.testing.assert_array_equal(labels.numpy(), ref_labels.numpy())
    torch.testing.assert_close(clusters.centres(), ref_C, rtol=1e-10, atol=1e-12)


def test_empty_cluster_gets_farthest_point():
    Z = torch.tensor([[0.0], [0.1], [0.2], [10.0]], dtype=torch.float64)
    # two seeds on the same point: one cluster starts empty and takes the farthest point
    labels, _, _ = lloyd(FeatureClusters(Z, 2), np.array([0, 0]), 10)
    assert sorted(torch.bincount(labels).tolist()) == [1, 3]
    assert int(labels[3]) != int(labels[0])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_kmeanspp_never_draws_a_copy_of_a_chosen_point(dtype):
    rng = np.random.default_rng(0)
    distinct = torch.as_tensor(rng.normal(size=(5, 3)), dtype=dtype)
    X = distinct[torch.as_tensor(rng.integers(5, size=200))]
    for seed in range(5):
        seeds = kmeanspp_seeds((X * X).sum(1), lambda i: X @ X[i].T, 5, np.random.default_rng(seed))
        assert len({tuple(X[i].tolist()) for i in seeds}) == 5
