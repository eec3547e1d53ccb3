"""KernelPCA against sklearn.decomposition.KernelPCA: eigen solvers, n_components=None,
eigenvalues_/eigenvectors_, and the symmetry tolerance of a precomputed Gram."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.decomposition import KernelPCA as SkKernelPCA

from kernelkit import KernelPCA
from kernelkit.utils.errors import InputError


@pytest.fixture(scope="module")
def X():
    return np.random.default_rng(0).normal(size=(150, 5))


def same_up_to_sign(A, B, atol):
    signs = np.sign(np.sum(A * B, axis=0))
    np.testing.assert_allclose(A * signs, B, rtol=0, atol=atol)


@pytest.mark.parametrize(
    ("solver", "atol"), [("dense", 1e-10), ("arpack", 1e-8), ("randomized", 1e-6)]
)
def test_solvers_match_sklearn(X, solver, atol):
    ours = KernelPCA(kernel="rbf", gamma=0.1, n_components=4, eigen_solver=solver).fit(X)
    ref = SkKernelPCA(
        kernel="rbf", gamma=0.1, n_components=4, eigen_solver=solver, random_state=0
    ).fit(X)
    np.testing.assert_allclose(ours.eigenvalues_, ref.eigenvalues_, rtol=1e-9)
    same_up_to_sign(ours.eigenvectors_, ref.eigenvectors_, atol)
    same_up_to_sign(ours.transform(X[:20]), ref.transform(X[:20]), atol)


def test_randomized_equals_dense_with_more_power_iterations(X):
    dense = KernelPCA(kernel="rbf", gamma=0.1, n_components=3, eigen_solver="dense").fit(X)
    rnd = KernelPCA(
        kernel="rbf", gamma=0.1, n_components=3, eigen_solver="randomized", iterated_power=20
    ).fit(X)
    np.testing.assert_allclose(rnd.eigenvalues_, dense.eigenvalues_, rtol=1e-12)
    same_up_to_sign(rnd.eigenvectors_, dense.eigenvectors_, 1e-9)


def test_n_components_none_keeps_every_positive_eigenvalue(X):
    ours = KernelPCA(kernel="rbf", gamma=0.1, n_components=None).fit(X)
    ref = SkKernelPCA(kernel="rbf", gamma=0.1).fit(X)
    assert ours.n_components_ == ref.eigenvalues_.shape[0] == len(X) - 1
    np.testing.assert_allclose(ours.eigenvalues_, ref.eigenvalues_, rtol=1e-8, atol=1e-12)
    assert ours.transform(X[:3]).shape == (3, len(X) - 1)


def test_precomputed_symmetry_tolerance(X):
    K = X @ X.T
    ref = KernelPCA(kernel="precomputed", n_components=2).fit(K)
    close = K.copy()
    close[0, 1] += 1e-9 * np.abs(K).max()  # above 1e-10 relative, below 1e-6: symmetrised
    with pytest.warns(UserWarning, match="not exactly symmetric"):
        ours = KernelPCA(kernel="precomputed", n_components=2).fit(close)
    np.testing.assert_allclose(ours.eigenvalues_, ref.eigenvalues_, rtol=1e-8)
    far = K.copy()
    far[0, 1] += 1e-3 * np.abs(K).max()
    with pytest.raises(InputError, match="expected a symmetric Gram matrix"):
        KernelPCA(kernel="precomputed", n_components=2).fit(far)
