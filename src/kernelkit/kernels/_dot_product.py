r"""Dot-product kernels on the sphere and their homogeneous extensions.

Course part 3, section 6 ("Deep kernel machines") and section 7 (CKN, kernel map ``M_k``):
a function ``kappa(u) = sum_j b_j u^j`` with ``b_j >= 0`` gives a kernel
``kappa(<x, y>)`` that is p.d. on the unit sphere of every Hilbert space (Schoenberg 1942);
applied entrywise to any PSD Gram whose entries lie in the radius of convergence it stays PSD
(Schur products).  The CKN uses the *homogeneous* kernel

.. math:: K(x, y) = \|x\| \|y\| \kappa\Big(\frac{\langle x, y\rangle}{\|x\| \|y\|}\Big),

with ``kappa(1) = 1`` so that ``K(x, x) = ||x||^2``.  The ``kappa`` functions below are
normalised that way and are public: the CKN layers of :mod:`kernelkit.models._ckn` apply the
same functions (through :func:`kappa_function`) to ``Z^T P``.

========================= =========================================== ======================
name                      ``kappa(u)``                                Taylor coefficients
========================= =========================================== ======================
``"exp"``                 ``exp(alpha (u - 1))`` (Gaussian on the     ``e^{-alpha} alpha^j/j!``
                          sphere: ``exp(-(alpha/2) ||x - y||^2)``)
``"inverse_polynomial"``  ``1 / (2 - u)``                             ``2^{-(j+1)}``
``"polynomial"``          ``((offset + u) / (offset + 1))^degree``    binomial, ``>= 0``
``"vovk"``                ``(1 + u + ... + u^{p-1}) / p`` (Vovk-p)    ``1/p`` for ``j < p``
========================= =========================================== ======================

Each kernel class takes vectors; ``homogeneous=False`` evaluates ``kappa`` on the cosine
``<x, y> / (||x|| ||y||)`` (the inputs projected on the sphere), ``homogeneous=True`` the
homogeneous kernel above.  A zero vector has cosine 0 with everything (its projection is
taken as 0) and homogeneous kernel 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial
from typing import Any

import torch

from kernelkit.kernels._base import Kernel
from kernelkit.utils._errors import InputError
from kernelkit.utils._validation import check_int, check_positive

KappaFunction = Callable[[torch.Tensor], torch.Tensor]


# ---------------------------------------------------------------------- kappa functions
def kappa_exp(u: torch.Tensor, alpha: float = 1.0) -> torch.Tensor:
    """``exp(alpha (u - 1))``: the Gaussian ``exp(-(alpha/2)||x - y||^2)`` on the sphere."""
    return torch.exp(alpha * (u - 1.0))


def kappa_inverse_polynomial(u: torch.Tensor) -> torch.Tensor:
    """``1 / (2 - u)`` (course part 3, section 7, ``kappa_invpoly``); finite for ``u < 2``."""
    return 1.0 / (2.0 - u)


def kappa_polynomial(u: torch.Tensor, degree: int = 2, offset: float = 1.0) -> torch.Tensor:
    """``((offset + u) / (offset + 1))^degree``: ``(c + u)^p`` scaled to ``kappa(1) = 1``."""
    return ((offset + u) / (offset + 1.0)) ** degree


def kappa_vovk(u: torch.Tensor, degree: int = 3) -> torch.Tensor:
    """Vovk's ``(1 + u + ... + u^{p-1}) / p`` (course part 3, section 6: Vovk-3 is p = 3)."""
    powers = torch.stack([u**j for j in range(degree)])
    return powers.sum(0) / degree


KAPPAS: dict[str, Callable[..., torch.Tensor]] = {
    "exp": kappa_exp,
    "inverse_polynomial": kappa_inverse_polynomial,
    "polynomial": kappa_polynomial,
    "vovk": kappa_vovk,
}
"""The ``kappa`` functions by name (all with ``kappa(1) = 1``)."""


def kappa_function(name: str, **params: Any) -> KappaFunction:
    """The function ``u -> kappa(u)`` of :data:`KAPPAS` ``name`` with its parameters bound.

    Raises
    ------
    InputError
        For an unknown name.
    """
    if name not in KAPPAS:
        raise InputError(f"kappa: expected one of {sorted(KAPPAS)}, got {name!r}")
    return partial(KAPPAS[name], **params) if params else KAPPAS[name]


