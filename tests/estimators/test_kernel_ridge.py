"""KernelRidge against scikit-learn's KernelRidge(alpha=n*lam) and the KRR identities of
course part 1, section 3.1 / test case 5.9."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest
import torch
from sklearn.kernel_ridge import KernelRidge as SkKernelRidge
from sklearn.metrics import r2_score
from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel, rbf_kernel

from kernelkit import KernelRidge
from kernelkit.kernels import Gaussian, Linear, Polynomial, Precomputed
from kernelkit.models._ridge import kernel_ridge_coefficients


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 4))
    y = np.sin(X[:, 0]) + 0.3 * X[:, 1] ** 2 + 0.05 * rng.standard_normal(60)
    Xt = rng.standard_normal((15, 4))
    return X, y, Xt


def _rel(a, b):
    return np.abs(np.asarray(a) - np.asarray(b)).max() / np.abs(np.asarray(b)).max()


@pytest.mark.parametrize("lam", [1e-4, 1e-2, 1.0])
def test_gaussian_matches_sklearn(data, lam):
    X, y, Xt = data
    sigma = 1.3
    ours = KernelRidge(Gaussian(sigma), lam=lam).fit(X, y)
    ref = SkKernelRidge(alpha=len(X) * lam, kernel="rbf", gamma=1 / (2 * sigma**2)).fit(X, y)
    assert _rel(ours.predict(Xt), ref.predict(Xt)) < 1e-8
    assert _rel(ours.dual_coef_, ref.dual_coef_) < 1e-8


@pytest.mark.parametrize(
    ("kernel", "sk_kwargs"),
    [
        (Linear(), {"kernel": "linear"}),
        (
            Polynomial(degree=3, scale=0.5, offset=2.0),
            {"kernel": "poly", "degree": 3, "gamma": 0.5, "coef0": 2.0},
        ),
    ],
)
def test_other_kernels_match_sklearn(data, kernel, sk_kwargs):
    X, y, Xt = data
    lam = 1e-2
    ours = KernelRidge(kernel, lam=lam).fit(X, y)
    ref = SkKernelRidge(alpha=len(X) * lam, **sk_kwargs).fit(X, y)
    assert _rel(ours.predict(Xt), ref.predict(Xt)) < 1e-8


def test_precomputed_matches_sklearn(data):
    X, y, Xt = data
    lam, gamma = 1e-3, 0.3
    K, Kt = rbf_kernel(X, gamma=gamma), rbf_kernel(Xt, X, gamma=gamma)
    ours = KernelRidge(Precomputed(), lam=lam).fit(K, y)
    ref = SkKernelRidge(alpha=len(X) * lam, kernel="precomputed").fit(K, y)
    assert ours.n_features_in_ == len(X)
    assert _rel(ours.predict(Kt), ref.predict(Kt)) < 1e-8


def test_multi_output_matches_sklearn_and_columnwise(data):
    X, y, Xt = data
    Y = np.column_stack([y, np.cos(X[:, 2]), X[:, 3]])
    lam = 1e-3
    ours = KernelRidge(Gaussian(1.0), lam=lam).fit(X, Y)
    ref = SkKernelRidge(alpha=len(X) * lam, kernel="rbf", gamma=0.5).fit(X, Y)
    pred = ours.predict(Xt)
    assert pred.shape == (len(Xt), 3)
    assert _rel(pred, ref.predict(Xt)) < 1e-8
    # vv-RKHS ridge with the identity operator = one independent ridge per output
    col = KernelRidge(Gaussian(1.0), lam=lam).fit(X, Y[:, 1]).predict(Xt)
    assert _rel(pred[:, 1], col) < 1e-10
    # a column vector target keeps its 2-D shape
    assert ours.fit(X, Y[:, :1]).predict(Xt).shape == (len(Xt), 1)


def test_gradient_vanishes_at_solution(data):
    X, y, _ = data
    n, lam, sigma = len(X), 1e-2, 0.9
    alpha = KernelRidge(Gaussian(sigma), lam=lam).fit(X, y).dual_coef_
    K = rbf_kernel(X, gamma=1 / (2 * sigma**2))
    grad = (2 / n) * K @ ((K + n * lam * np.eye(n)) @ alpha - y)
    assert np.abs(grad).max() < 1e-10 * np.abs(K @ y).max()


def test_linear_kernel_equals_primal_ridge(data):
    X, y, Xt = data
    n, lam = len(X), 0.05
    model = KernelRidge(Linear(), lam=lam).fit(X, y)
    w_dual = X.T @ model.dual_coef_
    w_primal = np.linalg.solve(X.T @ X + n * lam * np.eye(X.shape[1]), X.T @ y)
    assert _rel(w_dual, w_primal) < 1e-10
    assert _rel(model.predict(Xt), Xt @ w_primal) < 1e-10


def test_lambda_sweep_is_monotone(data):
    X, y, _ = data
    K = rbf_kernel(X, gamma=0.5)
    lams = [1e3, 1e2, 10, 1, 0.1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7]
    mse, norms = [], []
    for lam in lams:
        model = KernelRidge(Gaussian(1.0), lam=lam).fit(X, y)
        mse.append(np.mean((model.predict(X) - y) ** 2))
        norms.append(model.dual_coef_ @ K @ model.dual_coef_)
    # lambdas decrease: training error decreases and ||f||^2 increases
    assert all(a >= b for a, b in pairwise(mse))
    assert all(a <= b * (1 + 1e-9) for a, b in pairwise(norms))
    assert mse[0] > 0.5 * np.var(y)  # large lam: f ~ 0
    assert mse[-1] < 1e-3 * np.var(y)  # tiny lam: (near) interpolation


def test_duplicated_points_lam_zero_is_finite(data):
    """Singular K (duplicated points): alpha is not unique but f is (course 5.9)."""
    X, y, Xt = data
    kernel = Gaussian(0.7)
    Xd = np.vstack([X, X[:5]])
    yd = np.concatenate([y, y[:5]])
    model = KernelRidge(kernel, lam=0.0).fit(Xd, yd)
    assert model.jitter_ > 0
    pred = model.predict(Xt)
    assert np.isfinite(pred).all()
    # the interpolant of the distinct points is the same function
    unique = KernelRidge(kernel, lam=0.0).fit(X, y)
    assert _rel(pred, unique.predict(Xt)) < 1e-5
    assert _rel(model.predict(X), y) < 1e-6


def test_score_is_r2(data):
    X, y, Xt = data
    model = KernelRidge(Gaussian(1.0), lam=1e-3).fit(X, y)
    yt = np.sin(Xt[:, 0]) + 0.3 * Xt[:, 1] ** 2
    assert model.score(Xt, yt) == pytest.approx(r2_score(yt, model.predict(Xt)), rel=1e-12)


def test_torch_in_torch_out_and_float32(data):
    X, y, Xt = data
    ref = KernelRidge(Gaussian(1.0), lam=1e-2).fit(X, y).predict(Xt)
    model = KernelRidge(Gaussian(1.0), lam=1e-2).fit(torch.as_tensor(X), torch.as_tensor(y))
    pred = model.predict(torch.as_tensor(Xt))
    assert isinstance(pred, torch.Tensor) and pred.dtype == torch.float64
    assert isinstance(model.dual_coef_, torch.Tensor)
    assert _rel(pred.numpy(), ref) < 1e-12
    m32 = KernelRidge(Gaussian(1.0), lam=1e-2).fit(X.astype(np.float32), y)
    p32 = m32.predict(Xt.astype(np.float32))
    assert p32.dtype == np.float32 and m32.X_fit_.dtype == torch.float32
    assert _rel(p32, ref) < 1e-4
    t32 = KernelRidge(Gaussian(1.0), lam=1e-2).fit(torch.as_tensor(X, dtype=torch.float32), y)
    assert t32.predict(torch.as_tensor(Xt, dtype=torch.float32)).dtype == torch.float32


def test_linear_kernel_gram_oracle(data):
    """The fitted kernel's Gram equals scikit-learn's (the kernel actually used)."""
    X, y, _ = data
    model = KernelRidge(Polynomial(degree=2), lam=1e-2).fit(X, y)
    K = model.kernel_(model.X_fit_).numpy()
    assert _rel(K, polynomial_kernel(X, degree=2, gamma=1.0, coef0=1.0)) < 1e-12
    assert _rel(Linear()(X).numpy(), linear_kernel(X)) < 1e-12


def test_in_place_fast_path_equals_ladder_solver(data):
    X, y, _ = data
    K = torch.as_tensor(rbf_kernel(X, gamma=0.2))
    Y = torch.as_tensor(y)
    ref = kernel_ridge_coefficients(K.clone(), Y, lam=1e-3)
    work = K.clone()
    fast = kernel_ridge_coefficients(work, Y, lam=1e-3, overwrite_K=True)
    assert fast.factor.data_ptr() == work.data_ptr()  # factorised in place
    assert torch.allclose(fast.solution, ref.solution, rtol=1e-10, atol=0)
    singular = torch.as_tensor(np.ones((5, 5)))  # rank one, lam = 0: not PD
    assert (
        kernel_ridge_coefficients(
            singular, torch.ones(5, dtype=torch.float64), lam=0.0, overwrite_K=True
        )
        is None
    )
