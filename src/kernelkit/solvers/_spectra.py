"""Eigenvalues only: of dense symmetric matrices (batched) and of large sparse ones.

The entry points of kernelkit for spectra without eigenvectors (the random-walk kernel's
convergence bound, the s.i.p. semi-norm's scale); full eigendecompositions are
:func:`kernelkit.solvers.symmetric_eigh`, a few eigenpairs
:func:`kernelkit.solvers.top_eigenpairs`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
import torch
from scipy.sparse.linalg import eigsh

from kernelkit.utils._config import deprecated_options, options

__getattr__ = deprecated_options(__name__, {"DENSE_MAX_N": "spectrum_dense_max_n"})
"""``DENSE_MAX_N`` of the previous release, now the option ``spectrum_dense_max_n``
(``kernelkit.get_config``): importable with a ``FutureWarning`` for one release."""


def symmetric_eigvalsh(A: torch.Tensor) -> torch.Tensor:
    """Eigenvalues of the symmetric matrices ``A`` (shape ``(..., n, n)``), ascending.

    LAPACK's ``syevd`` without eigenvectors (``torch.linalg.eigvalsh``), batched over the
    leading dimensions; only the lower triangle of ``A`` is read.
    """
    return torch.linalg.eigvalsh(A)


def symmetric_spectral_radius(A: Any) -> float:
    r"""Spectral radius :math:`\max_i |\lambda_i(A)|` of a symmetric matrix with entries
    :math:`\ge 0` (a SciPy sparse matrix or a dense array).

    Up to ``spectrum_dense_max_n`` rows (an option, :func:`kernelkit.get_config`): all
    eigenvalues by LAPACK.  Above: the largest algebraic
    eigenvalue by ARPACK's Lanczos (``eigsh(k=1, which="LA")``), which is the spectral radius
    of a symmetric non-negative matrix (Perron-Frobenius).
    """
    n = A.shape[0]
    if n == 0 or (sp.issparse(A) and A.nnz == 0):
        return 0.0
    if n <= options().spectrum_dense_max_n:
        dense = A.toarray() if sp.issparse(A) else np.asarray(A)
        return float(np.abs(np.linalg.eigvalsh(dense)).max())
    return float(eigsh(A, k=1, which="LA", return_eigenvectors=False)[0])


__all__ = ["symmetric_eigvalsh", "symmetric_spectral_radius"]
