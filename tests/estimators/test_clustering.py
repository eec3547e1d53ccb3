"""KernelKMeans and SpectralClustering against scikit-learn's KMeans and SpectralClustering,
the course's cost identity and Ky Fan bound (course part 1, sections 4.3-4.4)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.cluster import KMeans
from sklearn.cluster import SpectralClustering as SkSpectralClustering
from sklearn.datasets import make_blobs, make_circles, make_moons
from sklearn.metrics import adjusted_rand_score

from kernelkit import KernelKMeans, SpectralClustering
from kernelkit.estimators._clustering import kernel_kmeans, kmeans_plusplus
from kernelkit.io import load, save
from kernelkit.kernels import Gaussian, Linear
from kernelkit.utils._errors import InputError

CIRCLES = make_circles(400, factor=0.4, noise=0.05, random_state=0)
MOONS = make_moons(400, noise=0.06, random_state=0)


def _gram(kernel, X, Y=None):
    return kernel(torch.as_tensor(X), None if Y is None else torch.as_tensor(Y)).numpy()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_linear_kernel_equals_sklearn_kmeans_from_the_same_centres(seed, one_torch_thread):
    X, _ = make_blobs(300, centers=5, cluster_std=2.5, random_state=seed)
    idx = np.random.default_rng(seed).choice(300, 5, replace=False)
    ours = KernelKMeans(5, "linear", init=idx).fit(X)
    ref = KMeans(5, init=X[idx], n_init=1, tol=0.0, algorithm="lloyd").fit(X)
    np.testing.assert_array_equal(ours.labels_, ref.labels_)
    assert ours.inertia_ == pytest.approx(ref.inertia_, rel=1e-10)
    np.testing.assert_array_equal(ours.predict(X[:50] + 0.3), ref.predict(X[:50] + 0.3))


def test_cost_identity_and_kmeans_plusplus(one_torch_thread):
    X, _ = make_blobs(120, centers=3, random_state=4)
    K = _gram(Gaussian(2.0), X)
    res = kernel_kmeans(torch.as_tensor(K), 3, random_state=0)
    # inertia = sum_i K_ii - sum_l (1/|C_l|) sum_{i,j in C_l} K_ij (course section 4.3)
    cost = np.trace(K) - sum(
        K[np.ix_(res.labels == c, res.labels == c)].sum() / (res.labels == c).sum()
        for c in range(3)
    )
    assert res.inertia == pytest.approx(cost, rel=1e-12)
    # brute force over the cluster means: no point is closer to another cluster's mean
    A = np.eye(3)[res.labels] / np.bincount(res.labels)
    dist = np.diag(K)[:, None] - 2 * K @ A + np.diag(A.T @ K @ A)[None, :]
    np.testing.assert_array_equal(dist.argmin(1), res.labels)
    centres = kmeans_plusplus(torch.as_tensor(K), 3, np.random.default_rng(0))
    assert len(set(centres.tolist())) == 3


def test_gaussian_kernel_separates_concentric_circles(one_torch_thread):
    X, y = CIRCLES
    ours = KernelKMeans(2, Gaussian(0.3), random_state=0).fit(X)
    assert adjusted_rand_score(y, ours.labels_) >= 0.95
    assert abs(adjusted_rand_score(y, KMeans(2, n_init=10, random_state=0).fit(X).labels_)) < 0.05
    np.testing.assert_array_equal(ours.predict(X), ours.labels_)


def test_precomputed_gram_and_torch_input(one_torch_thread):
    X, _ = make_blobs(80, centers=3, random_state=1)
    K = _gram(Gaussian(2.0), X)
    a = KernelKMeans(3, Gaussian(2.0), random_state=3).fit(X)
    b = KernelKMeans(3, "precomputed", random_state=3).fit(K)
    # the same partition (runs of equal inertia may name the clusters differently)
    assert a.inertia_ == pytest.approx(b.inertia_, rel=1e-12)
    assert adjusted_rand_score(a.labels_, b.labels_) == 1.0
    np.testing.assert_array_equal(b.predict(K), b.labels_)
    c = KernelKMeans(3, Gaussian(2.0), random_state=3).fit(torch.as_tensor(X))
    assert isinstance(c.predict(torch.as_tensor(X)), torch.Tensor)


def test_empty_cluster_is_refilled(one_torch_thread):
    X, _ = make_blobs(60, centers=3, random_state=2)
    # two identical initial centres: the second one gets no point in the first assignment
    model = KernelKMeans(3, Linear(), init=[0, 0, 5]).fit(X)
    assert np.bincount(model.labels_, minlength=3).min() >= 1


def test_spectral_agrees_with_sklearn_precomputed(one_torch_thread):
    X, _ = make_blobs(150, centers=[(0, 0), (6, 0), (0, 6)], cluster_std=0.5, random_state=0)
    K = _gram(Gaussian(1.5), X)
    ref = SkSpectralClustering(3, affinity="precomputed", random_state=0).fit(K)
    for normalization in ("none", "symmetric", "random_walk"):
        ours = SpectralClustering(
            3, "precomputed", random_state=0, normalization=normalization
        ).fit(K)
        assert adjusted_rand_score(ref.labels_, ours.labels_) == 1.0, normalization


def test_spectral_relaxation_bounds_kernel_kmeans(one_torch_thread):
    """Course section 4.4: Z^T Z = I and trace(Z^T K Z) = sum of the top-k eigenvalues, at
    least sum_l (1/|C_l|) sum_{C_l} K_ij for any partition (Ky Fan), here kernel k-means'."""
    X, _ = make_blobs(100, centers=3, random_state=5)
    K = _gram(Gaussian(2.0), X)
    model = SpectralClustering(3, Gaussian(2.0), random_state=0, normalization="none").fit(X)
    Z = model.eigenvectors_
    np.testing.assert_allclose(Z.T @ Z, np.eye(3), atol=1e-12)
    np.testing.assert_allclose(np.trace(Z.T @ K @ Z), model.eigenvalues_.sum(), rtol=1e-12)
    labels = KernelKMeans(3, Gaussian(2.0), random_state=0).fit(X).labels_
    A = np.eye(3)[labels] / np.sqrt(np.bincount(labels))
    assert np.trace(A.T @ K @ A) <= model.eigenvalues_.sum() + 1e-10


