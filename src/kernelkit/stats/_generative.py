r"""Generative models trained by minimising the MMD (course part 3, section 2).

An implicit generative model :math:`Y = G_\theta(Z)`, :math:`Z \sim N(0, I)`, is trained by
:math:`\min_\theta \mathrm{MMD}^2(P, Q_\theta)` on minibatches (course: steps 1-5; Li,
Swersky & Zemel 2015, "Generative moment matching networks"; Dziugaite, Roy & Ghahramani
2015): each step draws ``B`` data points and ``B`` generated ones and descends the gradient
of the unbiased :math:`\widehat{\mathrm{MMD}}{}^2_u` through the Gram blocks
(:func:`kernelkit.gram.gram` with ``differentiable=True``).

* Fixed kernel: a Gaussian on the data (median-heuristic width).
* Learned kernel (course: :math:`\min_\theta \sup_{k} \mathrm{MMD}^2_k` with
  :math:`k(x, y) = h(\phi(x), \phi(y))`, :math:`\phi` a network and :math:`h` a fixed
  Gaussian; Li et al. 2017 "MMD GAN", Arbel, Sutherland, Bińkowski & Gretton 2018):
  :class:`FeatureGaussian` with :math:`\phi(x) = (\psi(x), x / \sigma_0)`, so that
  :math:`k(x, y) = e^{-\|\psi(x)-\psi(y)\|^2/2}\, e^{-\|x-y\|^2/(2\sigma_0^2)}`: the fixed
  Gaussian times a learned factor (``psi`` bounded by ``tanh``), which keeps :math:`\phi`
  injective and the kernel characteristic.  Steps alternate: ``critic_steps`` ascent steps of
  :math:`\mathrm{MMD}^2_u` in :math:`\psi`, then one descent step in :math:`\theta`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from kernelkit.gram import gram
from kernelkit.kernels import Gaussian, Kernel
from kernelkit.solvers._optimizers import first_order_optimizer
from kernelkit.solvers._training import descend, train_loop
from kernelkit.stats._mmd import mmd2_tensor
from kernelkit.utils._progress import Progress
from kernelkit.utils._seeding import RandomStateLike, as_seed
from kernelkit.utils._validation import check_int


def mmd2_loss(
    kernel: Callable[[torch.Tensor], torch.Tensor], X: torch.Tensor, Y: torch.Tensor
) -> torch.Tensor:
    r"""Differentiable :math:`\mathrm{MMD}^2_u` of two batches: ``kernel`` maps the pooled
    batch to its Gram (see :func:`gaussian_gram`, :class:`FeatureGaussian`)."""
    return mmd2_tensor(kernel(torch.cat([X, Y])), X.shape[0], unbiased=True)


def gaussian_gram(kernel: Kernel) -> Callable[[torch.Tensor], torch.Tensor]:
    """The differentiable Gram of a fixed kernelkit kernel, through the Gram engine."""
    return lambda Z: gram(kernel, Z, differentiable=True)


class FeatureGaussian(nn.Module):
    r"""Learned kernel :math:`k(x, y) = h(\phi(x), \phi(y))`, :math:`\phi(x) = (\psi(x),
    x / \sigma_0)`, :math:`h` the unit Gaussian (module docstring).

    Parameters
    ----------
    dim : int
        Input width.
    sigma0 : float
        Width of the fixed Gaussian factor on the inputs.
    features : int
        Width of :math:`\psi(x) \in [-1, 1]^{features}`.
    hidden : int
        Hidden units of the two-layer network :math:`\psi`.
    """

    def __init__(self, dim: int, sigma0: float, features: int = 16, hidden: int = 128):
        super().__init__()
        self.sigma0 = float(sigma0)
        self.psi = nn.Sequential(
            nn.Linear(dim, hidden), nn.LeakyReLU(0.2), nn.Linear(hidden, features), nn.Tanh()
        )

    def forward(self, Z: torch.Tensor) -> torch.Tensor:
        phi = torch.cat([self.psi(Z), Z / self.sigma0], dim=1)
        return gram(Gaussian(1.0), phi, differentiable=True)


def mlp_generator(noise_dim: int, out_dim: int, hidden: int = 256) -> nn.Module:
    """A small generator ``z -> sigmoid(W2 relu(W1 z))`` with outputs in ``[0, 1]``."""
    return nn.Sequential(
        nn.Linear(noise_dim, hidden),
        nn.ReLU(),
        nn.Linear(hidden, hidden),
        nn.ReLU(),
        nn.Linear(hidden, out_dim),
        nn.Sigmoid(),
    )


@dataclass
class GeneratorHistory:
    """Evaluations during training: step, held-out MMD^2_u, training loss."""

    steps: list[int] = field(default_factory=list)
    heldout_mmd2: list[float] = field(default_factory=list)
    loss: list[float] = field(default_factory=list)


def train_mmd_generator(
    data: torch.Tensor,
    generator: nn.Module,
    *,
    noise_dim: int,
    critic: FeatureGaussian | None = None,
    kernel: Kernel | None = None,
    steps: int = 1000,
    batch_size: int = 256,
    lr: float = 1e-3,
    critic_steps: int = 1,
    evaluate: Callable[[nn.Module], float] | None = None,
    eval_every: int = 100,
    random_state: RandomStateLike = 0,
    progress: Progress | None = None,
) -> GeneratorHistory:
    r"""Train ``generator`` by minibatch descent of :math:`\mathrm{MMD}^2_u` (module docstring).

    Parameters
    ----------
    data : tensor (n, d)
        Training data.
    generator : nn.Module
        Maps ``(B, noise_dim)`` standard normal noise to ``(B, d)``.
    critic : FeatureGaussian, optional
        A learned kernel, trained by ascent of :math:`\mathrm{MMD}^2_u` (alternating steps);
        without it the fixed ``kernel`` (default: Gaussian, median-heuristic width).
    evaluate : callable, optional
        ``evaluate(generator) -> float`` (e.g. MMD^2 to held-out data), called every
        ``eval_every`` steps and at the end.
    progress : Progress, optional
        Receives the training loss of every step.

    The steps run in :func:`kernelkit.solvers.train_loop` (the last state kept; a non-finite
    loss stops training with a warning).

    Returns
    -------
    GeneratorHistory
    """
    steps = check_int(steps, name="steps")
    batch_size = check_int(batch_size, name="batch_size", minimum=2)
    gen = torch.Generator().manual_seed(as_seed(random_state))
    if critic is None:
        from kernelkit.kernels._specs import median_sigma

        k = gaussian_gram(kernel or Gaussian(median_sigma(data)))
        critic_opt = None
    else:
        k = critic
        critic_opt = first_order_optimizer("adam", critic.parameters(), lr=lr, betas=(0.5, 0.9))
    opt = first_order_optimizer("adam", generator.parameters(), lr=lr, betas=(0.5, 0.9))
    history = GeneratorHistory()

    def batch() -> tuple[torch.Tensor, torch.Tensor]:
        idx = torch.randint(0, data.shape[0], (batch_size,), generator=gen)
        z = torch.randn(batch_size, noise_dim, generator=gen, dtype=data.dtype)
        return data[idx], generator(z)

    def evaluate_now(step: int) -> None:
        generator.eval()
        with torch.no_grad():
            history.steps.append(step)
            history.heldout_mmd2.append(float(evaluate(generator)))  # type: ignore[misc]
        generator.train()

    def step(it: int) -> torch.Tensor:
        if evaluate is not None and (it - 1) % eval_every == 0:
            evaluate_now(it - 1)
        for _ in range(critic_steps if critic_opt is not None else 0):
            X, Y = batch()
            descend(critic_opt, -mmd2_loss(k, X, Y.detach()))  # type: ignore[arg-type]
        X, Y = batch()
        loss = mmd2_loss(k, X, Y)
        descend(opt, loss)
        return loss.detach()

    modules = [generator] if critic is None else [generator, critic]
    run = train_loop(modules, step, max_iter=steps, keep_best=False, progress=progress, unit="step")
    history.loss = run.history
    if evaluate is not None:
        evaluate_now(run.n_iter)
    return history


def heldout_mmd2(
    heldout: torch.Tensor, noise_dim: int, kernel: Kernel, *, seed: int = 0
) -> Callable[[nn.Module], float]:
    r"""``evaluate`` of :func:`train_mmd_generator`: :math:`\mathrm{MMD}^2_u` between
    ``len(heldout)`` generated points (fixed noise) and ``heldout``, with ``kernel``."""
    z = torch.randn(
        heldout.shape[0],
        noise_dim,
        generator=torch.Generator().manual_seed(seed),
        dtype=heldout.dtype,
    )

    def evaluate(generator: nn.Module) -> float:
        Y = generator(z)
        return float(mmd2_tensor(gram(kernel, torch.cat([heldout, Y])), heldout.shape[0]))

    return evaluate


__all__: list[Any] = [
    "FeatureGaussian",
    "GeneratorHistory",
    "gaussian_gram",
    "heldout_mmd2",
    "mlp_generator",
    "mmd2_loss",
    "train_mmd_generator",
]