# ---------------------------------------------------------------------- kernels
def unit_rows(X: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(X / ||x||, ||x||)`` row-wise; zero rows stay zero (their norm is 0)."""
    norms = torch.linalg.vector_norm(X, dim=-1)
    safe = torch.where(norms > 0, norms, torch.ones_like(norms))
    return X / safe.unsqueeze(-1), norms


class _SphereKernel(Kernel):
    """``kappa(cos(x, y))`` or ``||x|| ||y|| kappa(cos(x, y))`` (see the module docstring)."""

    homogeneous: bool

    def kappa(self, u: torch.Tensor) -> torch.Tensor:
        """The function ``kappa`` of the kernel, with ``kappa(1) = 1``."""
        raise NotImplementedError

    def block(self, X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
        Xu, nx = unit_rows(X)
        Yu, ny = (Xu, nx) if Y is X else unit_rows(Y)
        K = self.kappa((Xu @ Yu.T).clamp(-1.0, 1.0))
        return K * nx[:, None] * ny[None, :] if self.homogeneous else K

    def block_diag(self, X: torch.Tensor) -> torch.Tensor:
        Xu, nx = unit_rows(X)
        K = self.kappa((Xu * Xu).sum(1))
        return K * nx * nx if self.homogeneous else K


class SphereExponential(_SphereKernel):
    r"""``kappa(u) = exp(alpha (u - 1))`` of the cosine: the Gaussian on the sphere.

    On unit vectors ``exp(alpha(<x, y> - 1)) = exp(-(alpha / 2) ||x - y||^2)`` (course part 3,
    section 6); the CKN's ``kappa_exp`` with ``alpha = 1 / sigma^2`` (section 7).

    Parameters
    ----------
    alpha : float
        Inverse squared width, ``> 0``.
    homogeneous : bool
        ``||x|| ||y|| kappa(cos)`` instead of ``kappa(cos)``.
    """

    def __init__(self, alpha: float = 1.0, homogeneous: bool = False):
        super().__init__()
        self.alpha = check_positive(alpha, name="alpha")
        self.homogeneous = bool(homogeneous)

    def kappa(self, u: torch.Tensor) -> torch.Tensor:
        return kappa_exp(u, self.alpha)


class SphereInversePolynomial(_SphereKernel):
    """``kappa(u) = 1 / (2 - u)`` of the cosine (course part 3, sections 6-7).

    Parameters
    ----------
    homogeneous : bool
        ``||x|| ||y|| kappa(cos)`` instead of ``kappa(cos)``.
    """

    def __init__(self, homogeneous: bool = False):
        super().__init__()
        self.homogeneous = bool(homogeneous)

    def kappa(self, u: torch.Tensor) -> torch.Tensor:
        return kappa_inverse_polynomial(u)


class SpherePolynomial(_SphereKernel):
    """``kappa(u) = ((offset + u) / (offset + 1))^degree`` of the cosine (course part 3, §6).

    Parameters
    ----------
    degree : int
        ``p >= 1``.
    offset : float
        ``c >= 0``.
    homogeneous : bool
        ``||x|| ||y|| kappa(cos)`` instead of ``kappa(cos)``.
    """

    def __init__(self, degree: int = 2, offset: float = 1.0, homogeneous: bool = False):
        super().__init__()
        self.degree = check_int(degree, name="degree", minimum=1)
        self.offset = check_positive(offset, name="offset", strict=False)
        self.homogeneous = bool(homogeneous)

    def kappa(self, u: torch.Tensor) -> torch.Tensor:
        return kappa_polynomial(u, self.degree, self.offset)


class SphereVovk(_SphereKernel):
    """Vovk's kernel ``kappa(u) = (1 + u + ... + u^{p-1}) / p`` of the cosine (part 3, §6).

    Parameters
    ----------
    degree : int
        ``p >= 1`` (Vovk-3 of the course: ``p = 3``).
    homogeneous : bool
        ``||x|| ||y|| kappa(cos)`` instead of ``kappa(cos)``.
    """

    def __init__(self, degree: int = 3, homogeneous: bool = False):
        super().__init__()
        self.degree = check_int(degree, name="degree", minimum=1)
        self.homogeneous = bool(homogeneous)

    def kappa(self, u: torch.Tensor) -> torch.Tensor:
        return kappa_vovk(u, self.degree)


def kappa_taylor_coefficients(name: str, n_terms: int, **params: Any) -> list[float]:
    """The first ``n_terms`` Taylor coefficients ``b_j`` of ``kappa`` at 0 (closed forms).

    All are ``>= 0``, which is Schoenberg's condition (course part 3, section 6).
    """
    if name == "exp":
        a = float(params.get("alpha", 1.0))
        return [math.exp(-a) * a**j / math.factorial(j) for j in range(n_terms)]
    if name == "inverse_polynomial":
        return [2.0 ** -(j + 1) for j in range(n_terms)]
    if name == "polynomial":
        p, c = int(params.get("degree", 2)), float(params.get("offset", 1.0))
        return [
            math.comb(p, j) * c ** (p - j) / (c + 1.0) ** p if j <= p else 0.0
            for j in range(n_terms)
        ]
    if name == "vovk":
        p = int(params.get("degree", 3))
        return [1.0 / p if j < p else 0.0 for j in range(n_terms)]
    raise InputError(f"kappa: expected one of {sorted(KAPPAS)}, got {name!r}")


__all__ = [
    "SphereExponential",
    "SphereInversePolynomial",
    "SpherePolynomial",
    "SphereVovk",
    "kappa_exp",
    "kappa_function",
    "kappa_inverse_polynomial",
    "kappa_polynomial",
    "kappa_taylor_coefficients",
    "kappa_vovk",
    "unit_rows",
]
