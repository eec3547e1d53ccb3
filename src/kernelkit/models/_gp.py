r"""Exact Gaussian-process regression on any kernel: marginal likelihood, posterior, samples.

The model (Rasmussen and Williams, *Gaussian Processes for Machine Learning*, 2006,
section 2.2) is ``y = f(x) + eps`` with ``f ~ GP(0, a k)`` (amplitude ``a``) and
``eps ~ N(0, s2)`` (noise variance ``s2``).  With ``K_y = a K + s2 I = L L^T`` and
``alpha = K_y^{-1} y`` (Algorithm 2.1):

.. math:: \log p(y \mid X) = -\tfrac12 y^T \alpha - \sum_i \log L_{ii} - \tfrac n2 \log 2\pi,

.. math:: \mathbb E[f_*] = a K_{*}^T \alpha, \qquad
          \mathrm{Cov}[f_*] = a K_{**} - V^T V, \quad V = L^{-1} a K_{*},

(eqs. 2.25-2.26, 2.30; ``K_*`` the cross-kernel to the training points).  Several output
columns share the kernel and add their log likelihoods.  Gradients of the log likelihood
with respect to ``log a``, ``log s2`` and the kernel's continuous parameters come from autograd
through the Cholesky factorisation (:func:`log_marginal_likelihood`), which equals
eq. 5.9, ``(1/2) tr((alpha alpha^T - K_y^{-1}) dK_y/dtheta)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from kernelkit.solvers import cholesky_factor
from kernelkit.solvers._cholesky import solve, solve_triangular

__all__ = ["GPFit", "gp_fit", "gp_predict", "log_marginal_likelihood"]


@dataclass(frozen=True)
class GPFit:
    """Posterior of an exact GP at fixed hyper-parameters.

    Attributes
    ----------
    factor : torch.Tensor
        Lower Cholesky factor ``L`` of ``K_y = K + s2 I`` (``K`` includes the amplitude).
    coef : torch.Tensor
        ``alpha = K_y^{-1} y``, shaped like ``y``.
    log_marginal_likelihood : torch.Tensor
        ``log p(y | X)`` (scalar, summed over outputs).
    jitter : float
        Jitter added by the Cholesky ladder besides ``s2``.
    mean : torch.Tensor or None
        Generalised-least-squares coefficients ``beta`` of the mean ``H beta`` (``None``: zero
        mean); ``coef`` is then ``K_y^{-1} (y - H beta)``.
    """

    factor: torch.Tensor
    coef: torch.Tensor
    log_marginal_likelihood: torch.Tensor
    jitter: float
    mean: torch.Tensor | None = None


def gp_fit(
    K: torch.Tensor,
    y: torch.Tensor,
    noise: float | torch.Tensor,
    design: torch.Tensor | None = None,
) -> GPFit:
    r"""Factorise ``K + diag(noise)`` and return the posterior (module formulas; differentiable).

    ``noise`` is one variance or one per point (heteroscedastic noise, scikit-learn's
    ``alpha`` array).  With a ``design`` matrix ``H`` (``n x q``; a column of ones for a
    constant mean) the mean ``H beta`` is profiled out by generalised least squares,
    ``beta = (H^T K_y^{-1} H)^{-1} H^T K_y^{-1} y`` (Rasmussen and Williams 2006, section
    2.7, the limit of a vague prior on ``beta``, used as a plug-in estimate): the returned log
    likelihood is that of ``y - H beta``, its maximum over ``beta``.
    """
    noise_t = torch.as_tensor(noise, dtype=K.dtype, device=K.device)
    fac = cholesky_factor(K + torch.diag(noise_t.expand(K.shape[0])), name="K")
    L = fac.factor
    beta = None
    if design is not None:
        KiH = fac.solve(design)
        beta = solve(design.mT @ KiH, KiH.mT @ y, name="H^T K^-1 H")
        y = y - design @ beta
    coef = fac.solve(y)
    p = 1 if y.ndim == 1 else y.shape[1]
    lml = (
        -0.5 * (y * coef).sum()
        - p * torch.log(L.diagonal()).sum()
        - 0.5 * K.shape[0] * p * math.log(2 * math.pi)
    )
    return GPFit(L, coef, lml, fac.jitter, beta)


def log_marginal_likelihood(
    K: torch.Tensor, y: torch.Tensor, noise: float | torch.Tensor
) -> torch.Tensor:
    """``log p(y | X)`` of the exact GP with Gram ``K`` (amplitude included) and ``noise``."""
    return gp_fit(K, y, noise).log_marginal_likelihood


def gp_predict(
    fit: GPFit,
    Ks: torch.Tensor,
    prior_diag: torch.Tensor | None = None,
    prior_cov: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Posterior mean of ``f`` at test points and its variance or covariance.

    Parameters
    ----------
    fit : GPFit
    Ks : torch.Tensor, shape (m, n)
        Cross-Gram of the test points against the training points (amplitude included).
    prior_diag : torch.Tensor, shape (m,), optional
        Prior variances ``k(x_*, x_*)``: the posterior variances are returned.
    prior_cov : torch.Tensor, shape (m, m), optional
        Prior covariance ``K_**``: the posterior covariance is returned.

    Returns
    -------
    mean, spread
        ``Ks alpha`` and the variances (clipped at 0), the covariance, or None.
    """
    mean = Ks @ fit.coef
    if prior_diag is None and prior_cov is None:
        return mean, None
    V = solve_triangular(fit.factor, Ks.mT, upper=False)
    if prior_cov is not None:
        return mean, prior_cov - V.mT @ V
    return mean, (prior_diag - (V * V).sum(0)).clamp_min(0.0)
