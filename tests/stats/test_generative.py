"""MMD generative models: the learned kernel's formula, gradients, and training on a toy."""

from __future__ import annotations

import torch

from kernelkit.kernels import Gaussian
from kernelkit.stats import mmd
from kernelkit.stats._generative import (
    FeatureGaussian,
    gaussian_gram,
    heldout_mmd2,
    mlp_generator,
    mmd2_loss,
    train_mmd_generator,
)


def test_loss_is_the_unbiased_mmd_and_differentiable():
    torch.manual_seed(0)
    X = torch.randn(12, 3, dtype=torch.float64)
    Y = torch.randn(9, 3, dtype=torch.float64, requires_grad=True)
    loss = mmd2_loss(gaussian_gram(Gaussian(1.2)), X, Y)
    assert abs(float(loss.detach()) - mmd(X, Y.detach(), kernel=Gaussian(1.2))) < 1e-12
    loss.backward()
    # finite difference of one coordinate
    eps = 1e-6
    Yp = Y.detach().clone()
    Yp[2, 1] += eps
    Ym = Y.detach().clone()
    Ym[2, 1] -= eps
    fd = (mmd(X, Yp, kernel=Gaussian(1.2)) - mmd(X, Ym, kernel=Gaussian(1.2))) / (2 * eps)
    assert abs(float(Y.grad[2, 1]) - fd) < 1e-7


def test_feature_gaussian_is_the_product_formula():
    torch.manual_seed(1)
    k = FeatureGaussian(4, sigma0=1.5, features=3, hidden=8).double()
    Z = torch.randn(6, 4, dtype=torch.float64)
    K = k(Z)
    psi = k.psi(Z)
    i, j = 1, 4
    expected = torch.exp(-((psi[i] - psi[j]) ** 2).sum() / 2) * torch.exp(
        -((Z[i] - Z[j]) ** 2).sum() / (2 * 1.5**2)
    )
    assert abs(float(K[i, j] - expected)) < 1e-12


def test_training_decreases_heldout_mmd_on_a_toy():
    torch.manual_seed(0)
    data = torch.randn(400, 2) * 0.5 + torch.tensor([2.0, -1.0])
    held = torch.randn(200, 2) * 0.5 + torch.tensor([2.0, -1.0])
    for critic in (None, FeatureGaussian(2, sigma0=1.0, features=4, hidden=16)):
        torch.manual_seed(0)
        gen = torch.nn.Sequential(torch.nn.Linear(4, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2))
        hist = train_mmd_generator(
            data,
            gen,
            noise_dim=4,
            critic=critic,
            kernel=Gaussian(1.0),
            steps=100,
            batch_size=64,
            lr=1e-2,
            evaluate=heldout_mmd2(held, 4, Gaussian(1.0)),
            eval_every=50,
        )
        assert hist.steps == [0, 50, 100]
        assert hist.heldout_mmd2[-1] < 0.2 * hist.heldout_mmd2[0]
    assert mlp_generator(3, 5)(torch.randn(2, 3)).shape == (2, 5)
