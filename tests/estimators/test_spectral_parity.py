"""SpectralClustering against sklearn.cluster.SpectralClustering: graph affinities,
assign_labels, n_components, eigen_solver, verbose."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.cluster import SpectralClustering as SkSpectralClustering
from sklearn.cluster._spectral import cluster_qr as sk_cluster_qr
from sklearn.cluster._spectral import discretize as sk_discretize
from sklearn.datasets import make_blobs, make_moons
from sklearn.metrics import adjusted_rand_score
from sklearn.neighbors import kneighbors_graph

from kernelkit import SpectralClustering
from kernelkit.estimators._spectral_labels import cluster_qr, discretize
from kernelkit.utils._errors import InputError


@pytest.fixture(scope="module")
def blobs():
    return make_blobs(150, centers=3, cluster_std=0.6, random_state=0)


@pytest.fixture(scope="module")
def moons():
    return make_moons(200, noise=0.05, random_state=0)


@pytest.mark.parametrize("assign", ["kmeans", "discretize", "cluster_qr"])
def test_assign_labels_match_sklearn(blobs, assign):
    X, y = blobs
    ours = SpectralClustering(
        3,
        kernel="rbf",
        gamma=1.0,
        assign_labels=assign,
        normalization="random_walk",
        random_state=0,
    ).fit(X)
    ref = SkSpectralClustering(3, gamma=1.0, assign_labels=assign, random_state=0).fit(X)
    assert adjusted_rand_score(ours.labels_, ref.labels_) == 1.0
    assert adjusted_rand_score(ours.labels_, y) == 1.0


def test_cluster_qr_equals_sklearns_on_the_same_embedding(blobs):
    X, _ = blobs
    emb = SpectralClustering(3, kernel="rbf", gamma=0.3, random_state=0).fit(X).embedding_
    np.testing.assert_array_equal(cluster_qr(emb), sk_cluster_qr(emb))
    ours = discretize(emb, np.random.default_rng(0))
    ref = sk_discretize(emb, random_state=0)
    assert adjusted_rand_score(ours, ref) == 1.0


@pytest.mark.parametrize("affinity", ["nearest_neighbors", "precomputed_nearest_neighbors"])
def test_graph_affinities_match_sklearn(moons, affinity):
    X, y = moons
    data = kneighbors_graph(X, 10, mode="distance") if affinity.startswith("pre") else X
    ours = SpectralClustering(
        2, kernel=affinity, n_neighbors=10, normalization="random_walk", random_state=0
    ).fit(data)
    ref = SkSpectralClustering(2, affinity=affinity, n_neighbors=10, random_state=0).fit(data)
    assert adjusted_rand_score(ours.labels_, ref.labels_) == 1.0
    assert adjusted_rand_score(ours.labels_, y) == 1.0
    with pytest.raises(InputError, match="predict: needs a kernel affinity"):
        ours.predict(data)


def test_n_components_eigen_solver_and_verbose(blobs, capsys):
    X, y = blobs
    model = SpectralClustering(
        3,
        kernel="rbf",
        gamma=1.0,
        n_components=5,
        eigen_solver="arpack",
        verbose=True,
        random_state=0,
    ).fit(X)
    assert model.embedding_.shape == (len(X), 5)
    dense = SpectralClustering(
        3, kernel="rbf", gamma=1.0, n_components=5, eigen_solver="dense", random_state=0
    ).fit(X)
    np.testing.assert_allclose(model.eigenvalues_, dense.eigenvalues_, rtol=1e-10)
    assert adjusted_rand_score(model.labels_, y) == 1.0
    out = capsys.readouterr().out
    assert "[SpectralClustering] embedding: top 5 eigenvectors (arpack)" in out
    assert "Computing label assignment using kmeans" in out
    with pytest.raises(InputError, match="n_components: expected at most"):
        SpectralClustering(3, kernel="rbf", n_components=len(X) + 1).fit(X)
