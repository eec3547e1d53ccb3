r"""Exact optimal transport between two uniform discrete measures.

.. math:: W(M) = \min_{P \ge 0,\ P\mathbf 1 = \mathbf 1/n,\ P^T \mathbf 1 = \mathbf 1/m}
          \langle P, M \rangle

for a cost matrix :math:`M \in \mathbb R^{n \times m}` (the earth mover's distance of
Rubner, Tomasi & Guibas 2000; Villani, "Optimal transport", 2009, chapter 6).  With
:math:`n = m` an optimal plan is a permutation (Birkhoff-von Neumann), found by the
Hungarian-type solver :func:`scipy.optimize.linear_sum_assignment`; otherwise the
transportation problem is solved by the network simplex of POT (the optional ``POT``
package, extra ``graphs``), which is exact as well.  Its C++ solver (``emd_c``, the core of
``ot.emd2``) is called directly: ``ot.emd2``'s marginal checks, dual centring and backend
dispatch cost more than the simplex itself on the small matrices of graph kernels.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

from kernelkit.utils._errors import ConvergenceError, InputError
from kernelkit.utils._optional import require

__all__ = ["wasserstein_uniform"]

_MAX_PIVOTS = 1_000_000


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
    M = np.ascontiguousarray(M, dtype=np.float64)
    if M.ndim != 2 or 0 in M.shape:
        raise InputError(f"M: expected a non-empty (n, m) cost matrix, got shape {M.shape}")
    n, m = M.shape
    if n == m:
        rows, cols = linear_sum_assignment(M)
        return float(M[rows, cols].sum() / n)
    if n == 1 or m == 1:
        return float(M.mean())
    wrap = require("ot.lp.emd_wrap", purpose="optimal transport between graphs of different sizes")
    _, cost, _, _, code = wrap.emd_c(np.full(n, 1.0 / n), np.full(m, 1.0 / m), M, _MAX_PIVOTS, 1)
    message = wrap.check_result(code)
    if message:
        raise ConvergenceError(f"M: the network simplex stopped on a {n} x {m} matrix: {message}")
    return float(cost)
