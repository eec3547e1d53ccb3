"""The kernel contract, its algebra and the template bases.

A :class:`Kernel` is a ``torch.nn.Module`` whose hyperparameters are the arguments of its
``__init__`` (so ``get_params`` / ``set_params`` / ``sklearn.clone`` work and a grid search
reaches ``kernel__sigma``).  ``k(X, Y=None)`` returns the dense block ``K(X, Y)``;
``k.diag(X)`` returns ``K(x, x)`` for every ``x`` of ``X``.

Inputs go through :meth:`Kernel.prepare` first, which turns raw data (NumPy, pandas, torch,
lists of strings or graphs ...) into the kernel's *batch* type: a float tensor for vector
kernels, a typed batch for structured kernels.  A batch supports ``len(batch)`` and
``batch[i:j]`` / ``batch[index_tensor]`` so the Gram engine (:mod:`kernelkit.gram`) can tile it.
The maths lives in :meth:`Kernel.block`, which takes prepared batches.

Closure rules (course part 1, section 1; part 2, closure rules): sums, products (Schur),
non-negative scalings, positive integer powers, normalisation and pointwise limits of p.d.
kernels are p.d.; the algebra below builds only those.
"""

from __future__ import annotations

import inspect
import math
from typing import Any, ClassVar

import torch
from torch import nn

from kernelkit.kernels._sparse import SparseRows, inner, is_sparse_input, row_sq_norms
from kernelkit.utils._errors import InputError
from kernelkit.utils._kinds import InputKind
from kernelkit.utils._validation import check_positive, to_tensor

Batch = Any
"""A prepared input: a float tensor (vector kernels) or a structured batch."""


