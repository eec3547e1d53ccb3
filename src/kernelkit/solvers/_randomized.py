r"""Randomised top-``k`` eigenpairs of a symmetric matrix (Halko, Martinsson and Tropp 2011).

"Finding structure with randomness: probabilistic algorithms for constructing approximate
matrix decompositions", SIAM Review 53(2), 2011:

* stage A, the range finder with ``q`` power iterations (Algorithm 4.4, randomised subspace
  iteration): ``Y_0 = A Omega`` for a Gaussian ``Omega`` of ``l = k + p`` columns
  (``p`` oversamples, section 4.2), ``Q_0 R_0 = Y_0``, then ``q`` times
  ``Q_j R_j = A Q_{j-1}`` (a QR after every product keeps the columns from collapsing onto
  the top eigenvector in floating point; section 4.5);
* stage B, the direct eigenvalue decomposition of a Hermitian ``A`` (Algorithm 5.3):
  ``B = Q^T A Q = V Lambda V^T`` (an ``l x l`` problem), ``U = Q V``; the ``k`` largest
  ``Lambda`` with their ``U`` are returned.

The error decays like ``(sigma_{k+1} / sigma_k)^{2q+1}`` (section 10.4), so a decaying
spectrum (a smooth kernel's Gram) needs a few iterations; ``n_iter="auto"`` is 7 when
``k < n / 10`` and 4 otherwise, scikit-learn's ``randomized_svd`` rule.  The cost is
``(q + 2)`` products of ``A`` with ``n x l`` blocks plus ``O(n l^2)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kernelkit.utils._errors import InputError
from kernelkit.utils._validation import check_int


def randomized_range(
    A: np.ndarray, size: int, *, n_iter: int, rng: np.random.Generator
) -> np.ndarray:
    """Orthonormal ``Q`` (``n x size``) with ``range(Q) ~ range(A)`` (Algorithm 4.4)."""
    Q, _ = np.linalg.qr(A @ rng.standard_normal((A.shape[1], size)))
    for _ in range(n_iter):
        Q, _ = np.linalg.qr(A @ Q)
    return Q


def randomized_eigh(
    A: Any, k: int, *, n_oversamples: int = 10, n_iter: int | str = "auto", seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` largest eigenpairs of a symmetric ``A`` (values descending), randomised.

    Parameters
    ----------
    A : ndarray, shape (n, n)
        Symmetric matrix.
    k : int
        Number of pairs, ``1 <= k <= n``.
    n_oversamples : int
        Extra columns ``p`` of the sketch (``l = min(k + p, n)``).
    n_iter : int or "auto"
        Power iterations ``q`` (``"auto"``: 7 when ``k < n / 10``, else 4).
    seed : int
        Seed of the Gaussian test matrix.

    Raises
    ------
    InputError
        For ``k`` out of range or a negative ``n_iter``.
    """
    A = np.asarray(A)
    n = A.shape[0]
    k = check_int(k, name="k", minimum=1)
    if k > n:
        raise InputError(f"k: expected at most n = {n} eigenpairs, got {k}")
    if n_iter == "auto":
        n_iter = 7 if k < 0.1 * n else 4
    q = check_int(n_iter, name="n_iter", minimum=0)
    size = min(k + check_int(n_oversamples, name="n_oversamples", minimum=0), n)
    Q = randomized_range(A, size, n_iter=q, rng=np.random.default_rng(seed))
    B = Q.T @ A @ Q
    w, V = np.linalg.eigh((B + B.T) / 2)
    order = np.argsort(w)[::-1][:k]
    return w[order], Q @ V[:, order]


__all__ = ["randomized_eigh", "randomized_range"]
