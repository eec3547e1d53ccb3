r"""Sparse (Nyström) Gaussian-process regression: Titsias's variational bound and posterior.

The model is that of :mod:`kernelkit.models._gp` (``f ~ GP(0, a k)``, ``eps ~ N(0, s2)``)
approximated through ``m`` inducing points (centres) ``C``.  With ``L L^T = K_mm + tau I``
(the one regularisation of :func:`~kernelkit.solvers._nystrom_pcg.centre_jitter`) and the
Nyström features ``Phi = K_nm L^{-T}`` of the base kernel, ``Q_nn = a Phi Phi^T``.  Titsias
("Variational learning of inducing variables in sparse Gaussian processes", AISTATS 2009,
eq. 9) bounds the log marginal likelihood by

.. math:: F = \log \mathcal N(y \mid 0, Q_{nn} + s_2 I)
              - \frac{a}{2 s_2} \operatorname{tr}(K_{nn} - \Phi\Phi^T).

Everything it needs is ``A = Phi^T Phi``, ``b = Phi^T y``, ``y^T y``, ``tr K_nn`` and ``n``:
the one-pass statistics of :func:`~kernelkit.models._falkon.nystrom_statistics` (one streamed
pass, ``K_nm`` never stored).  With ``B = A + (s2 / a) I`` (Woodbury and the matrix
determinant lemma), per output column

.. math:: F = -\tfrac12\Big[(n - m)\log s_2 + m \log a + \log|B|
              + \frac{y^T y - b^T B^{-1} b}{s_2} + \frac{a (\operatorname{tr} K_{nn}
              - \operatorname{tr} A)}{s_2} + n \log 2\pi\Big].

The optimal variational posterior (Titsias 2009, eq. 10; predictive eq. 6) has mean
``phi_*^T B^{-1} b`` (Nyström kernel ridge regression with ``n lam = s2 / a``) and variance

.. math:: \operatorname{Var}[f_*] = a\,(k_{**} - \|\phi_*\|^2) + s_2\, \phi_*^T B^{-1} \phi_*,
          \qquad \phi_* = L^{-1} k_m(x_*).

With every training point a centre, ``Phi Phi^T = K (K + tau I)^{-1} K = K`` up to ``tau``: the
bound, the mean and the variance are the exact GP's.  Gradients with respect to ``a``,
``s2`` come from autograd on the ``m x m`` problem; with respect to the kernel's continuous
parameters from :class:`StreamedBound`: a second pass back-propagates ``dF/dA``, ``dF/db``
and ``dF/d tr K_nn`` tile by tile (memory ``O(tile x m)``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from kernelkit.gram._centres import take
from kernelkit.kernels import Kernel
from kernelkit.kernels._base import Batch
from kernelkit.models._falkon import nystrom_statistics, nystrom_system
from kernelkit.solvers import cholesky_factor
from kernelkit.solvers._cholesky import solve_triangular
from kernelkit.solvers._nystrom_pcg import centre_jitter
from kernelkit.utils._config import deprecated_options, options
from kernelkit.utils._errors import InputError

__all__ = [
    "SparseGPPosterior",
    "SparseGPStatistics",
    "StreamedBound",
    "row_tiles",
    "sparse_gp_bound",
    "sparse_gp_posterior",
    "sparse_gp_predict",
    "sparse_gp_statistics",
]

__getattr__ = deprecated_options(__name__, {"TILE_ENTRIES": "gp_tile_entries"})
"""``TILE_ENTRIES`` of the previous release, now the option ``gp_tile_entries``
(``kernelkit.get_config``): importable with a ``FutureWarning`` for one release."""


@dataclass(frozen=True)
class SparseGPStatistics:
    r"""What the variational bound and the posterior need from the data (module docstring).

    Attributes
    ----------
    A : torch.Tensor, shape (m, m)
        ``Phi^T Phi`` (float64).
    b : torch.Tensor, shape (m, c)
        ``Phi^T Y``.
    yy : torch.Tensor, shape (c,)
        ``||y_j||^2`` per output column.
    trace : torch.Tensor
        ``tr K_nn = sum_i k(x_i, x_i)`` of the base kernel (scalar).
    basis : torch.Tensor, shape (m, m)
        Lower ``L``, ``L L^T = K_mm + tau I``.
    n : int
        Number of training points.
    """

    A: torch.Tensor
    b: torch.Tensor
    yy: torch.Tensor
    trace: torch.Tensor
    basis: torch.Tensor
    n: int

    @property
    def m(self) -> int:
        """Number of centres."""
        return int(self.A.shape[0])


def row_tiles(n: int, m: int) -> list[tuple[int, int]]:
    """``(start, stop)`` of the row tiles of ``n`` rows against ``m`` centres."""
    rows = max(1, options().gp_tile_entries // max(m, 1))
    return [(i, min(i + rows, n)) for i in range(0, n, rows)]


def _rows(Xb: Batch, i: int, j: int) -> Batch:
    return Xb[i:j] if isinstance(Xb, torch.Tensor) else take(Xb, np.arange(i, j))


def centre_basis(kernel: Kernel, centres: Batch) -> torch.Tensor:
    """``L`` with ``L L^T = K_mm + tau I`` (float64; differentiable in the kernel's tensors)."""
    K_mm = kernel.block(centres, centres).to(torch.float64)
    tau = centre_jitter(K_mm.detach())
    eye = torch.eye(K_mm.shape[0], dtype=K_mm.dtype, device=K_mm.device)
    return cholesky_factor(K_mm + tau * eye, name="K_mm").factor


def sparse_gp_statistics(
    kernel: Kernel, Xb: Batch, centres: Batch, Y: torch.Tensor
) -> SparseGPStatistics:
    """``A``, ``b``, ``y^T y`` and ``tr K_nn``: ``A`` and ``b`` from the one-pass statistics of
    the Nyström solvers (:func:`~kernelkit.models._falkon.nystrom_statistics`, in the feature
    coordinates of ``L``), no gradient.

    Parameters
    ----------
    kernel : Kernel
        The base kernel (amplitude 1).
    Xb : Batch
        Prepared training points (``n``).
    centres : Batch
        Prepared centres (``m``).
    Y : torch.Tensor, shape (n,) or (n, c)
        Targets.
    """
    Yc = (Y[:, None] if Y.ndim == 1 else Y).to(torch.float64)
    n = len(Xb)
    if Yc.shape[0] != n:
        raise InputError(f"Y: expected {n} rows, got {Yc.shape[0]}")
    with torch.no_grad():
        stats = nystrom_statistics(nystrom_system(kernel, Xb, None, centres=centres), Yc)
        trace = kernel.block_diag(Xb).to(torch.float64).sum()
    A, b = stats.H[0], stats.r
    A = 0.5 * (A + A.mT)
    return SparseGPStatistics(A, b, (Yc * Yc).sum(0).to(A.device), trace, stats.basis, n)


def sparse_gp_bound(
    stats: SparseGPStatistics,
    amplitude: float | torch.Tensor,
    noise: float | torch.Tensor,
    *,
    A: torch.Tensor | None = None,
    b: torch.Tensor | None = None,
    trace: torch.Tensor | None = None,
) -> torch.Tensor:
    """Titsias's bound ``F`` (module docstring), summed over the output columns.

    ``A``, ``b``, ``trace`` override the statistics' (leaf tensors of :class:`StreamedBound`);
    differentiable in every tensor argument.
    """
    A = stats.A if A is None else A
    b = stats.b if b is None else b
    trace = stats.trace if trace is None else trace
    amp = torch.as_tensor(amplitude, dtype=torch.float64)
    s2 = torch.as_tensor(noise, dtype=torch.float64)
    n, m, c = stats.n, stats.m, b.shape[1]
    eye = torch.eye(m, dtype=A.dtype, device=A.device)
    LB = cholesky_factor(A + (s2 / amp) * eye, name="A + (noise / amplitude) I").factor
    z = solve_triangular(LB, b, upper=False)
    logdet = (n - m) * torch.log(s2) + m * torch.log(amp) + 2 * torch.log(LB.diagonal()).sum()
    quad = (stats.yy - (z * z).sum(0)).sum() / s2
    slack = amp * (trace - A.diagonal().sum()) / s2
    return -0.5 * (c * logdet + quad + c * slack + n * c * math.log(2 * math.pi))


@dataclass(frozen=True)
class SparseGPPosterior:
    """The variational posterior at fixed hyper-parameters.

    Attributes
    ----------
    coef : torch.Tensor, shape (m,) or (m, c)
        ``alpha = L^{-T} B^{-1} b``: the posterior mean is ``K(x, C) alpha``.
    basis, factor : torch.Tensor
        ``L`` (``L L^T = K_mm + tau I``) and the lower Cholesky factor of ``B``.
    amplitude, noise : float
    """

    coef: torch.Tensor
    basis: torch.Tensor
    factor: torch.Tensor
    amplitude: float
    noise: float


def sparse_gp_posterior(
    stats: SparseGPStatistics, amplitude: float, noise: float, *, single_output: bool = False
) -> SparseGPPosterior:
    """Mean coefficients and factors of the optimal variational posterior (Titsias 2009)."""
    eye = torch.eye(stats.m, dtype=stats.A.dtype, device=stats.A.device)
    LB = cholesky_factor(stats.A + (noise / amplitude) * eye, name="A + (noise / amplitude) I")
    beta = LB.solve(stats.b)
    coef = solve_triangular(stats.basis.mT, beta, upper=True)
    return SparseGPPosterior(
        coef[:, 0] if single_output else coef, stats.basis, LB.factor, amplitude, noise
    )


def sparse_gp_predict(
    post: SparseGPPosterior,
    Ks: torch.Tensor,
    prior_diag: torch.Tensor | None = None,
    prior_cov: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Posterior mean at test points and its variance or covariance (module docstring).

    Parameters
    ----------
    post : SparseGPPosterior
    Ks : torch.Tensor, shape (t, m)
        Base-kernel values of the test points against the centres.
    prior_diag, prior_cov : torch.Tensor, optional
        Base-kernel ``k(x_*, x_*)`` (shape ``(t,)``) or ``K_**`` (``(t, t)``).
    """
    Ks = Ks.to(torch.float64)
    mean = Ks @ post.coef
    if prior_diag is None and prior_cov is None:
        return mean, None
    Phi = solve_triangular(post.basis, Ks.mT, upper=False)  # (m, t)
    Psi = solve_triangular(post.factor, Phi, upper=False)
    a, s2 = post.amplitude, post.noise
    if prior_cov is not None:
        cov = a * (prior_cov.to(torch.float64) - Phi.mT @ Phi) + s2 * (Psi.mT @ Psi)
        return mean, cov
    var = a * (prior_diag.to(torch.float64) - (Phi * Phi).sum(0)) + s2 * (Psi * Psi).sum(0)
    return mean, var.clamp_min(0.0)


class StreamedBound:
    r"""``-F`` as a function of the kernel's parameters, the log amplitude and the log noise.

    Each evaluation makes one pass to form the statistics (no graph kept), differentiates the
    ``m x m`` bound with respect to ``A``, ``b``, ``tr K_nn`` and ``L`` (leaf tensors), then
    a second pass back-propagates ``<dF/dA, Phi_b^T Phi_b> + <dF/db, Phi_b^T y_b> +
    dF/dtr * tr K_b`` tile by tile into the kernel's parameters: the exact gradient in
    ``O(tile x m)`` memory (the chain rule split at the statistics).

    Parameters
    ----------
    make_kernel : callable
        ``make_kernel(values) -> Kernel`` for a dict of parameter tensors (autograd flows).
    names : list of str
        The kernel parameters optimised (log scale in ``t``).
    Xb, centres : Batch
        Prepared training points and centres.
    Y : torch.Tensor
        Targets.
    fixed : dict
        ``amplitude`` / ``noise`` values when not optimised.
    learned : list of str
        Subset of ``["amplitude", "noise"]`` optimised (log scale, after ``names`` in ``t``).
    """

    def __init__(
        self,
        make_kernel: Callable[[dict[str, Any]], Kernel],
        names: list[str],
        Xb: Batch,
        centres: Batch,
        Y: torch.Tensor,
        fixed: dict[str, float],
        learned: list[str],
    ) -> None:
        self.make_kernel, self.names, self.learned = make_kernel, names, learned
        self.Xb, self.centres, self.fixed = Xb, centres, fixed
        self.Y = (Y[:, None] if Y.ndim == 1 else Y).to(torch.float64)
        self._last: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None

    def __call__(self, t: torch.Tensor) -> torch.Tensor:
        """``-F(exp(t))``; call ``.backward()`` on it to fill ``t.grad``."""
        return _NegativeBound.apply(t, self)

    def value_and_grad(self, t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``-F`` and its gradient with respect to ``t`` (two streamed passes).

        ``A = L^{-1} G L^{-T}`` and ``b = L^{-1} c`` with ``G = K_nm^T K_nm``, ``c = K_nm^T y``,
        so with ``L`` fixed ``dF/dK_b = K_b (P + P^T) + y_b h^T``, ``P = L^{-T} (dF/dA)
        L^{-1}``, ``h = L^{-T} dF/db``: one product per tile, back-propagated through the
        kernel's tile.  The dependence through ``L`` (``K_mm``) is the ``m x m`` expression
        differentiated at fixed ``G = L A L^T`` and ``c = L b``.
        """
        t = t.detach().to(torch.float64)
        if self._last is not None and torch.equal(self._last[0], t):
            return self._last[1], self._last[2]
        k = len(self.names)
        theta = torch.exp(t[:k]).requires_grad_(True)
        hyper = torch.exp(t[k:]).requires_grad_(True)
        kernel = self.make_kernel(dict(zip(self.names, theta, strict=True)))
        L = centre_basis(kernel, self.centres)
        stats = sparse_gp_statistics(kernel, self.Xb, self.centres, self.Y)
        values = dict(zip(self.learned, hyper, strict=True))
        amp = values.get("amplitude", self.fixed["amplitude"])
        s2 = values.get("noise", self.fixed["noise"])
        A = stats.A.clone().requires_grad_(True)
        b = stats.b.clone().requires_grad_(True)
        tr = stats.trace.clone().requires_grad_(True)
        F = sparse_gp_bound(stats, amp, s2, A=A, b=b, trace=tr)
        inputs = [A, b, tr] + ([hyper] if self.learned else [])
        grads = torch.autograd.grad(F, inputs)
        gA, gb, gtr = (g.detach() for g in grads[:3])
        grad_t = torch.zeros_like(t)
        if self.learned:
            grad_t[k:] = grads[3] * hyper.detach()
        if k:
            self._kernel_gradient(kernel, L, stats, gA, gb, gtr)
            grad_t[:k] = theta.grad * theta.detach()
        self._last = (t.clone(), -F.detach(), -grad_t)
        return -F.detach(), -grad_t

    def _kernel_gradient(
        self,
        kernel: Kernel,
        L: torch.Tensor,
        stats: SparseGPStatistics,
        gA: torch.Tensor,
        gb: torch.Tensor,
        gtr: torch.Tensor,
    ) -> None:
        """Accumulate ``dF/dtheta`` into the kernel's parameter tensors (``value_and_grad``)."""
        Ld = stats.basis  # the coordinates A and b were formed in
        G = Ld @ stats.A @ Ld.mT
        c = Ld @ stats.b
        A_of_L = solve_triangular(L, solve_triangular(L, G, upper=False).mT, upper=False)
        b_of_L = solve_triangular(L, c, upper=False)
        ((gA * A_of_L).sum() + (gb * b_of_L).sum()).backward()
        P = solve_triangular(Ld.mT, solve_triangular(Ld.mT, gA, upper=True).mT, upper=True)
        N = P + P.mT
        h = solve_triangular(Ld.mT, gb, upper=True)
        for i, j in row_tiles(stats.n, stats.m):
            rows = _rows(self.Xb, i, j)
            K_b = kernel.block(rows, self.centres).to(torch.float64)
            dK = torch.addmm(self.Y[i:j].to(K_b.device) @ h.mT, K_b.detach(), N)
            diag = kernel.block_diag(rows).to(torch.float64).sum()
            if diag.requires_grad:
                (gtr * diag).backward()
            K_b.backward(dK)


class _NegativeBound(torch.autograd.Function):
    """Autograd wrapper of :meth:`StreamedBound.value_and_grad` for the L-BFGS driver."""

    @staticmethod
    def forward(ctx: Any, t: torch.Tensor, bound: StreamedBound) -> torch.Tensor:
        with torch.enable_grad():
            value, grad = bound.value_and_grad(t)
        ctx.save_for_backward(grad.to(t.device))  # the optimiser's variable: on the CPU
        return value.to(t.device)

    @staticmethod
    def backward(ctx: Any, grad_output: torch.Tensor) -> tuple[torch.Tensor, None]:
        (grad,) = ctx.saved_tensors
        return grad_output * grad, None
