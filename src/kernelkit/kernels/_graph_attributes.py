r"""Graph kernels for nodes with continuous attributes: GraphHopper and propagation kernels.

GraphHopper (Feragen, Kasenburg, Petersen, de Bruijne & Borgwardt, "Scalable kernels for
graphs with continuous attributes", NIPS 2013) and propagation kernels (Neumann, Garnett,
Bauckhage & Kersting, "Propagation kernels: efficient graph kernels from propagated
information", Machine Learning 102, 2016), under GraKeL's class and parameter names
(``GraphHopper``, ``Propagation``, ``PropagationAttr``).

Continuous node attributes are read from the node attribute ``node_attribute`` (default
``"attributes"``: a number or a vector per node), into ``GraphBatch.node_attributes``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
import torch

from kernelkit.data._graphs import GraphBatch, as_graph_batch, hash_combine, mix64
from kernelkit.data._molecules import is_molecule_input
from kernelkit.kernels._base import Batch, Kernel
from kernelkit.kernels._features import SparseFeatures
from kernelkit.kernels._graphs import _check_label_name, _GraphKernel, count_features
from kernelkit.utils._errors import InputError
from kernelkit.utils._validation import check_int, check_positive

__all__ = ["GraphHopper", "Propagation", "PropagationAttr", "geodesic_counts"]

_NODE_BUDGET = 1024  # nodes of X per chunk of the node-pair matrices of GraphHopper


def attributed_graphs() -> tuple[list[Any], list[Any]]:
    """Small graphs with labels and 2-d continuous attributes for the common kernel checks."""
    import networkx as nx

    rng = np.random.default_rng(5)
    out = []
    for k in range(10):
        g = nx.gnp_random_graph(3 + k % 5, 0.5, seed=k)
        for v in g:
            g.nodes[v]["label"] = "CNO"[int(rng.integers(3))]
            g.nodes[v]["attributes"] = rng.normal(size=2)
        out.append(g)
    return out[:7], out[7:]


class _AttributedKernel(_GraphKernel):
    """Graph kernels reading continuous node attributes (``node_attribute``)."""

    node_attribute: str

    def prepare(
        self, X: Any, *, dtype: torch.dtype | None = None, reference: bool = False
    ) -> GraphBatch:
        if is_molecule_input(X):
            raise InputError(
                "X: molecules carry no continuous node attributes; build networkx graphs or a "
                "GraphBatch with node_attributes"
            )
        return as_graph_batch(
            X,
            node_label=self.node_label,
            edge_label=None,
            node_attribute=self.node_attribute,
            name="X",
        )


def geodesic_counts(X: GraphBatch, g: int) -> tuple[np.ndarray, np.ndarray]:
    """Distances and numbers of shortest paths between all node pairs of graph ``g``.

    Breadth-first layers from every source at once: :math:`\\sigma(s, t) = \\sum_{u \\sim t,
    d(s, u) = d(s, t) - 1} \\sigma(s, u)`, :math:`\\sigma(s, s) = 1`; unreachable pairs have
    distance ``inf`` and count 0.
    """
    A = (X.adjacency(g).toarray() != 0).astype(np.float64)  # dist and sigma are dense anyway
    np.fill_diagonal(A, 0)
    n = A.shape[0]
    dist = np.full((n, n), np.inf)
    np.fill_diagonal(dist, 0)
    sigma = np.eye(n)
    front = np.eye(n)
    k = 0
    while front.any():
        k += 1
        reach = (front @ A) * np.isinf(dist)
        new = reach > 0
        dist[new] = k
        sigma[new] = reach[new]
        front = np.where(new, reach, 0.0)
    return dist, sigma


def _hop_matrices(X: GraphBatch, g: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Non-zeros ``(node, a, b) -> count`` of GraphHopper's :math:`M` for graph ``g``."""
    dist, sigma = geodesic_counts(X, g)
    fin = np.isfinite(dist)
    d = np.where(fin, dist, -1).astype(np.int64)
    # [v, s, t]: v lies on a geodesic from s to t, at hop d(s, v) of a path of length d(s, t)
    on = fin[:, :, None] & fin[:, None, :] & fin[None, :, :]
    on &= d[:, :, None] + d[:, None, :] == d[None, :, :]
    v, s, t = np.nonzero(on)
    w = sigma[v, s] * sigma[v, t]
    return v, np.stack([d[s, v], d[s, t]], axis=1), w


