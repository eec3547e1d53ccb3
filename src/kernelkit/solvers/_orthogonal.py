r"""Orthogonal factorisations of small dense matrices (NumPy arrays): column-pivoted QR, the
polar factor and the orthogonal Procrustes rotation.

They serve the rounding of a spectral embedding to labels
(:mod:`kernelkit.estimators._spectral_labels`: Damle, Minden and Ying 2019, Algorithm 1; Yu
and Shi 2003, section 4), and keep scikit-learn's LAPACK calls (SciPy's pivoted QR and SVD for
``cluster_qr``, NumPy's SVD for ``discretize``) so that the labels equal scikit-learn's.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

__all__ = ["column_pivots", "polar_factor", "procrustes_rotation"]


def column_pivots(A: np.ndarray) -> np.ndarray:
    """The column order ``p`` of the column-pivoted QR ``A[:, p] = Q R`` (Businger and Golub
    1965: at each step the column of largest norm orthogonal to those already chosen; LAPACK
    ``geqp3`` through ``scipy.linalg.qr(pivoting=True)``)."""
    _, _, piv = scipy.linalg.qr(A, pivoting=True, mode="economic")
    return piv


def polar_factor(A: np.ndarray) -> np.ndarray:
    """The orthogonal factor ``U W^T`` of the polar decomposition ``A = (U W^T)(W S W^T)``
    of a square ``A = U S W^T`` (SciPy's SVD)."""
    u, _, wt = scipy.linalg.svd(A)
    return u @ wt


def procrustes_rotation(M: np.ndarray) -> tuple[np.ndarray, float]:
    """``(W U^T, sum(Omega))`` for ``M = W Omega U^T`` (NumPy's SVD): the orthogonal ``Q``
    maximising ``tr(Q^T M)`` (orthogonal Procrustes) and that maximum.  Raises NumPy's
    ``LinAlgError`` when the SVD does not converge."""
    W, omega, Ut = np.linalg.svd(M)
    return W @ Ut, float(omega.sum())
