r"""Wasserstein Weisfeiler-Lehman kernel for graphs with continuous node attributes.

Togninalli, Ghisu, Llinares-López, Rieck & Borgwardt, "Wasserstein Weisfeiler-Lehman graph
kernels", NeurIPS 2019, sections 3.1-3.3.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from scipy.spatial.distance import cdist

from kernelkit.data._graphs import GraphBatch
from kernelkit.kernels._base import Batch, Kernel
from kernelkit.kernels._graph_attributes import _AttributedKernel, _transition, attributed_graphs
from kernelkit.kernels._graphs import _check_label_name
from kernelkit.solvers._transport import wasserstein_uniform
from kernelkit.utils._validation import check_int, check_positive

__all__ = ["WassersteinWeisfeilerLehman"]


class WassersteinWeisfeilerLehman(_AttributedKernel):
    r"""Wasserstein Weisfeiler-Lehman kernel on continuous node attributes.

    Togninalli et al., NeurIPS 2019.  Node embeddings by the continuous WL scheme (their
    Definition 3, eq. (3)),

    .. math:: a^{(h+1)}(v) = \tfrac12 \Big(a^{(h)}(v) + \frac{1}{\deg v}
              \sum_{u \in N(v)} a^{(h)}(u)\Big), \qquad a^{(0)}(v) = x_v,

    concatenated over :math:`h = 0..H` (``n_iter``); an isolated vertex's neighbour mean is 0,
    as in the authors' code.  The graph distance is the exact Wasserstein distance between the
    uniform measures on the two node-embedding sets under the Euclidean ground distance (their
    eq. (4), Definition 2; :func:`kernelkit.solvers._transport.wasserstein_uniform`),

    .. math:: D_W(G, G') = \min_{P \in \Gamma(\mathbf 1/n, \mathbf 1/n')}
              \sum_{v, v'} P_{v v'} \|a(v) - a(v')\|_2, \qquad k(G, G') = e^{-\gamma D_W(G,
              G')}

    (their eq. (5), :math:`\lambda` there).  **Not positive definite in general**: the paper
    proves definiteness for categorical labels only, and for continuous attributes uses the
    kernel with a Krein-space SVM (section 3.3); an SVM on an indefinite Gram optimises a
    non-convex problem.  For one-dimensional attributes and ``n_iter=0``, :math:`D_W` is the
    :math:`L^1` distance between the two distribution functions, a conditionally negative
    definite metric, so the kernel is p.d. there (Schoenberg).  :meth:`distances` gives
    :math:`D_W` itself.

    Parameters
    ----------
    n_iter : int
        Number of WL iterations :math:`H`.
    gamma : float
        Scale :math:`\gamma > 0` of the Laplacian kernel on :math:`D_W`.
    node_attribute : str
        Node attribute holding the continuous attributes.
    """

    def __init__(self, n_iter: int = 3, gamma: float = 1.0, *, node_attribute: str = "attributes"):
        super().__init__()
        self.n_iter = check_int(n_iter, name="n_iter", minimum=0)
        self.gamma = check_positive(gamma, name="gamma")
        self.node_attribute = _check_label_name(node_attribute, "node_attribute") or "attributes"
        self.node_label = None
        self.edge_label = None

    def embed(self, X: GraphBatch) -> np.ndarray:
        """Node embeddings :math:`[a^{(0)}, \\dots, a^{(H)}]`, shape ``(N, (H + 1) d)``."""
        T = _transition(X)
        a = X.node_attributes
        out = [a]
        for _ in range(self.n_iter):
            a = 0.5 * (a + T @ a)
            out.append(a)
        return np.concatenate(out, axis=1)

    def distances(self, X: Batch, Y: Batch) -> np.ndarray:
        """Wasserstein distances :math:`D_W` between the graphs of ``X`` and of ``Y``.

        The embeddings are computed once; for each graph of ``X`` one ``cdist`` against the
        nodes of the graphs of ``Y`` still to pair (those after it when ``Y is X``) gives
        every ground-cost block, transposed so that each block is a contiguous row slice
        (:math:`D_W` is symmetric in its two measures).
        """
        EX = self.embed(X)
        EY = EX if Y is X else self.embed(Y)
        px, py = X.node_ptr, Y.node_ptr
        D = np.zeros((len(X), len(Y)))
        for i in range(len(X)):
            first = i + 1 if Y is X else 0
            start = py[first]
            C = cdist(EY[start:], EX[px[i] : px[i + 1]])
            for j in range(first, len(Y)):
                D[i, j] = wasserstein_uniform(C[py[j] - start : py[j + 1] - start])
        if Y is X:
            D = D + D.T
        return D

    def block(self, X: Batch, Y: Batch) -> torch.Tensor:
        return torch.as_tensor(np.exp(-self.gamma * self.distances(X, Y)))

    def block_diag(self, X: Batch) -> torch.Tensor:
        return torch.ones(len(X), dtype=torch.float64)

    def features(self, X: Batch) -> None:
        """No finite feature map (and no p.d. one in general)."""
        return None

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        X, Y = attributed_graphs()
        one_d = [g.copy() for g in X + Y]
        for g in one_d:
            for v in g:
                g.nodes[v]["attributes"] = g.nodes[v]["attributes"][:1]
        return [(cls(0, 0.5), one_d[:7], one_d[7:])]
