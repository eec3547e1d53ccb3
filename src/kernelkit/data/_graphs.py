"""Batches of labelled graphs in compact arrays.

A :class:`GraphBatch` stores ``n`` undirected graphs as one block-diagonal adjacency in CSR
layout (``adj_ptr``, ``adj_idx``: global node ids, both directions of every edge), node offsets
``node_ptr`` per graph, and optional integer codes of discrete node and edge labels.

Label values are encoded by a *deterministic* 64-bit code, ``blake2b(str(value))`` read as an
int64, never Python's salted ``hash`` and never a vocabulary fitted on one batch: two batches
prepared independently (training and test graphs, two processes) give the same codes to the same
label values, so features computed from them can be compared.  Because the code is taken of
``str(value)``, the values ``1`` and ``"1"`` share a code.

networkx is optional (the ``graphs`` extra); it is imported only when networkx graphs are given.
Edge lists (:meth:`GraphBatch.from_edge_lists`) need nothing beyond NumPy.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import itemgetter, methodcaller
from typing import Any

import numpy as np
import scipy.sparse as sp

from kernelkit.utils._errors import InputError

__all__ = ["GraphBatch", "as_graph_batch", "hash_combine", "label_codes", "mix64"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def mix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser applied elementwise (uint64 in, uint64 out, wrap-around arithmetic).

    A bijective 64-bit mixer (Steele, Lea & Flood, "Fast splittable pseudorandom number
    generators", OOPSLA 2014): used to hash label codes deterministically and vectorised.
    """
    z = np.atleast_1d(np.asarray(x)).astype(np.uint64, copy=True)
    with np.errstate(over="ignore"):
        z += _GOLDEN
        z ^= z >> np.uint64(30)
        z *= _M1
        z ^= z >> np.uint64(27)
        z *= _M2
        z ^= z >> np.uint64(31)
    return z


def hash_combine(*parts: np.ndarray) -> np.ndarray:
    """Order-dependent deterministic hash of aligned uint64/int64 arrays (one code per row)."""
    h = np.zeros(np.broadcast_shapes(*(np.shape(p) for p in parts)), dtype=np.uint64)
    for i, p in enumerate(parts):
        u = np.asarray(p).astype(np.int64).view(np.uint64)
        with np.errstate(over="ignore"):
            h = mix64(h ^ mix64(u + np.uint64(i + 1)))
    return h


def _blake_code(text: str) -> int:
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


def label_codes(values: Sequence[Any]) -> np.ndarray:
    """int64 codes ``blake2b(str(value))`` of label values (deterministic across batches).

    Each distinct ``str(value)`` is hashed once and looked up in a dictionary at C speed.
    """
    strings = list(map(str, values))
    table = dict.fromkeys(strings)
    for text in table:
        table[text] = _blake_code(text)
    return np.fromiter(map(table.__getitem__, strings), dtype=np.int64, count=len(strings))


