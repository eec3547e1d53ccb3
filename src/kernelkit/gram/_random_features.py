r"""Random Fourier features of shift-invariant vector kernels (Rahimi and Recht, NIPS 2007).

Course part 3, section 5, slide "Random Fourier features": for a shift-invariant
``k(x, y) = kappa(x - y)`` with ``kappa(0) = 1``, Bochner's theorem makes
``q(w) = kappa_hat(w) / (2 pi)^d`` a probability density and

.. math:: k(x, y) = \mathbb E_{w \sim q,\, b \sim U[0, 2\pi]}
          \big[\sqrt2 \cos(w^T x + b)\, \sqrt2 \cos(w^T y + b)\big],

so with ``p`` draws ``z(x) = sqrt(2/p) [cos(w_j^T x + b_j)]_j`` is an unbiased estimate,
``z(x)^T z(y) -> k(x, y)`` at the Monte-Carlo rate ``p^{-1/2}``.  (The slide prints the scale
``sqrt(2/d)``; it is ``sqrt(2/p)``, course part 3, section 14, erratum 2.)

Spectral densities of the kernels of :mod:`kernelkit.kernels._vector` (``r = ||x - y||_2``):

* ``Gaussian(sigma)``, ``exp(-r^2 / (2 sigma^2))``: ``w ~ N(0, sigma^{-2} I)``;
* ``Matern(nu, sigma)``: ``q(w) ∝ (2 nu / sigma^2 + ||w||^2)^{-(nu + d/2)}`` (Rasmussen and
  Williams, *Gaussian Processes for Machine Learning*, 2006, eq. 4.15), the multivariate
  Student-t with ``2 nu`` degrees of freedom and scale ``sigma^{-1} I``:
  ``w = g sqrt(2 nu / u) / sigma`` with ``g ~ N(0, I)``, ``u ~ chi^2_{2 nu}``;
* ``Laplacian(sigma)``, ``exp(-r / sigma)`` (the Euclidean norm, ``Matern(1/2, sigma)``): the
  multivariate Cauchy density (Student-t with 1 degree of freedom) of scale ``sigma^{-1} I``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from kernelkit.kernels import Gaussian, Kernel, Laplacian, Matern
from kernelkit.kernels._sparse import SparseRows, inner
from kernelkit.utils._errors import InputError
from kernelkit.utils._seeding import check_random_state
from kernelkit.utils._validation import check_int

SUPPORTED = (Gaussian, Laplacian, Matern)
"""Kernel classes with a spectral sampler."""


def check_spectral_kernel(kernel: Any) -> Kernel:
    """``kernel`` if it is one of :data:`SUPPORTED` (exactly, not a scaled or summed kernel).

    Raises
    ------
    InputError
        Naming the argument ``kernel``, the kernels expected and the one given.
    """
    if type(kernel) not in SUPPORTED:
        raise InputError(
            "kernel: random Fourier features need a shift-invariant vector kernel with a "
            "known spectral density (Gaussian, Laplacian or Matern), got "
            f"{type(kernel).__name__} {kernel!r}"
        )
    return kernel


def spectral_samples(kernel: Kernel, n_features: int, n_components: int, rng: Any) -> np.ndarray:
    """``n_components`` frequencies ``w ~ q`` of ``kernel`` in ``R^n_features`` (float64).

    See the module docstring for each density; ``rng`` is a NumPy ``Generator``.
    """
    shape = (n_components, n_features)
    if type(check_spectral_kernel(kernel)) is Gaussian:
        return rng.standard_normal(shape) / kernel.sigma
    nu = 0.5 if type(kernel) is Laplacian else float(kernel.nu)
    g = rng.standard_normal(shape)
    u = rng.chisquare(2.0 * nu, size=(n_components, 1))
    return g * np.sqrt(2.0 * nu / u) / kernel.sigma


@dataclass(frozen=True)
class RandomFourierMap:
    r"""``z(x) = sqrt(2/p) cos(W x + b)``.

    Attributes
    ----------
    weights : torch.Tensor
        ``W``, shape ``(p, d)``: the frequencies ``w_j`` as rows.
    offsets : torch.Tensor
        ``b``, shape ``(p,)``, uniform on ``[0, 2 pi)``.
    """

    weights: torch.Tensor
    offsets: torch.Tensor

    @property
    def dim(self) -> int:
        """Number of features ``p``."""
        return int(self.weights.shape[0])

    def features(self, X: torch.Tensor) -> torch.Tensor:
        """``z(x)`` of the rows of ``X`` (shape ``(n, d)``, dense or
        :class:`~kernelkit.kernels._sparse.SparseRows`), shape ``(n, p)``."""
        if isinstance(X, SparseRows):
            Z = inner(X, self.weights).add_(self.offsets).cos_()
        else:
            Z = torch.addmm(self.offsets, X, self.weights.T).cos_()
        return Z.mul_(math.sqrt(2.0 / self.dim))


def random_fourier_map(
    kernel: Kernel,
    n_features: int,
    n_components: int,
    *,
    random_state: Any = None,
    dtype: torch.dtype = torch.float64,
    device: torch.device | str | None = None,
) -> RandomFourierMap:
    """Draw ``p = n_components`` frequencies and offsets for inputs in ``R^n_features``.

    The draws are made in float64 by NumPy (``W`` first, then ``b``), so the same
    ``random_state`` gives the same map on every device and dtype.

    Parameters
    ----------
    kernel : Gaussian, Laplacian or Matern
        The kernel approximated.
    n_features : int
        Input dimension ``d``.
    n_components : int
        Number of features ``p``.
    random_state : None, int, RandomState or Generator
        Seed of the draws.
    dtype, device :
        Of the returned tensors.
    """
    d = check_int(n_features, name="n_features", minimum=1)
    p = check_int(n_components, name="n_components", minimum=1)
    rng = check_random_state(random_state)
    W = spectral_samples(kernel, d, p, rng)
    b = rng.uniform(0.0, 2.0 * np.pi, size=p)
    return RandomFourierMap(
        torch.as_tensor(W, dtype=dtype, device=device),
        torch.as_tensor(b, dtype=dtype, device=device),
    )


__all__ = [
    "RandomFourierMap",
    "check_spectral_kernel",
    "random_fourier_map",
    "spectral_samples",
]