class Kernel(nn.Module):
    """Base class of every kernel.

    Subclasses implement :meth:`block` (and usually :meth:`block_diag`), declare
    :attr:`input_kind`, and, when the input is not a numeric vector, override :meth:`prepare`.

    Attributes
    ----------
    input_kind : InputKind
        The kind of input taken (:class:`kernelkit.utils._kinds.InputKind`, a ``str`` enum):
        ``"vector"``, ``"string"``, ``"graph"``, ``"node"``, ``"molecule"``, ``"gram"`` (a
        precomputed Gram) or ``"any"``.
    differentiable : bool
        Whether ``block`` is differentiable in vector inputs (checked by ``gradcheck``).
    accepts_sparse : bool
        Whether ``prepare`` takes sparse vectors (``scipy.sparse``, sparse torch tensors) as
        :class:`~kernelkit.kernels._sparse.SparseRows` (kernels of inner products and row
        norms, see :mod:`kernelkit.kernels._sparse`).
    """

    input_kind: ClassVar[InputKind] = InputKind.VECTOR
    differentiable: ClassVar[bool] = True
    accepts_sparse: ClassVar[bool] = False

    # ------------------------------------------------------------------ contract
    def prepare(
        self, X: Any, *, dtype: torch.dtype | None = None, reference: bool = False
    ) -> Batch:
        """Validate raw input and return the batch that :meth:`block` consumes.

        Parameters
        ----------
        X : array-like, tensor or structured batch
            Raw data.
        dtype : torch.dtype, optional
            Floating dtype for vector data (default: keep a float tensor's, else float64).
        reference : bool
            Whether ``X`` is the reference (training) set of a Gram; only
            :class:`~kernelkit.kernels.Precomputed` kernels care.

        Raises
        ------
        InputError
            For sparse input to a kernel that does not accept it (``accepts_sparse``).
        """
        if is_sparse_input(X) or isinstance(X, SparseRows):
            if not self.accepts_sparse:
                raise InputError(
                    f"X: {type(self).__name__} does not take sparse input (got "
                    f"{type(X).__name__}); use a kernel of inner products and norms (Linear, "
                    "Polynomial, Gaussian, Laplacian, Matern, TensorMatern(s=1)) or densify X"
                )
            return SparseRows.from_input(X, dtype)
        if isinstance(X, torch.Tensor) and dtype is None and X.is_floating_point():
            return to_tensor(X, name="X")
        return to_tensor(X, name="X", dtype=dtype)

    def block(self, X: Batch, Y: Batch) -> torch.Tensor:
        """Dense block ``K(X, Y)`` of prepared batches, shape ``(len(X), len(Y))``."""
        raise NotImplementedError

    def block_diag(self, X: Batch) -> torch.Tensor:
        """``K(x, x)`` for every item of a prepared batch (default: one 1x1 block each)."""
        return torch.stack([self.block(X[i : i + 1], X[i : i + 1])[0, 0] for i in range(len(X))])

    def block_into(self, X: Batch, Y: Batch, out: torch.Tensor) -> torch.Tensor:
        """Write ``K(X, Y)`` into the preallocated ``out``; fused kernels override this."""
        return out.copy_(self.block(X, Y))

    def features(self, X: Batch) -> Any:
        """Explicit feature matrix ``Phi(X)`` (rows = items), or ``None`` when there is none.

        Kernels with explicit (often sparse) features return a ``scipy.sparse`` CSR matrix or a
        tensor so that the Gram engine can compute ``Phi(X) Phi(Y)^T`` by products.
        """
        return None

    # ------------------------------------------------------------------ public calls
    def forward(self, X: Any, Y: Any = None) -> torch.Tensor:
        """The dense block ``K(X, Y)`` (``K(X, X)`` when ``Y`` is None)."""
        Xb = self.prepare(X, reference=Y is None)
        if Y is None:
            return self.block(Xb, Xb)
        Yb = self.prepare(Y, dtype=batch_dtype(Xb), reference=True)
        check_same_width(Xb, Yb)
        return self.block(Xb, Yb)

    def diag(self, X: Any) -> torch.Tensor:
        """The diagonal ``K(x_i, x_i)`` without forming the full block."""
        return self.block_diag(self.prepare(X))

    # ------------------------------------------------------------------ parameters
    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return [
            p.name
            for p in sig.parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """Hyperparameters as passed to ``__init__`` (nested as ``name__sub`` when ``deep``)."""
        params: dict[str, Any] = {}
        for name in self._param_names():
            value = getattr(self, name)
            params[name] = value
            if deep and isinstance(value, Kernel):
                params.update({f"{name}__{k}": v for k, v in value.get_params(True).items()})
        return params

    def set_params(self, **params: Any) -> Kernel:
        """Set hyperparameters (validated again, as in ``__init__``); returns ``self``."""
        own = self.get_params(deep=False)
        nested: dict[str, dict[str, Any]] = {}
        for key, value in params.items():
            name, _, sub = key.partition("__")
            if name not in own:
                raise InputError(
                    f"set_params: {type(self).__name__} has no parameter {name!r}; "
                    f"valid: {sorted(own)}"
                )
            if sub:
                nested.setdefault(name, {})[sub] = value
            else:
                own[name] = value
        for name, sub_params in nested.items():
            own[name].set_params(**sub_params)
        Kernel.__init__(self)
        type(self).__init__(self, **own)
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params(deep=False).items())
        return f"{type(self).__name__}({args})"

    # ------------------------------------------------------------------ algebra
    def __add__(self, other: Kernel | float) -> Kernel:
        if isinstance(other, Kernel):
            return SumKernel(self, other)
        if isinstance(other, (int, float)):
            return self if other == 0 else SumKernel(self, Constant(float(other)))
        return NotImplemented

    __radd__ = __add__

    def __mul__(self, other: Kernel | float) -> Kernel:
        if isinstance(other, Kernel):
            return ProductKernel(self, other)
        if isinstance(other, (int, float)):
            return ScaledKernel(self, float(other))
        return NotImplemented

    __rmul__ = __mul__

    def __pow__(self, exponent: int) -> Kernel:
        return PowerKernel(self, exponent)

    def normalized(self) -> Kernel:
        """The normalised kernel ``k(x, y) / sqrt(k(x, x) k(y, y))`` (cosine in feature space)."""
        return NormalizedKernel(self)


def batch_dtype(batch: Batch) -> torch.dtype | None:
    """Floating dtype of a prepared batch (``None`` for structured batches without one)."""
    dtype = getattr(batch, "dtype", None)
    return dtype if isinstance(dtype, torch.dtype) else None


MIN_SQUARE = 2.2250738585072014e-308
"""Smallest ``sigma^2`` of a Gaussian (the smallest normal float64): below it ``1 / sigma^2``
is not a finite double."""

MAX_SIGMA = 1e154
"""Largest Gaussian width: above it ``sigma^2`` overflows float64 (``sqrt(max) = 1.34e154``)."""


