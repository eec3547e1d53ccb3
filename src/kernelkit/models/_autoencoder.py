r"""Kernel autoencoders: the finite KAE and the K2AE (Laforgue, Clémençon, d'Alché-Buc 2019).

Objective (4) of the paper, for layers ``f_l`` in vector-valued RKHSs,

.. math:: \frac1n \sum_{i=1}^n \|x_i - f_L \circ \dots \circ f_1(x_i)\|^2_{\mathcal X_0}
          + \sum_{l=1}^L \lambda_l \|f_l\|^2_{\mathcal H_l},

and (5) for the K2AE, where ``x_i`` is replaced by its feature map ``phi(x_i)`` in the RKHS of
an input kernel, so that the data are known only through ``K_in``.  Each layer is a
:class:`~kernelkit.models.KernelLayer` (representer theorem, Theorem 6).  The last layer is
either trained with the others (finite KAE, all layers jointly by autograd) or solved in
closed form inside the objective (variable projection, :mod:`kernelkit.models._ridge`): for the
K2AE the last layer is infinite-dimensional and only enters through
``N_L = W^{-1} K_in W^{-1}``, ``W = K_L + n lam_L I`` (eqs. 13 and 54), and the data term plus
its penalty collapse to ``lam_L tr(W^{-1} K_in)``.  Autograd through this closed form gives the
exact gradient of the inner layers (envelope theorem), at the cost of one backward pass
instead of the paper's ``O(n^3 L^2 p^3)`` Jacobian recursions (section 4.2).  The paper's
Algorithm 1 (alternate gradient steps on the inner layers with ``N_L`` fixed and closed-form
updates of ``N_L``) is :func:`train_alternating`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from kernelkit.kernels import Gaussian, Kernel, Linear
from kernelkit.kernels._specs import median_sigma
from kernelkit.models._layers import KernelChain, KernelLayer, layer_gram
from kernelkit.models._ridge import (
    ridge_coefficients,
    ridge_coefficients_projected,
    ridge_loss_projected,
    ridge_trace_loss,
)
from kernelkit.solvers import top_eigenpairs
from kernelkit.solvers._optimizers import first_order_optimizer
from kernelkit.solvers._training import (
    NonFiniteObjectiveWarning,
    TrainResult,
    descend,
    relative_decrease,
    train_loop,
    train_module,
)
from kernelkit.utils._errors import InputError
from kernelkit.utils._progress import Progress
from kernelkit.utils._seeding import RandomStateLike, as_seed

__all__ = [
    "AutoencoderData",
    "KernelAutoencoderModel",
    "NonFiniteObjectiveWarning",
    "TrainResult",
    "build_autoencoder",
    "median_sigma",
    "reconstruction_errors",
    "train",
    "train_alternating",
]


@dataclass
class AutoencoderData:
    """What the objective needs about the training set.

    Attributes
    ----------
    K1 : tensor, shape (n, m)
        First-layer Gram of the data against the support inputs (``m = n`` in exact mode).
    out_factor : tensor, shape (n, r)
        ``B`` with ``B B^T = K_out``: the input Gram ``K_in`` (K2AE; Cholesky or Nyström
        factor) or ``X`` itself (finite KAE).
    out_trace : float
        ``tr(K_out)`` (exact, also in landmark mode).
    K1_support : tensor, shape (m, m), optional
        First-layer Gram of the support inputs (landmark mode); ``None`` in exact mode.
    targets : tensor, shape (n, d), optional
        Explicit outputs (finite KAE): needed when the last layer is trained by gradient.
    """

    K1: torch.Tensor
    out_factor: torch.Tensor
    out_trace: float
    K1_support: torch.Tensor | None = None
    targets: torch.Tensor | None = None

    @property
    def n(self) -> int:
        return self.K1.shape[0]

    @property
    def exact(self) -> bool:
        return self.K1_support is None


class KernelAutoencoderModel(nn.Module):
    r"""An L-layer kernel autoencoder: ``L - 1`` inner layers and a last layer.

    Parameters
    ----------
    chain : KernelChain
        Layers ``f_1 .. f_{L-1}`` (the first one on the given Gram ``K1``).
    head_kernel : Kernel
        Scalar kernel ``k_L`` of the last layer (identity operator, as in section 4.3).
    lam : sequence of L floats
        ``lam_l >= 0`` of objective (4); closed forms carry ``n * lam_L`` (scikit-learn's
        ``KernelRidge(alpha=n * lam_L)`` for the last layer).
    head : KernelLayer, optional
        A trainable last layer (finite KAE trained jointly); ``None``: closed form.
    memory_budget : int, optional
        Bytes of scratch memory allowed besides the last layer's Gram blocks, which are
        computed by :func:`kernelkit.gram.gram` (differentiable mode); ``None``: no limit.
    """

    def __init__(
        self,
        chain: KernelChain,
        head_kernel: Kernel,
        lam: Sequence[float],
        *,
        head: KernelLayer | None = None,
        memory_budget: int | None = None,
    ):
        super().__init__()
        self.chain = chain
        self.memory_budget = memory_budget
        self.head_kernel = head_kernel
        self.lam = tuple(float(v) for v in lam)
        self.head = head
        if len(self.lam) != len(chain) + 1:
            raise InputError(f"lam: expected {len(chain) + 1} values, got {len(self.lam)}")

    @property
    def closed_form(self) -> bool:
        return self.head is None

    def head_gram(self, Z: torch.Tensor, S: torch.Tensor) -> torch.Tensor:
        """``k_L(Z, S)`` in the autograd graph (``S is Z``: the symmetric Gram)."""
        return layer_gram(self.head_kernel, Z, S, self.memory_budget)

    def forward(self, data: AutoencoderData) -> torch.Tensor:
        """The objective value (see :meth:`objective`), differentiable."""
        return self.objective(data)[0]

    def objective(self, data: AutoencoderData) -> tuple[torch.Tensor, dict[str, float]]:
        """Objective (4)/(5) at the current coefficients, and its parts (floats).

        With a closed-form last layer the value is the minimum over ``f_L`` (the inner
        layers' profile objective), whose gradient equals the full objective's there.
        """
        passed = self.chain.forward_train(data.K1, data.K1_support)
        inner = sum(lam * nrm for lam, nrm in zip(self.lam[:-1], passed.norms, strict=True))
        last = self.last_layer_loss(passed.outputs[-1], passed.supports[-1], data)
        value = inner + last
        return value, {
            "inner_penalty": float(inner.detach() if torch.is_tensor(inner) else inner),
            "last_layer": float(last.detach()),
        }

    def last_layer_loss(
        self, Z: torch.Tensor, S: torch.Tensor, data: AutoencoderData
    ) -> torch.Tensor:
        """Data term plus ``lam_L ||f_L||^2`` given the codes ``Z`` before the last layer."""
        lam_L = self.lam[-1]
        B = data.out_factor
        if self.head is not None:
            if data.targets is None:
                raise InputError("targets: a trained last layer needs explicit outputs")
            C = self.head.gram(Z, S)
            K_ss = C if data.exact else self.head.gram(S, S)
            residual = data.targets - self.head.apply(C)
            return (residual * residual).sum() / data.n + lam_L * self.head.norm_sq(K_ss)
        if data.exact and isinstance(self.head_kernel, Linear):
            return ridge_loss_projected(Z, None, B, lam_L, data.out_trace)
        if data.exact:
            if lam_L <= 0:
                raise InputError(
                    "lam: the last layer's lam must be > 0 for a closed-form last layer with a "
                    f"non-linear kernel ({type(self.head_kernel).__name__}); lam = 0 is allowed "
                    "with a Linear last-layer kernel (ridgeless projection)"
                )
            return ridge_trace_loss(self.head_gram(Z, Z), B, lam_L)
        C = self.head_gram(Z, S)
        return ridge_loss_projected(C, self.head_gram(S, S), B, lam_L, data.out_trace)

    @torch.no_grad()
    def head_coefficients(self, data: AutoencoderData) -> tuple[torch.Tensor, list[torch.Tensor]]:
        """Optimal last-layer coefficients (coordinates of ``out_factor``) and support images.

        Returns ``Phi_L`` with ``f_L(z) = k_L(z, S) Phi_L`` in the coordinates of ``B``
        (``Phi_L = W^{-1} B``, eq. 55, in exact mode with a non-linear kernel; ``f_L(z) =
        z^T Phi_L`` for a linear kernel in exact mode) and the support images of every layer.
        """
        passed = self.chain.forward_train(data.K1, data.K1_support)
        Z, S = passed.outputs[-1], passed.supports[-1]
        if self.head is not None:
            return self.head.coef.detach().clone(), passed.supports
        lam_L = self.lam[-1]
        if data.exact and isinstance(self.head_kernel, Linear):
            coef = ridge_coefficients_projected(Z, None, data.out_factor, lam_L)
        elif data.exact:
            coef = ridge_coefficients(self.head_gram(Z, Z), data.out_factor, lam_L)
        else:
            C = self.head_gram(Z, S)
            coef = ridge_coefficients_projected(C, self.head_gram(S, S), data.out_factor, lam_L)
        return coef, [s.detach() for s in passed.supports]

    def head_rows(self, Z: torch.Tensor, S: torch.Tensor, exact: bool) -> torch.Tensor:
        """Rows ``c(z)`` with ``f_L(z) = c(z) Phi_L`` (see :meth:`head_coefficients`)."""
        if self.head is None and exact and isinstance(self.head_kernel, Linear):
            return Z
        return self.head_gram(Z, S)


def reconstruction_errors(
    model: KernelAutoencoderModel,
    coef: torch.Tensor,
    supports: list[torch.Tensor],
    exact: bool,
    K1_rows: torch.Tensor,
    out_rows: torch.Tensor,
    out_diag: torch.Tensor | None = None,
) -> torch.Tensor:
    r"""Squared reconstruction errors of points given by their first-layer Gram rows.

    With ``c(x)`` the last layer's rows (:meth:`KernelAutoencoderModel.head_rows`) of the
    codes ``f_{L-1} o ... o f_1(x)`` and ``coef = Phi_L`` (:meth:`~KernelAutoencoderModel.
    head_coefficients`): ``||x - c(x) Phi_L||^2`` for a finite KAE (``out_rows`` the points
    ``x``, ``out_diag`` None); for a K2AE (appendix B.7; ``out_rows = b(x)``, the coordinates
    of the projection of ``phi(x)`` on the supports' features, ``out_diag = k(x, x)``)

    .. math:: \|\phi(x) - \hat\phi(x)\|^2 = k(x, x) - \|b(x)\|^2 + \|b(x) - c(x)\Phi_L\|^2.
    """
    Z = model.chain.encode(K1_rows, supports, len(model.chain))
    fit = model.head_rows(Z, supports[-1], exact) @ coef
    err = ((out_rows - fit) ** 2).sum(1)
    if out_diag is None:
        return err
    return (out_diag - (out_rows * out_rows).sum(1)).clamp_min(0) + err


# ---------------------------------------------------------------------- construction
def _kpca_coefficients(K_ss: torch.Tensor, d: int) -> torch.Tensor:
    """``Phi = U_d Lambda_d^{-1/2}``: support codes ``K_ss Phi = U_d Lambda_d^{1/2}``.

    The (uncentred) kernel PCA map of section 3.2; eigenvalues below ``eps * lambda_max``
    (and components beyond the support size) get zero coefficients.
    """
    m = K_ss.shape[0]
    k = min(d, m)
    res = top_eigenpairs(K_ss.detach(), k)
    values = res.values.to(K_ss.dtype)
    vectors = res.vectors.to(K_ss.dtype)
    floor = float(values.max().clamp_min(0)) * torch.finfo(K_ss.dtype).eps * m
    keep = values > floor
    scale = torch.where(keep, values.clamp_min(floor if floor > 0 else 1e-300).rsqrt(), 0.0)
    coef = torch.zeros(m, d, dtype=K_ss.dtype, device=K_ss.device)
    coef[:, :k] = vectors * scale[None, :]
    return coef


def _random_coefficients(
    K: torch.Tensor, K_ss: torch.Tensor, d: int, gen: torch.Generator
) -> torch.Tensor:
    """Gaussian coefficients scaled so the codes ``K Phi`` have unit root-mean-square."""
    coef = torch.randn(K_ss.shape[0], d, generator=gen, dtype=torch.float64).to(K)
    codes = K @ coef
    rms = float(codes.pow(2).mean().sqrt())
    return coef / (rms if rms > 0 else 1.0)


def build_autoencoder(
    data: AutoencoderData,
    dims: Sequence[int],
    kernels: Sequence[Kernel | None],
    lam: Sequence[float],
    *,
    operators: Sequence[torch.Tensor | None] | None = None,
    init: str = "kpca",
    closed_form: bool = True,
    random_state: RandomStateLike = None,
    memory_budget: int | None = None,
) -> KernelAutoencoderModel:
    """Build and initialise an autoencoder layer by layer.

    Parameters
    ----------
    data : AutoencoderData
        Training Gram(s) and outputs.
    dims : sequence of int
        Widths ``d_1 .. d_{L-1}`` of the inner layers (the last layer maps back to the input).
    kernels : sequence of L Kernel or None
        ``kernels[0]`` is ignored (the first Gram is ``data.K1``); ``None`` for a later layer
        means ``Gaussian(sigma)`` with the median heuristic on that layer's input at
        initialisation (:func:`median_sigma`).
    lam : sequence of L floats
        Regularisation of each layer (objective (4)).
    operators : sequence of L-1 PSD matrices or None
        ``A_l`` of the inner layers (``None``: identity).
    init : {"kpca", "random"}
        ``kpca``: each inner layer is the (uncentred) kernel PCA map of its input Gram on the
        supports, ``Phi = U Lambda^{-1/2}`` (section 3.2); ``random``: Gaussian coefficients
        with unit-RMS codes.
    closed_form : bool
        Solve the last layer in closed form inside the objective (default) or train it with
        the others (needs ``data.targets``; initialised at its ridge solution).
    random_state : int, optional
        Seed of the random initialisation.
    memory_budget : int, optional
        Scratch bytes allowed besides the Gram blocks of every layer (``None``: no limit).
    """
    if init not in ("kpca", "random"):
        raise InputError(f"init: expected 'kpca' or 'random', got {init!r}")
    L = len(dims) + 1
    if len(kernels) != L or len(lam) != L:
        raise InputError(f"kernels, lam: expected {L} entries each, got {len(kernels)}, {len(lam)}")
    operators = [None] * (L - 1) if operators is None else list(operators)
    gen = torch.Generator().manual_seed(as_seed(random_state))
    dtype = data.K1.dtype
    exact = data.exact
    layers: list[KernelLayer] = []
    K, K_ss = data.K1, data.K1 if exact else data.K1_support
    resolved: list[Kernel | None] = [None]
    for li, d in enumerate(dims):
        layer = KernelLayer(
            resolved[li] if li > 0 else None,
            K_ss.shape[0],
            d,
            operator=operators[li],
            dtype=dtype,
            memory_budget=memory_budget,
        ).to(K.device)
        with torch.no_grad():
            coef = (
                _kpca_coefficients(K_ss, d)
                if init == "kpca"
                else _random_coefficients(K, K_ss, d, gen)
            )
            layer.coef.copy_(coef)
            Z, S = layer.apply(K), layer.apply(K_ss)
        layers.append(layer)
        kern = kernels[li + 1]
        if kern is None:
            kern = Gaussian(sigma=median_sigma(S))
        resolved.append(kern)
        with torch.no_grad():
            K = layer_gram(kern, Z, S, memory_budget)
            K_ss = K if exact else layer_gram(kern, S, S, memory_budget)
    head_kernel = resolved[-1]
    assert head_kernel is not None
    head = None
    if not closed_form:
        if data.targets is None:
            raise InputError("closed_form=False needs explicit outputs (a finite KAE)")
        head = KernelLayer(
            head_kernel,
            K_ss.shape[0],
            data.targets.shape[1],
            dtype=dtype,
            memory_budget=memory_budget,
        ).to(K.device)
        with torch.no_grad():
            if exact:
                lam_L = max(lam[-1], float(torch.finfo(dtype).eps))
                head.coef.copy_(ridge_coefficients(K, data.targets, lam_L))
            else:
                head.coef.copy_(ridge_coefficients_projected(K, K_ss, data.targets, lam[-1]))
    return KernelAutoencoderModel(
        KernelChain(layers), head_kernel, lam, head=head, memory_budget=memory_budget
    )


# ---------------------------------------------------------------------- training
def train(model: KernelAutoencoderModel, data: AutoencoderData, **options: Any) -> TrainResult:
    """Minimise the objective over all trainable coefficients (inner layers, and the last
    layer when it is not in closed form) with :func:`kernelkit.solvers.train_module`.

    ``options`` are those of :func:`~kernelkit.solvers.train_module`: ``optimizer``
    (``"lbfgs"``: full-batch L-BFGS with a strong-Wolfe line search, stopping when the change
    of the objective falls below ``tol * |J_0|`` or the gradient below ``tol``; ``"adam"``:
    ``max_iter`` full-batch Adam steps of rate ``lr``, stopping when the relative decrease
    over 10 steps is below ``tol``), ``max_iter``, ``tol``, ``lr`` and ``progress`` (a
    :class:`~kernelkit.utils._progress.Progress`).  The best
    state is kept; if the objective turns NaN or infinite, training stops there, the best
    state is restored and a :class:`NonFiniteObjectiveWarning` says so.
    """
    return train_module(model, lambda: model.objective(data)[0], **options)


def train_alternating(
    model: KernelAutoencoderModel,
    data: AutoencoderData,
    *,
    max_iter: int = 100,
    lr: float = 1e-2,
    tol: float = 1e-7,
    progress: Progress | None = None,
) -> TrainResult:
    r"""The paper's Algorithm 1 (section 4.3): alternate a gradient step on the inner layers
    with the last layer fixed, and the closed-form update of the last layer (``N_L``, eq. 54).

    With ``Phi_L`` fixed (coordinates of ``B``) the objective is
    ``(1/n)(tr K_out - 2 tr(Phi_L^T C^T B) + ||C Phi_L||^2) + lam_L tr(Phi_L^T K_ss Phi_L)``
    plus the inner penalties, ``C = k_L(x^(L-1), s^(L-1))``; each epoch takes one plain
    gradient step of size ``lr`` on it, then recomputes ``Phi_L``.  The epochs run in
    :func:`kernelkit.solvers.train_loop` (best state kept, non-finite stop, stop when the
    relative decrease over 10 epochs is below ``tol``).
    """
    if not model.closed_form:
        raise InputError("train_alternating needs a closed-form last layer (closed_form=True)")
    params = [p for p in model.chain.parameters() if p.requires_grad]
    opt = first_order_optimizer("sgd", params, lr=lr)
    B, lam_L = data.out_factor, model.lam[-1]

    def epoch(it: int) -> torch.Tensor:
        coef, _ = model.head_coefficients(data)
        passed = model.chain.forward_train(data.K1, data.K1_support)
        Z, S = passed.outputs[-1], passed.supports[-1]
        C = model.head_rows(Z, S, data.exact)
        if model.head_kernel is not None and isinstance(model.head_kernel, Linear) and data.exact:
            K_ss = None
        else:
            K_ss = C if data.exact else model.head_gram(S, S)
        fit = C @ coef
        data_term = (data.out_trace - 2 * (fit * B).sum() + (fit * fit).sum()) / data.n
        pen_L = (coef * coef).sum() if K_ss is None else ((K_ss @ coef) * coef).sum()
        inner = sum(lam * nrm for lam, nrm in zip(model.lam[:-1], passed.norms, strict=True))
        return data_term + lam_L * pen_L + inner

    return train_loop(
        model,
        epoch,
        max_iter=max_iter,
        advance=lambda value: descend(opt, value),
        stop=relative_decrease(tol),
        progress=progress,
        unit="epoch",
    )
