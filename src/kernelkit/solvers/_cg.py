r"""(Preconditioned) conjugate gradients on tensors and lazy operators.

Solves :math:`(A + \text{shift}\, I) X = B` for a symmetric positive definite ``A`` given as a
tensor, anything with ``matmat`` or ``__matmul__`` (duck-typed: a
:class:`~kernelkit.gram.GramOperator` qualifies, and this module imports nothing from
``kernelkit.gram``) or a callable.  Each column of ``B`` (or, in the batched layout, each
leading index of ``B``, as in the random-walk graph kernel) runs its own CG recursion
(Hestenes and Stiefel 1952; Saad, *Iterative Methods for Sparse Linear Systems*, 2nd ed.,
Algorithm 9.1 for the preconditioned form), vectorised over the systems so one product
``A @ P`` serves all of them:

.. math:: \alpha_k = \frac{r_k^T z_k}{p_k^T A p_k},\ x_{k+1} = x_k + \alpha_k p_k,\
   r_{k+1} = r_k - \alpha_k A p_k,\ z_{k+1} = M^{-1} r_{k+1},\
   \beta_k = \frac{r_{k+1}^T z_{k+1}}{r_k^T z_k},\ p_{k+1} = z_{k+1} + \beta_k p_k.

Used for KRR at scale, :math:`(K + n\lambda I)\alpha = y` with ``shift = n * lam``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from kernelkit.utils._errors import InputError
from kernelkit.utils._validation import check_int, check_positive, to_tensor


@dataclass(frozen=True)
class CGResult:
    """Result of :func:`conjugate_gradient`.

    Attributes
    ----------
    solution : torch.Tensor
        Approximate ``X``, shaped like ``B``.
    converged : bool
        Whether every column reached ``||r|| <= tol ||b||``.
    iterations : int
        Iterations run.
    residual : float
        Largest relative residual ``||b - (A + shift I) x|| / ||b||`` over the columns (of the
        recursive residual).
    """

    solution: torch.Tensor
    converged: bool
    iterations: int
    residual: float


def _as_matmat(A: Any) -> tuple[Callable[[torch.Tensor], torch.Tensor], int | None, Any]:
    """A function ``V -> A V`` on (n, r) tensors, the size ``n`` when known, and a dtype."""
    if isinstance(A, torch.Tensor):
        if A.ndim != 2 or A.shape[0] != A.shape[1]:
            raise InputError(f"A: expected a square matrix (n x n), got shape {tuple(A.shape)}")
        return (lambda V: A @ V), A.shape[0], A.dtype
    if hasattr(A, "matmat"):
        shape = getattr(A, "shape", None)
        if shape is not None and shape[0] != shape[1]:
            raise InputError(f"A: expected a square operator (n x n), got shape {tuple(shape)}")
        return (
            lambda V: torch.as_tensor(A.matmat(V)),
            None if shape is None else shape[0],
            getattr(A, "dtype", None),
        )
    if callable(A):
        return (lambda V: torch.as_tensor(A(V))), None, None
    if hasattr(A, "__matmul__"):
        shape = getattr(A, "shape", None)
        return (lambda V: torch.as_tensor(A @ V)), None if shape is None else shape[0], None
    raise InputError(
        "A: expected a tensor, an object with matmat(V) or __matmul__ (e.g. a GramOperator) or "
        "a callable V -> A V, "
        f"got {type(A).__name__}"
    )


def conjugate_gradient(
    A: Any,
    B: Any,
    *,
    preconditioner: Callable[[torch.Tensor], torch.Tensor] | None = None,
    shift: float = 0.0,
    tol: float = 1e-6,
    max_iter: int | None = None,
    x0: Any = None,
    vector_dims: int | None = None,
    callback: Callable[[int, torch.Tensor], None] | None = None,
    on_step: Callable[[torch.Tensor], None] | None = None,
) -> CGResult:
    r"""Solve :math:`(A + \text{shift}\, I) X = B` by (preconditioned) conjugate gradients.

    Parameters
    ----------
    A : tensor, operator with ``matmat`` or ``__matmul__``, or callable
        Symmetric positive (semi-)definite operator; ``A + shift I`` must be definite.
        Anything with ``matmat(V)`` (e.g. :class:`~kernelkit.gram.GramOperator`) or a
        callable ``V -> A V`` on tensors shaped like ``B``.
    B : array-like or tensor
        Right-hand sides.  Column layout (``vector_dims=None``): shape ``(n,)`` or
        ``(n, r)``, each column solved independently.  Batched layout (``vector_dims=d``):
        the last ``d`` dimensions form one vector, the leading ones index independent
        systems, and ``A`` must be a callable or operator acting on the whole batch.
    preconditioner : callable, optional
        ``R -> M^{-1} R`` for an SPD approximation ``M`` of ``A + shift I`` (e.g. Nyström),
        applied to tensors shaped like ``B``.
    shift : float
        Non-negative multiple of the identity added to ``A`` (``n * lam`` for KRR).
    tol : float
        Relative residual ``||r|| / ||b||`` at which a system stops.
    max_iter : int, optional
        Iteration cap (default ``10 n``, ``n`` the length of one vector).
    x0 : array-like or tensor, optional
        Starting point, shaped like ``B`` (default zero).
    vector_dims : int, optional
        Number of trailing dimensions of ``B`` forming one vector (batched layout).
    callback : callable, optional
        Called after every iteration as ``callback(k, rel)`` with the iteration count ``k``
        and the relative residuals ``rel`` of the systems (a tensor; progress bars).
    on_step : callable, optional
        Called with the step lengths ``alpha_k`` of every update ``x_{k+1} = x_k + alpha_k
        p_k`` (shaped like an inner product over the vector dimensions, zero for stopped
        systems), ``p_k`` being the argument of the latest product with ``A``: a caller
        that keeps ``G p_k`` from its product carries ``G x`` for a linear map ``G``
        without applying it to ``x``.

    Returns
    -------
    CGResult
        Solution, convergence flag, iterations and the largest relative residual.
    """
    matmat, n_op, op_dtype = _as_matmat(A)
    tol = check_positive(tol, name="tol")
    shift = check_positive(shift, name="shift", strict=False)
    dtype = op_dtype if isinstance(op_dtype, torch.dtype) else None
    if vector_dims is None:
        B = to_tensor(B, name="B", dtype=dtype, ndim=None)
        vector = B.ndim == 1
        Bm = B[:, None] if vector else B
        if Bm.ndim != 2 or (n_op is not None and Bm.shape[0] != n_op):
            raise InputError(f"B: expected shape ({n_op},) or ({n_op}, r), got {tuple(B.shape)}")
        dims: tuple[int, ...] = (0,)
    else:
        d = check_int(vector_dims, name="vector_dims", minimum=1)
        B = B if isinstance(B, torch.Tensor) else to_tensor(B, name="B", dtype=dtype, ndim=None)
        if B.ndim < d:
            raise InputError(f"B: expected at least {d} dimensions, got shape {tuple(B.shape)}")
        vector, Bm, dims = False, B, tuple(range(-d, 0))
    n = math.prod(Bm.shape[i] for i in dims)
    max_iter = 10 * n if max_iter is None else check_int(max_iter, name="max_iter", minimum=0)

    def apply(V: torch.Tensor) -> torch.Tensor:
        out = matmat(V).to(Bm.dtype).reshape(V.shape)
        return out + shift * V if shift else out

    X, it, rel = _cg(apply, Bm, x0, preconditioner, tol, max_iter, dims, callback, on_step)
    converged = bool((rel <= tol).all())
    sol = X[:, 0] if vector else X
    return CGResult(sol, converged, it, float(rel.max()) if rel.numel() else 0.0)


def _cg(
    apply: Callable[[torch.Tensor], torch.Tensor],
    B: torch.Tensor,
    x0: Any,
    preconditioner: Callable[[torch.Tensor], torch.Tensor] | None,
    tol: float,
    max_iter: int,
    dims: tuple[int, ...],
    callback: Callable[[int, torch.Tensor], None] | None = None,
    on_step: Callable[[torch.Tensor], None] | None = None,
) -> tuple[torch.Tensor, int, torch.Tensor]:
    """The recursion of the module docstring; inner products reduce over ``dims``."""

    def dot(U: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
        return (U * V).sum(dims, keepdim=True)

    if x0 is None:
        X = torch.zeros_like(B)
        R = B.clone()
    else:
        X = to_tensor(x0, name="x0", dtype=B.dtype, ndim=None).reshape(B.shape).clone()
        R = B - apply(X)
    b_norm = torch.linalg.vector_norm(B, dim=dims, keepdim=True)
    b_norm = torch.where(b_norm > 0, b_norm, torch.ones_like(b_norm))
    precond = preconditioner if preconditioner is not None else (lambda V: V)
    Z = precond(R).reshape(R.shape)
    P = Z.clone()
    rz = dot(R, Z)

    def residual(rz: torch.Tensor) -> torch.Tensor:
        if preconditioner is None:  # Z is R: r^T z = ||r||^2, no second pass over R
            return rz.clamp_min(0.0).sqrt() / b_norm
        return torch.linalg.vector_norm(R, dim=dims, keepdim=True) / b_norm

    rel = residual(rz)
    active = rel > tol
    it = 0
    while it < max_iter and bool(active.any()):
        AP = apply(P)
        pap = dot(P, AP)
        alpha = torch.where(active & (pap > 0), rz / torch.where(pap > 0, pap, 1.0), 0.0)
        X.addcmul_(alpha, P)
        if on_step is not None:
            on_step(alpha)
        R.addcmul_(alpha, AP, value=-1.0)
        Z = precond(R).reshape(R.shape)
        rz_new = dot(R, Z)
        beta = torch.where(active & (rz != 0), rz_new / torch.where(rz != 0, rz, 1.0), 0.0)
        P.mul_(beta).add_(Z)
        rz = rz_new
        rel = residual(rz)
        active = active & (rel > tol) & (pap > 0)
        it += 1
        if callback is not None:
            callback(it, rel)
    return X, it, rel