class GraphHopper(_AttributedKernel):
    r"""GraphHopper kernel: shortest paths compared node by node along their hops.

    Feragen et al., NIPS 2013, section 3: over all pairs of shortest paths :math:`\pi`,
    :math:`\pi'` (every geodesic between every ordered pair of nodes, single nodes included)
    of equal number of hops,
    :math:`k(G, G') = \sum_{\pi, \pi'} \sum_{j} k_n(\pi(j), \pi'(j))`, which equals
    (their eq. (3))

    .. math:: k(G, G') = \sum_{v \in V} \sum_{v' \in V'} \langle M(v), M(v') \rangle_F\,
              k_n(x_v, x_{v'}),

    :math:`M(v)_{ab}` the number of shortest paths of :math:`b` edges having :math:`v` at hop
    :math:`a`, computed from path counts :math:`\sigma(s, v)\sigma(v, t)` over the node pairs
    with :math:`d(s, v) + d(v, t) = d(s, t)` (:func:`geodesic_counts`).  p.d. for a p.d. node
    kernel :math:`k_n` (a sum of products of p.d. kernels).  Node kernels (GraKeL's
    ``kernel_type``): ``"linear"`` :math:`\langle x, x'\rangle` (then explicit features
    :math:`\sum_v \mathrm{vec}(M(v)) \otimes x_v`), ``"gaussian"`` or ``("gaussian", mu)``
    :math:`\exp(-\mu \|x - x'\|^2)` (:math:`\mu = 1` by default), ``"bridge"``
    :math:`\max(0, 1 - \|x - x'\|/4)`.  Equals GraKeL 0.1.11 (tested).

    Parameters
    ----------
    kernel_type : str or tuple
        Node kernel, as above.
    node_attribute : str
        Node attribute holding the continuous attributes.
    """

    def __init__(self, kernel_type: str | tuple = "linear", *, node_attribute: str = "attributes"):
        super().__init__()
        mu = 1.0
        name = kernel_type
        if isinstance(kernel_type, tuple):
            if len(kernel_type) != 2 or kernel_type[0] != "gaussian":
                raise InputError(f"kernel_type: expected ('gaussian', mu), got {kernel_type!r}")
            name, mu = "gaussian", check_positive(kernel_type[1], name="kernel_type mu")
        if name not in ("linear", "gaussian", "bridge"):
            raise InputError(
                "kernel_type: expected 'linear', 'gaussian', 'bridge' or ('gaussian', mu), got "
                f"{kernel_type!r}"
            )
        self.kernel_type = kernel_type
        self.kind_, self.mu_ = name, mu
        self.node_attribute = _check_label_name(node_attribute, "node_attribute") or "attributes"
        self.node_label = None
        self.edge_label = None

    def _node_rows(self, X: GraphBatch) -> SparseFeatures:
        """:math:`\\mathrm{vec}\\,M(v)` of every node, keyed by ``(a, b)``."""
        nodes, keys, vals = [], [], []
        for g in range(len(X)):
            v, ab, w = _hop_matrices(X, g)
            nodes.append(v + X.node_ptr[g])
            keys.append(ab[:, 0] * (1 << 31) + ab[:, 1])
            vals.append(w)
        n = int(X.node_ptr[-1])
        return count_features(np.concatenate(nodes), np.concatenate(keys), n, np.concatenate(vals))

    def features(self, X: GraphBatch) -> SparseFeatures | None:
        """Linear node kernel: :math:`\\sum_v \\mathrm{vec}(M(v)) \\otimes x_v`, else ``None``."""
        if self.kind_ != "linear":
            return None
        R = self._node_rows(X)
        x = X.node_attributes
        node = np.repeat(np.arange(len(R)), np.diff(R.indptr))
        d = x.shape[1]
        keys = (R.keys[:, None] * d + np.arange(d)[None, :]).ravel()
        vals = (R.values[:, None] * x[node]).ravel()
        gid = np.repeat(X.graph_index[node], d)
        return count_features(gid, keys, len(X), vals)

    def _grouped_rows(self, X: GraphBatch) -> tuple[SparseFeatures, np.ndarray, np.ndarray]:
        r"""Rows, attributes and graphs of the nodes merged per (graph, attribute vector).

        Nodes of one graph with equal attributes have equal :math:`k_n` to every other node,
        so their :math:`\mathrm{vec}\,M(v)` can be summed first: the kernel is unchanged and
        the node-pair sum runs over the distinct attribute vectors of each graph.
        """
        x = X.node_attributes
        _, first, group = np.unique(
            np.column_stack([X.graph_index, x]), axis=0, return_index=True, return_inverse=True
        )
        R = self._node_rows(X)
        owner = group.ravel()[np.repeat(np.arange(len(R)), np.diff(R.indptr))]
        merged = count_features(owner, R.keys, len(first), R.values)
        return merged, x[first], X.graph_index[first]

    def block(self, X: Batch, Y: Batch) -> torch.Tensor:
        if self.kind_ == "linear":
            return super().block(X, Y)
        RX, ax, gx = self._grouped_rows(X)
        RY, ay, gy = (RX, ax, gx) if Y is X else self._grouped_rows(Y)
        vocab = np.union1d(RX.keys, RY.keys)
        MX = RX.to_csr(vocab)
        MY = MX if Y is X else RY.to_csr(vocab)
        ax, ay = torch.as_tensor(ax), torch.as_tensor(ay)
        gx, gy = torch.as_tensor(gx), torch.as_tensor(gy)
        K = torch.zeros(len(X), len(Y), dtype=torch.float64)
        for a in range(0, len(ax), _NODE_BUDGET):  # node-pair blocks, M(v) rows dense
            b = min(a + _NODE_BUDGET, len(ax))
            Ma = torch.as_tensor(MX[a:b].toarray())
            rows = torch.zeros(b - a, len(Y), dtype=torch.float64)
            for c in range(0, len(ay), _NODE_BUDGET):
                d = min(c + _NODE_BUDGET, len(ay))
                W = Ma @ torch.as_tensor(MY[c:d].toarray()).T
                dist2 = torch.cdist(ax[a:b], ay[c:d], compute_mode="donot_use_mm_for_euclid_dist")
                dist2.square_()
                if self.kind_ == "gaussian":
                    W *= torch.exp(-self.mu_ * dist2)
                else:
                    W *= torch.clamp(1.0 - dist2.sqrt() / 4.0, min=0.0)
                rows.index_add_(1, gy[c:d], W)
            K.index_add_(0, gx[a:b], rows)
        return K

    def block_diag(self, X: Batch) -> torch.Tensor:
        if self.kind_ == "linear":
            return super().block_diag(X)
        return torch.stack([self.block(X[i : i + 1], X[i : i + 1])[0, 0] for i in range(len(X))])

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        X, Y = attributed_graphs()
        return [(cls(), X, Y), (cls(("gaussian", 0.5)), X, Y), (cls("bridge"), X, Y)]


