r"""Search on a graph: the smoothest function on the nodes that is at least 1 on a query.

Course part 2, "Kernels on graphs" (applications: gene networks, Rapaport et al. 2007): with a
node kernel ``K`` (diffusion, regularised Laplacian ...), rank the nodes by

.. math:: f^* = \arg\min_{f \in \mathcal H_K} \tfrac12 \|f\|_{\mathcal H_K}^2
          \quad \text{s.t.} \quad f(q) \ge 1 \ \ \forall q \in Q,

the function of least RKHS norm (smoothest on the graph) that covers the query ``Q``.  By the
representer theorem ``f^* = sum_{q in Q} mu_q K(., q)``, ``mu`` the solution of the dual
``max_{mu >= 0} 1^T mu - (1/2) mu^T K_QQ mu``, i.e. with ``K_QQ = L L^T`` (Cholesky) the
non-negative least squares ``min_{mu >= 0} ||L^T mu - L^{-1} 1||^2`` (SciPy's ``nnls``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kernelkit.kernels import Kernel
from kernelkit.solvers._dense import least_norm_above_one
from kernelkit.utils._errors import InputError

__all__ = ["graph_search"]


def graph_search(network: Kernel | Any, query: Any) -> np.ndarray:
    r"""Scores ``f^*(v)`` of every node: the least-norm function with ``f >= 1`` on ``query``.

    Parameters
    ----------
    network : Kernel or array-like (m, m)
        A node kernel with ``node_gram()`` (:class:`~kernelkit.kernels.Diffusion`,
        :class:`~kernelkit.kernels.RegularizedLaplacian`,
        :class:`~kernelkit.kernels.SpectralNode` ...) or its Gram ``K`` over all nodes
        (symmetric PSD, positive definite on the query).
    query : array-like of int
        Node indices of the query ``Q`` (at least one).

    Returns
    -------
    np.ndarray, shape (m,)
        ``f^*(v) = sum_q mu_q K(v, q)``; ``f^* >= 1`` on the query (up to round-off), larger
        scores rank the nodes closest to the query on the graph.

    Raises
    ------
    InputError
        For an empty query, indices out of range, or a kernel singular on the query.
    """
    if isinstance(network, Kernel):
        gram = getattr(network, "node_gram", None)
        if gram is None:
            raise InputError(
                f"network: expected a node kernel (with node_gram()) or a Gram matrix, got "
                f"{type(network).__name__}"
            )
        K = gram().detach().cpu().double().numpy()
    else:
        K = np.asarray(network, dtype=np.float64)
        if K.ndim != 2 or K.shape[0] != K.shape[1]:
            raise InputError(f"network: expected a square (m, m) Gram, got shape {K.shape}")
    q = np.unique(np.asarray(query).ravel())
    if q.size == 0:
        raise InputError("query: expected at least one node index, got none")
    if q.dtype.kind not in "iu" or q.min() < 0 or q.max() >= K.shape[0]:
        raise InputError(f"query: expected node indices in [0, {K.shape[0]}), got {q.tolist()}")
    KQQ = (K[np.ix_(q, q)] + K[np.ix_(q, q)].T) / 2
    mu = least_norm_above_one(KQQ)
    if mu is None:
        raise InputError(
            "network: the kernel is singular on the query nodes (use a strictly p.d. node "
            "kernel such as Diffusion or RegularizedLaplacian)"
        )
    return K[:, q] @ mu
