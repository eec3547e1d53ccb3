r"""Label-histogram graph kernels of GraKeL's catalogue, with explicit sparse features.

Vertex and edge histograms (Sugiyama & Borgwardt, "Halting in random walk kernels", NIPS
2015, section 2), the Weisfeiler-Lehman optimal assignment kernel (Kriege, Giscard & Wilson,
"On valid optimal assignment kernels and applications to graph classification", NIPS 2016)
and the neighbourhood hash kernel (Hido & Kashima, "A linear-time graph kernel", ICDM 2009).
Names and parameter names follow GraKeL 0.1.11, whose Gram matrices they equal (tests).

Histogram intersections :math:`\sum_\ell \min(h_\ell, h'_\ell)` of integer count vectors are
computed as dot products of their *unary* codes (:func:`unary_features`: a count :math:`c` of
key :math:`\ell` becomes the indicator keys :math:`(\ell, 1), \dots, (\ell, c)`), so the
optimal-assignment and neighbourhood-hash Grams are sparse matrix products.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from kernelkit.data._graphs import GraphBatch, hash_combine
from kernelkit.kernels._base import Batch, Kernel
from kernelkit.kernels._features import SparseFeatures
from kernelkit.kernels._graphs import (
    WeisfeilerLehman,
    _check_label_name,
    _GraphKernel,
    count_features,
    example_graphs,
    feature_gram,
)
from kernelkit.utils._errors import InputError
from kernelkit.utils._validation import check_int

__all__ = [
    "EdgeHistogram",
    "NeighborhoodHash",
    "VertexHistogram",
    "WeisfeilerLehmanOptimalAssignment",
    "unary_features",
]


def unary_features(F: SparseFeatures) -> SparseFeatures:
    r"""Unary code of integer count features: :math:`\langle u(x), u(y)\rangle = \sum \min`.

    A count :math:`c` of key :math:`\ell` becomes the keys ``hash(ℓ, t)`` for
    :math:`t = 1..c`, each with value 1; then
    :math:`\langle u(h), u(h')\rangle = \sum_\ell \min(h_\ell, h'_\ell)` (the histogram
    intersection kernel is p.d. by this explicit map).  Counts must be non-negative integers.
    """
    counts = np.rint(F.values).astype(np.int64)
    if len(counts) and (counts.min() < 0 or np.abs(F.values - counts).max() > 0):
        raise InputError("unary_features: expected non-negative integer counts")
    rows = np.repeat(np.arange(len(F)), np.diff(F.indptr))
    rep = np.repeat(np.arange(len(counts)), counts)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]) if len(counts) else counts
    level = np.arange(len(rep)) - np.repeat(starts, counts) + 1
    keys = hash_combine(F.keys[rep], level).view(np.int64)
    return count_features(rows[rep], keys, len(F))


class VertexHistogram(_GraphKernel):
    r"""Vertex histogram kernel: dot product of node-label counts.

    Sugiyama & Borgwardt, NIPS 2015, section 2 (GraKeL's ``VertexHistogram``).
    :math:`k(G, G') = \sum_\ell n_\ell(G)\, n_\ell(G')` with :math:`n_\ell(G)` the number of
    nodes of label :math:`\ell`; explicit sparse features, cost :math:`O(|V|)`.

    Parameters
    ----------
    node_label : str or None
        Node attribute holding the discrete label (``None``: every node has the same label,
        the kernel is :math:`|V|\,|V'|`).
    """

    def __init__(self, *, node_label: str | None = "label"):
        super().__init__()
        self.node_label = _check_label_name(node_label, "node_label")
        self.edge_label = None

    def features(self, X: GraphBatch) -> SparseFeatures:
        """Counts of the node labels per graph (keys: the label codes)."""
        return count_features(X.graph_index, self._node_codes(X), len(X))

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        X, Y = example_graphs()
        return [(cls(), X, Y), (cls(node_label=None), X, Y)]


class EdgeHistogram(_GraphKernel):
    r"""Edge histogram kernel: dot product of edge-label counts.

    Sugiyama & Borgwardt, NIPS 2015, section 2 (GraKeL's ``EdgeHistogram``).
    :math:`k(G, G') = \sum_e m_e(G)\, m_e(G')` with :math:`m_e(G)` the number of edges of label
    :math:`e`, every undirected edge counted once per direction (a self-loop once), as GraKeL
    counts the entries of its edge-label dictionary; node labels are not used.

    Parameters
    ----------
    edge_label : str or None
        Edge attribute holding the discrete label (``None``: all edges alike, the kernel is
        :math:`4 |E|\,|E'|`).
    """

    def __init__(self, *, edge_label: str | None = "label"):
        super().__init__()
        self.node_label = None
        self.edge_label = _check_label_name(edge_label, "edge_label")

    def features(self, X: GraphBatch) -> SparseFeatures:
        """Counts of the edge labels per graph, over both directions of every edge."""
        src = np.repeat(np.arange(X.node_ptr[-1]), np.diff(X.adj_ptr))
        codes = X.edge_labels if self.edge_label is not None else None
        if codes is None:
            codes = np.zeros(len(X.adj_idx), dtype=np.int64)
        return count_features(X.graph_index[src], codes, len(X))

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        X, Y = example_graphs()
        return [(cls(), X, Y), (cls(edge_label=None), X, Y)]


class WeisfeilerLehmanOptimalAssignment(_GraphKernel):
    r"""Weisfeiler-Lehman optimal assignment kernel (histogram intersection on WL labels).

    Kriege, Giscard & Wilson, NIPS 2016, sections 3-4 (GraKeL's
    ``WeisfeilerLehmanOptimalAssignment``).  The optimal assignment of the nodes of
    :math:`G` and :math:`G'` under the strong base kernel "number of WL iterations
    :math:`0..h` in which two nodes have the same label" has value

    .. math:: k(G, G') = \sum_{i=0}^{h} \sum_{\ell} \min\big(n_{i,\ell}(G), n_{i,\ell}(G')\big),

    :math:`n_{i,\ell}(G)` the number of nodes with WL label :math:`\ell` at iteration :math:`i`
    (Theorem 2 and eq. (5): the assignment kernel of a hierarchy equals the histogram
    intersection of its node counts, weight 1 per level as in GraKeL).  It is p.d.; its
    explicit features are the unary codes (:func:`unary_features`) of the
    :class:`~kernelkit.kernels.WeisfeilerLehman` features.

    Parameters
    ----------
    n_iter : int
        WL iterations :math:`h` (GraKeL's ``n_iter``, default 5).
    node_label, edge_label : str or None
        As in :class:`~kernelkit.kernels.WeisfeilerLehman`.
    """

    def __init__(
        self, n_iter: int = 5, *, node_label: str | None = "label", edge_label: str | None = None
    ):
        super().__init__()
        self.n_iter = check_int(n_iter, name="n_iter", minimum=0)
        self.node_label = _check_label_name(node_label, "node_label")
        self.edge_label = _check_label_name(edge_label, "edge_label")

    def features(self, X: GraphBatch) -> SparseFeatures:
        """Unary codes of the WL label counts of iterations ``0..n_iter``."""
        wl = WeisfeilerLehman(self.n_iter, node_label=self.node_label, edge_label=self.edge_label)
        return unary_features(wl.features(X))

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        X, Y = example_graphs()
        return [(cls(2), X, Y), (cls(1, node_label=None), X, Y)]


def _rot(x: np.ndarray, d: np.ndarray | int, bits: int) -> np.ndarray:
    """Rotate the low ``bits`` bits of uint64 ``x`` left by ``d`` (Hido & Kashima's ROT)."""
    mask = np.uint64((1 << bits) - 1)
    m = np.broadcast_to(np.asarray(d, dtype=np.uint64) % np.uint64(bits), x.shape)
    x = x & mask
    back = np.where(m > 0, np.uint64(bits) - m, np.uint64(0))
    right = np.where(m > 0, x >> back, np.uint64(0))
    return ((x << m) & mask) | right


def _xor_per_node(values: np.ndarray, owner: np.ndarray, n: int) -> np.ndarray:
    """XOR of ``values`` grouped by sorted ``owner`` (0 for an owner without values)."""
    out = np.zeros(n, dtype=np.uint64)
    if len(values):
        starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
        out[owner[starts]] = np.bitwise_xor.reduceat(values, starts)
    return out


class NeighborhoodHash(_GraphKernel):
    r"""Neighbourhood hash kernel (simple or count-sensitive).

    Hido & Kashima, "A linear-time graph kernel", ICDM 2009, sections 3-4 (GraKeL's
    ``NeighborhoodHash``).  Labels are ``bits``-bit vectors; one hashing round maps

    .. math:: \ell'(v) = \mathrm{ROT}_1(\ell(v)) \oplus \bigoplus_{u \in N(v)} \ell(u)

    (``nh_type="simple"``), or, ``"count_sensitive"``, XORs
    :math:`\mathrm{ROT}_o(\ell \oplus o)` over the distinct neighbour labels :math:`\ell`
    with multiplicity :math:`o` (so repeated neighbours do not cancel).  With :math:`c_r` the
    size of the multiset intersection of the labels after :math:`r+1` rounds,

    .. math:: k(G, G') = \frac1R \sum_{r=0}^{R-1} \frac{c_r}{|V| + |V'| - c_r},

    the mean over the rounds of a min-max (Tanimoto) kernel of label counts, p.d.  Initial
    labels are the low ``bits`` bits of the deterministic label codes (GraKeL draws them at
    random); where neither side has a hash collision the values agree exactly (tested at 24
    bits).  The diagonal is 1.

    Parameters
    ----------
    R : int
        Number of hashing rounds (GraKeL's ``R``).
    nh_type : {"simple", "count_sensitive"}
        Hash of the neighbourhood (GraKeL's ``nh_type``).
    bits : int
        Label width, ``1..64`` (GraKeL's ``bits``; its default 8 collides far more often than
        this default 24).
    node_label : str or None
        Node attribute holding the discrete label.
    """

    def __init__(
        self,
        R: int = 3,
        *,
        nh_type: str = "simple",
        bits: int = 24,
        node_label: str | None = "label",
    ):
        super().__init__()
        self.R = check_int(R, name="R", minimum=1)
        if nh_type not in ("simple", "count_sensitive"):
            raise InputError(f"nh_type: expected 'simple' or 'count_sensitive', got {nh_type!r}")
        self.nh_type = nh_type
        self.bits = check_int(bits, name="bits", minimum=1)
        if self.bits > 64:
            raise InputError(f"bits: expected an integer in [1, 64], got {bits!r}")
        self.node_label = _check_label_name(node_label, "node_label")
        self.edge_label = None

    def _round(self, X: GraphBatch, lab: np.ndarray) -> np.ndarray:
        n = int(X.node_ptr[-1])
        owner = np.repeat(np.arange(n), np.diff(X.adj_ptr))
        nbr = lab[X.adj_idx]
        if self.nh_type == "simple" or not len(nbr):
            hood = _xor_per_node(nbr, owner, n)
        else:
            order = np.lexsort((nbr, owner))
            o, v = owner[order], nbr[order]
            first = np.flatnonzero(np.r_[True, (o[1:] != o[:-1]) | (v[1:] != v[:-1])])
            occ = np.diff(np.r_[first, len(o)]).astype(np.uint64)
            hood = _xor_per_node(_rot(v[first] ^ occ, occ, self.bits), o[first], n)
        return _rot(lab, 1, self.bits) ^ hood

    def level_features(self, X: GraphBatch) -> list[SparseFeatures]:
        """Unary codes of the label counts after each of the ``R`` rounds."""
        lab = self._node_codes(X).view(np.uint64) & np.uint64((1 << self.bits) - 1)
        out = []
        for _ in range(self.R):
            lab = self._round(X, lab)
            out.append(unary_features(count_features(X.graph_index, lab.view(np.int64), len(X))))
        return out

    def block(self, X: Batch, Y: Batch) -> torch.Tensor:
        LX = self.level_features(X)
        LY = LX if Y is X else self.level_features(Y)
        size = torch.as_tensor(X.n_nodes, dtype=torch.float64)[:, None] + torch.as_tensor(
            Y.n_nodes, dtype=torch.float64
        )
        K = torch.zeros(len(X), len(Y), dtype=torch.float64)
        for fx, fy in zip(LX, LY, strict=True):
            C = feature_gram(fx, fx if Y is X else fy)
            K += C / (size - C)
        return K / self.R

    def block_diag(self, X: Batch) -> torch.Tensor:
        return torch.ones(len(X), dtype=torch.float64)

    def features(self, X: Batch) -> None:
        """None: the min-max ratio has no finite feature map (its counts: ``level_features``)."""
        return None

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        X, Y = example_graphs()
        return [(cls(2), X, Y), (cls(3, nh_type="count_sensitive", bits=8), X, Y)]