@pytest.mark.parametrize("normalization", ["symmetric", "random_walk"])
def test_out_of_sample_matches_a_refit_on_the_union(normalization, one_torch_thread):
    X, y = MOONS
    perm = np.random.default_rng(0).permutation(len(X))
    train, new = perm[:300], perm[300:]
    model = SpectralClustering(2, Gaussian(0.15), random_state=0, normalization=normalization).fit(
        X[train]
    )
    assert adjusted_rand_score(y[train], model.labels_) == 1.0
    np.testing.assert_array_equal(model.predict(X[train]), model.labels_)
    union = SpectralClustering(2, Gaussian(0.15), random_state=0, normalization=normalization).fit(
        X
    )
    # the refit's labels named as the model's (majority over the shared training points)
    names = {c: np.bincount(model.labels_[union.labels_[train] == c]).argmax() for c in (0, 1)}
    refit = np.array([names[c] for c in union.labels_[new]])
    assert (model.predict(X[new]) == refit).mean() >= 0.95


def test_bad_input_gets_named_errors():
    X = np.random.default_rng(0).standard_normal((5, 2))
    for est in (KernelKMeans(6), SpectralClustering(6)):
        with pytest.raises(InputError, match="n_clusters: expected at most n_samples = 5"):
            est.fit(X)
    with pytest.raises(InputError, match="init: expected 2 indices"):
        KernelKMeans(2, init=[0, 9]).fit(X)
    with pytest.raises(InputError, match="kernel: normalization='symmetric' needs positive"):
        SpectralClustering(2, "linear").fit(X)


def test_save_load_round_trip(tmp_path, one_torch_thread):
    X, _ = MOONS
    for model in (
        KernelKMeans(2, Gaussian(0.3), random_state=0).fit(X),
        SpectralClustering(2, Gaussian(0.15), random_state=0).fit(X),
    ):
        loaded = load(save(model, tmp_path / type(model).__name__))
        np.testing.assert_array_equal(loaded.predict(X[:40] + 0.01), model.predict(X[:40] + 0.01))
        np.testing.assert_array_equal(loaded.labels_, model.labels_)