def _hash_normals(keys: np.ndarray) -> np.ndarray:
    """Standard normals determined by uint64 ``keys`` (Box-Muller on two SplitMix64 draws)."""
    scale = 2.0**-53
    u1 = ((mix64(keys) >> np.uint64(11)).astype(np.float64) + 0.5) * scale
    u2 = ((mix64(keys ^ np.uint64(0xA5A5A5A5A5A5A5A5)) >> np.uint64(11)).astype(np.float64)) * scale
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)


def _transition(X: GraphBatch) -> sp.csr_matrix:
    """Row-normalised block-diagonal adjacency :math:`D^{-1}A` (zero rows for isolated nodes)."""
    n = int(X.node_ptr[-1])
    deg = np.diff(X.adj_ptr).astype(np.float64)
    vals = np.repeat(1.0 / np.maximum(deg, 1.0), np.diff(X.adj_ptr))
    return sp.csr_matrix((vals, X.adj_idx, X.adj_ptr), shape=(n, n))


def _propagated_features(X: GraphBatch, P: Any, t_max: int, bins_at: Any) -> SparseFeatures:
    """Counts of ``(t, bins_at(t, P_t))`` per graph, with :math:`P_{t+1} = D^{-1}A P_t`."""
    n = int(X.node_ptr[-1])
    T = _transition(X)
    keys = []
    for t in range(t_max):
        bins = np.asarray(bins_at(t, P), dtype=np.int64).reshape(n, -1)
        keys.append(hash_combine(np.full(n, t), *bins.T).view(np.int64))
        P = T @ P
    return count_features(np.tile(X.graph_index, t_max), np.concatenate(keys), len(X))


