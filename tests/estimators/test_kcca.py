"""KernelCCA against the generalised eigenproblem (SciPy) and scikit-learn's CCA."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl
from sklearn.cross_decomposition import CCA

from kernelkit import KernelCCA
from kernelkit.gram import center_gram
from kernelkit.io import load, save
from kernelkit.kernels import Gaussian, Linear, Spectrum
from kernelkit.utils._errors import InputError, ParameterError


def two_views(n=60, seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, 2))
    X = np.c_[Z[:, 0], rng.standard_normal((n, 2))] + 0.3 * rng.standard_normal((n, 3))
    Y = np.c_[Z[:, 0] + Z[:, 1], rng.standard_normal(n)] + 0.3 * rng.standard_normal((n, 2))
    return X, Y


@pytest.mark.parametrize("tau", [0.05, 0.5, 1.0])
def test_equals_the_generalised_eigenproblem(tau, one_torch_thread):
    """SciPy's generalised eigh of the course's block problem, on the complement of the
    constant vector (the null space of the centred Grams)."""
    X, Y = two_views()
    n = len(X)
    est = KernelCCA((Gaussian(1.0), Gaussian(1.5)), n_components=3, tau=tau).fit(X, Y)
    Ka = center_gram(Gaussian(1.0)(X)).numpy()
    Kb = center_gram(Gaussian(1.5)(Y)).numpy()
    A = np.block([[np.zeros((n, n)), Ka @ Kb], [Kb @ Ka, np.zeros((n, n))]])
    B = sl.block_diag((1 - tau) * Ka @ Ka + tau * Ka, (1 - tau) * Kb @ Kb + tau * Kb)
    Q = sl.block_diag(*[sl.null_space(np.ones((1, n)))] * 2)
    rho = sl.eigh(Q.T @ A @ Q, Q.T @ B @ Q, eigvals_only=True)[::-1]
    np.testing.assert_allclose(est.rho_, rho[:3], rtol=0, atol=1e-8)
    alpha, beta = np.asarray(est.alpha_), np.asarray(est.beta_)
    # the constraints and the eigen-equation hold for the returned pairs
    Ba = (1 - tau) * Ka @ Ka + tau * Ka
    np.testing.assert_allclose(np.diag(alpha.T @ Ba @ alpha), 1.0, atol=1e-8)
    np.testing.assert_allclose(alpha.T @ Ka @ Kb @ beta, np.diag(est.rho_), atol=1e-8)
    Zx, Zy = est.transform(X, Y)
    np.testing.assert_allclose(Zx, Ka @ alpha, atol=1e-10)
    corr = [np.corrcoef(Zx[:, k], Zy[:, k])[0, 1] for k in range(3)]
    np.testing.assert_allclose(est.correlations_, corr, atol=1e-10)


def test_linear_kernels_with_small_tau_equal_sklearn_cca(one_torch_thread):
    X, Y = two_views(80, seed=1)
    est = KernelCCA((Linear(), Linear()), n_components=2, tau=1e-10).fit(X, Y)
    a, b = CCA(2, max_iter=5000, tol=1e-12).fit(X, Y).transform(X, Y)
    ref = [np.corrcoef(a[:, k], b[:, k])[0, 1] for k in range(2)]
    np.testing.assert_allclose(est.correlations_, ref, atol=1e-6)
    np.testing.assert_allclose(est.rho_, ref, atol=1e-6)
    # the projections span the same directions as CCA's scores (up to sign and scale)
    Zx = est.transform(X)
    for k in range(2):
        assert abs(np.corrcoef(Zx[:, k], a[:, k])[0, 1]) > 1 - 1e-6


def test_views_of_different_kinds_and_roundtrip(tmp_path, one_torch_thread):
    rng = np.random.default_rng(2)
    seqs = ["".join(rng.choice(list("ACGT"), size=15)) for _ in range(30)]
    props = np.array([[s.count("G") + s.count("C"), s.count("A")] for s in seqs], dtype=float)
    est = KernelCCA((Spectrum(1), Gaussian(2.0)), n_components=2, tau=0.1).fit(seqs, props)
    assert est.correlations_[0] > 0.95  # base composition is shared by both views
    path = tmp_path / "kcca.kk"
    save(est, path)
    again = load(path)
    for a, b in zip(again.transform(seqs, props), est.transform(seqs, props), strict=True):
        np.testing.assert_array_equal(a, b)


def test_named_errors():
    X, Y = two_views(10)
    with pytest.raises(ParameterError, match=r"^tau: "):
        KernelCCA(tau=-0.1).fit(X, Y)
    with pytest.raises(ParameterError, match=r"^tau: "):
        KernelCCA(tau=1.5).fit(X, Y)
    with pytest.raises(InputError, match="n_components: expected at most the number of samples"):
        KernelCCA(n_components=11).fit(X, Y)
    with pytest.raises(InputError, match="expected a pair"):
        KernelCCA(kernels=(Linear(),)).fit(X, Y)
    with pytest.raises(InputError, match="Y: expected 10 samples"):
        KernelCCA().fit(X, Y[:5])
    est = KernelCCA().fit(X, Y)
    with pytest.raises(InputError, match="Y: expected 2 features"):
        est.transform(X, X)
