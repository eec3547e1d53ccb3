r"""Concatenated (deep) kernel regression and interpolation (Bohn, Griebel, Rieger 2019).

A composition ``h = f o g_{L-1} o ... o g_1`` of a scalar *outer* function ``f`` in the RKHS of
a kernel ``k`` and vector-valued *inner* functions ``g_l`` in RKHSs of matrix-valued kernels.
By the representer theorem for concatenations (Theorem 1; Corollaries 3 and 4 for the two-layer
problems (uP-X) and (uR-X)), every optimal inner function is a finite expansion over the
(images of the) training points, eq. (16),

.. math:: g(x) = \sum_{j=1}^N \sum_{\ell=1}^D c_{j\ell}\, \mathbf K(x_j, x)\, e_\ell, \qquad
          \|g\|^2 = \mathcal N(c) = \sum_{j,k} c_j^T \mathbf K(x_j, x_k) c_k \quad (18),

which is :class:`~kernelkit.models.KernelLayer` with the decomposable kernel
``K(x, y) = k_I(x, y) diag(w)`` (eq. 20: ``g(x) = sum_j k_I(x, x_j) diag(w) c_j``), or, for the
"mixture" of section 4.2.3, the diagonal kernel ``diag(k_1(x, y), ..., k_D(x, y))`` (one scalar
kernel per output coordinate, ``g_l(x) = w_l sum_j k_l(x, x_j) c_{jl}``).  For a fixed inner map
the outer function is solved in closed form on ``Z = g(X)`` with ``Q = [k(z_i, z_j)]`` (17):

* least squares (problem (uR-X), eq. 19), with kernelkit's ERM convention
  ``(1/n) sum_i (y_i - f(z_i))^2 + lam ||f||^2 + mu ||g||^2``.  At the optimal ``f``
  (``alpha = (Q + n lam I)^{-1} y``) the paper's three terms ``Q^lam + C^lam`` collapse to

  .. math:: J = \lambda\, y^T (Q + n\lambda I)^{-1} y + \mu\, \mathcal N(c)
                [+ \gamma \textstyle\sum_{i<j} \coth\|z_i - z_j\|^2],

  since ``I - Q A = n lam A`` for ``A = (Q + n lam I)^{-1}`` (DESIGN.md section 5);
  the paper's ``(lambda, mu, gamma)`` (unnormalised sum of squares) are ``n`` times ours:
  ``lambda_paper = n lam``, ``mu_paper = n mu``, ``gamma_paper = n gamma``, and the paper's
  objective (Reg) is ``n J``;
* interpolation (problem (Int)): ``J = (1/n) y^T Q^{-1} y + mu N(c) [+ gamma coth-sum]``, the
  paper's ``Q(c) + N(c)`` (+ eq. 15's penalty) divided by ``n``, i.e. ``mu = 1/n`` is the paper.

Both use one (batched) Cholesky per evaluation through :class:`~kernelkit.models.RidgeTrace`,
whose explicit backward is the envelope-theorem gradient; the inner gradients come from
autograd through the chain (instead of the paper's explicit derivatives, section 3.4.3).
The paper's ``n_restarts = 64`` random initialisations are run *together*: every inner
coefficient carries a leading restart dimension, so one objective evaluation is one batched
Cholesky of ``(n_restarts, N, N)`` matrices, minimised by :func:`lbfgs_batched` (an L-BFGS with
an independent history and backtracking line search per restart); the restart with the lowest
objective is kept and can then be polished by :func:`kernelkit.models.train` (the KAE
training loop, strong-Wolfe L-BFGS, best state kept).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from kernelkit.kernels import Kernel
from kernelkit.models._autoencoder import train
from kernelkit.models._layers import KernelChain, KernelLayer, layer_gram
from kernelkit.models._ridge import RidgeTrace
from kernelkit.solvers import cholesky_factor, lbfgs_restarts
from kernelkit.solvers._lbfgs import BatchedLBFGSResult, lbfgs_batched
from kernelkit.solvers._optima import DistinctOptima
from kernelkit.utils._errors import InputError, NotPSDError
from kernelkit.utils._progress import Progress
from kernelkit.utils._seeding import RandomStateLike, as_seed

__all__ = [
    "ConcatenatedData",
    "ConcatenatedModel",
    "InnerLayer",
    "Mixture",
    "RestartProblem",
    "build_concatenated",
    "coth_penalty",
    "fit_concatenated",
    "restart_problem",
]


class Mixture:
    """The diagonal matrix-valued kernel ``diag(w_1 k_1(x, y), ..., w_D k_D(x, y))`` (§4.2.3).

    Parameters
    ----------
    kernels : sequence of Kernel
        One scalar kernel per output coordinate (``D = len(kernels)``).
    """

    def __init__(self, kernels: Sequence[Kernel]):
        checked = list(kernels) if isinstance(kernels, list | tuple) else []
        if not checked or not all(isinstance(k, Kernel) for k in checked):
            raise InputError(
                f"kernels: expected a non-empty list of kernelkit Kernels, got {kernels!r}"
            )
        self.kernels = kernels

    def __len__(self) -> int:
        return len(self.kernels)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.kernels)

    def __repr__(self) -> str:
        return f"Mixture({self.kernels!r})"

    # scikit-learn's clone deep-copies non-estimator parameters; keep that cheap and exact
    def get_params(self, deep: bool = False) -> dict[str, Any]:
        return {"kernels": self.kernels}


class InnerLayer(KernelLayer):
    r"""An inner layer ``g(z) = sum_j K(z, s_j) c_j`` with ``n_restarts`` coefficient sets.

    ``K = k diag(w)`` (eq. 20; ``operator = diag(w)`` of :class:`KernelLayer`) for one scalar
    kernel, or ``diag(w_l k_l)`` for a :class:`Mixture`.  ``coef`` has shape
    ``(n_restarts, n_support, d_out)``; outputs are ``(n_restarts, n, d_out)`` and
    :meth:`norm_sq` returns one ``||g||^2`` (eq. 18) per restart.
    """

    def __init__(
        self,
        kernel: Kernel | Mixture,
        n_support: int,
        d_out: int,
        *,
        weights: Sequence[float] | None = None,
        n_restarts: int = 1,
        dtype: torch.dtype = torch.float64,
        memory_budget: int | None = None,
    ):
        kernels = list(kernel.kernels) if isinstance(kernel, Mixture) else [kernel]
        if isinstance(kernel, Mixture) and len(kernels) != d_out:
            raise InputError(
                f"inner_dim: a Mixture of {len(kernels)} kernels maps to {len(kernels)} "
                f"coordinates, got inner_dim={d_out}"
            )
        w = torch.ones(d_out, dtype=dtype) if weights is None else torch.as_tensor(weights)
        if w.shape != (d_out,) or not bool((w > 0).all()):
            raise InputError(f"weights: expected {d_out} positive weights, got {weights!r}")
        super().__init__(
            kernels[0],
            n_support,
            d_out,
            operator=torch.diag(w.to(dtype)),
            dtype=dtype,
            memory_budget=memory_budget,
        )
        self.kernels = kernels
        self.mixture = isinstance(kernel, Mixture)
        self.register_buffer("weights", w.to(dtype))
        self.coef = nn.Parameter(torch.zeros(n_restarts, n_support, d_out, dtype=dtype))

    @property
    def d_out(self) -> int:
        return self.coef.shape[-1]

    def gram(self, Z: Any, S: Any) -> torch.Tensor:
        """``[k(z_a, s_j)]`` (``(..., n, m)``), or the stack ``(..., D, n, m)`` of a mixture.

        Computed by :func:`kernelkit.gram.gram` (differentiable mode for the codes of later
        layers, a leading restart dimension giving one Gram per restart).
        """
        grams = [layer_gram(k, Z, S, self.memory_budget) for k in self.kernels]
        return torch.stack(grams, dim=-3) if self.mixture else grams[0]

    def apply(self, K: torch.Tensor) -> torch.Tensor:
        """Outputs ``g(z_a)``, shape ``(n_restarts, n, d_out)``."""
        if not self.mixture:
            return super().apply(K)
        return torch.einsum("...lnm,...ml->...nl", K, self.coef) * self.weights

    def norm_sq(self, K_ss: torch.Tensor) -> torch.Tensor:
        """``||g||^2 = sum_{j,k} c_j^T K(x_j, x_k) c_k`` (eq. 18), one value per restart."""
        if self.mixture:
            KC = torch.einsum("...lnm,...ml->...nl", K_ss, self.coef)
        else:
            KC = K_ss @ self.coef
        return (KC * self.coef * self.weights).sum((-2, -1))


def coth_penalty(Z: torch.Tensor) -> torch.Tensor:
    r"""``sum_{i<j} coth(||z_i - z_j||^2)`` per restart (eq. 15): infinite when two images meet."""
    n = Z.shape[-2]
    d2 = ((Z[..., :, None, :] - Z[..., None, :, :]) ** 2).sum(-1)
    iu = torch.triu_indices(n, n, 1, device=Z.device)
    return (1.0 / torch.tanh(d2[..., iu[0], iu[1]])).sum(-1)


@dataclass
class ConcatenatedData:
    """Training data: the prepared inputs, the targets and the first layer's Gram."""

    X: Any
    y: torch.Tensor
    K1: torch.Tensor

    @property
    def n(self) -> int:
        return self.y.shape[0]


