"""The sparse (Nyström) GP against the dense transcription of Titsias's bound and the exact GP."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from kernelkit import GaussianProcessRegressor, config_context
from kernelkit.kernels import Gaussian, Tanimoto
from kernelkit.models._gp import gp_fit, gp_predict
from kernelkit.models._gp_nystrom import (
    StreamedBound,
    sparse_gp_bound,
    sparse_gp_posterior,
    sparse_gp_predict,
    sparse_gp_statistics,
)
from kernelkit.models._hyperparams import kernel_with
from kernelkit.utils._errors import InputError


def _data(n=80, d=3, c=1, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, d, generator=g, dtype=torch.float64)
    Y = torch.sin(X[:, :1] * torch.arange(1, c + 1)) + 0.1 * torch.randn(n, c, generator=g)
    return X, (Y[:, 0] if c == 1 else Y.to(torch.float64))


def _dense_bound(kernel, X, C, y, a, s2):
    """Titsias (2009) eq. 9 from its definition: dense Q_nn, a Gaussian density, a trace."""
    K_nm, K_mm = kernel.block(X, C), kernel.block(C, C)
    Q = a * K_nm @ torch.linalg.solve(K_mm, K_nm.mT)
    cov = Q + s2 * torch.eye(len(X), dtype=torch.float64)
    Yc = y[:, None] if y.ndim == 1 else y
    dist = torch.distributions.MultivariateNormal(torch.zeros(len(X), dtype=torch.float64), cov)
    slack = (a * kernel.block_diag(X).sum() - Q.diagonal().sum()) / (2 * s2)
    return sum(dist.log_prob(Yc[:, j]) - slack for j in range(Yc.shape[1]))


@pytest.mark.parametrize("c", [1, 2])
def test_bound_equals_its_dense_definition(c):
    X, y = _data(c=c)
    kernel, C = Gaussian(1.2), X[::4]
    stats = sparse_gp_statistics(kernel, X, C, y)
    ours = sparse_gp_bound(stats, 0.8, 0.03)
    assert float(ours) == pytest.approx(float(_dense_bound(kernel, X, C, y, 0.8, 0.03)), rel=1e-9)


@pytest.mark.parametrize("c", [1, 2])
def test_every_point_a_centre_is_the_exact_gp(c):
    X, y = _data(c=c)
    Xt = _data(15, seed=1)[0]
    kernel, a, s2 = Gaussian(1.5), 0.7, 0.05
    stats = sparse_gp_statistics(kernel, X, X, y)
    exact = gp_fit(a * kernel.block(X, X), y, s2)
    assert float(sparse_gp_bound(stats, a, s2)) == pytest.approx(
        float(exact.log_marginal_likelihood), rel=1e-10
    )
    post = sparse_gp_posterior(stats, a, s2, single_output=c == 1)
    Ks, diag = kernel.block(Xt, X), kernel.block_diag(Xt)
    m1, v1 = sparse_gp_predict(post, Ks, diag)
    m0, v0 = gp_predict(exact, a * Ks, a * diag)
    torch.testing.assert_close(m1, m0, rtol=0, atol=1e-8)
    torch.testing.assert_close(v1, v0, rtol=0, atol=1e-8)
    _, c1 = sparse_gp_predict(post, Ks, prior_cov=kernel.block(Xt, Xt))
    _, c0 = gp_predict(exact, a * Ks, prior_cov=a * kernel.block(Xt, Xt))
    torch.testing.assert_close(c1, c0, rtol=0, atol=1e-8)


@pytest.fixture
def many_tiles():
    with config_context(gp_tile_entries=300):
        yield


def test_streamed_gradient_equals_autograd_of_the_dense_bound(many_tiles):
    X, y = _data()
    C = X[:25]
    base = Gaussian(1.0)
    bound = StreamedBound(
        lambda v: kernel_with(base, v),
        ["sigma"],
        X,
        C,
        y,
        {"amplitude": 1.0, "noise": 1.0},
        ["amplitude", "noise"],
    )
    t = torch.tensor([math.log(1.3), math.log(0.8), math.log(0.07)], dtype=torch.float64)
    value, grad = bound.value_and_grad(t)
    td = t.clone().requires_grad_(True)
    v = torch.exp(td)
    dense = -_dense_bound(kernel_with(base, {"sigma": v[0]}), X, C, y, v[1], v[2])
    dense.backward()
    assert float(value) == pytest.approx(dense.item(), rel=1e-9)
    torch.testing.assert_close(grad, td.grad, rtol=1e-7, atol=1e-9)


def test_estimator_with_every_point_a_centre_learns_the_exact_gp():
    X, y = (a.numpy() for a in _data(60))
    Xt = _data(10, seed=2)[0].numpy()
    exact = GaussianProcessRegressor(Gaussian(1.0), solver="exact").fit(X, y)
    sparse = GaussianProcessRegressor(Gaussian(1.0), solver="nystrom", n_centers=60).fit(X, y)
    assert sparse.solver_ == "nystrom" and exact.solver_ == "exact"
    assert sparse.log_marginal_likelihood_value_ == pytest.approx(
        exact.log_marginal_likelihood_value_, rel=1e-8
    )
    assert sparse.kernel_.kernel.sigma == pytest.approx(exact.kernel_.kernel.sigma, rel=1e-5)
    pairs = zip(
        sparse.predict(Xt, return_std=True), exact.predict(Xt, return_std=True), strict=True
    )
    for a, b in pairs:
        np.testing.assert_allclose(a, b, atol=1e-6)


def test_tanimoto_fingerprints_learn_amplitude_and_noise_on_the_statistics():
    rng = np.random.default_rng(0)
    F = (rng.random((70, 64)) < 0.2).astype(np.float64)
    y = F[:, :8].sum(1) / 4 + 0.5 * rng.normal(size=70)
    exact = GaussianProcessRegressor(Tanimoto(), solver="exact").fit(F, y)
    sparse = GaussianProcessRegressor(Tanimoto(), solver="nystrom", n_centers=70).fit(F, y)
    assert sparse.noise_ == pytest.approx(exact.noise_, rel=1e-5)
    assert sparse.amplitude_ == pytest.approx(exact.amplitude_, rel=1e-5)
    np.testing.assert_allclose(sparse.predict(F[:5]), exact.predict(F[:5]), atol=1e-6)


def test_fewer_centres_bound_below_the_exact_likelihood():
    """Titsias's bound is a lower bound: at fixed hyper-parameters it cannot exceed the LML."""
    X, y = (a.numpy() for a in _data(120))
    kw = dict(kernel=Gaussian(1.0), amplitude=1.0, noise=0.05, optimizer=None)
    exact = GaussianProcessRegressor(solver="exact", **kw).fit(X, y)
    values = [
        GaussianProcessRegressor(solver="nystrom", n_centers=m, random_state=0, **kw)
        .fit(X, y)
        .log_marginal_likelihood_value_
        for m in (10, 40, 120)
    ]
    assert all(v <= exact.log_marginal_likelihood_value_ + 1e-8 for v in values)
    assert values[-1] == pytest.approx(exact.log_marginal_likelihood_value_, rel=1e-9)


def test_solver_resolution_and_errors():
    X, y = (a.numpy() for a in _data(40))
    assert GaussianProcessRegressor(Gaussian(1.0)).fit(X, y).solver_ == "exact"
    with pytest.warns(UserWarning, match="exact solver"):
        gp = GaussianProcessRegressor(Gaussian(1.0), solver="nystrom", n_centers=50).fit(X, y)
    assert gp.solver_ == "exact"
    sparse = GaussianProcessRegressor(Gaussian(1.0), solver="nystrom", n_centers=10).fit(X, y)
    assert len(sparse.center_indices_) == 10
    with pytest.raises(InputError, match="predict_interval"):
        sparse.predict_interval(X[:3])
    with pytest.raises(ValueError, match="solver"):
        GaussianProcessRegressor(solver="falkon").fit(X, y)
    with pytest.raises(ValueError, match="n_centers"):
        GaussianProcessRegressor(solver="nystrom", n_centers=0).fit(X, y)
