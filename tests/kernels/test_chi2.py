"""The exponential chi-squared kernel against scikit-learn's chi2_kernel."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.kernel_approximation import Nystroem as SkNystroem
from sklearn.metrics.pairwise import chi2_kernel
from sklearn.svm import SVC

from kernelkit import KernelPCA, KernelSVC, NystromFeatures
from kernelkit.gram import gram
from kernelkit.kernels import Chi2
from kernelkit.testing import check_kernel
from kernelkit.utils._errors import InputError


@pytest.fixture(scope="module")
def hist():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(40, 6))
    X[X < 0.3] = 0.0  # zeros on both sides: terms 0 / 0 count as 0
    return X


@pytest.mark.parametrize("gamma", [0.1, 1.0, 3.0])
def test_equals_chi2_kernel(hist, gamma):
    X, Y = hist[:25], hist[25:]
    ours = gram(Chi2(gamma=gamma), X, Y)
    np.testing.assert_allclose(ours, chi2_kernel(X, Y, gamma=gamma), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(gram(Chi2(gamma), X), chi2_kernel(X, gamma=gamma), 1e-12)


def test_feature_slabs_equal_one_slab(hist, monkeypatch):
    import kernelkit.kernels._chi2 as module

    whole = gram(Chi2(), hist)
    monkeypatch.setattr(module, "_BLOCK_ELEMENTS", 1)  # one feature per slab
    np.testing.assert_allclose(gram(Chi2(), hist), whole, rtol=1e-14)


def test_positive_definite_on_histograms(hist):
    assert np.linalg.eigvalsh(gram(Chi2(gamma=2.0), hist)).min() > -1e-12
    check_kernel(*Chi2._check_example())


def test_named_errors():
    with pytest.raises(InputError, match="X: the chi-squared kernel needs non-negative"):
        gram(Chi2(), np.array([[1.0, -0.5], [0.2, 0.3]]))
    with pytest.raises(InputError, match="gamma"):
        Chi2(gamma=0.0)
    with pytest.raises(InputError, match="non-negative"):
        KernelSVC(kernel="chi2").fit(np.array([[1.0, -1.0], [0.0, 1.0]]), [0, 1])
    with pytest.raises(InputError, match="sparse"):
        NystromFeatures(kernel="chi2", n_centers=2).fit(sp.csr_matrix(np.eye(3)))


def test_sklearn_name_in_the_estimators(hist):
    """kernel="chi2" is chi2_kernel with gamma=1 by default, as scikit-learn's Nystroem."""
    ours = NystromFeatures(kernel="chi2", n_centers=len(hist)).fit_transform(hist)
    np.testing.assert_allclose(ours @ ours.T, chi2_kernel(hist), atol=1e-10)
    ref = SkNystroem(kernel="chi2", n_components=len(hist)).fit_transform(hist)
    np.testing.assert_allclose(ours @ ours.T, ref @ ref.T, atol=1e-10)
    y = (hist[:, 0] > hist[:, 1]).astype(int)
    svc = KernelSVC(kernel="chi2", gamma=0.5).fit(hist, y)
    sk = SVC(kernel="precomputed").fit(chi2_kernel(hist, gamma=0.5), y)
    np.testing.assert_allclose(
        svc.decision_function(hist), sk.decision_function(chi2_kernel(hist, gamma=0.5)), 1e-8
    )
    assert KernelPCA(kernel="chi2").fit(hist).gamma_ == 1.0