class ConcatenatedModel(nn.Module):
    r"""``f o g_{L-1} o ... o g_1`` with a closed-form scalar outer layer (see module docstring).

    Parameters
    ----------
    chain : KernelChain of InnerLayer
        The inner layers (the first one on the given Gram ``K1``).
    outer_kernel : Kernel
        Scalar kernel ``k`` of the outer function.
    lam : float
        Outer regularisation (``(1/n)`` convention; ``lambda_paper = n lam``); unused when
        ``interpolate``.
    mu : sequence of float
        One ``mu_l >= 0`` per inner layer (``mu_paper = n mu``).
    gamma : float
        Weight of the coth separation penalty of eq. 15 (0: none).
    interpolate : bool
        Problem (Int) instead of (uR-X).
    memory_budget : int, optional
        Bytes of scratch memory allowed besides the outer Gram blocks ``Q`` (one per restart),
        computed by :func:`kernelkit.gram.gram` (differentiable mode); ``None``: no limit.
    """

    def __init__(
        self,
        chain: KernelChain,
        outer_kernel: Kernel,
        *,
        lam: float,
        mu: Sequence[float],
        gamma: float = 0.0,
        interpolate: bool = False,
        memory_budget: int | None = None,
    ):
        super().__init__()
        self.chain = chain
        self.memory_budget = memory_budget
        self.outer_kernel = outer_kernel
        self.lam, self.gamma, self.interpolate = float(lam), float(gamma), bool(interpolate)
        self.mu = tuple(float(m) for m in mu)
        if len(self.mu) != len(chain):
            raise InputError(
                f"mu: expected {len(chain)} values (one per inner layer), got {len(self.mu)}"
            )
        if not interpolate and self.lam <= 0:
            raise InputError(
                f"lam: expected lam > 0 for least squares (interpolate=False), got {lam}"
            )

    def objective_batch(
        self, data: ConcatenatedData
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """Objective of every restart, shape ``(n_restarts,)``, and its parts."""
        passed = self.chain.forward_train(data.K1)
        Z = passed.outputs[-1]
        Q = layer_gram(self.outer_kernel, Z, Z, self.memory_budget)
        y = data.y[:, None]
        n = data.n
        # a diverged restart (non-finite images) must not poison the batched Cholesky
        bad = ~torch.isfinite(Q).all(-1).all(-1)
        if bool(bad.any()):
            eye = torch.eye(n, dtype=Q.dtype, device=Q.device)
            Q = torch.where(bad[..., None, None], eye, Q)
        if self.interpolate:
            outer = RidgeTrace.apply(Q, y, 0.0) / n
        else:
            outer = self.lam * RidgeTrace.apply(Q, y, n * self.lam)
        outer = torch.where(bad, math.inf, outer)
        inner = sum(m * nrm for m, nrm in zip(self.mu, passed.norms, strict=True))
        value = outer + inner
        parts = {"outer": outer.detach(), "inner_penalty": torch.as_tensor(inner).detach()}
        if self.gamma > 0:
            pen = self.gamma * sum(coth_penalty(z) for z in passed.outputs)
            value = value + pen
            parts["coth"] = pen.detach()
        return value, parts

    def objective(self, data: ConcatenatedData) -> tuple[torch.Tensor, dict[str, float]]:
        """Sum of the restarts' objectives (the objective itself for one restart)."""
        value, parts = self.objective_batch(data)
        return value.sum(), {k: float(v.sum()) for k, v in parts.items()}

    def forward(self, data: ConcatenatedData) -> torch.Tensor:
        return self.objective(data)[0]

    @property
    def inner_layers(self) -> list[InnerLayer]:
        return list(self.chain.layers)  # type: ignore[arg-type]

    @torch.no_grad()
    def outer_fit(self, data: ConcatenatedData) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """Outer coefficients ``alpha = (Q + n lam I)^{-1} y`` (``Q^{-1} y`` when interpolating)
        and the support images of every layer, for a single restart."""
        passed = self.chain.forward_train(data.K1)
        supports = [s[0] for s in passed.supports]
        Q = layer_gram(self.outer_kernel, supports[-1], supports[-1], self.memory_budget)
        shift = 0.0 if self.interpolate else data.n * self.lam
        alpha = cholesky_factor(Q, shift=shift, name="Q (outer Gram)").solve(data.y)
        return alpha, supports

    @torch.no_grad()
    def transform(self, K1_new: torch.Tensor, supports: list[torch.Tensor]) -> torch.Tensor:
        """Inner representation ``g(x)`` of new points from their first-layer Gram rows."""
        return self.chain.encode(K1_new, supports)[0]


def build_concatenated(
    data_X: Any,
    y: torch.Tensor,
    inner: Sequence[Kernel | Mixture],
    dims: Sequence[int],
    outer_kernel: Kernel,
    *,
    lam: float,
    mu: Sequence[float],
    gamma: float = 0.0,
    interpolate: bool = False,
    weights: Sequence[Sequence[float] | None] | None = None,
    n_restarts: int = 1,
    init_scale: float = 1.0,
    random_state: RandomStateLike = None,
    memory_budget: int | None = None,
) -> tuple[ConcatenatedModel, ConcatenatedData]:
    """Build a model with ``n_restarts`` random initialisations and its training data.

    The coefficients of each restart are standard normal, rescaled so that the layer's outputs
    on the training points have root-mean-square ``init_scale`` (the paper's random
    initialisation of ``c``, section 4.2, with a scale that does not depend on the kernel).
    ``memory_budget`` (bytes of scratch besides the Gram blocks, ``None``: no limit) goes to
    every layer and to the outer Gram.
    """
    if len(inner) != len(dims) or not inner:
        raise InputError(
            f"dims: expected one width per inner layer ({len(inner)}), got {list(dims)}"
        )
    weights = [None] * len(inner) if weights is None else list(weights)
    gen = torch.Generator().manual_seed(as_seed(random_state))
    dtype = y.dtype
    n = y.shape[0]
    layers: list[InnerLayer] = []
    K1 = None
    Z: Any = data_X
    for li, (kern, d) in enumerate(zip(inner, dims, strict=True)):
        layer = InnerLayer(
            kern,
            n,
            int(d),
            weights=weights[li],
            n_restarts=n_restarts,
            dtype=dtype,
            memory_budget=memory_budget,
        )
        with torch.no_grad():
            K = layer.gram(Z, Z)
            layer.to(K.device)
            if li == 0:
                K1 = K
            coef = torch.randn(n_restarts, n, int(d), generator=gen, dtype=torch.float64).to(K)
            layer.coef.copy_(coef)
            out = layer.apply(K)
            rms = out.pow(2).mean((-2, -1)).sqrt().clamp_min(1e-300)
            layer.coef.mul_((init_scale / rms)[:, None, None])
            Z = layer.apply(K)
        layers.append(layer)
    assert K1 is not None
    model = ConcatenatedModel(
        KernelChain(layers),
        outer_kernel,
        lam=lam,
        mu=mu,
        gamma=gamma,
        interpolate=interpolate,
        memory_budget=memory_budget,
    )
    return model, ConcatenatedData(data_X, y, K1)


# ---------------------------------------------------------------------- optimisation
@dataclass(frozen=True)
class RestartProblem:
    """The restarts of a :class:`ConcatenatedModel` as the rows of one tensor: the problem
    that :func:`fit_concatenated` hands to the batched L-BFGS.

    Attributes
    ----------
    start : torch.Tensor, shape (b, p)
        The model's initial inner coefficients, one flattened restart per row.
    objective : callable
        ``x -> (values, gradients)`` of the restarts in the rows of ``x`` (non-finite
        values: ``inf`` with a zero gradient; a singular outer Gram: ``nan``).
    images : callable
        ``x -> Z``: the last inner layer's training images of the restarts, ``(b, n, D)``.
    set_coefficients : callable
        ``x -> None``: give every inner layer the coefficients of the rows of ``x``.
    """

    start: torch.Tensor
    objective: Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]
    images: Callable[[torch.Tensor], torch.Tensor]
    set_coefficients: Callable[[torch.Tensor], None]

    def image_gram(self, x: torch.Tensor) -> torch.Tensor:
        """``Z Z^T`` of the restarts' images: unchanged by the model's symmetries
        (:func:`fit_concatenated`), the summary of "same optimum"."""
        Z = self.images(x)
        return Z @ Z.transpose(-1, -2)