def check_gaussian_width(sigma: Any, *, name: str = "sigma") -> float:
    """``sigma`` as a float, checked to be a Gaussian width whose ``sigma^2`` and
    ``1 / sigma^2`` are finite float64 numbers (``1.5e-154 <= sigma <= 1e154``).

    Raises
    ------
    InputError
        Naming ``name``, the range and the value (never an ``OverflowError``).
    """
    value = check_positive(sigma, name=name)
    if value > MAX_SIGMA:
        raise InputError(
            f"{name}: expected a width whose sigma^2 is a finite float (sigma <= "
            f"{MAX_SIGMA:.0e}), got {sigma!r}: sigma^2 overflows float64 (and every pair of "
            "points would be at kernel 1)"
        )
    if value * value < MIN_SQUARE:
        raise InputError(
            f"{name}: expected a width whose 1 / (2 sigma^2) is a finite float "
            f"(sigma >= {math.sqrt(MIN_SQUARE):.1e}), got {sigma!r}: the Gram would "
            "underflow to the identity (every pair of distinct points at kernel 0)"
        )
    return value


def check_same_width(X: Batch, Y: Batch) -> None:
    """Vector batches must have the same number of features."""
    if isinstance(X, torch.Tensor) and isinstance(Y, torch.Tensor) and X.shape[1] != Y.shape[1]:
        raise InputError(
            f"Y: expected {X.shape[1]} features (as X), got {Y.shape[1]} (shape {tuple(Y.shape)})"
        )


# ---------------------------------------------------------------------- algebra nodes
class _Composite(Kernel):
    """A kernel built from other kernels; inputs are prepared by its first child."""

    differentiable: ClassVar[bool] = True

    def _children(self) -> list[Kernel]:
        return [v for v in self.get_params(deep=False).values() if isinstance(v, Kernel)]

    @property
    def input_kind(self) -> InputKind:  # type: ignore[override]
        return self._children()[0].input_kind

    @property
    def accepts_sparse(self) -> bool:  # type: ignore[override]
        return all(child.accepts_sparse for child in self._children())

    def prepare(
        self, X: Any, *, dtype: torch.dtype | None = None, reference: bool = False
    ) -> Batch:
        return self._children()[0].prepare(X, dtype=dtype, reference=reference)


class Constant(Kernel):
    """The constant kernel ``k(x, y) = c`` with ``c >= 0`` (p.d.: a rank-one Gram ``c 1 1^T``).

    Takes any input kind; only the number of items matters.
    """

    input_kind: ClassVar[InputKind] = InputKind.ANY

    def __init__(self, value: float = 1.0):
        super().__init__()
        self.value = check_positive(value, name="value", strict=False)

    def prepare(
        self, X: Any, *, dtype: torch.dtype | None = None, reference: bool = False
    ) -> Batch:
        return X

    def block(self, X: Batch, Y: Batch) -> torch.Tensor:
        return torch.full((len(X), len(Y)), self.value, dtype=batch_dtype(X) or torch.float64)

    def block_diag(self, X: Batch) -> torch.Tensor:
        return torch.full((len(X),), self.value, dtype=batch_dtype(X) or torch.float64)


class SumKernel(_Composite):
    """``k(x, y) = k1(x, y) + k2(x, y)`` (p.d. by closure under sums)."""

    def __init__(self, k1: Kernel, k2: Kernel):
        super().__init__()
        self.k1, self.k2 = _check_kernel(k1, "k1"), _check_kernel(k2, "k2")

    def prepare(
        self, X: Any, *, dtype: torch.dtype | None = None, reference: bool = False
    ) -> Batch:
        first = self.k2 if isinstance(self.k1, Constant) else self.k1
        return first.prepare(X, dtype=dtype, reference=reference)

    def block(self, X: Batch, Y: Batch) -> torch.Tensor:
        return self.k1.block(X, Y) + self.k2.block(X, Y)

    def block_diag(self, X: Batch) -> torch.Tensor:
        return self.k1.block_diag(X) + self.k2.block_diag(X)


