r"""The bounded path kernel: counts of labelled simple paths of at most ``k`` edges.

Course part 3, section 9 (the discrete base of GCKN): the k-path map
``phi_path(u) = sum_{p in P_l(G, u)} delta_{a(p)}`` histograms the label sequences of the
simple paths starting at ``u``; summed over nodes and lengths ``l = 0 .. k``,

.. math:: k(G, G') = \sum_{l=0}^{k} \sum_{p \in P_l(G)} \sum_{p' \in P_l(G')}
          \mathbb{1}\big[\ell(p) = \ell(p')\big],

with ``P_l(G)`` the simple paths of ``l`` edges (``l + 1`` distinct nodes, each undirected
path of ``l >= 1`` edges counted once from each end) and ``ell(p)`` its sequence of node
labels (and edge labels with ``edge_label``).  It is the ``sigma -> 0`` limit of the relaxed
path kernel of :mod:`kernelkit.models._gckn` on one-hot labels, and p.d. by its explicit
feature map (a path-label histogram).  Paths are enumerated by extending the paths of
``l - 1`` edges by one edge over the CSR adjacency (vectorised); their number grows
exponentially with ``k`` on dense graphs (course part 3, section 13: "the number of paths
grows exponentially in k").
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kernelkit.data._graphs import GraphBatch, hash_combine
from kernelkit.kernels._base import Kernel
from kernelkit.kernels._features import SparseFeatures
from kernelkit.kernels._graphs import (
    _check_label_name,
    _GraphKernel,
    count_features,
    example_graphs,
)
from kernelkit.utils._validation import check_int


def csr_ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(s, s + c)`` for every ``(s, c)``, vectorised."""
    counts = np.asarray(counts, dtype=np.int64)
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.repeat(np.cumsum(counts) - counts, counts)
    return np.repeat(np.asarray(starts, dtype=np.int64), counts) + np.arange(total) - offsets


def enumerate_paths(
    adj_ptr: np.ndarray, adj_idx: np.ndarray, n_nodes: int, max_length: int
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Every simple path of ``0 .. max_length`` edges, as node ids and edge (CSR entry) ids.

    Parameters
    ----------
    adj_ptr, adj_idx : np.ndarray
        CSR adjacency (both directions of every edge).
    n_nodes : int
        Number of nodes.
    max_length : int
        Largest number of edges ``k``.

    Returns
    -------
    nodes : list of np.ndarray
        Entry ``l`` has shape ``(P_l, l + 1)``: row ``(v_0, ..., v_l)`` a path with distinct
        nodes and ``v_j v_{j+1}`` an edge, rows sorted by start node ``v_0``.
    edges : list of np.ndarray
        Entry ``l`` has shape ``(P_l, l)``: the CSR entries (indices into ``adj_idx``) of the
        path's edges, aligned with ``nodes[l]``.
    """
    deg = np.diff(adj_ptr)
    nodes = [np.arange(n_nodes, dtype=np.int64)[:, None]]
    edges = [np.zeros((n_nodes, 0), dtype=np.int64)]
    for _ in range(max_length):
        last, used = nodes[-1], edges[-1]
        tails = last[:, -1]
        counts = deg[tails]
        entry = csr_ranges(adj_ptr[tails], counts)
        grown = np.concatenate([np.repeat(last, counts, axis=0), adj_idx[entry][:, None]], axis=1)
        simple = (grown[:, :-1] != grown[:, -1:]).all(1)
        nodes.append(grown[simple])
        edges.append(np.concatenate([np.repeat(used, counts, axis=0), entry[:, None]], 1)[simple])
    return nodes, edges


class BoundedPath(_GraphKernel):
    r"""Bounded path kernel: common labelled simple paths of at most ``max_length`` edges.

    :math:`k(G, G') = \sum_{l=0}^{k} \sum_{p \in P_l(G)} \sum_{p' \in P_l(G')}
    \mathbb{1}[\ell(p) = \ell(p')]` (module docstring; course part 3, section 9, the k-path
    map of GCKN), by explicit sparse features: counts per graph of the keys
    ``hash(l, labels along the path)``.

    Parameters
    ----------
    max_length : int
        Longest path ``k`` in edges (``0``: the vertex-label histogram kernel).
    node_label : str or None
        Node attribute holding the discrete label (``None``: unlabelled, paths are counted by
        length only).
    edge_label : str or None
        Edge attribute; when given, the labels of the path's edges enter its key too.
    """

    def __init__(
        self,
        max_length: int = 3,
        *,
        node_label: str | None = "label",
        edge_label: str | None = None,
    ):
        super().__init__()
        self.max_length = check_int(max_length, name="max_length", minimum=0)
        self.node_label = _check_label_name(node_label, "node_label")
        self.edge_label = _check_label_name(edge_label, "edge_label")

    def features(self, X: GraphBatch) -> SparseFeatures:
        """Counts of ``(length, label sequence)`` keys per graph."""
        labels = self._node_codes(X)
        use_edges = self.edge_label is not None and X.edge_labels is not None
        nodes, edges = enumerate_paths(X.adj_ptr, X.adj_idx, int(X.node_ptr[-1]), self.max_length)
        owners, keys = [], []
        for length, (paths, entries) in enumerate(zip(nodes, edges, strict=True)):
            parts = [np.full(len(paths), length, dtype=np.int64)]
            parts += [labels[paths[:, j]] for j in range(length + 1)]
            if use_edges:
                parts += [X.edge_labels[entries[:, j]] for j in range(length)]
            keys.append(hash_combine(*parts).view(np.int64))
            owners.append(X.graph_index[paths[:, 0]])
        return count_features(np.concatenate(owners), np.concatenate(keys), len(X))

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        X, Y = example_graphs()
        return [(cls(2), X, Y), (cls(3, edge_label="label"), X, Y), (cls(1, node_label=None), X, Y)]


__all__ = ["BoundedPath", "csr_ranges", "enumerate_paths"]
