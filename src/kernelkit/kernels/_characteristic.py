r"""A positive definite kernel that is not characteristic: the ball-spectrum (Bessel) kernel.

Course part 3, section 3 ("Characteristic and universal kernels"): a translation-invariant
kernel ``k(x, y) = kappa(x - y)`` with ``kappa(z) = int exp(-i z^T w) dLambda(w)`` (Bochner) is
characteristic iff ``supp Lambda = R^d`` (Sriperumbudur et al. 2008).  The Gaussian is; the
kernel whose spectral measure is uniform on a ball is the course's counter-example: p.d.,
but blind to any difference between two distributions whose characteristic functions agree
on the ball (so their MMD is 0).  The linear kernel and ``(x^T y)^2`` (not characteristic:
they see means and second moments only) are :class:`~kernelkit.kernels.Linear` and
:class:`~kernelkit.kernels.Polynomial`.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
import torch
from scipy.special import gammaln, jv

from kernelkit.kernels._base import Kernel
from kernelkit.utils._validation import check_positive


class BallSpectrum(Kernel):
    r"""``kappa(z) = Gamma(d/2 + 1) (2 / r)^{d/2} J_{d/2}(r)``, ``r = ||z|| / sigma``.

    The Fourier transform of the uniform probability measure on the ball of radius
    ``1 / sigma`` in ``R^d`` (``J`` the Bessel function of the first kind; course part 3,
    section 3, "kappa(z) = ||z||^{-d/2} J_{d/2}(||z||) is not characteristic", normalised to
    ``kappa(0) = 1``): ``E_{w ~ U(ball)}[cos(w^T (x - y))]``, p.d. by Bochner, not
    characteristic (``supp Lambda`` is the ball).  In one dimension it is ``sin(r) / r``.
    The dimension ``d`` is read from the input.  Not differentiable (SciPy's Bessel
    functions).

    Parameters
    ----------
    sigma : float, default 1.0
        Length scale ``> 0``: the spectral ball has radius ``1 / sigma``.
    """

    differentiable: ClassVar[bool] = False

    def __init__(self, sigma: float = 1.0):
        super().__init__()
        self.sigma = check_positive(sigma, name="sigma")

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        g = torch.Generator().manual_seed(0)
        X = torch.randn(10, 3, generator=g, dtype=torch.float64)
        Y = torch.randn(6, 3, generator=g, dtype=torch.float64)
        X1 = torch.randn(8, 1, generator=g, dtype=torch.float64)
        return [(cls(0.7), X, Y), (cls(1.0), X1, None)]

    def _profile(self, dist: torch.Tensor, d: int) -> torch.Tensor:
        r = dist.detach().cpu().numpy() / self.sigma
        nu = d / 2.0
        with np.errstate(divide="ignore", invalid="ignore"):
            log_c = gammaln(nu + 1.0) + nu * math.log(2.0)
            vals = np.exp(log_c) * jv(nu, r) / r**nu
        vals = np.where(r < 1e-8, 1.0 - r**2 / (4.0 * (nu + 1.0)), vals)  # Taylor at 0
        return torch.as_tensor(vals, dtype=dist.dtype, device=dist.device)

    def block(self, X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
        dist = torch.cdist(X, Y, compute_mode="donot_use_mm_for_euclid_dist")
        return self._profile(dist, X.shape[1])

    def block_diag(self, X: torch.Tensor) -> torch.Tensor:
        return torch.ones(len(X), dtype=X.dtype, device=X.device)


__all__ = ["BallSpectrum"]