def _check_propagation(
    kernel: Kernel, t_max: int, w: float, M: str, metrics: tuple[str, str], random_state: int
) -> None:
    kernel.t_max = check_int(t_max, name="t_max", minimum=1)
    kernel.w = check_positive(w, name="w")
    if M not in metrics:
        raise InputError(f"M: expected {metrics[0]!r} or {metrics[1]!r}, got {M!r}")
    kernel.M = M
    kernel.random_state = check_int(random_state, name="random_state", minimum=0)


class Propagation(_GraphKernel):
    r"""Propagation kernel on discrete node labels (label distributions diffused by a walk).

    Neumann et al., Machine Learning 102 (2016), Algorithms 1-2 and section 3.3 (GraKeL's
    ``Propagation``).  Node label distributions start as one-hot rows :math:`P_0` and are
    propagated by the random walk :math:`P_{t+1} = D^{-1} A\, P_t` (an isolated node's row
    becomes 0, as in GraKeL).  At every step each node's distribution :math:`p` is binned by a
    locality-sensitive hash :math:`h_t(p) = \lfloor (p^\top u_t + b_t) / w \rfloor` and

    .. math:: k(G, G') = \sum_{t=0}^{t_{\max}-1} \langle \phi_t(G), \phi_t(G') \rangle,

    :math:`\phi_t(G)` the counts of the bins of :math:`G`'s nodes at step :math:`t` (explicit
    sparse features; p.d.).  ``M="TV"`` (total variation, GraKeL's default) draws Cauchy
    :math:`u_t`, ``M="H"`` (Hellinger) hashes :math:`\sqrt{p}` with Gaussian :math:`u_t`;
    :math:`b_t \sim U[0, w)`.  The random numbers are functions of ``(random_state, t, label)``
    only, so separately featurised batches share bins (GraKeL draws them per fitted label
    vocabulary, so its Gram is random and is not reproduced; the tests check the definition
    by brute force).

    Parameters
    ----------
    t_max : int
        Number of propagation steps (GraKeL's ``t_max``).
    w : float
        Bin width (GraKeL's ``w``).
    M : {"TV", "H"}
        Distance the hash preserves (GraKeL's ``M``).
    random_state : int
        Seed of the hash functions.
    node_label : str
        Node attribute holding the discrete label.
    """

    def __init__(
        self,
        t_max: int = 5,
        *,
        w: float = 0.01,
        M: str = "TV",
        random_state: int = 0,
        node_label: str | None = "label",
    ):
        super().__init__()
        _check_propagation(self, t_max, w, M, ("TV", "H"), random_state)
        self.node_label = _check_label_name(node_label, "node_label")
        self.edge_label = None

    def hash_parameters(self, t: int, codes: np.ndarray) -> tuple[np.ndarray, float]:
        """Projection :math:`u_t` on the labels ``codes`` (int64) and the offset :math:`b_t`."""
        base = hash_combine(np.full(len(codes), self.random_state), np.full(len(codes), t), codes)
        u = _hash_normals(base)
        if self.M == "TV":
            u = u / _hash_normals(base ^ np.uint64(0x5BD1E995))
        b = hash_combine(np.array([self.random_state]), np.array([t]), np.array([-1]))
        return u, self.w * float((mix64(b)[0] >> np.uint64(11)) * 2.0**-53)

    def features(self, X: GraphBatch) -> SparseFeatures:
        """Counts of (step, bin) per graph."""
        codes, col = np.unique(self._node_codes(X), return_inverse=True)
        n = int(X.node_ptr[-1])
        P0 = sp.csr_matrix((np.ones(n), (np.arange(n), col)), shape=(n, len(codes)))

        def bins_at(t: int, P: sp.csr_matrix) -> np.ndarray:
            u, b = self.hash_parameters(t, codes)
            return np.floor(((P.sqrt() if self.M == "H" else P) @ u + b) / self.w)

        return _propagated_features(X, P0, self.t_max, bins_at)

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        X, Y = attributed_graphs()
        return [(cls(), X, Y), (cls(3, w=0.1, M="H"), X, Y)]


