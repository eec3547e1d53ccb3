"""Small dense routines of the numerics layer: a tridiagonal rotation, a batched
log-determinant and the least-norm point above one.  Moved here from the models and kernels
that first needed them, so that every factorisation, eigensolver and optimiser call of
kernelkit stays in :mod:`kernelkit.solvers` (``tests/solvers/test_numerics_layer.py``)."""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.linalg.lapack as lapack
import scipy.optimize
import torch


def tridiagonal_rotation(K: np.ndarray, B: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Eigenvalues ``s`` of symmetric ``K`` and ``U^T B`` without forming ``U``.

    ``K = Q T Q^T`` by LAPACK's ``dsytrd`` (Householder tridiagonalisation), ``Q^T B`` by its
    reflectors, ``T = V diag(s) V^T`` by ``dstemr`` (MRRR, ``O(n^2)``), ``U^T B = V^T Q^T B``:
    about ``4/3 n^3`` flops against the ``~9 n^3`` of a full eigendecomposition with vectors
    (Golub and Van Loan 2013, sections 8.3 and 8.4).  ``None`` when LAPACK reports a failure
    (the caller then takes :func:`~kernelkit.solvers.symmetric_eigh`).
    """
    n = K.shape[0]
    lwork, info = lapack.dsytrd_lwork(n, lower=1)
    if info != 0:
        return None
    c, d, e, tau, info = lapack.dsytrd(K, lower=1, lwork=int(lwork))
    if info != 0:
        return None
    Z = B.copy()
    for i in range(n - 1):
        v = c[i + 1 :, i].copy()
        v[0] = 1.0
        Z[i + 1 :] -= tau[i] * np.outer(v, v @ Z[i + 1 :])
    m, w, V, info = lapack.dstemr(d, np.append(e, 0.0), 0, 0.0, 0.0, 0, 0, compute_v=1)
    if info != 0 or m != n:
        return None
    return w, V.T @ Z


def logdet_pd(A: torch.Tensor) -> torch.Tensor:
    """``log det A`` of a batch of symmetric positive definite matrices: ``2 sum log L_ii``
    of the Cholesky factor, or the sum of the logs of the eigenvalues (clipped at the
    smallest positive float) where round-off breaks the factorisation."""
    L, info = torch.linalg.cholesky_ex(A)
    if bool((info > 0).any()):
        return torch.linalg.eigvalsh(A).clamp_min(torch.finfo(A.dtype).tiny).log().sum(-1)
    return 2.0 * L.diagonal(dim1=-2, dim2=-1).log().sum(-1)


def least_norm_above_one(G: np.ndarray) -> np.ndarray | None:
    """The dual weights ``mu >= 0`` of ``min ||f||`` s.t. ``f(q) >= 1`` on the points of the
    positive definite Gram ``G = K_QQ``: with ``G = L L^T``, the non-negative least squares
    ``min_{mu >= 0} ||L^T mu - L^{-1} 1||^2`` (SciPy's ``nnls``); ``f = K_{:Q} mu``.
    ``None`` when ``G`` is not positive definite."""
    try:
        L = scipy.linalg.cholesky(G, lower=True)
    except np.linalg.LinAlgError:
        return None
    target = scipy.linalg.solve_triangular(L, np.ones(len(G)), lower=True)
    mu, _ = scipy.optimize.nnls(L.T, target)
    return mu
