"""Kernels on vectors: linear, polynomial, Gaussian, Laplacian, Matérn and tensor Matérn.

Conventions (course part 1, section 1; part 2, Laplace and Matérn):

* ``Linear``: ``<x, y>``; ``Polynomial``: ``(scale <x, y> + offset)^degree``.
* ``Gaussian(sigma)``: ``exp(-||x - y||^2 / (2 sigma^2))``; scikit-learn's ``rbf_kernel`` with
  ``gamma = 1 / (2 sigma^2)``.
* ``Laplacian(sigma)``: ``exp(-||x - y||_2 / sigma)`` (Euclidean norm; scikit-learn's
  ``laplacian_kernel`` uses the L1 norm instead).  Equal to ``Matern(nu=0.5, sigma)``.
* ``Matern(nu, sigma)``: ``2^(1-nu)/Gamma(nu) t^nu K_nu(t)``, ``t = sqrt(2 nu) r / sigma``,
  the convention of scikit-learn's GP ``Matern(length_scale=sigma, nu=nu)``.
* ``TensorMatern(s, sigma)``: Bohn, Griebel, Rieger §4.1,
  ``prod_i kappa_{s-1/2}(|x_i - y_i|) |x_i - y_i|^{s-1/2}``, here scaled by ``sigma`` and
  normalised so ``k(x, x) = 1``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from scipy import special
from sklearn.metrics.pairwise import manhattan_distances

from kernelkit.kernels._base import (
    DotProductKernel,
    Kernel,
    StationaryKernel,
    check_gaussian_width,
    half_integer_order,
)
from kernelkit.kernels._sparse import SparseRows
from kernelkit.utils._errors import InputError
from kernelkit.utils._validation import check_int, check_positive


class Linear(DotProductKernel):
    """Linear kernel ``k(x, y) = <x, y>``; its RKHS is ``{x -> w^T x}`` with norm ``||w||``.

    Course part 1, slide "The linear kernel".
    """

    def __init__(self) -> None:
        super().__init__()

    def scalar(self, g: torch.Tensor) -> torch.Tensor:
        return g


class Polynomial(DotProductKernel):
    """Polynomial kernel ``k(x, y) = (scale <x, y> + offset)^degree``.

    p.d. for ``offset >= 0`` and integer ``degree >= 1`` (sums and products of p.d. kernels,
    course part 1, section 1).  Equals scikit-learn's ``polynomial_kernel(gamma=scale,
    coef0=offset, degree=degree)``.
    """

    def __init__(self, degree: int = 2, scale: float = 1.0, offset: float = 1.0):
        super().__init__()
        self.degree = check_int(degree, name="degree", minimum=1)
        self.scale = check_positive(scale, name="scale")
        self.offset = check_positive(offset, name="offset", strict=False)

    def scalar(self, g: torch.Tensor) -> torch.Tensor:
        return (self.scale * g + self.offset) ** self.degree


class Gaussian(StationaryKernel):
    """Gaussian (RBF) kernel ``k(x, y) = exp(-||x - y||^2 / (2 sigma^2))``.

    Course part 1, section 1: ``k(x, x) = 1`` and ``d_k(x, y) = sqrt(2 (1 - k(x, y)))``.
    scikit-learn's ``rbf_kernel`` with ``gamma = 1 / (2 sigma^2)``.
    """

    def __init__(self, sigma: float = 1.0):
        super().__init__()
        self.sigma = check_gaussian_width(sigma)

    def profile(self, d2: torch.Tensor) -> torch.Tensor:
        return torch.exp(d2 * (-0.5 / self.sigma**2))

    def profile_(self, d2: torch.Tensor) -> torch.Tensor:
        return d2.mul_(-0.5 / self.sigma**2).exp_()

    def block_into(self, X: torch.Tensor, Y: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        """Fused tile: one GEMM of augmented inputs, then two in-place passes.

        With ``g = 1 / (2 sigma^2)``, ``[2g x, -g |x|^2, -1] . [y, 1, g |y|^2]`` is the
        exponent ``-g ||x - y||^2``, so the GEMM writes it directly; it is clipped at 0 (the
        diagonal of a symmetric tile set to exactly 0) and exponentiated in place.  The tile
        is bound by the ``exp`` pass and the writes, not by the GEMM.
        """
        if isinstance(X, SparseRows) or isinstance(Y, SparseRows):
            return super().block_into(X, Y, out)
        if torch.is_grad_enabled() and (X.requires_grad or Y.requires_grad):
            return out.copy_(self.block(X, Y))
        g = 0.5 / self.sigma**2
        x2 = (X * X).sum(1, keepdim=True)
        ones = torch.ones_like(x2)
        left = torch.cat([X * (2.0 * g), x2 * -g, -ones], dim=1)
        y2 = x2 if Y is X else (Y * Y).sum(1, keepdim=True)
        right = torch.cat([Y, torch.ones_like(y2), y2 * g], dim=1)
        torch.mm(left, right.T, out=out)
        out.clamp_max_(0.0)
        if Y is X:
            out.fill_diagonal_(0.0)
        return out.exp_()


class Laplacian(StationaryKernel):
    """Laplacian (exponential) kernel ``k(x, y) = exp(-||x - y||_2 / sigma)``.

    Course part 2 (Laplace kernel, RKHS = Sobolev H^1 in 1-D).  Equal to
    ``Matern(nu=0.5, sigma=sigma)``.  The Euclidean norm is used; scikit-learn's
    ``laplacian_kernel`` uses the L1 norm, which is a different kernel for ``d > 1``.
    """

    def __init__(self, sigma: float = 1.0):
        super().__init__()
        self.sigma = check_positive(sigma, name="sigma")

    def profile(self, d2: torch.Tensor) -> torch.Tensor:
        # the tiny floor keeps the gradient of sqrt finite at d2 = 0
        return torch.exp(-torch.sqrt(d2.clamp_min(torch.finfo(d2.dtype).tiny)) / self.sigma)

    def profile_(self, d2: torch.Tensor) -> torch.Tensor:
        return d2.sqrt_().mul_(-1.0 / self.sigma).exp_()


def _matern_half_integer(r: torch.Tensor, p: int) -> torch.Tensor:
    """``m_{p+1/2}(r)`` normalised so ``m(0) = 1``, for scaled distance ``r`` (closed forms)."""
    e = torch.exp(-r)
    if p == 0:
        return e
    if p == 1:
        return (1.0 + r) * e
    return (1.0 + r + r * r / 3.0) * e


class _BesselMatern(torch.autograd.Function):
    """``m_nu(r) = 2^(1-nu)/Gamma(nu) r^nu K_nu(r)`` with ``m_nu(0) = 1``, via SciPy's ``kv``.

    Derivative: ``d/dr [r^nu K_nu(r)] = -r^nu K_{nu-1}(r)``, so
    ``m_nu'(r) = -c r^nu K_{nu-1}(r)`` with ``c = 2^(1-nu)/Gamma(nu)``.
    """

    @staticmethod
    def _eval(r: np.ndarray, nu: float, order: float) -> np.ndarray:
        c = 2.0 ** (1.0 - nu) / special.gamma(nu)
        with np.errstate(invalid="ignore", over="ignore"):
            val = c * r**nu * special.kv(order, r)
        return val

    @staticmethod
    def forward(ctx: Any, r: torch.Tensor, nu: float) -> torch.Tensor:
        rn = r.detach().cpu().numpy()
        val = _BesselMatern._eval(rn, nu, nu)
        bad = ~np.isfinite(val)
        val[bad & (rn < 1.0)] = 1.0  # 0 * inf at r ~ 0, where m_nu -> 1
        val[bad & (rn >= 1.0)] = 0.0  # underflow of K_nu for very large r
        val[rn == 0] = 1.0
        ctx.save_for_backward(r)
        ctx.nu = nu
        return torch.as_tensor(val, dtype=r.dtype, device=r.device)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        (r,) = ctx.saved_tensors
        rn = r.detach().cpu().numpy()
        der = -_BesselMatern._eval(rn, ctx.nu, ctx.nu - 1.0)
        der[rn == 0] = 0.0 if ctx.nu > 0.5 else -np.inf
        der[~np.isfinite(der) & (rn > 0)] = 0.0
        return grad * torch.as_tensor(der, dtype=r.dtype, device=r.device), None


def matern_profile(r: torch.Tensor, nu: float) -> torch.Tensor:
    """Normalised Matérn profile ``2^(1-nu)/Gamma(nu) r^nu K_nu(r)`` of a scaled distance ``r``."""
    p = half_integer_order(nu)
    if p is not None:
        return _matern_half_integer(r, p)
    return _BesselMatern.apply(r, nu)


class Matern(StationaryKernel):
    r"""Matérn kernel of smoothness ``nu > 0`` and length scale ``sigma``.

    .. math:: k(x, y) = \frac{2^{1-\nu}}{\Gamma(\nu)} \Big(\frac{\sqrt{2\nu}\, r}{\sigma}\Big)^{\nu}
              K_\nu\Big(\frac{\sqrt{2\nu}\, r}{\sigma}\Big), \qquad r = \|x - y\|_2,

    as scikit-learn's GP ``Matern(length_scale=sigma, nu=nu)``.  ``nu`` in {1/2, 3/2, 5/2} use
    closed forms (``exp(-t)``, ``(1+t) e^{-t}``, ``(1+t+t^2/3) e^{-t}``); any other ``nu`` uses
    the modified Bessel function ``K_nu`` (SciPy) with an exact derivative for autograd.
    ``nu -> infinity`` tends to ``Gaussian(sigma)``.
    """

    def __init__(self, nu: float = 1.5, sigma: float = 1.0):
        super().__init__()
        self.nu = check_positive(nu, name="nu")
        self.sigma = check_positive(sigma, name="sigma")

    def profile(self, d2: torch.Tensor) -> torch.Tensor:
        scale = math.sqrt(2.0 * self.nu) / self.sigma
        r = torch.sqrt(d2.clamp_min(torch.finfo(d2.dtype).tiny)) * scale
        return matern_profile(r, self.nu)


def _rows(X: Any) -> Any:
    """A vector batch as what ``manhattan_distances`` takes: CSR rows or a NumPy array."""
    return X.matrix if isinstance(X, SparseRows) else X.detach().cpu().numpy()


class TensorMatern(Kernel):
    r"""Tensor product of one-dimensional Matérn kernels (Bohn, Griebel, Rieger §4.1).

    .. math:: k(x, y) = \prod_{i=1}^d m_{s - 1/2}\big(|x_i - y_i| / \sigma\big), \qquad
              m_\nu(r) = \frac{2^{1-\nu}}{\Gamma(\nu)} r^\nu K_\nu(r),

    the reproducing kernel of the Sobolev space of dominating mixed smoothness ``s``.  The
    paper writes ``prod_i kappa_{s-1/2}(|x_i - y_i|) |x_i - y_i|^{s-1/2}``; we divide by its
    value at 0 (a positive constant, so the RKHS is the same) and add the length scale
    ``sigma``.  ``s = 1`` gives ``prod_i exp(-|x_i - y_i| / sigma) = exp(-||x - y||_1 /
    sigma)``, scikit-learn's ``laplacian_kernel`` with ``gamma = 1 / sigma``; for sparse rows
    it is computed from the L1 distances of the stored entries (scikit-learn's sparse
    ``manhattan_distances``), other ``s`` take dense rows only.
    """

    def __init__(self, s: float = 1.0, sigma: float = 1.0):
        super().__init__()
        self.s = check_positive(s, name="s")
        if self.s <= 0.5:
            raise InputError(f"s: expected smoothness s > 1/2 (nu = s - 1/2 > 0), got {s!r}")
        self.sigma = check_positive(sigma, name="sigma")

    @property
    def accepts_sparse(self) -> bool:  # type: ignore[override]
        """Sparse rows for ``s = 1``, ``exp(-||x - y||_1 / sigma)`` (an L1 distance)."""
        return self.s == 1.0

    def block(self, X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
        if isinstance(X, SparseRows) or isinstance(Y, SparseRows):
            l1 = manhattan_distances(_rows(X), _rows(Y))
            return torch.from_numpy(np.exp(l1 * (-1.0 / self.sigma))).to(X.dtype)
        nu = self.s - 0.5
        tiny = torch.finfo(X.dtype).tiny
        out = None
        for i in range(X.shape[1]):
            diff = (X[:, i, None] - Y[None, :, i]).abs().clamp_min(tiny) / self.sigma
            factor = matern_profile(diff, nu)
            out = factor if out is None else out * factor
        return out

    def block_diag(self, X: torch.Tensor) -> torch.Tensor:
        return torch.ones(X.shape[0], dtype=X.dtype, device=X.device)
