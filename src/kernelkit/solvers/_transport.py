r"""Exact optimal transport between two uniform discrete measures.

.. math:: W(M) = \min_{P \ge 0,\ P\mathbf 1 = \mathbf 1/n,\ P^T \mathbf 1 = \mathbf 1/m}
          \langle P, M \rangle

for a cost matrix :math:`M \in \mathbb R^{n \times m}` (the earth mover's distance of
Rubner, Tomasi & Guibas 2000; Villani, "Optimal transport", 2009, chapter 6).  With
:math:`n = m` an optimal plan is a permutation (Birkhoff-von Neumann), found by the
Hungarian-type solver :func:`scipy.optimize.linear_sum_assignment`; otherwise the
transportation problem is solved by the network simplex of POT (``ot.emd2``, the optional
``POT`` package, extra ``graphs``), which is exact as well.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

from kernelkit.utils._errors import InputError
from kernelkit.utils._optional import require

__all__ = ["wasserstein_uniform"]


def wasserstein_uniform(M: np.ndarray) -> float:
    """Optimal transport cost between uniform weights on the rows and on the columns of ``M``.

    Parameters
    ----------
    M : np.ndarray, shape (n, m)
        Finite ground costs, ``n, m >= 1``.

    Returns
    -------
    float
    """
    M = np.asarray(M, dtype=np.float64)
    if M.ndim != 2 or 0 in M.shape:
        raise InputError(f"M: expected a non-empty (n, m) cost matrix, got shape {M.shape}")
    n, m = M.shape
    if n == m:
        rows, cols = linear_sum_assignment(M)
        return float(M[rows, cols].sum() / n)
    if n == 1 or m == 1:
        return float(M.mean())
    ot = require("ot", purpose="optimal transport between graphs of different sizes")
    return float(ot.emd2(np.full(n, 1.0 / n), np.full(m, 1.0 / m), M, numItermax=1_000_000))
