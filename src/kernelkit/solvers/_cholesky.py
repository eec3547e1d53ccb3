r"""Cholesky factorisations with one per-dtype jitter ladder, and the solves built on them.

A Gram matrix is only positive *semi*-definite (duplicated points, low-rank kernels, round-off
of order ``n eps lambda_max``), so
:func:`cholesky_factor` factorises :math:`A + (\text{shift} + j\,s) I` for the relative jitters
``j`` of :func:`kernelkit.utils._numerics.jitter_ladder` in turn (0 first), with the scale
:math:`s = \mathrm{mean}\,|\mathrm{diag}\,A|` (over the whole batch), and keeps the first that
succeeds: the factorisation reports no breakdown and its diagonal is finite.  One rule for
every caller; the jitter used is reported.

Kernel ridge regression (course part 1, slide "Kernel ridge regression (KRR)") solves
:math:`(K + n\lambda I)\alpha = y`: :func:`cholesky_solve` with ``shift = n * lam``
(scikit-learn's ``KernelRidge(alpha=n * lam)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from kernelkit.utils._errors import InputError, NotPSDError
from kernelkit.utils._numerics import jitter_ladder
from kernelkit.utils._validation import check_positive, to_tensor

__all__ = [
    "CholeskyFactor",
    "CholeskyResult",
    "cho_solve",
    "cholesky_factor",
    "cholesky_solve",
    "solve",
    "solve_triangular",
]


@dataclass(frozen=True)
class CholeskyFactor:
    """Result of :func:`cholesky_factor`.

    Attributes
    ----------
    factor : torch.Tensor, shape (..., n, n)
        Lower factor ``L`` with ``L L^T = A + (shift + jitter) I`` (meaningless for the matrices
        flagged in ``failed``).
    jitter : float
        Absolute jitter added besides ``shift`` (0.0 when none was needed): the relative jitter
        of the ladder times ``mean(|diag A|)``; common to the whole batch.
    shift : float
        The requested shift.
    success : bool
        Whether every matrix of the batch was factorised.
    failed : torch.Tensor, shape (...)
        Per matrix: whether its factorisation broke down (all False when ``success``).
    """

    factor: torch.Tensor
    jitter: float
    shift: float
    success: bool
    failed: torch.Tensor

    def solve(self, B: torch.Tensor) -> torch.Tensor:
        """``X = (L L^T)^{-1} B`` for ``B`` of shape ``(..., n)`` or ``(..., n, r)``.

        A 1-D ``B`` (or one with one dimension fewer than the factor) is a single column.
        Differentiable in ``B`` and in the factor.
        """
        return cho_solve(self.factor, B)

    def inverse(self) -> torch.Tensor:
        """``(L L^T)^{-1}``, the inverse of the shifted matrix, from the factor
        (``torch.cholesky_inverse``; symmetric, batched)."""
        return torch.cholesky_inverse(self.factor)

    def logdet(self) -> torch.Tensor:
        r""":math:`\log|L L^T| = 2 \sum_i \log L_{ii}`, one value per matrix of the batch
        (shape ``(...)``)."""
        return 2.0 * torch.diagonal(self.factor, dim1=-2, dim2=-1).log().sum(-1)


@dataclass(frozen=True)
class CholeskyResult:
    """Result of :func:`cholesky_solve`.

    Attributes
    ----------
    solution : torch.Tensor
        ``X`` with ``(K + (shift + jitter) I) X = B``, shaped like ``B``.
    factor : torch.Tensor
        Lower Cholesky factor ``L`` of ``K + (shift + jitter) I``.
    jitter : float
        Absolute jitter added to the diagonal besides ``shift`` (0.0 when none was needed);
        the relative jitter of the ladder times ``mean(|diag K|)``.
    shift : float
        The requested shift.
    """

    solution: torch.Tensor
    factor: torch.Tensor
    jitter: float
    shift: float


def _ladder(jitter: str | float, dtype: torch.dtype) -> tuple[float, ...]:
    if jitter == "auto":
        return jitter_ladder(dtype)
    if isinstance(jitter, str):
        raise InputError(f"jitter: expected 'auto' or a non-negative float, got {jitter!r}")
    return (check_positive(jitter, name="jitter", strict=False),)


def _check_square(A: Any, name: str) -> torch.Tensor:
    if not isinstance(A, torch.Tensor):
        A = to_tensor(A, name=name, ndim=None)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise InputError(
            f"{name}: expected a square matrix (n x n) or a batch of them (..., n, n), "
            f"got shape {tuple(A.shape)}"
        )
    if not A.is_floating_point():
        A = A.to(torch.float64)
    return A


def cholesky_factor(
    A: Any,
    *,
    shift: float = 0.0,
    jitter: str | float = "auto",
    overwrite: bool = False,
    strict: bool = True,
    name: str = "A",
) -> CholeskyFactor:
    r"""Lower Cholesky factor of :math:`A + (\text{shift} + j\,s) I` with the jitter ladder.

    Tries the relative jitters ``j`` of ``jitter_ladder(A.dtype)`` (0, then about ``10 eps``
    upwards by factors of 10), scaled by :math:`s = \mathrm{mean}\,|\mathrm{diag}\,A|`, until
    the factorisation of every matrix of the batch succeeds (one common jitter for a batch).
    Differentiable in ``A`` when it requires a gradient (the jitter is a constant).

    Parameters
    ----------
    A : tensor or array-like, shape (..., n, n)
        Symmetric positive semi-definite matrices (only the lower triangle is read).
    shift : float
        Non-negative multiple of the identity added before the jitter.
    jitter : "auto" or float
        ``"auto"``: the ladder; a float: only that relative jitter.
    overwrite : bool
        Factorise ``A`` (2-D, no gradient) in place: its diagonal is shifted and its lower
        triangle replaced by ``L``, with no second ``n x n`` buffer.  Only the first jitter
        is tried (``A`` is destroyed by a failed attempt).
    strict : bool
        Raise :class:`NotPSDError` when the ladder is exhausted; otherwise return the last
        attempt with ``success=False`` and the failed matrices flagged.
    name : str
        Argument name quoted in error messages.

    Returns
    -------
    CholeskyFactor
        Factor, absolute jitter, shift, success flag and per-matrix failures.
    """
    A = _check_square(A, name)
    shift = check_positive(shift, name="shift", strict=False)
    ladder = _ladder(jitter, A.dtype)
    n = A.shape[-1]
    scale = float(A.detach().diagonal(dim1=-2, dim2=-1).abs().mean()) if A.numel() else 1.0
    scale = scale if scale > 0 else 1.0
    in_place = A.ndim == 2 and not (torch.is_grad_enabled() and A.requires_grad)
    if overwrite:
        if not in_place:
            raise InputError(f"{name}: overwrite=True needs a 2-D matrix without gradient")
        ladder = ladder[:1]
        buffer = A
    else:
        # column-major, the layout LAPACK and ``torch.linalg.cholesky`` return: the triangular
        # solves that use the factor round as they do on that layout
        buffer = torch.empty_like(A).mT if in_place else None
    eye = None if in_place else torch.eye(n, dtype=A.dtype, device=A.device)
    for rel in ladder:
        added = rel * scale
        if buffer is not None:
            if buffer is not A:
                buffer.copy_(A)
            if shift + added:
                buffer.diagonal().add_(shift + added)
            info = torch.empty((), dtype=torch.int32, device=A.device)
            L, info = torch.linalg.cholesky_ex(buffer, out=(buffer, info))
        else:
            L, info = torch.linalg.cholesky_ex(A + (shift + added) * eye if shift + added else A)
        diag_ok = torch.isfinite(L.detach().diagonal(dim1=-2, dim2=-1)).all(-1)
        failed = (info != 0) | ~diag_ok
        if not bool(failed.any()):
            return CholeskyFactor(L, added, shift, True, failed)
    if strict:
        raise NotPSDError(
            f"{name}: expected a positive semi-definite matrix, but {name} + shift*I "
            f"(shift={shift:g}) could not be factorised even with a jitter of {ladder[-1]:g} * "
            f"mean(|diag {name}|) (= {ladder[-1] * scale:.3g}); the matrix is not PSD beyond "
            "round-off (or holds NaN). Check the kernel, or increase the shift (lam)"
        )
    return CholeskyFactor(L, added, shift, False, failed)


def cholesky_solve(
    K: Any, B: Any, *, shift: float = 0.0, jitter: str | float = "auto"
) -> CholeskyResult:
    r"""Solve :math:`(K + \text{shift}\, I) X = B` for a symmetric PSD ``K`` by Cholesky.

    For kernel ridge regression use ``shift = n * lam`` (objective
    ``(1/n) sum (y_i - f(x_i))^2 + lam ||f||^2``, course part 1, slide "Kernel ridge regression
    (KRR)":
    :math:`\alpha = (K + n\lambda I)^{-1} y`; scikit-learn's ``alpha = n * lam``).

    Parameters
    ----------
    K : array-like or tensor, shape (n, n)
        Symmetric positive semi-definite matrix (only its lower triangle is read).
    B : array-like or tensor, shape (n,) or (n, r)
        Right-hand sides.
    shift : float
        Non-negative multiple of the identity added to ``K``.
    jitter : "auto" or float
        As in :func:`cholesky_factor`.

    Returns
    -------
    CholeskyResult
        Solution, factor, the absolute jitter used and the shift.

    Raises
    ------
    NotPSDError
        If no jitter of the ladder makes ``K + shift I`` factorisable (``K`` is then far from
        PSD: check it is a valid kernel's Gram).
    """
    K = to_tensor(K, name="K", ndim=None)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise InputError(f"K: expected a square matrix (n x n), got shape {tuple(K.shape)}")
    B = to_tensor(B, name="B", dtype=K.dtype, device=K.device, ndim=None)
    if B.ndim not in (1, 2) or B.shape[0] != K.shape[0]:
        raise InputError(
            f"B: expected shape ({K.shape[0]},) or ({K.shape[0]}, r) to match K, "
            f"got {tuple(B.shape)}"
        )
    fac = cholesky_factor(K, shift=shift, jitter=jitter, name="K")
    return CholeskyResult(fac.solve(B), fac.factor, fac.jitter, fac.shift)


def cho_solve(L: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    r"""``X = (L L^T)^{-1} B`` from a lower Cholesky factor ``L`` (batched, differentiable).

    One forward and one back substitution (``torch.cholesky_solve``).  ``B`` of shape
    ``(..., n)`` (one dimension fewer than ``L``) is a single column per matrix.
    """
    vector = B.ndim == L.ndim - 1
    X = torch.cholesky_solve(B.unsqueeze(-1) if vector else B, L)
    return X.squeeze(-1) if vector else X


def solve_triangular(
    L: torch.Tensor, B: torch.Tensor, *, upper: bool = False, left: bool = True
) -> torch.Tensor:
    r"""``X`` with ``L X = B`` (``left``) or ``X L = B``, for triangular ``L`` (batched).

    Forward / back substitution (``torch.linalg.solve_triangular``); differentiable.  ``B``
    is broadcast against the batch dimensions of ``L``.
    """
    if L.ndim < 2 or L.shape[-1] != L.shape[-2]:
        raise InputError(f"L: expected a square triangular matrix, got shape {tuple(L.shape)}")
    k = -2 if left else -1
    if B.ndim < 2 or B.shape[k] != L.shape[-1]:
        raise InputError(
            f"B: expected {'rows' if left else 'columns'} of length {L.shape[-1]} to match L, "
            f"got shape {tuple(B.shape)}"
        )
    if B.ndim < L.ndim:
        B = B.expand(*L.shape[:-2], *B.shape[-2:])
    return torch.linalg.solve_triangular(L, B, upper=upper, left=left)


def solve(A: torch.Tensor, B: torch.Tensor, *, name: str = "A") -> torch.Tensor:
    r"""``X = A^{-1} B`` for square (batched) ``A``, protected against singular matrices.

    LU with partial pivoting (``torch.linalg.solve_ex``).  Matrices of the batch that are
    exactly singular (LU breakdown) get the minimum-norm least-squares solution
    :math:`X = A^{+} B` (pseudo-inverse by SVD) instead of an error or infinities.
    Differentiable.  ``B`` of shape ``(..., n)`` is one right-hand side per matrix,
    ``(..., n, r)`` several.

    Raises
    ------
    InputError
        If ``A`` is not square or the shapes do not match.
    """
    A = _check_square(A, name)
    vector = B.ndim == A.ndim - 1
    if B.shape[-1 if vector else -2] != A.shape[-1]:
        raise InputError(
            f"B: expected length {A.shape[-1]} along the rows to match {name}, "
            f"got shape {tuple(B.shape)}"
        )
    rhs = B.unsqueeze(-1) if vector else B
    X, info = torch.linalg.solve_ex(A, rhs)
    singular = info != 0
    if bool(singular.any()):
        if A.ndim == 2:
            X = torch.linalg.pinv(A) @ rhs
        else:
            X = X.clone()
            X[singular] = torch.linalg.pinv(A[singular]) @ rhs.expand_as(X)[singular]
    return X.squeeze(-1) if vector else X