class ProductKernel(_Composite):
    """``k(x, y) = k1(x, y) k2(x, y)``; its Gram is the Hadamard product (Schur; course part 1,
    slide "Proof for K1 K2 is p.d.")."""

    def __init__(self, k1: Kernel, k2: Kernel):
        super().__init__()
        self.k1, self.k2 = _check_kernel(k1, "k1"), _check_kernel(k2, "k2")

    def block(self, X: Batch, Y: Batch) -> torch.Tensor:
        return self.k1.block(X, Y) * self.k2.block(X, Y)

    def block_diag(self, X: Batch) -> torch.Tensor:
        return self.k1.block_diag(X) * self.k2.block_diag(X)


class ScaledKernel(_Composite):
    """``k(x, y) = c k0(x, y)`` with ``c >= 0`` (a negative scale breaks positivity)."""

    def __init__(self, kernel: Kernel, scale: float = 1.0):
        super().__init__()
        self.kernel = _check_kernel(kernel, "kernel")
        self.scale = check_positive(scale, name="scale", strict=False)

    def block(self, X: Batch, Y: Batch) -> torch.Tensor:
        return self.scale * self.kernel.block(X, Y)

    def block_diag(self, X: Batch) -> torch.Tensor:
        return self.scale * self.kernel.block_diag(X)


class PowerKernel(_Composite):
    """``k(x, y) = k0(x, y)^p`` for a positive integer ``p`` (p.d. by repeated Schur products)."""

    def __init__(self, kernel: Kernel, exponent: int = 2):
        super().__init__()
        self.kernel = _check_kernel(kernel, "kernel")
        if isinstance(exponent, bool) or not isinstance(exponent, int) or exponent < 1:
            raise InputError(
                f"exponent: expected a positive integer (non-integer powers of a p.d. kernel "
                f"need not be p.d.), got {exponent!r}"
            )
        self.exponent = exponent

    def block(self, X: Batch, Y: Batch) -> torch.Tensor:
        return self.kernel.block(X, Y) ** self.exponent

    def block_diag(self, X: Batch) -> torch.Tensor:
        return self.kernel.block_diag(X) ** self.exponent


class NormalizedKernel(_Composite):
    """``k(x, y) = k0(x, y) / sqrt(k0(x, x) k0(y, y))``; items with ``k0(x, x) = 0`` map to 0."""

    def __init__(self, kernel: Kernel):
        super().__init__()
        self.kernel = _check_kernel(kernel, "kernel")

    @staticmethod
    def _inv_sqrt(d: torch.Tensor) -> torch.Tensor:
        return torch.where(d > 0, d.clamp_min(torch.finfo(d.dtype).tiny).rsqrt(), 0.0)

    def block(self, X: Batch, Y: Batch) -> torch.Tensor:
        dx = self._inv_sqrt(self.kernel.block_diag(X))
        dy = dx if Y is X else self._inv_sqrt(self.kernel.block_diag(Y))
        return self.kernel.block(X, Y) * dx[:, None] * dy[None, :]

    def block_diag(self, X: Batch) -> torch.Tensor:
        d = self.kernel.block_diag(X)
        return (d > 0).to(d.dtype)


class FeatureSpaceGaussian(_Composite):
    r"""Gaussian kernel on the feature space (RKHS) of another kernel.

    .. math:: k(x, y) = \exp\!\big(-(k_0(x,x) + k_0(y,y) - 2 k_0(x,y)) / (2\sigma^2)\big)
              = \exp(-d_{k_0}(x, y)^2 / (2\sigma^2)),

    with the feature-space distance of course part 1, section 2 (clipped at 0 against
    round-off).  It is p.d. because the Gaussian is p.d. on any Hilbert space.  It needs only
    Gram values, so ``FeatureSpaceGaussian(Precomputed(), sigma)`` works from a Gram matrix
    alone (test points then need their diagonal ``k0(x, x)``, see
    :class:`~kernelkit.kernels.PrecomputedBatch`).
    """

    def __init__(self, kernel: Kernel, sigma: float = 1.0):
        super().__init__()
        self.kernel = _check_kernel(kernel, "kernel")
        self.sigma = check_gaussian_width(sigma)

    def block(self, X: Batch, Y: Batch) -> torch.Tensor:
        dx = self.kernel.block_diag(X)
        dy = dx if Y is X else self.kernel.block_diag(Y)
        d2 = (dx[:, None] + dy[None, :] - 2.0 * self.kernel.block(X, Y)).clamp_min(0.0)
        return torch.exp(d2 * (-0.5 / self.sigma**2))

    def block_diag(self, X: Batch) -> torch.Tensor:
        d = self.kernel.block_diag(X)
        return torch.ones_like(d)


