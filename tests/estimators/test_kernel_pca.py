"""KernelPCA against scikit-learn's KernelPCA and PCA, and the identities of course part 1,
section 4.2 / test case 5.14."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.decomposition import PCA
from sklearn.decomposition import KernelPCA as SkKernelPCA
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.preprocessing import KernelCenterer

from kernelkit import KernelPCA
from kernelkit.estimators._pca import center_train_gram_
from kernelkit.gram import GramCenterer
from kernelkit.kernels import Gaussian, Linear, Polynomial, Precomputed
from kernelkit.utils._errors import InputError


@pytest.fixture
def data():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((80, 5)) * [3.0, 2.0, 1.0, 0.5, 0.2]
    Xt = rng.standard_normal((12, 5))
    return X, Xt


def _equal_up_to_sign(A, B, tol):
    A, B = np.asarray(A), np.asarray(B)
    assert A.shape == B.shape
    signs = np.sign((A * B).sum(0))
    err = np.abs(A * signs - B).max() / np.abs(B).max()
    assert err < tol, err


@pytest.mark.parametrize(
    ("kernel", "sk_kwargs"),
    [
        (Gaussian(2.0), {"kernel": "rbf", "gamma": 1 / 8}),
        (Polynomial(degree=2, scale=0.1, offset=1.0), {"kernel": "poly", "gamma": 0.1}),
    ],
)
def test_transforms_match_sklearn(data, kernel, sk_kwargs):
    X, Xt = data
    ours = KernelPCA(kernel, n_components=4)
    ref = SkKernelPCA(n_components=4, eigen_solver="dense", **sk_kwargs)
    if sk_kwargs["kernel"] == "poly":
        ref.set_params(degree=2, coef0=1.0)
    _equal_up_to_sign(ours.fit_transform(X), ref.fit_transform(X), 1e-9)
    _equal_up_to_sign(ours.transform(Xt), ref.transform(Xt), 1e-9)
    _equal_up_to_sign(ours.transform(X), ref.fit_transform(X), 1e-9)
    assert np.allclose(ours.eigenvalues_, ref.eigenvalues_, rtol=1e-10)


def test_precomputed_matches_sklearn(data):
    X, Xt = data
    K, Kt = rbf_kernel(X, gamma=0.05), rbf_kernel(Xt, X, gamma=0.05)
    ours = KernelPCA(Precomputed(), n_components=3).fit(K)
    ref = SkKernelPCA(n_components=3, kernel="precomputed", eigen_solver="dense").fit(K)
    _equal_up_to_sign(ours.transform(Kt), ref.transform(Kt), 1e-9)


@pytest.mark.parametrize("solver", ["full", "subset", "arpack"])
def test_eigen_solvers_agree(solver):
    rng = np.random.default_rng(2)
    X, Xt = rng.standard_normal((400, 3)), rng.standard_normal((9, 3))
    ref = SkKernelPCA(n_components=5, kernel="rbf", gamma=0.5, eigen_solver="dense").fit(X)
    ours = KernelPCA(Gaussian(1.0), n_components=5, eigen_solver=solver).fit(X)
    _equal_up_to_sign(ours.transform(Xt), ref.transform(Xt), 1e-7)


def test_course_identities(data):
    """alpha^T Kc alpha = I, Kc alpha_i = sqrt(Delta_i) u_i, variance Delta_i / n."""
    X, _ = data
    n, sigma = len(X), 1.5
    model = KernelPCA(Gaussian(sigma), n_components=5)
    Z = model.fit_transform(X)
    Kc = KernelCenterer().fit_transform(rbf_kernel(X, gamma=1 / (2 * sigma**2)))
    U, delta = model.eigenvectors_, model.eigenvalues_
    alphas = U / np.sqrt(delta)
    assert np.abs(alphas.T @ Kc @ alphas - np.eye(5)).max() < 1e-10
    assert np.abs(Kc @ alphas - U * np.sqrt(delta)).max() < 1e-10
    assert np.abs(Z - Kc @ alphas).max() < 1e-10
    assert np.allclose((Z**2).mean(0), delta / n, rtol=1e-10)
    # eigenvalues of the centred Gram, descending (oracle: NumPy's full eigh)
    assert np.allclose(delta, np.linalg.eigvalsh(Kc)[::-1][:5], rtol=1e-10)


def test_linear_kernel_equals_pca(data):
    X, Xt = data
    ours = KernelPCA(Linear(), n_components=3).fit(X)
    ref = PCA(n_components=3).fit(X)
    _equal_up_to_sign(ours.transform(Xt), ref.transform(Xt), 1e-9)
    _equal_up_to_sign(ours.transform(X), ref.transform(X), 1e-9)


def test_non_positive_eigenvalues_are_dropped():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((30, 2))
    model = KernelPCA(Linear(), n_components=5).fit(X)  # rank(Kc) = 2
    assert model.n_components_ == 2
    assert model.transform(X).shape == (30, 2)
    assert list(model.get_feature_names_out()) == ["kernelpca0", "kernelpca1"]


def test_inverse_transform_matches_sklearn(data):
    X, Xt = data
    n, inverse_lam, sigma = len(X), 0.01, 3.0
    ours = KernelPCA(
        Gaussian(sigma), n_components=4, fit_inverse_transform=True, inverse_lam=inverse_lam
    ).fit(X)
    ref = SkKernelPCA(
        n_components=4,
        kernel="rbf",
        gamma=1 / (2 * sigma**2),
        fit_inverse_transform=True,
        alpha=n * inverse_lam,
        eigen_solver="dense",
    ).fit(X)
    Z_ours, Z_ref = ours.transform(Xt), ref.transform(Xt)
    signs = np.sign((Z_ours * Z_ref).sum(0))
    assert np.allclose(signs * Z_ours, Z_ref, atol=1e-9)
    # each pre-image map decodes codes in its own sign convention
    back_ours = ours.inverse_transform(Z_ours)
    back_ref = ref.inverse_transform(Z_ref)
    assert np.abs(back_ours - back_ref).max() < 1e-8 * np.abs(back_ref).max()
    # a reasonable pre-image: closer to the input than the data mean
    train_back = ours.inverse_transform(ours.transform(X))
    assert np.mean((train_back - X) ** 2) < np.mean((X - X.mean(0)) ** 2)


def test_inverse_transform_errors(data):
    X, _ = data
    model = KernelPCA(Gaussian(), n_components=2).fit(X)
    with pytest.raises(InputError, match="fit_inverse_transform"):
        model.inverse_transform(np.zeros((2, 2)))
    K = rbf_kernel(X)
    with pytest.raises(InputError, match="fit_inverse_transform"):
        KernelPCA(Precomputed(), fit_inverse_transform=True).fit(K)


def test_torch_in_torch_out(data):
    X, Xt = data
    ref = KernelPCA(Gaussian(2.0), n_components=3).fit(X).transform(Xt)
    model = KernelPCA(Gaussian(2.0), n_components=3).fit(torch.as_tensor(X))
    out = model.transform(torch.as_tensor(Xt))
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float64
    assert np.abs(out.numpy() - ref).max() < 1e-12
    out32 = KernelPCA(Gaussian(2.0), n_components=3).fit_transform(X.astype(np.float32))
    assert out32.dtype == np.float32


def test_in_place_centering_equals_sklearn_kernel_centerer(data):
    X, _ = data
    K = rbf_kernel(X, gamma=0.1)
    Kt = torch.as_tensor(K.copy())
    out = center_train_gram_(Kt, GramCenterer().fit(Kt))
    assert out.data_ptr() == Kt.data_ptr()  # no second n x n buffer
    assert np.abs(out.numpy() - KernelCenterer().fit_transform(K)).max() < 1e-12


def test_reconstruction_error_equals_pca_residual(data):
    """Linear kernel: the feature-space residual is PCA's ||x - inverse_transform(x)||^2."""
    X, Xt = data
    ours = KernelPCA(Linear(), n_components=2).fit(X)
    pca = PCA(n_components=2).fit(X)
    residual = ((Xt - pca.inverse_transform(pca.transform(Xt))) ** 2).sum(1)
    np.testing.assert_allclose(ours.reconstruction_error(Xt), residual, rtol=1e-9, atol=1e-10)
    # from a Gram matrix alone, with the test diagonal
    from kernelkit.kernels import PrecomputedBatch

    pre = KernelPCA(Precomputed(), n_components=2).fit(X @ X.T)
    rows = PrecomputedBatch(torch.as_tensor(Xt @ X.T), diag=torch.as_tensor((Xt * Xt).sum(1)))
    np.testing.assert_allclose(pre.reconstruction_error(rows), residual, rtol=1e-9, atol=1e-10)
