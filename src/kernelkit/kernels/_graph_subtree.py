r"""Tree-pattern (subtree) kernels of Ramon & Gärtner and of Mahé & Vert.

Ramon & Gärtner, "Expressivity versus efficiency of graph kernels", First International
Workshop on Mining Graphs, Trees and Sequences 2003; Mahé & Vert, "Graph kernels
based on tree patterns for molecules", Machine Learning 75 (2009) (size-based
weighting, non-tottering tree patterns); course part 2, section 4 ("subtree (tree-pattern)
kernels").
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from kernelkit.data._graphs import GraphBatch
from kernelkit.kernels._base import Batch, Kernel
from kernelkit.kernels._graphs import _check_label_name, _GraphKernel, example_graphs
from kernelkit.kernels._random_walk import walk_states
from kernelkit.utils._validation import check_int, check_positive

__all__ = ["TreePattern", "matching_sums"]


def matching_sums(W: np.ndarray) -> np.ndarray:
    r"""``sum_R prod_{(i, j) in R} W[p, i, j]`` over the matchings ``R`` of each ``W[p]``.

    A matching is a set of pairs with distinct rows and distinct columns (the empty one
    counts 1).  Dynamic programme over the subsets of the smaller side, cost
    :math:`O(P \, a \, b \, 2^{\min(a, b)})` for ``W`` of shape ``(P, a, b)``.
    """
    if W.shape[2] > W.shape[1]:
        W = W.transpose(0, 2, 1)
    P, rows, cols = W.shape
    masks = np.arange(1 << cols)
    dp = np.zeros((P, 1 << cols))
    dp[:, 0] = 1.0
    for r in range(rows):
        new = dp.copy()
        for c in range(cols):
            free = masks[(masks >> c) & 1 == 0]
            new[:, free | (1 << c)] += dp[:, free] * W[:, r, c, None]
        dp = new
    return dp.sum(1)


class TreePattern(_GraphKernel):
    r"""Tree-pattern kernel: common labelled tree patterns of depth at most ``depth``.

    Ramon & Gärtner (2003) and Mahé & Vert (2009); course part 2,
    section 4.  For nodes :math:`u \in G`, :math:`v \in G'` with equal labels,

    .. math::
        k_0(u, v) = \lambda\, \delta(u, v), \qquad
        k_d(u, v) = \lambda\, \delta(u, v) \sum_{R \in \mathcal{M}(u, v)}
                    \prod_{(u', v') \in R} k_{d-1}(u', v'),

    :math:`\delta` the indicator of equal node labels, :math:`\mathcal{M}(u, v)` the
    matchings (injective sets of pairs, the empty one included) between the neighbours of
    :math:`u` and of :math:`v` (with equal edge labels when ``edge_label`` is set), and
    :math:`k(G, G') = \sum_{u, v} k_{\mathrm{depth}}(u, v)`.  Unfolding the recursion,
    :math:`k(G, G') = \sum_t \lambda^{|t|} |\mathrm{Aut}(t)|\, \psi_t(G)\, \psi_t(G')`, the sum
    over labelled rooted trees :math:`t` of depth :math:`\le` ``depth`` (:math:`|t|` nodes),
    :math:`\psi_t(G)` the number of occurrences of :math:`t` as a tree pattern (a node maps
    its children to distinct neighbours of its image; nodes may repeat along a branch):
    a dot product of explicit features, so p.d.  ``lam = 1`` is Ramon & Gärtner's count;
    ``lam != 1`` Mahé & Vert's size-based weighting :math:`\lambda^{|t|}`.

    ``tottering=False``: Mahé & Vert's non-tottering tree patterns (a child is never mapped
    to its grandparent's image), computed by the same recursion on the augmented graph of
    Mahé et al. (2004) whose states are the nodes and the directed edges
    (:func:`~kernelkit.kernels._random_walk.walk_states`), summed over the node states.

    Cost: per level, one :func:`matching_sums` for every pair of states with equal labels,
    exponential in the smaller degree of the pair (molecules: degree :math:`\le 4`).

    Parameters
    ----------
    depth : int
        Largest depth (edges from the root) of the tree patterns.
    lam : float
        Weight :math:`\lambda > 0` of each node of a pattern.
    tottering : bool
        ``False``: non-tottering tree patterns only.
    node_label, edge_label : str or None
        Attributes of the discrete node / edge labels (``None``: ignored).
    """

    def __init__(
        self,
        depth: int = 2,
        *,
        lam: float = 1.0,
        tottering: bool = True,
        node_label: str | None = "label",
        edge_label: str | None = None,
    ):
        super().__init__()
        self.depth = check_int(depth, name="depth", minimum=0)
        self.lam = check_positive(lam, name="lam")
        self.tottering = bool(tottering)
        self.node_label = _check_label_name(node_label, "node_label")
        self.edge_label = _check_label_name(edge_label, "edge_label")

    def _states(self, X: GraphBatch) -> tuple[GraphBatch, np.ndarray, np.ndarray]:
        """State graph, its label codes and edge-label codes (zeros when unused)."""
        S = walk_states(X, "geometric", 1.0, self.tottering)
        edges = np.zeros(len(S.adj_idx), np.int64)
        if self.edge_label is not None and S.edge_labels is not None:
            edges = S.edge_labels
        return S, self._node_codes(S), edges

    def _row(
        self,
        SX: tuple[GraphBatch, np.ndarray, np.ndarray],
        i: int,
        SY: tuple[GraphBatch, np.ndarray, np.ndarray],
    ) -> np.ndarray:
        """``k(X[i], Y[g])`` for every graph ``g`` of Y."""
        (X, lx, ex), (Y, ly, ey) = SX, SY
        a0, a1 = int(X.node_ptr[i]), int(X.node_ptr[i + 1])
        match = lx[a0:a1, None] == ly[None, :]
        rows, cols = np.nonzero(match)
        dx, dy = np.diff(X.adj_ptr)[a0:a1][rows], np.diff(Y.adj_ptr)[cols]
        groups = {}
        for a, b in {(int(a), int(b)) for a, b in zip(dx, dy, strict=True)}:
            sel = np.flatnonzero((dx == a) & (dy == b))
            cx = X.adj_ptr[a0 + rows[sel], None] + np.arange(a)  # CSR entries of the children
            cy = Y.adj_ptr[cols[sel], None] + np.arange(b)
            same_edge = ex[cx][:, :, None] == ey[cy][:, None, :]
            groups[(a, b)] = (sel, X.adj_idx[cx] - a0, Y.adj_idx[cy], same_edge)
        k = np.zeros(match.shape)
        k[rows, cols] = self.lam
        for _ in range(self.depth):
            vals = np.ones(len(rows))
            for a, b in groups:
                if a and b:
                    sel, ux, uy, same_edge = groups[(a, b)]
                    W = k[ux[:, :, None], uy[:, None, :]] * same_edge
                    vals[sel] = matching_sums(W)
            k = np.zeros(match.shape)
            k[rows, cols] = self.lam * vals
        roots_x = X.node_attributes[a0:a1, 0] > 0
        roots_y = Y.node_attributes[:, 0] > 0
        per_node = k[roots_x][:, roots_y].sum(0)
        return np.bincount(Y.graph_index[roots_y], weights=per_node, minlength=len(Y))

    def features(self, X: Batch) -> None:
        return None

    def block(self, X: Batch, Y: Batch) -> torch.Tensor:
        SX = self._states(X)
        SY = SX if Y is X else self._states(Y)
        K = np.stack([self._row(SX, i, SY) for i in range(len(X))]) if len(X) else None
        return torch.as_tensor(np.zeros((0, len(Y))) if K is None else K)

    def block_diag(self, X: Batch) -> torch.Tensor:
        out = np.zeros(len(X))
        for i in range(len(X)):
            one = self._states(X[i])
            out[i] = self._row(one, 0, one)[0]
        return torch.as_tensor(out)

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        X, Y = example_graphs()
        return [
            (cls(2), X, Y),
            (cls(3, lam=0.5, edge_label="label"), X, Y),
            (cls(2, tottering=False), X, Y),
            (cls(1, node_label=None), X, Y),
        ]