@dataclass(eq=False)
class GraphBatch:
    """``n`` undirected graphs with discrete node and edge labels, in compact arrays.

    Parameters
    ----------
    node_ptr : np.ndarray
        Node offsets, shape ``(n + 1,)``: graph ``g`` owns global nodes
        ``node_ptr[g]:node_ptr[g + 1]``.
    adj_ptr, adj_idx : np.ndarray
        Block-diagonal adjacency in CSR layout over all nodes (shape ``(N + 1,)`` and
        ``(nnz,)``); every undirected edge appears in both directions, a self-loop once.
    node_labels : np.ndarray or None
        int64 label codes per node (``None``: unlabelled).
    edge_labels : np.ndarray or None
        int64 label codes aligned with ``adj_idx`` (``None``: unlabelled edges).
    node_label, edge_label : str or None
        Names of the attributes the labels were read from (quoted in error messages).
    node_attributes : np.ndarray or None
        float64 continuous node attributes, shape ``(N, d)`` (``None``: none).
    node_attribute : str or None
        Name of the attribute they were read from.
    """

    node_ptr: np.ndarray
    adj_ptr: np.ndarray
    adj_idx: np.ndarray
    node_labels: np.ndarray | None = None
    edge_labels: np.ndarray | None = None
    node_label: str | None = "label"
    edge_label: str | None = None
    node_attributes: np.ndarray | None = None
    node_attribute: str | None = None

    dtype = None  # structured batch: no floating dtype of its own

    # ------------------------------------------------------------------ sizes
    def __len__(self) -> int:
        return len(self.node_ptr) - 1

    @property
    def n_nodes(self) -> np.ndarray:
        """Number of nodes of each graph."""
        return np.diff(self.node_ptr)

    @property
    def n_edges(self) -> np.ndarray:
        """Number of undirected edges of each graph (self-loops count once)."""
        deg = np.diff(self.adj_ptr)
        src = np.repeat(np.arange(len(deg)), deg)
        keep = src <= self.adj_idx
        return np.bincount(self.graph_index[src[keep]], minlength=len(self))

    @property
    def graph_index(self) -> np.ndarray:
        """Graph id of every node, shape ``(N,)``."""
        return np.repeat(np.arange(len(self)), self.n_nodes)

    def adjacency(self, i: int) -> sp.csr_matrix:
        """Adjacency matrix of graph ``i`` (local node numbering) as a SciPy CSR matrix."""
        a, b = int(self.node_ptr[i]), int(self.node_ptr[i + 1])
        ptr = self.adj_ptr[a : b + 1] - self.adj_ptr[a]
        idx = self.adj_idx[self.adj_ptr[a] : self.adj_ptr[b]] - a
        return sp.csr_matrix((np.ones(len(idx)), idx, ptr), shape=(b - a, b - a))

    # ------------------------------------------------------------------ indexing
    def __getitem__(self, idx: Any) -> GraphBatch:
        if isinstance(idx, (int, np.integer)):
            idx = [int(idx)]
        elif not isinstance(idx, slice):
            idx = np.asarray(idx.cpu() if hasattr(idx, "cpu") else idx)
        rows = np.atleast_1d(np.arange(len(self))[idx])
        counts = self.n_nodes[rows]
        new_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        shift_g = self.node_ptr[rows] - new_ptr[:-1]
        shift_n = np.repeat(shift_g, counts)
        old_nodes = np.arange(new_ptr[-1], dtype=np.int64) + shift_n
        deg = np.diff(self.adj_ptr)[old_nodes]
        new_adj_ptr = np.concatenate([[0], np.cumsum(deg)]).astype(np.int64)
        eids = np.arange(new_adj_ptr[-1], dtype=np.int64) + np.repeat(
            self.adj_ptr[old_nodes] - new_adj_ptr[:-1], deg
        )
        return GraphBatch(
            new_ptr,
            new_adj_ptr,
            self.adj_idx[eids] - np.repeat(shift_n, deg),
            None if self.node_labels is None else self.node_labels[old_nodes],
            None if self.edge_labels is None else self.edge_labels[eids],
            self.node_label,
            self.edge_label,
            None if self.node_attributes is None else self.node_attributes[old_nodes],
            self.node_attribute,
        )

    def induced(self, keep: np.ndarray) -> GraphBatch:
        """The induced subgraphs on the nodes where the boolean mask ``keep`` (shape ``(N,)``)
        is true: same graphs in the same order (some possibly empty), labels carried over."""
        keep = np.asarray(keep, dtype=bool)
        new_id = np.cumsum(keep) - 1
        src = np.repeat(np.arange(len(keep)), np.diff(self.adj_ptr))
        entries = keep[src] & keep[self.adj_idx]
        counts = np.bincount(self.graph_index[keep], minlength=len(self))
        deg = np.bincount(new_id[src[entries]], minlength=int(keep.sum()))
        return GraphBatch(
            np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
            np.concatenate([[0], np.cumsum(deg)]).astype(np.int64),
            new_id[self.adj_idx[entries]].astype(np.int64),
            None if self.node_labels is None else self.node_labels[keep],
            None if self.edge_labels is None else self.edge_labels[entries],
            self.node_label,
            self.edge_label,
            None if self.node_attributes is None else self.node_attributes[keep],
            self.node_attribute,
        )

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_arrays(
        cls,
        n_nodes: Sequence[int] | np.ndarray,
        src: np.ndarray,
        dst: np.ndarray,
        *,
        node_labels: np.ndarray | None = None,
        edge_labels: np.ndarray | None = None,
        node_label: str | None = "label",
        edge_label: str | None = None,
        node_attributes: np.ndarray | None = None,
        node_attribute: str | None = None,
    ) -> GraphBatch:
        """Build from global undirected edges ``(src[k], dst[k])`` (each edge given once)."""
        n_nodes = np.asarray(n_nodes, dtype=np.int64)
        node_ptr = np.concatenate([[0], np.cumsum(n_nodes)]).astype(np.int64)
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        loop = src == dst
        s = np.concatenate([src, dst[~loop]])
        d = np.concatenate([dst, src[~loop]])
        order = np.lexsort((d, s))
        s, d = s[order], d[order]
        el = None
        if edge_labels is not None:
            edge_labels = np.asarray(edge_labels, dtype=np.int64)
            el = np.concatenate([edge_labels, edge_labels[~loop]])[order]
        adj_ptr = np.concatenate([[0], np.cumsum(np.bincount(s, minlength=node_ptr[-1]))])
        return cls(
            node_ptr,
            adj_ptr.astype(np.int64),
            d,
            None if node_labels is None else np.asarray(node_labels, dtype=np.int64),
            el,
            node_label,
            edge_label,
            None if node_attributes is None else _attribute_matrix(node_attributes),
            node_attribute,
        )

    @classmethod
    def from_edge_lists(
        cls,
        edges: Sequence[Any],
        *,
        n_nodes: Sequence[int] | None = None,
        node_labels: Sequence[Sequence[Any]] | None = None,
        edge_labels: Sequence[Sequence[Any]] | None = None,
        name: str = "X",
    ) -> GraphBatch:
        """Build from one ``(m_i, 2)`` array of undirected edges per graph.

        Parameters
        ----------
        edges : list of array-like of shape (m_i, 2)
            Node pairs ``(u, v)`` with ``0 <= u, v < n_nodes[i]``, each edge once.
        n_nodes : list of int, optional
            Number of nodes per graph (default: ``len(node_labels[i])``, else ``max + 1``).
        node_labels : list of sequences, optional
            Label value of every node of every graph (any values; encoded via ``str``).
        edge_labels : list of sequences, optional
            Label value of every edge, aligned with ``edges[i]``.
        """
        if isinstance(edges, (str, bytes)) or not isinstance(edges, Sequence) or not len(edges):
            raise InputError(f"{name}: expected a non-empty list of edge arrays, got {edges!r:.80}")
        counts, srcs, dsts = [], [], []
        offset = 0
        for i, e in enumerate(edges):
            arr = np.asarray(e, dtype=np.int64).reshape(-1, 2) if len(e) else np.zeros((0, 2), int)
            if n_nodes is not None:
                n = int(n_nodes[i])
            elif node_labels is not None:
                n = len(node_labels[i])
            else:
                n = int(arr.max()) + 1 if len(arr) else 0
            if len(arr) and (arr.min() < 0 or arr.max() >= n):
                raise InputError(
                    f"{name}[{i}]: edge endpoints must lie in [0, {n}), got range "
                    f"[{arr.min()}, {arr.max()}]"
                )
            pairs = np.sort(arr, axis=1)
            if len(np.unique(pairs, axis=0)) != len(pairs):
                raise InputError(f"{name}[{i}]: duplicate edges (multigraphs are not supported)")
            if node_labels is not None and len(node_labels[i]) != n:
                raise InputError(
                    f"{name}[{i}]: expected {n} node labels, got {len(node_labels[i])}"
                )
            if edge_labels is not None and len(edge_labels[i]) != len(arr):
                raise InputError(
                    f"{name}[{i}]: expected {len(arr)} edge labels, got {len(edge_labels[i])}"
                )
            counts.append(n)
            srcs.append(arr[:, 0] + offset)
            dsts.append(arr[:, 1] + offset)
            offset += n
        nl = None
        if node_labels is not None:
            nl = label_codes([v for labels in node_labels for v in labels])
        el = None
        if edge_labels is not None:
            el = label_codes([v for labels in edge_labels for v in labels])
        return cls.from_arrays(
            counts,
            np.concatenate(srcs),
            np.concatenate(dsts),
            node_labels=nl,
            edge_labels=el,
            node_label="label" if nl is not None else None,
            edge_label="label" if el is not None else None,
        )

    @classmethod
    def from_networkx(
        cls,
        graphs: Sequence[Any],
        *,
        node_label: str | None = "label",
        edge_label: str | None = None,
        node_attribute: str | None = None,
        name: str = "X",
    ) -> GraphBatch:
        """Build from undirected networkx graphs, reading labels from node/edge attributes.

        Parameters
        ----------
        graphs : list of networkx.Graph
            Undirected simple graphs (``DiGraph`` and multigraphs are refused).
        node_label, edge_label : str or None
            Attribute holding the discrete node / edge label; ``None`` ignores labels.  With a
            name given, every node (edge) must carry it.
        node_attribute : str or None
            Attribute holding the continuous node attributes (a number or a vector of the
            same length on every node); ``None`` reads none.
        """
        nx = _networkx()
        counts, owners, degrees, dsts, nvals, evals, avals = [], [], [], [], [], [], []
        offset = 0
        for i, g in enumerate(graphs):
            if not isinstance(g, nx.Graph):
                raise InputError(f"{name}[{i}]: expected a networkx graph, got {type(g).__name__}")
            if g.is_directed() or g.is_multigraph():
                raise InputError(
                    f"{name}[{i}]: expected an undirected simple graph, got {type(g).__name__}; "
                    "convert with nx.Graph(G)"
                )
            # networkx's storage: g._node maps node -> data, g._adj node -> {neighbour: data}
            nodes, adj = g._node, g._adj
            index = dict(zip(nodes, range(offset, offset + len(nodes)), strict=True))
            if node_label is not None and not _extend_required(nvals, nodes.values(), node_label):
                v = next(v for v, data in nodes.items() if node_label not in data)
                raise InputError(
                    f"{name}[{i}]: node {v!r} has no attribute {node_label!r}; the kernel "
                    "needs node labels (pass node_label=None to ignore labels)"
                )
            if node_attribute is not None:
                for v, data in nodes.items():
                    if node_attribute not in data:
                        raise InputError(
                            f"{name}[{i}]: node {v!r} has no attribute {node_attribute!r}; the "
                            "kernel needs continuous node attributes"
                        )
                    avals.append(np.atleast_1d(np.asarray(data[node_attribute], dtype=float)))
            owners.extend(map(index.__getitem__, adj))
            degrees.extend(map(len, adj.values()))
            dsts.extend(map(index.__getitem__, chain.from_iterable(adj.values())))
            edge_data = chain.from_iterable(map(methodcaller("values"), adj.values()))
            if edge_label is not None and not _extend_required(evals, edge_data, edge_label):
                u, v = next(
                    (u, v) for u, nb in adj.items() for v, d in nb.items() if edge_label not in d
                )
                raise InputError(
                    f"{name}[{i}]: edge ({u!r}, {v!r}) has no attribute {edge_label!r}; "
                    "the kernel needs edge labels (pass edge_label=None to ignore them)"
                )
            counts.append(len(index))
            offset += len(index)
        if not counts:
            raise InputError(f"{name}: expected at least one graph, got an empty list")
        # both directions of every edge were read (a self-loop once): keep src <= dst
        src = np.repeat(np.asarray(owners, dtype=np.int64), degrees)
        dst = np.asarray(dsts, dtype=np.int64)
        once = src <= dst
        return cls.from_arrays(
            counts,
            src[once],
            dst[once],
            node_labels=label_codes(nvals) if node_label is not None else None,
            edge_labels=label_codes(evals)[once] if edge_label is not None else None,
            node_label=node_label,
            edge_label=edge_label,
            node_attributes=_stack_attributes(avals, node_attribute, name)
            if node_attribute is not None
            else None,
            node_attribute=node_attribute,
        )

    def to_networkx(self, i: int) -> Any:
        """Graph ``i`` as a networkx graph (labels are the int64 codes)."""
        nx = _networkx()
        a, b = int(self.node_ptr[i]), int(self.node_ptr[i + 1])
        g = nx.Graph()
        for v in range(a, b):
            attrs: dict[str, Any] = {}
            if self.node_labels is not None:
                attrs["label"] = int(self.node_labels[v])
            if self.node_attributes is not None:
                attrs[self.node_attribute or "attributes"] = self.node_attributes[v].copy()
            g.add_node(v - a, **attrs)
        for v in range(a, b):
            for e in range(self.adj_ptr[v], self.adj_ptr[v + 1]):
                u = int(self.adj_idx[e])
                if v <= u:
                    attrs = {} if self.edge_labels is None else {"label": int(self.edge_labels[e])}
                    g.add_edge(v - a, u - a, **attrs)
        return g


