"""Estimators on structured input (strings) through their kernel, against scikit-learn on a
brute-force Gram (k-mer counts with collections.Counter)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from sklearn.decomposition import KernelPCA as SkKernelPCA
from sklearn.kernel_ridge import KernelRidge as SkKernelRidge
from sklearn.svm import SVC

from kernelkit import KernelPCA, KernelRidge, KernelSVC
from kernelkit.kernels._strings import Spectrum
from kernelkit.utils._errors import InputError


def _spectrum_gram(A: list[str], B: list[str], k: int) -> np.ndarray:
    def counts(s):
        return Counter(s[i : i + k] for i in range(len(s) - k + 1))

    ca, cb = [counts(s) for s in A], [counts(s) for s in B]
    return np.array([[sum(a[u] * b[u] for u in a) for b in cb] for a in ca], dtype=float)


@pytest.fixture
def strings():
    rng = np.random.default_rng(9)
    letters = np.array(list("ACGT"))

    def draw(n):
        return ["".join(rng.choice(letters, size=int(rng.integers(8, 20)))) for _ in range(n)]

    X, Xt = draw(40), draw(9)
    y = np.array([s.count("A") - s.count("T") for s in X], dtype=float)
    return X, Xt, y


def test_ridge_on_strings(strings):
    X, Xt, y = strings
    lam = 1e-2
    ours = KernelRidge(Spectrum(k=2), lam=lam).fit(X, y)
    ref = SkKernelRidge(alpha=len(X) * lam, kernel="precomputed").fit(_spectrum_gram(X, X, 2), y)
    pred_ref = ref.predict(_spectrum_gram(Xt, X, 2))
    assert np.abs(ours.predict(Xt) - pred_ref).max() < 1e-8 * np.abs(pred_ref).max()
    assert not hasattr(ours, "n_features_in_")
    assert ours.__sklearn_tags__().input_tags.string


def test_pca_and_svc_on_strings(strings):
    X, Xt, y = strings
    K, Kt = _spectrum_gram(X, X, 3), _spectrum_gram(Xt, X, 3)
    Z = KernelPCA(Spectrum(k=3), n_components=3).fit(X).transform(Xt)
    Z_ref = SkKernelPCA(3, kernel="precomputed", eigen_solver="dense").fit(K).transform(Kt)
    assert np.allclose(np.abs(Z), np.abs(Z_ref), atol=1e-8)
    labels = (y > 0).astype(int)
    dec = KernelSVC(Spectrum(k=3), C=0.5).fit(X, labels).decision_function(Xt)
    dec_ref = SVC(kernel="precomputed", C=0.5).fit(K, labels).decision_function(Kt)
    assert np.abs(dec - dec_ref).max() < 1e-8


def test_structured_input_errors(strings):
    X, _, y = strings
    with pytest.raises(InputError, match="0"):
        KernelRidge(Spectrum(k=2)).fit([], [])
    with pytest.raises(InputError, match="y: expected 40"):
        KernelRidge(Spectrum(k=2)).fit(X, y[:5])
    with pytest.raises(InputError, match="fit_inverse_transform"):
        KernelPCA(Spectrum(k=2), fit_inverse_transform=True).fit(X)
