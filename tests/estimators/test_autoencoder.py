"""KernelAutoencoder: scikit-learn conformance, the K2AE test distortion (appendix B.7) and
bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.utils.estimator_checks import parametrize_with_checks

from kernelkit.estimators._autoencoder import KernelAutoencoder
from kernelkit.kernels import Gaussian, Linear, Precomputed, PrecomputedBatch
from kernelkit.utils._errors import ConvergenceWarning, InputError, NotPSDError


@pytest.fixture(autouse=True)
def _one_thread():
    """These problems are tiny: one thread avoids OpenMP spin contention on a shared CPU."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _X(n=40, d=4, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)) * np.linspace(2.0, 0.5, d)


@parametrize_with_checks([KernelAutoencoder(dims=(2,), max_iter=5)])
def test_sklearn_conformance(estimator, check):
    check(estimator)


def test_transform_on_training_set_returns_training_codes():
    X = _X()
    for kw in ({}, {"input_kernel": Linear()}, {"landmarks": 15}):
        ae = KernelAutoencoder(dims=(5, 2, 5), max_iter=5, random_state=0, **kw).fit(X)
        assert ae.code_layer_ == 1
        np.testing.assert_allclose(ae.transform(X), ae.codes_, atol=1e-12)
        assert ae.codes_.shape == (40, 2)


def test_finite_reconstruction_error_and_inverse_transform_agree():
    X = _X()
    with pytest.warns(ConvergenceWarning, match="max_iter=30 iterations"):
        ae = KernelAutoencoder(dims=(2,), max_iter=30).fit(X)
    rec = ae.inverse_transform(ae.transform(X))
    np.testing.assert_allclose(ae.reconstruction_error(X), ((X - rec) ** 2).sum(1), rtol=1e-10)
    assert ae.score(X) == pytest.approx(-((X - rec) ** 2).sum(1).mean())
    # max_iter counts L-BFGS iterations; the history has one entry per objective evaluation
    assert ae.history_[-1] <= ae.history_[0] and len(ae.history_) == ae.n_eval_
    assert ae.n_iter_ == 30 and 30 <= ae.n_eval_ <= int(1.25 * 30) + 1


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_linear_kae_from_random_start_reaches_the_pca_optimum(seed):
    """Linear layers, lam = 0: objective (4) is the error of a rank-2 linear map, whose minimum
    is the sum of the trailing eigenvalues of X^T X / n (Eckart-Young); a linear autoencoder
    has no other local minima (Baldi & Hornik 1989), so L-BFGS from a random start gets there.
    """
    X = _X()
    ae = KernelAutoencoder(
        dims=(2,),
        kernels=Linear(),
        lam=0.0,
        init="random",
        max_iter=500,
        tol=1e-15,
        random_state=seed,
    ).fit(X)
    optimum = np.linalg.eigvalsh(X.T @ X / len(X))[:2].sum()
    assert ae.history_[0] > 1.05 * optimum  # the random start is far from it
    assert ae.objective_ == pytest.approx(optimum, rel=1e-10)
    assert np.mean(ae.reconstruction_error(X)) == pytest.approx(optimum, rel=1e-10)


def test_k2ae_test_distortion_is_appendix_b7():
    """B.7: ||x - f(x)||^2 = k(x,x) + k_x^T N k_x - 2 k_x^T W^{-1} K_in(X, x)."""
    X, Xnew = _X(seed=0), _X(n=7, seed=1)
    n, lam = X.shape[0], 1e-2
    ae = KernelAutoencoder(
        dims=(3,),
        input_kernel=Gaussian(2.0),
        kernels=[Gaussian(1.5), Gaussian(1.0)],
        lam=lam,
        max_iter=20,
    ).fit(X)
    k_in = Gaussian(2.0)
    K_in = k_in(X).numpy()
    Z = ae.transform(X)
    k_L = Gaussian(1.0)
    K_L = k_L(Z).numpy()
    W = K_L + n * lam * np.eye(n)
    Winv = np.linalg.inv(W)
    N = Winv @ K_in @ Winv  # eq. 54
    kx = k_L(ae.transform(Xnew), Z).numpy()
    cross = k_in(X, Xnew).numpy()
    b7 = 1.0 + np.einsum("ai,ij,aj->a", kx, N, kx) - 2 * np.einsum("ai,ij,ja->a", kx, Winv, cross)
    np.testing.assert_allclose(ae.reconstruction_error(Xnew), b7, rtol=1e-6, atol=1e-9)
    # on the training points: (n lam)^2 [N]_ii, the residual of eq. 13
    np.testing.assert_allclose(
        ae.reconstruction_error(X), (n * lam) ** 2 * np.diag(N), rtol=1e-6, atol=1e-10
    )


def test_k2ae_linear_input_reconstructs_explicit_features():
    """A linear input kernel: the RKHS error is the Euclidean error of x_hat = K_L W^{-1} X."""
    X = _X()
    n, lam = X.shape[0], 1e-2
    ae = KernelAutoencoder(
        dims=(2,),
        input_kernel=Linear(),
        kernels=[Gaussian(3.0), Gaussian(1.0)],
        lam=lam,
        max_iter=20,
    ).fit(X)
    K_L = Gaussian(1.0)(ae.codes_).numpy()
    X_hat = K_L @ np.linalg.solve(K_L + n * lam * np.eye(n), X)
    np.testing.assert_allclose(ae.reconstruction_error(X), ((X - X_hat) ** 2).sum(1), rtol=1e-6)


