r"""Vector and permutation kernels of the course not covered elsewhere.

* :class:`Exponentiated`: ``exp(c K)`` of a p.d. kernel (course part 1, closure rules: the
  pointwise limit of ``sum_i (cK)^i / i!``, p.d. by sums, Schur products and limits);
* :class:`Brownian`: ``min(x, x')`` on ``R_+`` (course part 1, quiz kernel 8; part 2,
  "Green kernel": the reproducing kernel of ``{f : f(0) = 0, f' in L^2}`` with
  ``||f||^2 = int f'^2``), a product over coordinates on ``R_+^d`` (Brownian sheet);
* :class:`PeriodicSobolev`: ``(-1)^{beta+1} B_{2 beta}({x - t}) / (2 beta)!`` with Bernoulli
  polynomials (course part 2, "Bernoulli (periodic Sobolev) kernel", with the sign erratum of
  ``spec/course_part2.md``), a product over coordinates;
* :class:`LaplaceTransform`: ``phi(x + x')`` on the semigroup ``(R_+, +)`` with ``phi`` the
  Laplace transform of a Gamma measure (course part 2, semigroups, "Example 1: (R_+, +, Id)");
* :class:`Kendall`: the Kendall kernel on rankings, concordant minus discordant pairs (course
  part 2, kernels on graphs: the Cayley graph of ``S_n``; Jiao & Vert, IEEE TPAMI 2017).
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np
import torch

from kernelkit.kernels._base import Batch, Kernel, _check_kernel, _Composite
from kernelkit.utils._errors import InputError
from kernelkit.utils._validation import check_int, check_positive, to_tensor

__all__ = ["Brownian", "Exponentiated", "Kendall", "LaplaceTransform", "PeriodicSobolev"]


def _non_negative(X: Any, dtype: torch.dtype | None, owner: str) -> torch.Tensor:
    T = to_tensor(X, name="X", dtype=dtype)
    if bool((T < 0).any()):
        index = tuple(int(i) for i in torch.nonzero(T < 0)[0])
        raise InputError(
            f"X: {owner} is defined on R_+ (non-negative values), got X{list(index)} = "
            f"{float(T[index]):.4g}"
        )
    return T


class Exponentiated(_Composite):
    r"""``k(x, y) = exp(scale * k0(x, y))`` of a p.d. kernel ``k0``.

    Course part 1, closure rules (slide "exp(K)", ``spec/course_part1.md`` section 1):
    ``e^{K} = lim_N sum_{i <= N} K^i / i!`` is a pointwise limit of sums of Schur powers of a
    p.d. kernel, hence p.d.; ``scale >= 0`` keeps it so.  ``exp(<x, y> / sigma^2)`` times
    ``exp(-||x||^2 / (2 sigma^2)) exp(-||y||^2 / (2 sigma^2))`` is the Gaussian.

    Parameters
    ----------
    kernel : Kernel
        The p.d. kernel ``k0``.
    scale : float
        ``c >= 0``.
    """

    def __init__(self, kernel: Kernel, scale: float = 1.0):
        super().__init__()
        self.kernel = _check_kernel(kernel, "kernel")
        self.scale = check_positive(scale, name="scale", strict=False)

    @classmethod
    def _check_example(cls) -> tuple[Kernel, Any, Any]:
        from kernelkit.kernels._vector import Linear

        g = torch.Generator().manual_seed(0)
        X = torch.randn(9, 3, generator=g, dtype=torch.float64)
        return cls(Linear(), scale=0.5), X, torch.randn(4, 3, generator=g, dtype=torch.float64)

    def block(self, X: Batch, Y: Batch) -> torch.Tensor:
        return torch.exp(self.scale * self.kernel.block(X, Y))

    def block_diag(self, X: Batch) -> torch.Tensor:
        return torch.exp(self.scale * self.kernel.block_diag(X))


class Brownian(Kernel):
    r"""Brownian-motion (Green function) kernel ``k(x, y) = min(x, y)`` on ``R_+``.

    Course part 1, quiz kernel 8 (the covariance of Brownian motion); part 2, "Brownian /
    Green kernel": on ``[0, 1]`` its RKHS is the absolutely continuous ``f`` with
    ``f(0) = 0``, ``f' in L^2`` and ``||f||^2 = int f'^2`` (the Green function of
    ``D^* D``), so KRR with it fits a piecewise-linear function with knots at the data,
    0 at 0 and constant after ``max x_i``.  On ``R_+^d``,
    ``k(x, y) = prod_j min(x_j, y_j)`` (Brownian sheet; product of p.d. kernels).
    """

    def __init__(self) -> None:
        super().__init__()

    @classmethod
    def _check_example(cls) -> tuple[Kernel, Any, Any]:
        g = torch.Generator().manual_seed(0)
        X = torch.rand(10, 2, generator=g, dtype=torch.float64) * 3
        return cls(), X, torch.rand(5, 2, generator=g, dtype=torch.float64)

    def prepare(
        self, X: Any, *, dtype: torch.dtype | None = None, reference: bool = False
    ) -> torch.Tensor:
        return _non_negative(X, dtype, "Brownian (min(x, y))")

    def block(self, X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
        return torch.minimum(X[:, None, :], Y[None, :, :]).prod(-1)

    def block_diag(self, X: torch.Tensor) -> torch.Tensor:
        return X.prod(-1)


@lru_cache(maxsize=16)
def _bernoulli_coefficients(n: int) -> tuple[float, ...]:
    """Coefficients of the Bernoulli polynomial ``B_n(x) = sum_k C(n, k) B_k x^(n-k)``, by
    increasing power of ``x``; Bernoulli numbers by ``sum_{k<m+1} C(m+1, k) B_k = 0`` (exact
    fractions, ``B_1 = -1/2``)."""
    numbers = [Fraction(1)]
    for m in range(1, n + 1):
        numbers.append(-sum(math.comb(m + 1, k) * numbers[k] for k in range(m)) / (m + 1))
    return tuple(float(math.comb(n, k) * numbers[k]) for k in range(n, -1, -1))


class PeriodicSobolev(Kernel):
    r"""Periodic Sobolev kernel of order ``beta`` on ``[0, 1)`` (Bernoulli polynomials).

    Course part 2, "Bernoulli (periodic Sobolev) kernel", with the sign erratum of
    ``spec/course_part2.md`` (the slide's ``B_{2 beta}/(2 beta)!`` is negative for even
    ``beta``):

    .. math:: k(x, t) = \frac{(-1)^{\beta+1}}{(2\beta)!} B_{2\beta}(\{x - t\})
              = \sum_{n \neq 0} \frac{e^{2 i \pi n (x - t)}}{(2\pi n)^{2\beta}},

    ``{.}`` the fractional part, ``B_2 = x^2 - x + 1/6``, ``B_4 = x^4 - 2x^3 + x^2 - 1/30``.
    Its RKHS is the mean-zero 1-periodic functions with ``||f||^2 = int (f^{(beta)})^2`` and
    eigenvalues ``(2 pi n)^{-2 beta}`` (constants are not in it: add a
    :class:`~kernelkit.kernels.Constant` for them).  On ``R^d`` it is the product over
    coordinates.

    Parameters
    ----------
    order : int
        Smoothness ``beta >= 1``.
    """

    def __init__(self, order: int = 1):
        super().__init__()
        self.order = check_int(order, name="order", minimum=1)

    def _profile(self, u: torch.Tensor) -> torch.Tensor:
        b = 2 * self.order
        out = torch.zeros_like(u)
        for c in reversed(_bernoulli_coefficients(b)):  # Horner, highest power first
            out = out * u + c
        return (-1) ** (self.order + 1) * out / math.factorial(b)

    def block(self, X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
        u = torch.remainder(X[:, None, :] - Y[None, :, :], 1.0)
        return self._profile(u).prod(-1)

    def block_diag(self, X: torch.Tensor) -> torch.Tensor:
        return self._profile(torch.zeros_like(X)).prod(-1)


class LaplaceTransform(Kernel):
    r"""Laplace-transform kernel on ``(R_+, +)``: ``k(x, y) = phi(x + y)``.

    Course part 2, semigroups, "Example 1: (R_+, +, Id)": the bounded p.d. functions on the
    semigroup ``(R_+, +)`` are the Laplace transforms ``phi(s) = int e^{-a s} dmu(a)`` of
    bounded measures, and ``phi(x + y)`` is then a p.d. kernel.  Here ``mu`` is the Gamma
    distribution of shape ``c`` and rate ``b``:

    .. math:: \phi(s) = \int_0^\infty e^{-a s} \frac{b^c a^{c-1} e^{-b a}}{\Gamma(c)} da
              = \Big(\frac{b}{b + s}\Big)^{c},

    (``c = 1``: ``1 / (1 + s / b)``).  On ``R_+^d``, ``s = sum_j (x_j + y_j)``
    (``x -> sum_j x_j`` is a semigroup morphism onto ``R_+``).

    Parameters
    ----------
    shape : float
        ``c > 0``.
    rate : float
        ``b > 0``.
    """

    def __init__(self, shape: float = 1.0, rate: float = 1.0):
        super().__init__()
        self.shape = check_positive(shape, name="shape")
        self.rate = check_positive(rate, name="rate")

    @classmethod
    def _check_example(cls) -> tuple[Kernel, Any, Any]:
        g = torch.Generator().manual_seed(1)
        X = torch.rand(10, 2, generator=g, dtype=torch.float64) * 2
        return cls(shape=1.5, rate=0.7), X, torch.rand(4, 2, generator=g, dtype=torch.float64)

    def prepare(
        self, X: Any, *, dtype: torch.dtype | None = None, reference: bool = False
    ) -> torch.Tensor:
        return _non_negative(X, dtype, "LaplaceTransform")

    def _phi(self, s: torch.Tensor) -> torch.Tensor:
        return (self.rate / (self.rate + s)) ** self.shape

    def block(self, X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
        return self._phi(X.sum(1)[:, None] + Y.sum(1)[None, :])

    def block_diag(self, X: torch.Tensor) -> torch.Tensor:
        return self._phi(2 * X.sum(1))


class Kendall(Kernel):
    r"""Kendall kernel on rankings: concordant minus discordant pairs (Jiao & Vert 2017).

    For vectors ``x, y in R^n`` (a permutation ``sigma`` read as its ranks, or scores of
    ``n`` items), with ``phi(x) = (sign(x_i - x_j))_{i<j}``,

    .. math:: k(x, y) = \frac{\langle \phi(x), \phi(y) \rangle}{\binom{n}{2}}
              = \frac{n_c(x, y) - n_d(x, y)}{\binom{n}{2}},

    Kendall's tau for permutations (ties count 0), p.d. by its explicit features
    (:meth:`features`).  Course part 2, "Kernels on graphs": on the symmetric group the
    number of discordant pairs ``n_d`` is the distance of the Cayley graph of adjacent
    transpositions (Kendall's tau distance), and ``k = 1 - 2 n_d / binom(n, 2)``.

    Parameters
    ----------
    normalize : bool
        Divide by ``binom(n, 2)`` (Kendall's tau, in ``[-1, 1]``); ``False``: ``n_c - n_d``.
    """

    differentiable: ClassVar[bool] = False

    def __init__(self, normalize: bool = True):
        super().__init__()
        if not isinstance(normalize, (bool, np.bool_)):
            raise InputError(f"normalize: expected True or False, got {normalize!r}")
        self.normalize = bool(normalize)

    def features(self, X: torch.Tensor) -> torch.Tensor:
        """``phi(X)``, shape ``(len(X), binom(n, 2))`` (scaled by ``binom(n, 2)^{-1/2}``
        when ``normalize``)."""
        n = X.shape[1]
        if n < 2:
            raise InputError(f"X: the Kendall kernel compares pairs of items; got {n} item")
        i, j = torch.triu_indices(n, n, offset=1, device=X.device)
        phi = torch.sign(X[:, i] - X[:, j])
        return phi / math.sqrt(len(i)) if self.normalize else phi

    def block(self, X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
        return self.features(X) @ self.features(Y).T

    def block_diag(self, X: torch.Tensor) -> torch.Tensor:
        return (self.features(X) ** 2).sum(1)
