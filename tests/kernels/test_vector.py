"""Vector kernels against scikit-learn, SciPy and element-wise definitions (issue 2)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import special
from sklearn.base import clone
from sklearn.gaussian_process.kernels import Matern as SkMatern
from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel, rbf_kernel

from kernelkit.kernels import (
    Constant,
    FeatureSpaceGaussian,
    Gaussian,
    Laplacian,
    Linear,
    Matern,
    Polynomial,
    Precomputed,
    PrecomputedBatch,
    TensorMatern,
)
from kernelkit.utils._errors import InputError, NotPSDError

RNG = np.random.default_rng(0)
X = RNG.normal(size=(40, 5))
Y = RNG.normal(size=(25, 5))


def rel_err(a, b) -> float:
    a, b = np.asarray(a), np.asarray(b)
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-300))


@pytest.mark.parametrize("sigma", [0.3, 1.0, 4.0])
def test_gaussian_equals_sklearn_rbf(sigma):
    gamma = 1.0 / (2 * sigma**2)
    assert rel_err(Gaussian(sigma)(X, Y), rbf_kernel(X, Y, gamma=gamma)) < 1e-10
    assert rel_err(Gaussian(sigma)(X), rbf_kernel(X, gamma=gamma)) < 1e-10


def test_linear_and_polynomial_equal_sklearn():
    assert rel_err(Linear()(X, Y), linear_kernel(X, Y)) < 1e-10
    for degree, scale, offset in [(2, 1.0, 1.0), (3, 0.5, 2.0), (1, 2.0, 0.0)]:
        expected = polynomial_kernel(X, Y, degree=degree, gamma=scale, coef0=offset)
        assert rel_err(Polynomial(degree, scale, offset)(X, Y), expected) < 1e-10


@pytest.mark.parametrize("nu", [0.5, 1.5, 2.5, 0.3, 1.0, 3.7])
def test_matern_equals_sklearn_gp_matern(nu):
    sk = SkMatern(length_scale=0.9, nu=nu)
    assert rel_err(Matern(nu, 0.9)(X, Y), sk(X, Y)) < 1e-10
    assert rel_err(Matern(nu, 0.9)(X), sk(X)) < 1e-10


def test_laplacian_is_matern_half_and_euclidean_exponential():
    d = np.sqrt(((X[:, None, :] - Y[None, :, :]) ** 2).sum(-1))
    assert rel_err(Laplacian(1.7)(X, Y), np.exp(-d / 1.7)) < 1e-10
    assert rel_err(Laplacian(1.7)(X, Y), Matern(0.5, 1.7)(X, Y)) < 1e-10


@pytest.mark.parametrize("s", [1.0, 2.0, 1.3])
def test_tensor_matern_equals_bruteforce_bessel_product(s):
    sigma, nu = 0.8, s - 0.5
    x, y = X[:6, :3], Y[:7, :3]
    expected = np.ones((6, 7))
    for i in range(6):
        for j in range(7):
            for d in range(3):
                r = abs(x[i, d] - y[j, d]) / sigma
                # paper's kappa_nu(r) r^nu, divided by its limit at 0: Gamma(nu) 2^(nu-1)
                value = special.kv(nu, r) * r**nu / (special.gamma(nu) * 2 ** (nu - 1))
                expected[i, j] *= value
    assert rel_err(TensorMatern(s, sigma)(x, y), expected) < 1e-10
    assert torch.allclose(TensorMatern(s, sigma).diag(x), torch.ones(6, dtype=torch.float64))


def test_algebra_equals_elementwise_definitions():
    g, lin, poly = Gaussian(1.3), Linear(), Polynomial(2)
    G, L, P = (k(X, Y).numpy() for k in (g, lin, poly))
    assert rel_err((g + lin)(X, Y), G + L) < 1e-12
    assert rel_err((g * poly)(X, Y), G * P) < 1e-12
    assert rel_err((2.5 * g)(X, Y), 2.5 * G) < 1e-12
    assert rel_err((g * 2.5)(X, Y), 2.5 * G) < 1e-12
    assert rel_err((lin**3)(X, Y), L**3) < 1e-12
    assert rel_err((g + 1.0)(X, Y), G + 1.0) < 1e-12
    assert sum([g, lin]) is not None and rel_err(sum([g, lin])(X, Y), G + L) < 1e-12
    dx, dy = poly.diag(X).numpy(), poly.diag(Y).numpy()
    assert rel_err(poly.normalized()(X, Y), P / np.sqrt(np.outer(dx, dy))) < 1e-12
    assert rel_err(Constant(0.7)(X, Y), np.full((40, 25), 0.7)) == 0


def test_feature_space_gaussian_from_gram_alone():
    """Gaussian on the RKHS of the linear kernel equals the Euclidean Gaussian."""
    K_train = Linear()(X).numpy()
    K_test = Linear()(Y, X).numpy()
    k = FeatureSpaceGaussian(Precomputed(), sigma=1.5)
    assert rel_err(k(K_train), rbf_kernel(X, gamma=1 / (2 * 1.5**2))) < 1e-10
    test = PrecomputedBatch(torch.as_tensor(K_test), diag=torch.as_tensor((Y * Y).sum(1)))
    assert rel_err(k(test, K_train), rbf_kernel(Y, X, gamma=1 / (2 * 1.5**2))) < 1e-10
    with pytest.raises(InputError, match="diagonal"):
        k(K_test, K_train)


def test_quiz_kernels_psd_checker():
    """Course part 1, quiz: log(1 + x x') on {1, 100} and max(x, x') on {1, 2} are not p.d."""
    pts = np.array([1.0, 100.0])
    with pytest.raises(NotPSDError, match=r"-1\.33"):
        Precomputed()(np.log1p(np.outer(pts, pts)))
    pts = np.array([1.0, 2.0])
    with pytest.raises(NotPSDError, match=r"-0\.562"):
        Precomputed()(np.maximum.outer(pts, pts))
    # 2^(x x') is p.d. but huge: the relative tolerance accepts it
    pts = np.arange(1.0, 6.0)
    K = Precomputed()(2.0 ** np.outer(pts, pts))
    assert K.shape == (5, 5)


def test_precomputed_rejects_non_square_and_asymmetric():
    with pytest.raises(InputError, match="square"):
        Precomputed()(np.ones((3, 4)))
    A = np.eye(3)
    A[0, 1] = 0.5
    with pytest.raises(InputError, match="symmetric"):
        Precomputed()(A)


@pytest.mark.parametrize(
    "make, name",
    [
        (lambda: Gaussian(sigma=-1.0), "sigma"),
        (lambda: Gaussian(sigma=0.0), "sigma"),
        (lambda: Matern(nu=0.0), "nu"),
        (lambda: Polynomial(degree=1.5), "degree"),
        (lambda: TensorMatern(s=0.5), "s"),
        (lambda: 2 * Linear() * -1.0, "scale"),
        (lambda: Linear() ** 0.5, "exponent"),
    ],
)
def test_bad_hyperparameters_are_named(make, name):
    with pytest.raises(InputError, match=name):
        make()


def test_bad_inputs_are_named():
    with pytest.raises(InputError, match="finite"):
        Gaussian()(np.array([[0.0, np.nan]]))
    with pytest.raises(InputError, match="at least 1 sample"):
        Gaussian()(np.zeros((0, 3)))
    with pytest.raises(InputError, match="2-D"):
        Gaussian()(np.zeros(3))
    with pytest.raises(InputError, match="features"):
        Gaussian()(X, Y[:, :2])
    with pytest.raises(InputError, match="numeric"):
        Gaussian()(np.array([["a", "b"]]))


def test_params_clone_and_set_params_revalidate():
    k = Gaussian(2.0) + 0.5 * Matern(2.5, 1.0)
    params = k.get_params()
    assert params["k1__sigma"] == 2.0 and params["k2__kernel__nu"] == 2.5
    k2 = clone(k)
    assert k2 is not k and rel_err(k2(X, Y), k(X, Y)) == 0
    k2.set_params(k1__sigma=0.5)
    assert k2.k1.sigma == 0.5 and k.k1.sigma == 2.0
    with pytest.raises(InputError, match="sigma"):
        k2.set_params(k1__sigma=-1.0)
    with pytest.raises(InputError, match="no parameter"):
        Gaussian().set_params(gamma=1.0)


def test_dtype_and_device_follow_input():
    x32 = torch.as_tensor(X, dtype=torch.float32)
    assert Gaussian()(x32).dtype == torch.float32
    assert Gaussian()(X).dtype == torch.float64
    assert Gaussian()(x32, Y).dtype == torch.float32


@pytest.mark.parametrize(
    "kernel",
    [
        Gaussian(0.9),
        Laplacian(1.1),
        Matern(0.7, 0.8),
        Matern(2.5),
        Polynomial(3),
        TensorMatern(1.5, 0.7),
    ],
)
def test_gradients_match_finite_differences(kernel):
    x = torch.tensor(X[:6, :3], requires_grad=True)
    y = torch.tensor(Y[:5, :3])
    assert torch.autograd.gradcheck(lambda a: kernel(a, y), (x,))


def test_gaussian_geometry_and_distance_to_set():
    """Course part 1, section 5, test case 4: distance to S = {2, 3} (sigma = 1)."""
    S = np.array([[2.0], [3.0]])
    expected = {0.0: 1.287176, 2.0: 0.443548, 2.5: 0.195631, 4.0: 1.030242}
    k = Gaussian(1.0)
    mean_kss = float(k(S).mean())
    for x, dist in expected.items():
        kx = k(np.array([[x]]), S).numpy()
        d2 = 1.0 - 2.0 * kx.mean() + mean_kss
        assert math.isclose(math.sqrt(d2), dist, abs_tol=1e-6)


def test_gaussian_width_that_underflows_is_a_named_spec_error():
    from kernelkit.kernels._specs import KernelSpecError, build_kernel

    with pytest.raises(KernelSpecError, match=r"sigma: expected a width whose 1 / \(2 sigma\^2\)"):
        build_kernel("gaussian:sigma=1e-300", "vector")
    k = Gaussian(sigma=1e-150)  # still representable: distinct points at kernel 0
    K = k(torch.tensor([[0.0], [1.0]], dtype=torch.float64))
    assert torch.equal(K, torch.eye(2, dtype=torch.float64))


def test_gaussian_width_that_overflows_is_a_named_error_not_an_overflow():
    from kernelkit.kernels import FeatureSpaceGaussian, Linear
    from kernelkit.kernels._specs import KernelSpecError, build_kernel

    for make in (Gaussian, lambda s: FeatureSpaceGaussian(Linear(), sigma=s)):
        with pytest.raises(InputError, match=r"sigma: expected a width whose sigma\^2 is a finite"):
            make(1e300)
    with pytest.raises(KernelSpecError, match=r"sigma <= 1e\+154\), got 1e\+300"):
        build_kernel("gaussian:sigma=1e300", "vector")
    K = Gaussian(sigma=1e154)(torch.tensor([[0.0], [1.0]], dtype=torch.float64))
    assert torch.equal(K, torch.ones(2, 2, dtype=torch.float64))