def restart_problem(model: ConcatenatedModel, data: ConcatenatedData) -> RestartProblem:
    """The batched objective of ``model``'s restarts on ``data`` (:class:`RestartProblem`)."""
    layers = model.inner_layers
    b = layers[0].coef.shape[0]
    shapes = [tuple(layer.coef.shape[1:]) for layer in layers]
    sizes = [math.prod(shape) for shape in shapes]

    def set_coefficients(x: torch.Tensor) -> None:
        for layer, shape, chunk in zip(layers, shapes, torch.split(x, sizes, dim=1), strict=True):
            layer.coef = nn.Parameter(chunk.reshape(x.shape[0], *shape).clone())

    def objective(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        m = x.shape[0]
        set_coefficients(x)
        try:
            value, _ = model.objective_batch(data)
        except NotPSDError:
            nan = torch.full((m,), math.nan, dtype=x.dtype, device=x.device)
            return nan, torch.zeros_like(x)
        finite = torch.isfinite(value)
        value.masked_fill(~finite, 0.0).sum().backward()
        grad = torch.cat([layer.coef.grad.reshape(m, -1) for layer in layers], dim=1)
        grad[~finite] = 0.0
        return value.detach().masked_fill(~finite, math.inf), grad

    def images(x: torch.Tensor) -> torch.Tensor:
        set_coefficients(x)
        with torch.no_grad():
            return model.chain.forward_train(data.K1).outputs[-1]

    start = torch.cat([layer.coef.detach().reshape(b, -1) for layer in layers], dim=1)
    return RestartProblem(start, objective, images, set_coefficients)


def _reporting(
    fun: Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]], progress: Progress
) -> Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]]:
    """``fun``, reporting the lowest objective of each batched evaluation to ``progress``."""

    def reported(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        value, grad = fun(x)
        progress.update(objective=float(value.min()))
        return value, grad

    return reported


def fit_concatenated(
    model: ConcatenatedModel,
    data: ConcatenatedData,
    *,
    max_iter: int = 200,
    tol: float = 1e-9,
    polish_iter: int = 0,
    patience: int | None = None,
    first_round: int = 12,
    rtol: float = 1e-6,
    progress: Progress | None = None,
) -> tuple[int, BatchedLBFGSResult]:
    r"""Minimise the restarts with L-BFGS, keep the best one and optionally polish it with the
    KAE training loop :func:`kernelkit.models.train` (L-BFGS, strong Wolfe).

    ``patience=None``: every restart in one :func:`lbfgs_batched` run.  Otherwise
    :func:`lbfgs_restarts`: the first ``patience`` restarts run and end the fit when their
    objectives agree to ``rtol`` (relative); as soon as they are certain not to, the other
    restarts join the batch and race by successive halving (the worse half of those still
    running stops after ``first_round``, ``2 first_round``, ... iterations of the race), and
    restarts that reach an optimum already found stop there.  Restarts reach the same
    optimum when their objectives agree to ``rtol`` and the linear Gram ``Z Z^T`` of the
    last layer's training images agrees to ``sqrt(rtol)`` (relative Frobenius): the
    objective depends on the inner coefficients only through ``N(c)`` and
    ``Q = [k(z_i, z_j)]``, both unchanged by the model's symmetries ``c -> c R`` (``R``
    orthogonal with ``K R = R K`` and ``k(z R, z' R) = k(z, z')``: rotations and
    reflections of the images for a Gaussian outer kernel, signed permutations for a
    tensor-product one), which leave ``Z Z^T`` unchanged too.  The distinct optima
    (objective and count)
    are reported in the result's ``optima`` either way.

    Returns the index of the kept restart and the batched result (``values``: final objective
    of every restart run, at elimination for the ones the race stopped).  Raises
    :class:`NotPSDError` when no restart has a finite objective.  ``progress`` receives the
    lowest objective of the running restarts at every batched evaluation.
    """
    problem = restart_problem(model, data)
    fun, x0 = problem.objective, problem.start
    if progress is not None:
        fun = _reporting(fun, progress)
    if patience is None:
        x, res = lbfgs_batched(fun, x0, max_iter=max_iter, tol=tol)
        distinct = DistinctOptima(rtol, problem.image_gram)
        res.labels, res.optima = distinct.assign(x, res.values), distinct.optima
    else:
        options = {"max_iter": max_iter, "tol": tol}
        x, res = lbfgs_restarts(
            fun, x0, patience=patience, first_round=first_round, rtol=rtol,
            invariant=problem.image_gram, **options,
        )  # fmt: skip
    values = res.values
    if not bool(torch.isfinite(values).any()):
        raise NotPSDError(
            "every restart ended with a non-finite objective: the outer Gram matrix of the inner "
            "images is singular (e.g. two training points mapped to the same image in "
            "interpolation mode); use interpolate=False with lam > 0 or the coth penalty gamma > 0"
        )
    best = int(torch.argmin(values))
    problem.set_coefficients(x[best : best + 1])
    if polish_iter > 0:
        train(model, data, optimizer="lbfgs", max_iter=polish_iter, tol=tol)  # type: ignore[arg-type]
    return best, res
