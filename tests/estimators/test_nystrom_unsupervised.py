"""KernelPCA(solver="nystrom") and KernelKMeans(solver="nystrom").

Oracles: the exact estimators with every point a centre (equal to 1e-8 up to sign), the
eigenvalues of the brute-force centred Nyström Gram ``K_nC K_CC^+ K_Cn`` (NumPy), the
k-means cost of the explicit Nyström features (NumPy) and brute-force rank search, and the
labels of concentric circles.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import torch
from sklearn.datasets import make_circles
from sklearn.metrics import adjusted_rand_score

import kernelkit.estimators._nystrom_unsupervised as unsupervised
from kernelkit import KernelKMeans, KernelPCA
from kernelkit.estimators._nystrom_unsupervised import KMEANS_TAIL, kmeans_rank
from kernelkit.gram._nystrom import centre_indices
from kernelkit.kernels import Gaussian, Precomputed
from kernelkit.solvers._nystrom_pcg import centre_jitter
from kernelkit.utils._errors import InputError

KERNEL = Gaussian(1.5)


def _data(n=80, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 3)), rng.normal(size=(7, 3))


def _up_to_sign(A, B):
    return B * np.sign((A * B).sum(0))


def test_nystrom_kpca_with_every_point_a_centre_equals_exact_kpca(one_torch_thread):
    X, Xt = _data()
    kw = {"fit_inverse_transform": True, "inverse_lam": 1e-2}
    exact = KernelPCA(KERNEL, 4, eigen_solver="full", **kw).fit(X)
    ny = KernelPCA(KERNEL, 4, solver="nystrom", n_centers=len(X), **kw).fit(X)
    assert ny.solver_ == "nystrom" and exact.solver_ == "exact"
    np.testing.assert_allclose(ny.eigenvalues_, exact.eigenvalues_, rtol=1e-8)
    for a, b in [
        (exact.transform(Xt), ny.transform(Xt)),
        (exact.fit_transform(X), ny.fit_transform(X)),
        (exact.eigenvectors_, ny.eigenvectors_),
    ]:
        np.testing.assert_allclose(_up_to_sign(a, b), a, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(
        ny.reconstruction_error(Xt), exact.reconstruction_error(Xt), rtol=1e-8, atol=1e-10
    )
    Z = exact.transform(Xt)
    np.testing.assert_allclose(
        ny.inverse_transform(Z), exact.inverse_transform(Z), rtol=1e-8, atol=1e-10
    )


def test_nystrom_kpca_eigenvalues_are_those_of_the_centred_nystrom_gram(one_torch_thread):
    X, _ = _data(120, seed=1)
    m = 25
    ny = KernelPCA(KERNEL, 5, solver="nystrom", n_centers=m, random_state=3).fit(X)
    idx = centre_indices(KERNEL, X, m, "uniform", 3)
    K_nm = KERNEL(X, X[idx]).numpy()
    K_approx = K_nm @ np.linalg.pinv(KERNEL(X[idx]).numpy(), rcond=1e-12) @ K_nm.T
    C = np.eye(len(X)) - 1.0 / len(X)
    brute = np.linalg.eigvalsh(C @ K_approx @ C)[::-1][:5]
    np.testing.assert_allclose(ny.eigenvalues_, brute, rtol=1e-7)
    Z = ny.fit_transform(X)  # codes are the principal projections: Z^T Z = diag(Delta)
    np.testing.assert_allclose(Z.T @ Z, np.diag(ny.eigenvalues_), atol=1e-8 * brute[0])


def test_nystrom_kmeans_with_every_point_a_centre_equals_exact_kmeans(one_torch_thread):
    X, _ = make_circles(300, factor=0.4, noise=0.05, random_state=0)
    start = np.random.default_rng(0).choice(len(X), 2, replace=False)
    exact = KernelKMeans(2, Gaussian(0.3), init=start).fit(X)
    ny = KernelKMeans(2, Gaussian(0.3), init=start, solver="nystrom", n_centers=len(X))
    ny.fit(X)
    assert adjusted_rand_score(exact.labels_, ny.labels_) == 1.0
    assert ny.inertia_ == pytest.approx(exact.inertia_, rel=1e-8)
    Xt = X[:20] * 1.05
    np.testing.assert_array_equal(ny.predict(Xt), exact.predict(Xt))


def test_nystrom_kmeans_separates_circles_and_predicts_its_labels(one_torch_thread):
    X, y = make_circles(3000, factor=0.3, noise=0.05, random_state=1)
    est = KernelKMeans(2, Gaussian(0.3), solver="nystrom", n_centers=100, random_state=0).fit(X)
    assert adjusted_rand_score(y, est.labels_) >= 0.99
    np.testing.assert_array_equal(est.predict(X), est.labels_)


def test_nystrom_solvers_name_what_they_refuse():
    X, _ = _data()
    K = KERNEL(X).numpy()
    with pytest.raises(InputError, match="solver: 'nystrom'"):
        KernelPCA(Precomputed(), 2, solver="nystrom", n_centers=10).fit(K)
    with pytest.raises(InputError, match="init"):
        KernelKMeans(2, KERNEL, solver="nystrom", n_centers=10, init="random").fit(X)
    with pytest.raises(InputError, match="inverse_lam"):
        KernelPCA(
            KERNEL, 2, solver="nystrom", n_centers=10, fit_inverse_transform=True, inverse_lam=0
        ).fit(X)


def test_nystrom_kpca_on_float32_data_matches_float64(one_torch_thread):
    X, Xt = _data(400, seed=2)
    kw = {"solver": "nystrom", "n_centers": 60, "random_state": 0}
    ny64 = KernelPCA(KERNEL, 3, **kw).fit(X)
    ny32 = KernelPCA(KERNEL, 3, **kw).fit(X.astype(np.float32))
    np.testing.assert_allclose(ny32.eigenvalues_, ny64.eigenvalues_, rtol=1e-4)
    Z64 = ny64.transform(Xt)
    np.testing.assert_allclose(
        _up_to_sign(Z64, ny32.transform(Xt.astype(np.float32))), Z64, atol=1e-3
    )


def test_kmeans_rank_is_the_smallest_rank_within_the_tail_bound(monkeypatch):
    monkeypatch.setattr(unsupervised, "KMEANS_FEATURE_BYTES", 0)
    values = torch.tensor([5.0, 2.0, 1.0, 1e-2, 1e-3, 1e-5, 1e-6, 1e-9], dtype=torch.float64)
    for k in (1, 2, 3):
        bound = float(values[k - 1 :].sum())
        brute = next(
            r for r in range(len(values) + 1) if float(values[r:].sum()) <= KMEANS_TAIL * bound
        )
        assert kmeans_rank(values, 10**6, k) == max(brute, k)
    monkeypatch.setattr(unsupervised, "KMEANS_FEATURE_BYTES", 8 * 1000 * 6)
    assert kmeans_rank(values, 1000, 2) == 6  # raised to what the budget holds


def test_nystrom_kmeans_in_few_directions_reports_the_full_features_cost(
    one_torch_thread, monkeypatch
):
    """Over the feature budget: Lloyd in the top principal directions; the inertia, centres
    and predictions are those of the explicit Nyström features, within the rank rule's bound
    of the best full-feature assignment found from the same labels."""
    monkeypatch.setattr(unsupervised, "KMEANS_FEATURE_BYTES", 0)
    X, y = make_circles(1500, factor=0.3, noise=0.05, random_state=2)
    kernel, m = Gaussian(0.3), 120
    est = KernelKMeans(2, kernel, solver="nystrom", n_centers=m, random_state=0).fit(X)
    assert 2 <= est.feature_rank_ < m
    assert adjusted_rand_score(y, est.labels_) >= 0.99
    idx = centre_indices(kernel, X, m, "uniform", 0)
    K_mm = kernel(X[idx])  # explicit features K_nm L^{-T}, L L^T = K_mm + delta I
    L = np.linalg.cholesky(K_mm.numpy() + centre_jitter(K_mm) * np.eye(m))
    Phi = scipy.linalg.solve_triangular(L, kernel(X, X[idx]).numpy().T, lower=True).T
    cost = sum(((Phi[est.labels_ == c] - Phi[est.labels_ == c].mean(0)) ** 2).sum() for c in (0, 1))
    assert est.inertia_ == pytest.approx(cost, rel=1e-6)
    centres = np.stack([Phi[est.labels_ == c].mean(0) for c in (0, 1)])
    nearest = ((Phi[:, None, :] - centres[None]) ** 2).sum(2).argmin(1)
    np.testing.assert_array_equal(est.predict(X), nearest)