def test_precomputed_equals_kernel_input():
    X, Xnew = _X(), _X(n=5, seed=3)
    kw = {"dims": (2,), "kernels": [Gaussian(3.0), Gaussian(1.0)], "max_iter": 15}
    a = KernelAutoencoder(input_kernel=Linear(), **kw).fit(X)
    b = KernelAutoencoder(input_kernel=Precomputed(), **kw).fit(X @ X.T)
    np.testing.assert_allclose(a.codes_, b.codes_, atol=1e-8)
    new = PrecomputedBatch(torch.as_tensor(Xnew @ X.T), diag=torch.as_tensor((Xnew**2).sum(1)))
    np.testing.assert_allclose(a.transform(Xnew), b.transform(new), atol=1e-8)
    np.testing.assert_allclose(a.reconstruction_error(Xnew), b.reconstruction_error(new), rtol=1e-6)


@pytest.mark.parametrize("method", ["kmeans++", "uniform", "greedy"])
def test_landmark_k2ae_reconstruction_error_equals_brute_force(method):
    """Landmark mode is ridge regression on the landmark representers with outputs in the span
    of the landmarks' features, P phi(x_i): with the codes Z, C = k_L(Z, Z_m),
    M = C^T C + n lam k_L(Z_m, Z_m) and a(z) = C M^{-1} c(z), the reconstruction of x is
    P f(z) = sum_j beta_j phi(x_mj), beta = K_mm^{-1} K_in(X_m, X) a(z), and
    ||phi(x) - P f(z)||^2 = k(x, x) - 2 beta^T K_in(X_m, x) + beta^T K_mm beta
    (NumPy, from the full input Gram, no Nyström factor).

    15 landmarks: the oracle solves ``M`` directly, so the landmark codes must keep it well
    conditioned whichever subset is drawn (with 40 uniform landmarks of 120 points, near-equal
    codes give cond(M) up to 1e16 and both sides then differ by up to 7e-5 from the
    high-precision solution; with 15, cond(M) <= 5e10 and the two agree to 3e-9 over 12
    seeds of each method)."""
    X, Xnew = _X(n=120, d=3, seed=4), _X(n=9, d=3, seed=5)
    n, lam, m = len(X), 1e-3, 15
    k_in, k_L = Gaussian(2.0), Gaussian(1.0)
    lm = KernelAutoencoder(
        dims=(2,),
        input_kernel=k_in,
        kernels=[Gaussian(1.5), k_L],
        lam=lam,
        max_iter=40,
        n_centers=m,
        centers=method,
        random_state=0,
    ).fit(X)
    idx = lm.landmark_indices_
    assert len(idx) == m and len(np.unique(idx)) == m
    Z = lm.codes_
    np.testing.assert_allclose(lm.supports_[-1].numpy(), Z[idx], rtol=0, atol=1e-12)
    C = k_L(Z, Z[idx]).numpy()
    M = C.T @ C + n * lam * k_L(Z[idx]).numpy()
    K_mm, K_mX = k_in(X[idx]).numpy(), k_in(X[idx], X).numpy()
    for data in (X, Xnew):
        A = C @ np.linalg.solve(M, k_L(lm.transform(data), Z[idx]).numpy().T)  # (n, b)
        beta = np.linalg.solve(K_mm, K_mX @ A)
        cross = k_in(X[idx], data).numpy()
        oracle = 1.0 - 2 * (beta * cross).sum(0) + (beta * (K_mm @ beta)).sum(0)
        np.testing.assert_allclose(lm.reconstruction_error(data), oracle, rtol=1e-7, atol=1e-10)


def test_float32_stays_float32():
    X = _X().astype(np.float32)
    ae = KernelAutoencoder(dims=(2,), max_iter=10).fit(X)
    assert ae.transform(X).dtype == np.float32
    t = torch.as_tensor(X)
    assert KernelAutoencoder(dims=(2,), max_iter=5).fit(t).transform(t).dtype == torch.float32


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"dims": ()}, "dims"),
        ({"dims": (0,)}, "dims"),
        ({"dims": ("a",)}, "dims"),
        ({"lam": -1.0}, "lam"),
        ({"lam": (1e-3,)}, "lam"),
        ({"lam": (1e-3, 0.0)}, "lam"),
        ({"kernels": [Gaussian()]}, "kernels"),
        ({"kernels": "rbf"}, "kernels"),
        ({"optimizer": "sgd"}, "optimizer"),
        ({"init": "pca"}, "init"),
        ({"code_layer": 3}, "code_layer"),
        ({"input_kernel": Linear(), "closed_form": False}, "closed_form"),
        ({"input_kernel": Linear(), "kernels": [Linear() * 2.0, Gaussian()]}, "kernels"),
    ],
)
def test_bad_parameters_are_named(params, match):
    with pytest.raises(InputError, match=match):
        KernelAutoencoder(**params).fit(_X())


def test_bad_input_gram():
    X = _X()
    K = X @ X.T
    asym = K.copy()
    asym[0, 1] += 1.0
    with pytest.raises(InputError, match="symmetric"):
        KernelAutoencoder(input_kernel=Precomputed()).fit(asym)
    with pytest.raises(NotPSDError, match="positive semi-definite"):
        KernelAutoencoder(input_kernel=Precomputed()).fit(K - 5 * np.eye(40) * K.diagonal().max())
    with pytest.raises(InputError, match="X"):
        KernelAutoencoder().fit(np.full((5, 2), np.nan))


def test_k2ae_has_no_inverse_transform():
    ae = KernelAutoencoder(dims=(2,), input_kernel=Linear(), max_iter=5).fit(_X())
    with pytest.raises(InputError, match="inverse_transform"):
        ae.inverse_transform(ae.codes_)
