r"""Rounding a spectral embedding to cluster labels: ``"discretize"`` and ``"cluster_qr"``.

* ``discretize``: Yu and Shi, "Multiclass spectral clustering", ICCV 2003, section 4 (the
  discretisation of the continuous optimum): with the rows of the embedding ``V`` normalised,
  find the partition matrix ``X`` (one 1 per row) and rotation ``R`` (``R^T R = I``) that
  maximise ``tr(X^T V R)``: alternately ``X = argmax_rows(V R)`` and ``R = U W^T`` from the
  SVD ``X^T V = W Omega U^T`` (orthogonal Procrustes), until the objective
  ``2 (n - tr Omega)`` stops decreasing.  ``R`` starts from ``k`` rows of ``V`` as
  orthogonal to each other as possible (a random first row, then the row least aligned with
  those chosen).  Restarted when the SVD fails, as scikit-learn does.
* ``cluster_qr``: Damle, Minden and Ying, "Simple, direct and efficient multi-way spectral
  clustering", Information and Inference 8(1), 2019, Algorithm 1: the column-pivoted QR of
  ``V^T`` picks ``k`` representative rows ``V_C``; with the polar factor ``Q = U W^T`` of
  ``V_C^T = U S W^T``, each point goes to ``argmax_j |(V Q)_ij|``.  Deterministic.
"""

from __future__ import annotations

import numpy as np

from kernelkit.solvers._orthogonal import column_pivots, polar_factor, procrustes_rotation


def cluster_qr(vectors: np.ndarray) -> np.ndarray:
    """Labels of the rows of the ``n x k`` embedding by column-pivoted QR (Damle et al.)."""
    k = vectors.shape[1]
    piv = column_pivots(vectors.T)
    return np.abs(vectors @ polar_factor(vectors[piv[:k], :].T)).argmax(axis=1)


def discretize(
    vectors: np.ndarray,
    rng: np.random.Generator,
    *,
    max_svd_restarts: int = 30,
    n_iter_max: int = 20,
    tol: float = 1e-15,
) -> np.ndarray:
    """Labels of the rows of the ``n x k`` embedding by Yu and Shi's discretisation."""
    eps = np.finfo(float).eps
    n, k = vectors.shape
    V = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), eps)
    labels = np.zeros(n, dtype=int)
    for _ in range(max_svd_restarts):
        R = np.zeros((k, k))
        R[:, 0] = V[rng.integers(n), :].T
        c = np.zeros(n)
        for j in range(1, k):
            c += np.abs(V @ R[:, j - 1])
            R[:, j] = V[c.argmin(), :].T
        last = 0.0
        for _ in range(n_iter_max):
            labels = (V @ R).argmax(axis=1)
            X = np.zeros((n, k))
            X[np.arange(n), labels] = 1.0
            try:
                Q, trace = procrustes_rotation(X.T @ V)
            except np.linalg.LinAlgError:
                break
            objective = 2.0 * (n - trace)
            if abs(objective - last) < tol:
                return labels
            last = objective
            R = Q.T
    return labels


__all__ = ["cluster_qr", "discretize"]
