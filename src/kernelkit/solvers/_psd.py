r"""The positive semi-definiteness test of kernelkit (one rule for every caller).

A matrix is accepted as PSD when :math:`\lambda_{\min} \ge -\mathrm{tol}\,\lambda_{\max}`
(``tol`` = :func:`kernelkit.utils._numerics.psd_tolerance` of the dtype): round-off of a Gram
matrix of size ``n`` produces eigenvalues of order ``n eps lambda_max`` (course part 1,
section 1, numerical note), so the test is relative, never absolute.  A Cholesky
factorisation of :math:`A + \mathrm{tol}\,\max_i |A_{ii}|\, I` is tried first: it succeeds only
if :math:`\lambda_{\min} > -\mathrm{tol} \max_i |A_{ii}| \ge -\mathrm{tol}\,\lambda_{\max}`
(:math:`\lambda_{\max} \ge A_{ii}`), a certificate at a third of the cost of the eigenvalues,
which are computed only when it fails.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from kernelkit.utils._errors import InputError, NotPSDError
from kernelkit.utils._numerics import psd_tolerance
from kernelkit.utils._validation import to_tensor

__all__ = ["PSDCheck", "check_psd", "spectrum_check"]


@dataclass(frozen=True)
class PSDCheck:
    """Result of :func:`check_psd`.

    Attributes
    ----------
    is_psd : bool
        ``lambda_min >= -tol * lambda_max``.
    tolerance : float
        The relative tolerance ``tol`` used.
    min_eigenvalue, max_eigenvalue : float or None
        Extreme eigenvalues; None when the Cholesky certificate made them unnecessary.
    """

    is_psd: bool
    tolerance: float
    min_eigenvalue: float | None = None
    max_eigenvalue: float | None = None


def spectrum_check(values: torch.Tensor, *, rtol: float | None = None) -> PSDCheck:
    r"""The PSD verdict from eigenvalues already computed (ascending or not).

    The rule of :func:`check_psd`, :math:`\lambda_{\min} \ge -\mathrm{rtol}\,
    \max(\lambda_{\max}, 0)`, with ``rtol`` the
    :func:`~kernelkit.utils._numerics.psd_tolerance` of the eigenvalues' dtype when None (a
    caller with its own eigenvalue floor passes ``max(psd_tolerance, floor)``).
    """
    tol = psd_tolerance(values.dtype) if rtol is None else float(rtol)
    if values.numel() == 0:
        return PSDCheck(True, tol)
    lam_min, lam_max = float(values.min()), float(values.max())
    return PSDCheck(lam_min >= -tol * max(lam_max, 0.0), tol, lam_min, lam_max)


def check_psd(
    A: Any,
    *,
    name: str = "K",
    rtol: float | None = None,
    strict: bool = True,
    hint: str = "",
) -> PSDCheck:
    r"""Test whether a symmetric matrix is positive semi-definite up to round-off.

    Rule: :math:`\lambda_{\min}(A) \ge -\mathrm{rtol}\,\lambda_{\max}(A)` (in float64; the
    symmetric part :math:`(A + A^T)/2` is used).

    Parameters
    ----------
    A : tensor or array-like, shape (n, n)
        Symmetric matrix.
    name : str
        Argument name quoted in the error.
    rtol : float, optional
        Relative tolerance; :func:`~kernelkit.utils._numerics.psd_tolerance` of ``A``'s dtype.
    strict : bool
        Raise :class:`NotPSDError` when the test fails (otherwise only report it).
    hint : str
        Sentence appended to the error message (how to fix it).

    Returns
    -------
    PSDCheck
        The verdict, the tolerance and (when computed) the extreme eigenvalues.
    """
    A = A if isinstance(A, torch.Tensor) else to_tensor(A, name=name, ndim=2)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise InputError(f"{name}: expected a square matrix (n x n), got shape {tuple(A.shape)}")
    dtype = A.dtype if A.is_floating_point() else torch.float64
    tol = psd_tolerance(dtype) if rtol is None else float(rtol)
    if A.shape[0] == 0:
        return PSDCheck(True, tol)
    S = A.detach().to("cpu", torch.float64)
    S = (S + S.T) / 2
    shifted = S + tol * max(float(S.diagonal().abs().max()), 1e-300) * torch.eye(
        S.shape[0], dtype=torch.float64
    )
    _, info = torch.linalg.cholesky_ex(shifted)
    if int(info) == 0:
        return PSDCheck(True, tol)
    verdict = spectrum_check(torch.linalg.eigvalsh(S), rtol=tol)
    lam_min, lam_max, ok = verdict.min_eigenvalue, verdict.max_eigenvalue, verdict.is_psd
    if not ok and strict:
        raise NotPSDError(
            f"{name}: expected a positive semi-definite matrix, got smallest eigenvalue "
            f"{lam_min:.3g} < -{tol:.1e} x largest eigenvalue {lam_max:.3g}"
            + (f"; {hint}" if hint else "")
        )
    return PSDCheck(ok, tol, lam_min, lam_max)
