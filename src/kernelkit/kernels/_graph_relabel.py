r"""Morgan-index label enrichment: a relabelling usable before any label-based graph kernel.

Course part 2, graph kernels ("label enrichment by the Morgan index"; Mahé et al., "Graph
kernels for molecular structure-activity relationship analysis with support vector
machines", J. Chem. Inf. Model. 2005, section 2.3).  The Morgan index of a node is the
iteration ``M_0(v) = 1``, ``M_{i+1}(v) = sum_{u ~ v} M_i(u)`` (the number of walks of ``i``
edges starting at ``v``); the enriched label after ``n_iter`` iterations is the pair
``(label(v), M_{n_iter}(v))``.  The result is a :class:`~kernelkit.data.GraphBatch` whose node
labels are the deterministic codes of the pairs, so any label-based kernel (walks, paths, WL,
histograms) can take it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kernelkit.data._graphs import GraphBatch, as_graph_batch, hash_combine
from kernelkit.utils._validation import check_int

_UNLABELLED = np.int64(0)


def morgan_index(X: GraphBatch, n_iter: int) -> np.ndarray:
    """``M_{n_iter}(v)`` of every node (int64): ``M_0 = 1``, ``M_{i+1} = A M_i``."""
    n_iter = check_int(n_iter, name="n_iter", minimum=0)
    m = np.ones(int(X.node_ptr[-1]), dtype=np.int64)
    src = np.repeat(np.arange(len(m)), np.diff(X.adj_ptr))
    for _ in range(n_iter):
        m = np.bincount(src, weights=m[X.adj_idx], minlength=len(m)).astype(np.int64)
    return m


def morgan_relabel(
    X: Any, n_iter: int = 1, *, node_label: str | None = "label", edge_label: str | None = None
) -> GraphBatch:
    """Graphs with node labels enriched by the Morgan index (module docstring).

    Parameters
    ----------
    X : list of networkx graphs or GraphBatch
        The graphs.
    n_iter : int
        Iterations of the Morgan index (0 keeps the labels' information unchanged).
    node_label, edge_label : str or None
        Attributes read from networkx graphs (``None``: unlabelled nodes / no edge labels).

    Returns
    -------
    GraphBatch
        Same graphs, node labels = codes of ``(label, M_{n_iter}(v))``, read as ``"label"``.
    """
    batch = as_graph_batch(X, node_label=node_label, edge_label=edge_label, name="X")
    labels = batch.node_labels
    if node_label is None or labels is None:
        labels = np.full(int(batch.node_ptr[-1]), _UNLABELLED, dtype=np.int64)
    codes = hash_combine(labels, morgan_index(batch, n_iter)).view(np.int64)
    return GraphBatch(
        batch.node_ptr,
        batch.adj_ptr,
        batch.adj_idx,
        codes,
        batch.edge_labels,
        "label",
        batch.edge_label,
        batch.node_attributes,
        batch.node_attribute,
    )


__all__ = ["morgan_index", "morgan_relabel"]
