"""Sparse X (scipy.sparse, sparse torch tensors): every vector estimator equals its dense fit,
and a 10^5 x 10^5 CSR input is never densified (peak memory measured)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import torch
from sklearn.metrics.pairwise import pairwise_kernels

from kernelkit import KernelPCA, KernelRidge, KernelSVC, NystromFeatures, SpectralClustering
from kernelkit.estimators import RandomFourierFeatures
from kernelkit.gram import gram
from kernelkit.kernels import (
    Gaussian,
    Laplacian,
    Linear,
    Matern,
    Polynomial,
    Spectrum,
    TensorMatern,
)
from kernelkit.kernels._sparse import SparseRows
from kernelkit.utils._errors import InputError


@pytest.fixture(scope="module")
def data():
    X = sp.random(60, 20, density=0.3, format="csr", random_state=0)
    rng = np.random.default_rng(0)
    y = rng.normal(size=60)
    return X, X.toarray(), y, (y > 0).astype(int)


KERNELS = [
    Linear(),
    Polynomial(degree=3, scale=0.5, offset=1.0),
    Gaussian(sigma=1.3),
    Laplacian(sigma=2.0),
    Matern(nu=1.5, sigma=2.0),
    TensorMatern(s=1.0, sigma=2.0),
    Linear().normalized(),
    Gaussian(1.0) + 0.5 * Linear(),
]


@pytest.mark.parametrize("kernel", KERNELS, ids=repr)
@pytest.mark.parametrize("block_size", [None, 7])
def test_sparse_gram_equals_dense(data, kernel, block_size):
    X, Xd, _, _ = data
    Y = sp.random(13, 20, density=0.4, format="csc", random_state=1)
    np.testing.assert_allclose(
        gram(kernel, X, block_size=block_size), gram(kernel, Xd), rtol=0, atol=1e-12
    )
    np.testing.assert_allclose(
        gram(kernel, Y, X, block_size=block_size), gram(kernel, Y.toarray(), Xd), atol=1e-12
    )
    np.testing.assert_allclose(kernel.diag(X), kernel.diag(Xd), rtol=0, atol=1e-12)


@pytest.mark.parametrize("metric", ["rbf", "laplacian", "poly", "linear", "cosine"])
def test_sparse_gram_equals_sklearn_pairwise_kernels(data, metric):
    X, Xd, _, _ = data
    ours = KernelRidge(kernel=metric, gamma=None if metric in ("linear", "cosine") else 0.4)
    ours.fit(X, np.zeros(len(Xd)))
    params = {} if metric in ("linear", "cosine") else {"gamma": 0.4}
    expected = pairwise_kernels(X, metric=metric, **params)
    np.testing.assert_allclose(gram(ours.kernel_, X), expected, rtol=0, atol=1e-12)


ESTIMATORS = {
    "KernelRidge": (
        lambda: KernelRidge(kernel="rbf", gamma=0.5, lam=1e-3),
        lambda m, Z, y, c: m.fit(Z, y).predict(Z[:17]),
    ),
    "KernelRidge-median": (
        lambda: KernelRidge(lam=1e-3),
        lambda m, Z, y, c: m.fit(Z, y).predict(Z[:17]),
    ),
    "KernelRidge-laplacian": (
        lambda: KernelRidge(kernel="laplacian", gamma=0.3, lam=1e-3),
        lambda m, Z, y, c: m.fit(Z, y).predict(Z[:17]),
    ),
    "KernelPCA": (
        lambda: KernelPCA(n_components=3, kernel="rbf", gamma=0.5),
        lambda m, Z, y, c: m.fit(Z).transform(Z[:17]),
    ),
    "KernelSVC": (
        lambda: KernelSVC(kernel="poly", gamma=0.5),
        lambda m, Z, y, c: m.fit(Z, c).decision_function(Z[:17]),
    ),
    "SpectralClustering": (
        lambda: SpectralClustering(2, kernel="rbf", gamma=0.5, random_state=0),
        lambda m, Z, y, c: m.fit(Z).embedding_,
    ),
    "NystromFeatures": (
        lambda: NystromFeatures(kernel="rbf", gamma=0.5, n_centers=10, random_state=0),
        lambda m, Z, y, c: m.fit(Z).transform(Z[:17]),
    ),
    "NystromFeatures-greedy": (
        lambda: NystromFeatures(kernel="poly", n_centers=10, centers="greedy"),
        lambda m, Z, y, c: m.fit(Z).transform(Z[:17]),
    ),
    "RandomFourierFeatures": (
        lambda: RandomFourierFeatures(kernel=Gaussian(sigma=1.0), random_state=0),
        lambda m, Z, y, c: m.fit(Z).transform(Z[:17]),
    ),
}


@pytest.mark.parametrize("name", sorted(ESTIMATORS))
@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_estimator_on_sparse_equals_dense(data, name, fmt):
    X, Xd, y, c = data
    make, run = ESTIMATORS[name]
    sparse = run(make(), X.asformat(fmt), y, c)
    dense = run(make(), Xd, y, c)
    assert isinstance(sparse, np.ndarray)
    np.testing.assert_allclose(sparse, dense, rtol=0, atol=1e-10)


def test_sparse_torch_tensor_and_mixed_containers(data):
    X, Xd, y, _ = data
    ref = KernelRidge(kernel="rbf", gamma=0.5).fit(Xd, y).predict(Xd)
    Xt = torch.as_tensor(Xd).to_sparse()
    out = KernelRidge(kernel="rbf", gamma=0.5).fit(Xt, y).predict(torch.as_tensor(Xd))
    assert isinstance(out, torch.Tensor)
    np.testing.assert_allclose(out.numpy(), ref, rtol=0, atol=1e-10)
    # fitted on sparse, predicted on dense (and the reverse)
    np.testing.assert_allclose(
        KernelRidge(kernel="rbf", gamma=0.5).fit(X, y).predict(Xd), ref, rtol=0, atol=1e-10
    )
    np.testing.assert_allclose(
        KernelRidge(kernel="rbf", gamma=0.5).fit(Xd, y).predict(X), ref, rtol=0, atol=1e-10
    )


def test_sparse_refusals_are_named_errors(data):
    X, _, y, _ = data
    with pytest.raises(InputError, match="Sparse data was passed for X"):
        KernelRidge(kernel=lambda a, b: float(a @ b)).fit(X, y)
    with pytest.raises(InputError, match="TensorMatern does not take sparse input"):
        gram(TensorMatern(s=2.0), X)
    with pytest.raises(InputError, match="X: expected every item to be a str"):
        Spectrum(k=2).prepare(X)
    with pytest.raises(InputError, match="fit_inverse_transform"):
        KernelPCA(kernel="rbf", fit_inverse_transform=True).fit(X)
    bad = X.copy()
    bad.data[0] = np.nan
    with pytest.raises(InputError, match="X"):
        KernelRidge(kernel="rbf").fit(bad, y)
    with pytest.raises(InputError, match="finite"):
        SparseRows.from_input(bad)


def test_large_csr_is_never_densified(measure_peaks):
    """A 10^5 x 10^5 CSR with 10^6 non-zeros (a dense copy: 80 GB) through NystromFeatures:
    the peak is the output features and the tiles, not X."""
    result = measure_peaks(
        """
        import numpy as np, scipy.sparse as sp
        from kernelkit import NystromFeatures

        n = 100_000
        rng = np.random.default_rng(0)
        rows = rng.integers(0, n, 1_000_000)
        cols = rng.integers(0, n, 1_000_000)
        X = sp.csr_matrix((rng.random(1_000_000), (rows, cols)), shape=(n, n))
        model = NystromFeatures(kernel="rbf", gamma=0.5, n_centers=50, random_state=0)
        peak, Z = peak_growth(lambda: model.fit(X).transform(X))
        ok = bool(np.isfinite(Z).all())
        print(json.dumps({"peak": peak, "shape": list(Z.shape), "finite": ok}))
        """
    )
    assert result["shape"] == [100_000, 50] and result["finite"]
    # output 40 MB (1e5 x 50 float64); a dense copy of X would be 8e10 bytes
    assert result["peak"] < 400e6, result
