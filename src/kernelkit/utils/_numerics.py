"""Per-dtype numerical policy: default dtype, tolerances and the Cholesky jitter ladder."""

from __future__ import annotations

import torch

DEFAULT_DTYPE = torch.float64
"""Default floating dtype on CPU: float64, for parity with reference maths."""


def eps(dtype: torch.dtype) -> float:
    """Machine epsilon of a floating ``dtype``."""
    return float(torch.finfo(dtype).eps)


def psd_tolerance(dtype: torch.dtype) -> float:
    """Relative tolerance for PSD checks: ``lambda_min >= -tol * lambda_max``.

    Round-off of a Gram matrix of size n produces eigenvalues of order ``n * eps * lambda_max``
    (course part 1, section 1, numerical note), so the check is relative, never absolute.
    """
    return {torch.float64: 1e-8, torch.float32: 1e-4, torch.float16: 1e-2}.get(dtype, 1e-4)


def jitter_ladder(dtype: torch.dtype) -> tuple[float, ...]:
    """Relative jitters tried in turn by the Cholesky solver, as multiples of ``mean(diag(K))``.

    Starts at zero (exact solve) and climbs by factors of 10 from about ``10 * eps``.
    """
    start = {torch.float64: 1e-14, torch.float32: 1e-6, torch.float16: 1e-3}.get(dtype, 1e-6)
    return (0.0, *(start * 10.0**i for i in range(0, 10)))


def symmetry_tolerance(dtype: torch.dtype) -> float:
    """Relative tolerance of ``max|K - K^T| <= tol * max|K|`` for a precomputed Gram."""
    return {torch.float64: 1e-10, torch.float32: 1e-5}.get(dtype, 1e-3)
