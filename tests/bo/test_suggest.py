"""kernelkit.bo.suggest against SciPy's normal distribution, Monte Carlo and brute-force refits."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.stats import multivariate_normal, norm

from kernelkit import GaussianProcessRegressor
from kernelkit.bo import suggest
from kernelkit.bo._acquisition import (
    expected_improvement,
    probability_of_improvement,
    upper_confidence_bound,
)
from kernelkit.kernels import Gaussian
from kernelkit.utils._errors import InputError


def _gp(n=12, seed=0, noise=0.01):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(n, 1))
    y = np.sin(6 * X[:, 0]) + 0.05 * rng.normal(size=n)
    gp = GaussianProcessRegressor(Gaussian(0.15), amplitude=1.0, noise=noise, optimizer=None)
    return gp.fit(X, y), X, y


def test_closed_forms_equal_scipy_and_monte_carlo():
    rng = np.random.default_rng(0)
    mu, sd = rng.normal(size=50), rng.uniform(0.05, 2.0, size=50)
    sd[:3] = 0.0
    best, xi = 0.3, 0.1
    z = np.where(sd > 0, (mu - best - xi) / np.where(sd > 0, sd, 1), 0)
    ei_ref = np.where(
        sd > 0, (mu - best - xi) * norm.cdf(z) + sd * norm.pdf(z), np.maximum(mu - best - xi, 0)
    )
    pi_ref = np.where(sd > 0, norm.sf(-z), (mu - best - xi > 0).astype(float))
    t_mu, t_sd = torch.as_tensor(mu), torch.as_tensor(sd)
    np.testing.assert_allclose(expected_improvement(t_mu, t_sd, best, xi), ei_ref, atol=1e-12)
    np.testing.assert_allclose(probability_of_improvement(t_mu, t_sd, best, xi), pi_ref, atol=1e-12)
    np.testing.assert_allclose(upper_confidence_bound(t_mu, t_sd, 4.0), mu + 2 * sd, atol=1e-12)
    # Monte Carlo: E[max(f - best - xi, 0)], 4 standard errors
    draws = mu[:, None] + sd[:, None] * rng.standard_normal((50, 200_000))
    gain = np.maximum(draws - best - xi, 0)
    se = gain.std(1) / np.sqrt(gain.shape[1])
    assert np.all(np.abs(gain.mean(1) - ei_ref) <= 4 * se + 1e-12)


@pytest.mark.parametrize("acquisition", ["ei", "pi", "ucb"])
def test_single_pick_is_the_scipy_argmax(acquisition):
    gp, X, y = _gp()
    grid = np.linspace(0, 1, 201)[:, None]
    mu, sd = gp.predict(grid, return_std=True)
    z = (mu - y.max()) / sd
    ref = {
        "ei": (mu - y.max()) * norm.cdf(z) + sd * norm.pdf(z),
        "pi": norm.cdf(z),
        "ucb": mu + 2 * sd,
    }[acquisition]
    assert suggest(gp, grid, acquisition=acquisition)[0] == np.argmax(ref)
    top = np.argmax(ref)
    assert suggest(gp, grid, acquisition=acquisition, exclude=[top])[0] == np.argsort(ref)[-2]
    # minimisation: the same rule on -y
    neg = GaussianProcessRegressor(Gaussian(0.15), amplitude=1.0, noise=0.01, optimizer=None)
    neg.fit(X, -y)
    assert suggest(neg, grid, acquisition=acquisition, maximize=False)[0] == np.argmax(ref)


def test_kriging_believer_equals_refits_on_the_believed_means():
    gp, X, y = _gp(noise=0.05)
    grid = np.linspace(0, 1, 81)[:, None]
    picks = suggest(gp, grid, n=4, acquisition="ei")
    assert len(set(picks.tolist())) == 4
    Xf, yf, noise, best = X, y, np.full(len(y), 0.05), y.max()
    expected = []
    for _ in range(4):
        ref = GaussianProcessRegressor(
            Gaussian(0.15), amplitude=1.0, noise=noise, optimizer=None
        ).fit(Xf, yf)
        mu, sd = ref.predict(grid, return_std=True)
        z = (mu - best) / np.maximum(sd, 1e-300)
        ei = np.where(sd > 1e-6, (mu - best) * norm.cdf(z) + sd * norm.pdf(z), 0.0)
        ei[expected] = -np.inf
        j = int(np.argmax(ei))
        expected.append(j)
        best = max(best, mu[j])  # the believed value joins the data, noiselessly
        Xf, yf = np.vstack([Xf, grid[j]]), np.append(yf, mu[j])
        noise = np.append(noise, 1e-10)
    assert picks.tolist() == expected


def test_thompson_picks_follow_the_posterior_probability_of_being_best():
    gp, _, _ = _gp(n=6, seed=3)
    cands = np.linspace(0, 1, 6)[:, None]
    mu, cov = gp.predict(cands, return_cov=True)
    draws = multivariate_normal(mu, cov + 1e-12 * np.eye(6)).rvs(100_000, random_state=1)
    p_best = np.bincount(draws.argmax(1), minlength=6) / len(draws)
    picks = [suggest(gp, cands, acquisition="thompson", random_state=s)[0] for s in range(300)]
    freq = np.bincount(picks, minlength=6) / 300
    np.testing.assert_allclose(freq, p_best, atol=0.09)  # about 3 binomial standard errors
    batch = suggest(gp, cands, n=4, acquisition="thompson", random_state=0)
    assert len(set(batch.tolist())) == 4
    np.testing.assert_array_equal(
        batch, suggest(gp, cands, n=4, acquisition="thompson", random_state=0)
    )


def test_strings_and_errors():
    gp, X, y = _gp()
    cands = list(np.linspace(0, 1, 11)[:, None])
    assert suggest(gp, np.asarray(cands), n=2, batch="thompson", random_state=0).shape == (2,)
    with pytest.raises(InputError, match="acquisition"):
        suggest(gp, X, acquisition="qei")
    with pytest.raises(InputError, match="n: expected a positive integer"):
        suggest(gp, X, n=0)
    with pytest.raises(InputError, match="n: asked for 3"):
        suggest(gp, X[:3], n=3, exclude=[0])
    with pytest.raises(InputError, match="exclude"):
        suggest(gp, X, exclude=[99])
    multi = GaussianProcessRegressor(Gaussian(0.2), optimizer=None).fit(X, np.c_[y, y])
    with pytest.raises(InputError, match="single-output"):
        suggest(multi, X)