class PropagationAttr(_AttributedKernel):
    r"""Propagation kernel on continuous node attributes.

    Neumann et al., Machine Learning 102 (2016), Algorithms 1 and 3 (GraKeL's
    ``PropagationAttr``).  The attribute vectors :math:`P_0 = (x_v)` are propagated by
    :math:`P_{t+1} = D^{-1} A\, P_t`; at step :math:`t` a node's vector :math:`p` falls in the
    bin :math:`\big(\lfloor (p_j u_{tj} + b_{tj}) / w \rfloor\big)_{j}` (one hash per
    coordinate, as in GraKeL; ``M="L1"``: Cauchy :math:`u_t`, ``"L2"``: Gaussian;
    :math:`b_t \sim U[0, w)^d`), and :math:`k = \sum_t \langle \phi_t, \phi'_t \rangle` over the
    bin counts (explicit sparse features).  The hash parameters come from
    ``numpy.random.default_rng(random_state)`` and depend only on ``t_max`` and the attribute
    dimension.

    Parameters
    ----------
    t_max : int
        Number of propagation steps.
    w : float
        Bin width (GraKeL's default 4).
    M : {"L1", "L2"}
        Distance the hash preserves.
    random_state : int
        Seed of the hash functions.
    node_attribute : str
        Node attribute holding the continuous attributes.
    """

    def __init__(
        self,
        t_max: int = 5,
        *,
        w: float = 4.0,
        M: str = "L1",
        random_state: int = 0,
        node_attribute: str = "attributes",
    ):
        super().__init__()
        _check_propagation(self, t_max, w, M, ("L1", "L2"), random_state)
        self.node_attribute = _check_label_name(node_attribute, "node_attribute") or "attributes"
        self.node_label = None
        self.edge_label = None

    def hash_parameters(self, d: int) -> tuple[np.ndarray, np.ndarray]:
        """Projections ``u`` and offsets ``b``, both of shape ``(t_max, d)``."""
        rng = np.random.default_rng(self.random_state)
        u = rng.standard_normal((self.t_max, d))
        if self.M == "L1":
            u = u / rng.standard_normal((self.t_max, d))
        return u, self.w * rng.random((self.t_max, d))

    def features(self, X: GraphBatch) -> SparseFeatures:
        """Counts of (step, bin vector) per graph."""
        u, b = self.hash_parameters(X.node_attributes.shape[1])
        return _propagated_features(
            X,
            X.node_attributes,
            self.t_max,
            lambda t, P: np.floor((P * u[t] + b[t]) / self.w),
        )

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        X, Y = attributed_graphs()
        return [(cls(), X, Y), (cls(3, w=1.0, M="L2"), X, Y)]
