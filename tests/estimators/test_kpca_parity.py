"""KernelPCA against sklearn.decomposition.KernelPCA: eigen solvers, n_components=None,
eigenvalues_/eigenvectors_, and the symmetry tolerance of a precomputed Gram."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.decomposition import KernelPCA as SkKernelPCA

from kernelkit import KernelPCA
from kernelkit.utils._errors import InputError, NotPSDError


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
    close[0, 1] += 1e-9 * np.abs(K).max()  # above 1e-10 relative: symmetrised, warned
    with pytest.warns(UserWarning, match="not exactly symmetric"):
        ours = KernelPCA(kernel="precomputed", n_components=2).fit(close)
    np.testing.assert_allclose(ours.eigenvalues_, ref.eigenvalues_, rtol=1e-8)


@pytest.mark.parametrize("solver", ["dense", "arpack", "randomized"])
def test_non_symmetric_precomputed_is_its_symmetric_part(X, solver):
    """A Gram far from symmetric is read as (K + K^T) / 2 by every solver (scikit-learn's
    LAPACK route reads the lower triangle of the centred matrix, its ARPACK and randomized
    routes the whole matrix, so they disagree with each other on such input)."""
    K = X[:40] @ X[:40].T
    far = K + np.triu(np.random.default_rng(1).normal(size=K.shape), 1)
    with pytest.warns(UserWarning, match="not exactly symmetric"):
        ours = KernelPCA(
            kernel="precomputed", n_components=3, eigen_solver=solver, random_state=0
        ).fit(far)
    ref = SkKernelPCA(
        kernel="precomputed", n_components=3, eigen_solver=solver, random_state=0
    ).fit((far + far.T) / 2)
    np.testing.assert_allclose(ours.eigenvalues_, ref.eigenvalues_, rtol=1e-8)
    same_up_to_sign(ours.eigenvectors_, ref.eigenvectors_, 1e-6)


def test_precomputed_not_psd_accepted_while_kept_eigenvalues_are_positive():
    rng = np.random.default_rng(2)
    Q, _ = np.linalg.qr(rng.normal(size=(12, 12)))
    spectrum = np.array([40.0, 9.0, 5.0, 2.0, 1.0, 0.5, 0, 0, 0, 0, -3.0, -6.0])
    K = (Q * spectrum) @ Q.T
    ours = KernelPCA(kernel="precomputed", n_components=3).fit(K)
    ref = SkKernelPCA(kernel="precomputed", n_components=3, eigen_solver="dense").fit(K)
    np.testing.assert_allclose(ours.eigenvalues_, ref.eigenvalues_, rtol=1e-10)
    same_up_to_sign(ours.transform(K[:4]), ref.transform(K[:4]), 1e-9)
    with pytest.raises(NotPSDError, match="There are significant negative eigenvalues"):
        KernelPCA(kernel="precomputed", n_components=12).fit(K)
    with pytest.raises(ValueError, match="There are significant negative eigenvalues"):
        SkKernelPCA(kernel="precomputed", n_components=12, eigen_solver="dense").fit(K)


def test_remove_zero_eig_false_keeps_zero_components_as_sklearn():
    # rank 2 after centring: the third component has eigenvalue 0
    Z = np.random.default_rng(3).normal(size=(30, 2))
    X3 = np.hstack([Z, Z @ [[1.0], [2.0]]])
    kept = KernelPCA(kernel="linear", n_components=3, remove_zero_eig=False).fit(X3)
    ref = SkKernelPCA(kernel="linear", n_components=3, eigen_solver="dense").fit(X3)
    assert kept.n_components_ == 3 and float(kept.eigenvalues_[2]) == 0.0
    np.testing.assert_allclose(kept.eigenvalues_, ref.eigenvalues_, atol=1e-9)
    same_up_to_sign(kept.transform(X3[:5]), ref.transform(X3[:5]), 1e-9)
    np.testing.assert_array_equal(kept.fit_transform(X3)[:, 2], 0.0)
    dropped = KernelPCA(kernel="linear", n_components=3).fit(X3)
    assert dropped.n_components_ == 2
    with pytest.raises(InputError, match="remove_zero_eig"):
        KernelPCA(remove_zero_eig="yes").fit(X3)


def test_kernelkit_precomputed_object_keeps_its_checks():
    """scikit-learn's name reads any square matrix; kernelkit's Precomputed() refuses."""
    from kernelkit.kernels import Precomputed

    K = np.array([[1.0, 2.0], [3.0, 40.0]])
    with pytest.raises(InputError, match="expected a symmetric Gram matrix"):
        KernelPCA(kernel=Precomputed(), n_components=1).fit(K)
    with pytest.warns(UserWarning, match="not exactly symmetric"):
        KernelPCA(kernel="precomputed", n_components=1).fit(K)
