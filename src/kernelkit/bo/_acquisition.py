r"""Closed-form acquisition functions of a Gaussian predictive distribution (maximisation).

With the posterior mean ``mu`` and standard deviation ``sigma`` of the latent ``f`` at a
candidate, the incumbent ``f*`` (best value observed) and the margin ``xi >= 0``,
``z = (mu - f* - xi) / sigma`` (Jones, Schonlau and Welch, "Efficient global optimization of
expensive black-box functions", J. Global Optim. 1998; Brochu, Cora and de Freitas, "A
tutorial on Bayesian optimization", 2010, section 2.3):

.. math:: \mathrm{EI} = (\mu - f^* - \xi)\,\Phi(z) + \sigma\,\varphi(z), \qquad
          \mathrm{PI} = \Phi(z), \qquad
          \mathrm{UCB} = \mu + \sqrt{\beta}\,\sigma

(GP-UCB, Srinivas, Krause, Kakade and Seeger, ICML 2010).  Where ``sigma = 0`` EI is
``max(mu - f* - xi, 0)`` and PI is 1 when ``mu > f* + xi``, else 0.
"""

from __future__ import annotations

import math

import torch

ACQUISITIONS = ("ei", "pi", "ucb", "thompson")


def _normal_parts(
    mu: torch.Tensor, sigma: torch.Tensor, best: float, xi: float
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(improvement, z, positive)``: ``mu - best - xi``, its standardised value (0 where
    ``sigma = 0``) and the mask ``sigma > 0``."""
    gain = mu - best - xi
    positive = sigma > 0
    z = torch.where(positive, gain / torch.where(positive, sigma, 1.0), torch.zeros_like(mu))
    return gain, z, positive


def expected_improvement(
    mu: torch.Tensor, sigma: torch.Tensor, best: float, xi: float = 0.0
) -> torch.Tensor:
    """``E[max(f - best - xi, 0)]`` for ``f ~ N(mu, sigma^2)`` (module formula)."""
    gain, z, positive = _normal_parts(mu, sigma, best, xi)
    cdf = 0.5 * torch.erfc(-z / math.sqrt(2.0))
    pdf = torch.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
    return torch.where(positive, gain * cdf + sigma * pdf, gain.clamp_min(0.0))


def probability_of_improvement(
    mu: torch.Tensor, sigma: torch.Tensor, best: float, xi: float = 0.0
) -> torch.Tensor:
    """``P(f > best + xi)`` for ``f ~ N(mu, sigma^2)`` (module formula)."""
    gain, z, positive = _normal_parts(mu, sigma, best, xi)
    cdf = 0.5 * torch.erfc(-z / math.sqrt(2.0))
    return torch.where(positive, cdf, (gain > 0).to(mu.dtype))


def upper_confidence_bound(mu: torch.Tensor, sigma: torch.Tensor, beta: float) -> torch.Tensor:
    """``mu + sqrt(beta) sigma`` (module formula)."""
    return mu + math.sqrt(beta) * sigma
