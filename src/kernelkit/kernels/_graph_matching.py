r"""Subgraph matching kernel as explicit counts of labelled induced subgraphs.

Kriege & Mutzel, "Subgraph matching kernels for attributed graphs", ICML 2012, sections 3-4
(GraKeL's ``SubgraphMatching``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import numpy as np

from kernelkit.data._graphs import GraphBatch, hash_combine, mix64
from kernelkit.kernels._base import Kernel
from kernelkit.kernels._features import SparseFeatures
from kernelkit.kernels._graph_graphlets import (
    MAX_GRAPHLET_SIZE,
    _edge_keys,
    connected_node_sets,
    induced_masks,
    small_graph_tables,
)
from kernelkit.kernels._graphs import (
    _check_label_name,
    _GraphKernel,
    count_features,
    example_graphs,
)
from kernelkit.utils._errors import InputError
from kernelkit.utils._validation import check_int

__all__ = ["SubgraphMatching"]

_ROWS_PER_CHUNK = 8192
_UNLABELLED_EDGE = np.uint64(0x2545F4914F6CDD1D)


@cache
def _combinations(n: int, s: int) -> np.ndarray:
    return np.array(list(itertools.combinations(range(n), s)), dtype=np.int64).reshape(-1, s)


@cache
def _relabelling(s: int) -> tuple[np.ndarray, np.ndarray]:
    """For every permutation ``p``: the source of each position (``inverse[p]``, ``(P, s)``)
    and of each pair bit (``(P, m)``), so ``x[..., inverse[p]]`` is ``x`` relabelled by ``p``."""
    perms, pair_pos, _ = small_graph_tables(s)
    inverse = np.argsort(perms, axis=1)
    pair_source = np.argsort(pair_pos, axis=1)
    return inverse, pair_source


class SubgraphMatching(_GraphKernel):
    r"""Subgraph matching kernel: weighted count of label-preserving common induced subgraphs.

    Kriege & Mutzel, ICML 2012, Definition 5 and section 4.  With Dirac vertex and edge
    kernels (GraKeL's defaults), the kernel counts the cliques of size :math:`1..k` of the
    weighted product graph, i.e. the triples :math:`(S, S', \varphi)` of node sets
    :math:`S \subseteq V`, :math:`S' \subseteq V'` of size :math:`s \le k` and isomorphisms
    :math:`\varphi: G[S] \to G'[S']` preserving node and edge labels, each weighted by
    :math:`\lambda_s`:

    .. math:: k(G, G') = \sum_{s=1}^{k} \lambda_s \sum_{c:\,|c| = s}
              |\mathrm{Aut}(c)|\; n_G(c)\, n_{G'}(c),

    :math:`c` ranging over the isomorphism classes of labelled graphs on :math:`s` nodes,
    :math:`n_G(c)` the number of node sets of :math:`G` inducing :math:`c`,
    :math:`|\mathrm{Aut}(c)|` its number of label-preserving automorphisms (the isomorphisms
    between two copies of :math:`c`).  With ``connected=True`` (default) only connected
    :math:`G[S]` count: the cliques whose c-edges (edges in both graphs) connect them,
    which is what the clique enumeration of the paper's implementation, used by GraKeL
    0.1.11, visits (it grows a clique only along c-edges; its Gram is equal, tests);
    ``connected=False`` is the full Definition 5 (d-edges, absent in both graphs, count as
    well).  So the features are :math:`\sqrt{\lambda_s |\mathrm{Aut}(c)|}\, n_G(c)`, keyed
    by a 64-bit hash of the canonical form (the minimal unlabelled adjacency mask, then the
    smallest hash of the labels over the permutations reaching it), and the Gram is their
    product: no product graph, one pass over the node sets of each graph instead of a clique
    search per pair.

    Parameters
    ----------
    k : int
        Largest subgraph size, 1 to 5 (GraKeL's ``k``).
    lw : str, sequence or callable
        Size weights :math:`\lambda_s` (GraKeL's ``lw``): ``"uniform"`` (1),
        ``"increasing"`` (:math:`s`), ``"decreasing"`` (:math:`1/s`), ``"strong_decreasing"``
        (:math:`1/s^2`), ``k`` non-negative numbers (sizes ``1..k``), or a callable
        :math:`i \mapsto \lambda_{i+1}` (GraKeL's indexing by clique size minus one).
    node_label, edge_label : str or None
        Discrete labels compared by the Dirac kernel; ``None`` ignores them (GraKeL's
        ``kv=None`` / ``ke=None``).
    """

    def __init__(
        self,
        k: int = 5,
        *,
        lw: str | Sequence[float] | Callable[[int], float] = "uniform",
        node_label: str | None = "label",
        edge_label: str | None = "label",
        connected: bool = True,
    ):
        super().__init__()
        self.k = check_int(k, name="k", minimum=1)
        if self.k > MAX_GRAPHLET_SIZE:
            raise InputError(f"k: expected an integer in [1, {MAX_GRAPHLET_SIZE}], got {k!r}")
        self.lw = lw
        self.size_weights_ = self._size_weights(lw)
        self.node_label = _check_label_name(node_label, "node_label")
        self.edge_label = _check_label_name(edge_label, "edge_label")
        if not isinstance(connected, bool):
            raise InputError(f"connected: expected True or False, got {connected!r}")
        self.connected = connected

    def _size_weights(self, lw: Any) -> np.ndarray:
        s = np.arange(1.0, self.k + 1.0)
        named = {
            "uniform": np.ones(self.k),
            "increasing": s,
            "decreasing": 1 / s,
            "strong_decreasing": 1 / s**2,
        }
        if isinstance(lw, str):
            if lw not in named:
                raise InputError(f"lw: expected one of {sorted(named)}, got {lw!r}")
            return named[lw]
        w = np.array([lw(i) for i in range(self.k)] if callable(lw) else lw, dtype=np.float64)
        if w.shape != (self.k,) or not np.isfinite(w).all() or (w < 0).any():
            raise InputError(
                f"lw: expected {self.k} finite non-negative weights (sizes 1..k), got {lw!r}"
            )
        return w

    def _subsets(self, X: GraphBatch, s: int) -> np.ndarray:
        """The node sets of size ``s`` of every graph (connected ones with ``connected``),
        rows of global node ids."""
        if self.connected:
            return connected_node_sets(X, s)
        parts = [np.zeros((0, s), dtype=np.int64)]
        for n in np.unique(X.n_nodes[X.n_nodes >= s]):
            starts = X.node_ptr[:-1][X.n_nodes == n]
            parts.append((starts[:, None, None] + _combinations(int(n), s)[None]).reshape(-1, s))
        return np.concatenate(parts)

    def features(self, X: GraphBatch) -> SparseFeatures:
        r""":math:`\sqrt{\lambda_s |\mathrm{Aut}(c)|}\, n_G(c)` per labelled class :math:`c`."""
        lab = self._node_codes(X).view(np.uint64)
        if self.edge_label is not None and X.edge_labels is not None:
            edge_code = mix64(X.edge_labels.view(np.uint64)) | np.uint64(1)
        else:
            edge_code = np.full(len(X.adj_idx), _UNLABELLED_EDGE)
        edge_keys = _edge_keys(X)
        gid, keys, vals = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)], [np.zeros(0)]
        for s in range(1, self.k + 1):
            _, _, permuted = small_graph_tables(s)
            canon = permuted.min(1)
            inverse, pair_source = _relabelling(s)
            subsets = self._subsets(X, s)
            for start in range(0, len(subsets), _ROWS_PER_CHUNK):
                S = subsets[start : start + _ROWS_PER_CHUNK]
                mask, at = induced_masks(X, S, edge_keys)
                E = np.where(at >= 0, edge_code[np.maximum(at, 0)], np.uint64(0))
                L = lab[S]
                for m in np.unique(mask):
                    rows = np.flatnonzero(mask == m)
                    p = np.flatnonzero(permuted[m] == canon[m])  # reach the canonical mask
                    parts = [L[rows][:, inverse[p, j]] for j in range(s)]
                    parts += [E[rows][:, pair_source[p, b]] for b in range(E.shape[1])]
                    h = hash_combine(*parts) if parts else np.zeros((len(rows), 1), np.uint64)
                    h_min = h.min(axis=1)
                    aut = (h == h_min[:, None]).sum(axis=1)
                    gid.append(X.graph_index[S[rows, 0]])
                    keys.append(hash_combine(np.full(len(rows), s), canon[m], h_min).view(np.int64))
                    vals.append(np.sqrt(self.size_weights_[s - 1] * aut))
        return count_features(
            np.concatenate(gid), np.concatenate(keys), len(X), np.concatenate(vals)
        )

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        X, Y = example_graphs()
        return [(cls(3), X, Y), (cls(2, lw="decreasing", node_label=None), X, Y)]