def _check_kernel(value: Any, name: str) -> Kernel:
    if not isinstance(value, Kernel):
        raise InputError(f"{name}: expected a kernelkit Kernel, got {type(value).__name__}")
    return value


# ---------------------------------------------------------------------- template bases
def squared_distances(
    X: torch.Tensor, Y: torch.Tensor, out: torch.Tensor | None = None
) -> torch.Tensor:
    """``||x_i - y_j||^2`` by one GEMM, ``|x|^2 + |y|^2 - 2 <x, y>``, clipped at 0.

    With ``out`` given (and no autograd), the result is written in place into ``out``.  When
    ``Y is X`` the diagonal is set to exactly 0 (round-off would otherwise leave ~1e-16,
    which a non-smooth profile such as ``exp(-r)`` amplifies to ~1e-8).  Sparse rows
    (:class:`~kernelkit.kernels._sparse.SparseRows`) use one sparse product for ``<x, y>``.
    """
    x2 = row_sq_norms(X)
    y2 = x2 if Y is X else row_sq_norms(Y)
    if isinstance(X, SparseRows) or isinstance(Y, SparseRows):
        d2 = inner(X, Y, out=out).mul_(-2.0).add_(x2[:, None]).add_(y2[None, :]).clamp_min_(0.0)
        if Y is X:
            d2.fill_diagonal_(0.0)
        return d2
    if out is None:
        d2 = torch.addmm(x2[:, None] + y2[None, :], X, Y.T, alpha=-2.0).clamp_min(0.0)
        if Y is X:
            d2 = d2 * (1.0 - torch.eye(X.shape[0], dtype=d2.dtype, device=d2.device))
        return d2
    torch.mm(X, Y.T, out=out)
    out.mul_(-2.0).add_(x2[:, None]).add_(y2[None, :]).clamp_min_(0.0)
    if Y is X:
        out.fill_diagonal_(0.0)
    return out


class StationaryKernel(Kernel):
    """Template for ``k(x, y) = profile(||x - y||^2)`` on vectors.

    Subclasses implement :meth:`profile` (out of place, differentiable) and may override
    :meth:`profile_` (in place, used by the Gram engine's fused path).  Sparse rows are
    accepted (:func:`squared_distances`).
    """

    accepts_sparse: ClassVar[bool] = True

    def profile(self, d2: torch.Tensor) -> torch.Tensor:
        """The kernel as a function of the squared distance ``d2``."""
        raise NotImplementedError

    def profile_(self, d2: torch.Tensor) -> torch.Tensor:
        """In-place version of :meth:`profile` on a scratch tensor."""
        return d2.copy_(self.profile(d2))

    def block(self, X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
        return self.profile(squared_distances(X, Y))

    def block_into(self, X: torch.Tensor, Y: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
        if torch.is_grad_enabled() and (X.requires_grad or Y.requires_grad):
            return out.copy_(self.block(X, Y))
        return self.profile_(squared_distances(X, Y, out=out))

    def block_diag(self, X: torch.Tensor) -> torch.Tensor:
        return self.profile(torch.zeros(X.shape[0], dtype=X.dtype, device=X.device))


class DotProductKernel(Kernel):
    """Template for ``k(x, y) = h(<x, y>)`` on vectors; subclasses implement :meth:`scalar`.

    Sparse rows are accepted (:func:`kernelkit.kernels._sparse.inner`).
    """

    accepts_sparse: ClassVar[bool] = True

    def scalar(self, g: torch.Tensor) -> torch.Tensor:
        """The kernel as a function of the inner product ``g``."""
        raise NotImplementedError

    def block(self, X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
        if isinstance(X, SparseRows) or isinstance(Y, SparseRows):
            return self.scalar(inner(X, Y))
        return self.scalar(X @ Y.T)

    def block_diag(self, X: torch.Tensor) -> torch.Tensor:
        return self.scalar(row_sq_norms(X))


def half_integer_order(nu: float) -> int | None:
    """``p`` when ``nu = p + 1/2`` for ``p`` in {0, 1, 2} (closed-form Matérn), else ``None``."""
    for p in (0, 1, 2):
        if math.isclose(nu, p + 0.5, rel_tol=0, abs_tol=1e-12):
            return p
    return None