def _extend_required(out: list, datas: Iterable[dict], attribute: str) -> bool:
    """Append ``data[attribute]`` of every attribute dict of ``datas`` to ``out`` in one C-level
    pass; ``False`` when one lacks the attribute (the caller names it in its error)."""
    try:
        out.extend(map(itemgetter(attribute), datas))
    except KeyError:
        return False
    return True


def _attribute_matrix(values: Any) -> np.ndarray:
    out = np.asarray(values, dtype=np.float64)
    return out.reshape(len(out), -1)


def _stack_attributes(rows: list[np.ndarray], attribute: str, name: str) -> np.ndarray:
    """Stack per-node attribute vectors, refusing ragged lengths and non-finite values."""
    if not rows:
        return np.zeros((0, 1))
    widths = {len(r) for r in rows}
    if len(widths) > 1:
        raise InputError(
            f"{name}: node attribute {attribute!r} must have the same length on every node, "
            f"got lengths {sorted(widths)}"
        )
    out = np.stack(rows)
    if not np.isfinite(out).all():
        raise InputError(f"{name}: node attribute {attribute!r} has NaN or infinite values")
    return out


def _networkx() -> Any:
    from kernelkit.utils._optional import require

    return require("networkx", purpose="reading networkx graphs")


def as_graph_batch(
    X: Any,
    *,
    node_label: str | None = "label",
    edge_label: str | None = None,
    node_attribute: str | None = None,
    allow_empty_graphs: bool = False,
    name: str = "X",
) -> GraphBatch:
    """Turn a :class:`GraphBatch` or a list of networkx graphs into a checked ``GraphBatch``.

    Raises
    ------
    InputError
        For an empty list, a non-graph item, a graph without nodes (unless
        ``allow_empty_graphs``), or labels required but missing (naming the graph and the
        attribute).
    """
    if isinstance(X, GraphBatch):
        batch = X
        if node_attribute is not None and batch.node_attributes is None and len(batch):
            raise InputError(
                f"{name}[0]: graph has no continuous node attributes but the kernel needs them "
                f"(attribute {node_attribute!r}); build the batch with node_attributes"
            )
        if node_label is not None and batch.node_labels is None and len(batch):
            raise InputError(
                f"{name}[0]: graph has no node labels but the kernel needs them (attribute "
                f"{node_label!r}); build the batch with node labels or pass node_label=None"
            )
        if edge_label is not None and batch.edge_labels is None and len(batch.adj_idx):
            first = int(np.flatnonzero(np.diff(batch.adj_ptr))[0])
            g = int(batch.graph_index[first])
            raise InputError(
                f"{name}[{g}]: graph has no edge labels but the kernel needs them "
                f"(attribute {edge_label!r}); build the batch with edge labels or pass "
                "edge_label=None"
            )
    else:
        if type(X).__module__.startswith("networkx"):
            raise InputError(
                f"{name}: expected a list of networkx graphs, got a single {type(X).__name__}; "
                "wrap it in a list"
            )
        if isinstance(X, (str, bytes)) or not hasattr(X, "__len__") or not hasattr(X, "__iter__"):
            raise InputError(
                f"{name}: expected a list of networkx graphs or a GraphBatch, got "
                f"{type(X).__name__}"
            )
        X = list(X)
        if not X:
            raise InputError(f"{name}: expected at least one graph, got an empty list")
        batch = GraphBatch.from_networkx(
            X,
            node_label=node_label,
            edge_label=edge_label,
            node_attribute=node_attribute,
            name=name,
        )
    if len(batch) == 0:
        raise InputError(f"{name}: expected at least one graph, got 0")
    if not allow_empty_graphs:
        empty = np.flatnonzero(batch.n_nodes == 0)
        if len(empty):
            raise InputError(
                f"{name}[{int(empty[0])}]: graph has no nodes; graph kernels need at least one "
                f"node per graph ({len(empty)} empty graph(s) in total)"
            )
    return batch
