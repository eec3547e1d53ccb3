r"""Cholesky solves of shifted Gram systems with a per-dtype jitter ladder.

Kernel ridge regression (course part 1, slide "Kernel ridge regression (KRR)") solves
:math:`(K + n\lambda I)\alpha = y`; with the ERM convention ``(1/n) sum loss + lam ||f||^2``
the shift is ``n * lam`` (scikit-learn's ``KernelRidge(alpha=n * lam)``).  A Gram matrix is only
positive *semi*-definite (duplicated points, low-rank kernels, round-off of order
``n eps lambda_max``), so when the factorisation fails we add a jitter ``j * mean(diag K)``
climbing :func:`kernelkit.utils.numerics.jitter_ladder` and report the one used.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from kernelkit.utils.errors import InputError, NotPSDError
from kernelkit.utils.numerics import jitter_ladder
from kernelkit.utils.validation import check_positive, to_tensor


@dataclass(frozen=True)
class CholeskyResult:
    """Result of :func:`cholesky_solve`.

    Attributes
    ----------
    solution : torch.Tensor
        ``X`` with ``(K + (shift + jitter_abs) I) X = B``, shaped like ``B``.
    factor : torch.Tensor
        Lower Cholesky factor ``L`` of ``K + (shift + jitter_abs) I``.
    jitter : float
        Absolute jitter added to the diagonal besides ``shift`` (0.0 when none was needed);
        the relative jitter of the ladder times ``mean(diag K)``.
    shift : float
        The requested shift.
    """

    solution: torch.Tensor
    factor: torch.Tensor
    jitter: float
    shift: float


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
        ``"auto"``: try the ladder ``jitter_ladder(dtype)`` (0, then ~10 eps upwards by factors
        of 10) relative to ``mean(diag K)`` until the factorisation succeeds and the solution
        is finite.  A float: use only that relative jitter.

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
    K = to_tensor(K, name="K")
    if K.shape[0] != K.shape[1]:
        raise InputError(f"K: expected a square matrix (n x n), got shape {tuple(K.shape)}")
    B = to_tensor(B, name="B", dtype=K.dtype, device=K.device, ndim=None)
    vector = B.ndim == 1
    if B.ndim not in (1, 2) or B.shape[0] != K.shape[0]:
        raise InputError(
            f"B: expected shape ({K.shape[0]},) or ({K.shape[0]}, r) to match K, "
            f"got {tuple(B.shape)}"
        )
    shift = check_positive(shift, name="shift", strict=False)
    if jitter == "auto":
        ladder = jitter_ladder(K.dtype)
    elif isinstance(jitter, str):
        raise InputError(f"jitter: expected 'auto' or a non-negative float, got {jitter!r}")
    else:
        ladder = (check_positive(jitter, name="jitter", strict=False),)
    n = K.shape[0]
    scale = float(K.diagonal().mean()) if n else 1.0
    scale = scale if scale > 0 else 1.0
    rhs = B[:, None] if vector else B
    A = torch.empty_like(K)
    tried = []
    for rel in ladder:
        added = rel * scale
        A.copy_(K)
        A.diagonal().add_(shift + added)
        L, info = torch.linalg.cholesky_ex(A, out=(A, torch.empty((), dtype=torch.int32)))
        tried.append(rel)
        if int(info) != 0:
            continue
        X = torch.cholesky_solve(rhs, L)
        if bool(torch.isfinite(X).all()):
            return CholeskyResult(X[:, 0] if vector else X, L, added, shift)
    raise NotPSDError(
        f"K: expected a positive semi-definite matrix, but K + shift*I (shift={shift:g}) could "
        f"not be factorised even with a jitter of {tried[-1]:g} * mean(diag K) "
        f"(= {tried[-1] * scale:.3g}); the matrix is not PSD beyond round-off. Check the kernel "
        "or increase shift (lam)"
    )
