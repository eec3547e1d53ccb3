r"""Kernel layers and chains of them: the representer-theorem parameterisation.

A :class:`KernelLayer` is a function of a vector-valued RKHS with the decomposable
operator-valued kernel ``K(z, z') = k(z, z') A`` (``A`` positive semi-definite, identity by
default; Laforgue, Clémençon, d'Alché-Buc 2019, section 2.1).  By their representer theorem
(Theorem 6, appendix A.3) the optimal layers of a composition are finite expansions over the
images of the training points under the previous layers:

.. math:: f_l(z) = \sum_{i=1}^{m} k_l(z, s_i^{(l-1)}) A_l \varphi_{l,i},
          \qquad \|f_l\|^2_{\mathcal H_l} = \mathrm{tr}(\Phi_l^T K_l \Phi_l A_l)  \quad (10),

with ``Phi_l`` the ``m x d_l`` coefficient matrix, ``K_l = [k_l(s_i, s_j)]`` and ``s_i^{(l)} =
f_l(s_i^{(l-1)})``.  The support points are the training points (exact mode) or ``m``
landmarks (their images under the previous layers), which makes every layer ``O(n m d)``.

The first layer takes its Gram matrix as given (``K_1 = k_1(X, S)`` with ``X`` any data:
vectors, molecules, a precomputed Gram), so the input never has to be a vector; the later
layers act on vectors and evaluate their kernel with ``kernelkit.gram.gram(...,
differentiable=True)`` (in the autograd graph, tiled within the layer's ``memory_budget``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from kernelkit.gram import gram
from kernelkit.kernels import Kernel
from kernelkit.solvers import check_psd
from kernelkit.utils._errors import InputError
from kernelkit.utils._numerics import symmetry_tolerance

__all__ = ["ChainPass", "KernelChain", "KernelLayer", "check_operator", "layer_gram"]


def check_operator(
    A: torch.Tensor | None, d: int, *, name: str = "operator"
) -> torch.Tensor | None:
    """Check that ``A`` is a symmetric PSD ``d x d`` matrix (``None`` means the identity)."""
    if A is None:
        return None
    A = torch.as_tensor(A)
    if not A.is_floating_point():
        A = A.to(torch.float64)
    if A.shape != (d, d):
        raise InputError(f"{name}: expected a ({d}, {d}) matrix, got shape {tuple(A.shape)}")
    if not bool(torch.isfinite(A).all()):
        raise InputError(f"{name}: expected finite values, got NaN or inf")
    scale = max(float(A.abs().max()), 1e-300)
    if float((A - A.mT).abs().max()) > symmetry_tolerance(A.dtype) * scale:
        raise InputError(f"{name}: expected a symmetric matrix, got max|A - A^T| > tolerance")
    check_psd(A, name=name)
    return A


class KernelLayer(nn.Module):
    r"""One layer ``f(z) = sum_i k(z, s_i) A phi_i`` of a kernel network (eq. 10).

    Parameters
    ----------
    kernel : Kernel or None
        Scalar kernel ``k`` on the layer's input (vectors).  ``None`` for a first layer whose
        Gram matrix is supplied by the caller (any input kind).
    n_support : int
        Number of support points ``m`` (training points or landmarks).
    d_out : int
        Output dimension.
    operator : tensor, optional
        The PSD matrix ``A`` (``d_out x d_out``); ``None`` is the identity.
    dtype : torch.dtype
        Dtype of the coefficients.
    memory_budget : int, optional
        Bytes of scratch memory allowed besides the Gram blocks of the layer kernel
        (:func:`kernelkit.gram.gram`); ``None``: no limit.

    Attributes
    ----------
    coef : nn.Parameter
        ``Phi``, shape ``(n_support, d_out)``: row ``i`` is ``phi_i``.
    """

    def __init__(
        self,
        kernel: Kernel | None,
        n_support: int,
        d_out: int,
        *,
        operator: torch.Tensor | None = None,
        dtype: torch.dtype = torch.float64,
        memory_budget: int | None = None,
    ):
        super().__init__()
        if kernel is not None and not isinstance(kernel, Kernel):
            raise InputError(f"kernel: expected a kernelkit Kernel or None, got {kernel!r}")
        self.kernel = kernel
        self.memory_budget = memory_budget
        self.coef = nn.Parameter(torch.zeros(n_support, d_out, dtype=dtype))
        A = check_operator(operator, d_out)
        self.register_buffer("operator", None if A is None else A.to(dtype))

    @property
    def d_out(self) -> int:
        return self.coef.shape[1]

    def gram(self, Z: torch.Tensor, S: torch.Tensor) -> torch.Tensor:
        """``[k(z_a, s_i)]``: the layer kernel between inputs ``Z`` and support points ``S``.

        Differentiable in ``Z`` and ``S``; ``S is Z`` is the symmetric case (exact symmetry,
        half the tiles).
        """
        if self.kernel is None:
            raise InputError("this layer has no kernel: its Gram matrix must be given")
        return layer_gram(self.kernel, Z, S, self.memory_budget)

    def apply(self, K: torch.Tensor) -> torch.Tensor:
        """Outputs ``K Phi A`` (rows ``f(z_a)^T``) from the Gram ``K = [k(z_a, s_i)]``."""
        out = K @ self.coef
        return out if self.operator is None else out @ self.operator

    def forward(self, Z: torch.Tensor, S: torch.Tensor) -> torch.Tensor:
        """``f(Z)`` for inputs ``Z`` given the support points ``S``."""
        return self.apply(self.gram(Z, S))

    def norm_sq(self, K_ss: torch.Tensor) -> torch.Tensor:
        """``||f||^2 = tr(Phi^T K_ss Phi A)`` with ``K_ss`` the support Gram (eq. 10)."""
        PA = self.coef if self.operator is None else self.coef @ self.operator
        return ((K_ss @ self.coef) * PA).sum()


def layer_gram(kernel: Kernel, Z: Any, S: Any, memory_budget: int | None) -> torch.Tensor:
    """``k(Z, S)`` by :func:`kernelkit.gram.gram` in differentiable mode (``S is Z``: symmetric)."""
    return gram(kernel, Z, None if S is Z else S, memory_budget=memory_budget, differentiable=True)


@dataclass
class ChainPass:
    """What a forward pass on the training data produced.

    Attributes
    ----------
    outputs : list of tensors
        ``x^(l)`` for ``l = 1..L'``: images of the data, shape ``(n, d_l)``.
    supports : list of tensors
        ``s^(l)``: images of the support points (the same tensors as ``outputs`` in exact mode).
    norms : list of tensors
        ``||f_l||^2`` of each layer.
    """

    outputs: list[torch.Tensor] = field(default_factory=list)
    supports: list[torch.Tensor] = field(default_factory=list)
    norms: list[torch.Tensor] = field(default_factory=list)


class KernelChain(nn.Module):
    """A composition ``f_L o ... o f_1`` of :class:`KernelLayer` s (section 2.4, Theorem 6).

    The first layer's Gram is given by the caller (``K1 = k_1(X, S)``); the others evaluate
    their kernel on the images of the previous layer.
    """

    def __init__(self, layers: list[KernelLayer]):
        super().__init__()
        if not layers:
            raise InputError("layers: expected at least one KernelLayer, got none")
        for i, layer in enumerate(layers[1:], start=1):
            if layer.kernel is None:
                raise InputError(f"layers[{i}]: only the first layer may have a given Gram")
        self.layers = nn.ModuleList(layers)

    def __len__(self) -> int:
        return len(self.layers)

    def forward_train(self, K1: torch.Tensor, K1_support: torch.Tensor | None = None) -> ChainPass:
        """Forward pass on the training data.

        Parameters
        ----------
        K1 : tensor, shape (n, m)
            First-layer Gram of the data against the support inputs.
        K1_support : tensor, shape (m, m), optional
            First-layer Gram of the support inputs (landmark mode).  ``None``: exact mode,
            the supports are the data (``K1`` square).
        """
        exact = K1_support is None
        first = self.layers[0]
        Z = first.apply(K1)
        S = Z if exact else first.apply(K1_support)
        res = ChainPass([Z], [S], [first.norm_sq(K1 if exact else K1_support)])
        for layer in self.layers[1:]:
            K = layer.gram(Z, S)
            K_ss = K if exact else layer.gram(S, S)
            Z = layer.apply(K)
            S = Z if exact else layer.apply(K_ss)
            res.outputs.append(Z)
            res.supports.append(S)
            res.norms.append(layer.norm_sq(K_ss))
        return res

    def propagate(
        self, Z: torch.Tensor, supports: list[torch.Tensor], start: int, stop: int | None = None
    ) -> torch.Tensor:
        """Apply layers ``start .. stop-1`` (0-based, ``start >= 1``) to representations ``Z``.

        ``supports[l]`` are the support images ``s^(l+1)`` from :meth:`forward_train`.
        Only cross-kernel rows ``k(z, s_i)`` are computed.
        """
        stop = len(self.layers) if stop is None else stop
        for li in range(start, stop):
            Z = self.layers[li](Z, supports[li - 1])
        return Z

    def encode(
        self, K1_new: torch.Tensor, supports: list[torch.Tensor], stop: int | None = None
    ) -> torch.Tensor:
        """Images of new data under layers ``0 .. stop-1`` from their first-layer Gram rows."""
        return self.propagate(self.layers[0].apply(K1_new), supports, 1, stop)
