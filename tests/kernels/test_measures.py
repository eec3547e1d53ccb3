"""Semigroup kernels on measures (course part 1, "Example 2"; Cuturi, Fukumizu & Vert 2005):
the IGV kernel on bags against a direct NumPy determinant, its kernelised form, the entropy
kernel against SciPy's entropy."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.stats import entropy

from kernelkit import KernelRidge
from kernelkit.data import BagBatch, detect_input_kind
from kernelkit.io import load, save
from kernelkit.kernels import EntropyKernel, Gaussian, InverseGeneralizedVariance, Linear
from kernelkit.testing import check_kernel
from kernelkit.utils._errors import InputError
from kernelkit.utils._kinds import InputKind


def _bags(seed: int, n: int, d: int = 3) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(int(rng.integers(2, 9)), d)) * rng.uniform(0.5, 2) for _ in range(n)]


def _igv_oracle(a: np.ndarray, b: np.ndarray, lam: float) -> float:
    """``1 / det(Sigma + lam I)`` of the mixture: each point weighted 1/(2 p) of its bag."""
    Z = np.vstack([a, b])
    w = np.concatenate([np.full(len(a), 0.5 / len(a)), np.full(len(b), 0.5 / len(b))])
    cov = np.cov(Z.T, aweights=w, bias=True)
    return 1.0 / np.linalg.det(cov + lam * np.eye(Z.shape[1]))


def test_igv_closed_form_equals_numpy_determinant():
    X, Y = _bags(0, 6), _bags(1, 4)
    for lam in (0.05, 1.0):
        K = InverseGeneralizedVariance(lam=lam)(X, Y).numpy()
        expected = np.array([[_igv_oracle(a, b, lam) for b in Y] for a in X])
        np.testing.assert_allclose(K, expected, rtol=1e-8, atol=0)
        diag = InverseGeneralizedVariance(lam=lam).diag(X).numpy()
        np.testing.assert_allclose(diag, [_igv_oracle(a, a, lam) for a in X], rtol=1e-8)


def test_kernelised_igv_with_linear_base_is_lam_power_d_times_closed_form():
    X = _bags(2, 7, d=4)
    lam = 0.3
    closed = InverseGeneralizedVariance(lam=lam)(X).numpy()
    kernelised = InverseGeneralizedVariance(lam=lam, kernel=Linear())(X).numpy()
    ratio = kernelised / closed
    np.testing.assert_allclose(ratio, lam**4, rtol=1e-8)  # one constant for all pairs


def test_kernelised_igv_with_gaussian_base_is_psd_and_passes_check_kernel():
    X, Y = _bags(3, 12, d=2), _bags(4, 3, d=2)
    k = InverseGeneralizedVariance(lam=0.01, kernel=Gaussian(sigma=0.8))
    K = k(X).numpy()
    eig = np.linalg.eigvalsh(K)
    assert eig.min() >= -1e-10 * eig.max()
    check_kernel(k, X, Y)
    check_kernel(InverseGeneralizedVariance(lam=0.2), X, Y)


def test_bags_are_detected_and_fit_an_estimator(tmp_path):
    X = _bags(5, 20, d=2)
    assert detect_input_kind(X) is InputKind.BAG
    y = np.array([np.linalg.det(np.cov(b.T) + np.eye(2)) for b in X])
    model = KernelRidge(lam=1e-3).fit(X, y)
    assert isinstance(model.kernel_, InverseGeneralizedVariance)
    assert isinstance(model.X_fit_, BagBatch)
    assert model.predict(X[:3]).shape == (3,)
    save(model, tmp_path / "igv")  # BagBatch is a registered data holder of kernelkit.io
    np.testing.assert_array_equal(load(tmp_path / "igv").predict(X), model.predict(X))


def test_bag_errors_name_the_bag():
    k = InverseGeneralizedVariance(lam=0.1)
    with pytest.raises(InputError, match=r"X\[1\]: expected a 2-D array"):
        k([np.zeros((3, 2)), np.zeros(3)])
    with pytest.raises(InputError, match=r"X\[0\]: expected a bag of at least one point"):
        k([np.zeros((0, 2))])
    with pytest.raises(InputError, match="bags of one dimension"):
        k([np.zeros((3, 2)), np.zeros((3, 4))])
    with pytest.raises(InputError, match="Y: expected bags of 2-dimensional"):
        k([np.ones((3, 2))], [np.ones((3, 3))])
    with pytest.raises(InputError, match="lam"):
        InverseGeneralizedVariance(lam=0.0)
    with pytest.raises(InputError, match="kernel: expected a base kernel on vectors"):
        InverseGeneralizedVariance(lam=1.0, kernel=InverseGeneralizedVariance())


def test_entropy_kernel_equals_scipy_entropy_loop():
    rng = np.random.default_rng(6)
    X = rng.dirichlet(np.ones(6), size=8)
    Y = rng.gamma(1.0, size=(5, 6))  # unnormalised: read as densities after normalisation
    K = EntropyKernel(beta=1.5)(torch.as_tensor(X), torch.as_tensor(Y)).numpy()
    Yn = Y / Y.sum(1, keepdims=True)
    expected = np.array([[np.exp(-1.5 * entropy((x + y) / 2)) for y in Yn] for x in X])
    np.testing.assert_allclose(K, expected, rtol=1e-12)
    check_kernel(EntropyKernel(beta=0.5), torch.as_tensor(X), torch.as_tensor(Yn))
    with pytest.raises(InputError, match="non-negative"):
        EntropyKernel()(torch.as_tensor(-X))


def test_bag_fisher_vector_is_the_gradient_of_the_bag_mean_loglik():
    from scipy.special import logsumexp
    from sklearn.mixture import GaussianMixture

    from kernelkit.kernels import BagFisherVector

    rng = np.random.default_rng(7)
    gmm = GaussianMixture(2, covariance_type="diag", random_state=0).fit(rng.normal(size=(80, 2)))
    pi, mu, sd = gmm.weights_, gmm.means_, np.sqrt(gmm.covariances_)

    def mean_loglik(bag, m, s):
        comp = -0.5 * (((bag[:, None] - m) / s) ** 2 + np.log(2 * np.pi * s**2)).sum(-1)
        return logsumexp(comp + np.log(pi), axis=1).mean()

    def fd_vector(bag, h=1e-6):  # central differences in mu and sd, Fisher-vector scaling
        g_mu, g_sd = np.zeros_like(mu), np.zeros_like(sd)
        for idx in np.ndindex(mu.shape):
            e = np.zeros_like(mu)
            e[idx] = h
            g_mu[idx] = (mean_loglik(bag, mu + e, sd) - mean_loglik(bag, mu - e, sd)) / (2 * h)
            g_sd[idx] = (mean_loglik(bag, mu, sd + e) - mean_loglik(bag, mu, sd - e)) / (2 * h)
        return np.r_[
            (g_mu * sd / np.sqrt(pi)[:, None]).ravel(),
            (g_sd * sd / np.sqrt(2 * pi)[:, None]).ravel(),
        ]

    X, Y = _bags(8, 5, d=2), _bags(9, 3, d=2)
    kernel = BagFisherVector.from_mixture(gmm)
    FX, FY = np.array([fd_vector(b) for b in X]), np.array([fd_vector(b) for b in Y])
    np.testing.assert_allclose(kernel(X, Y).numpy(), FX @ FY.T, atol=1e-6)
    check_kernel(kernel, X, Y)
