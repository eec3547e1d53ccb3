r"""Multiscale Laplacian graph kernel with a fitted (Nyström) basis.

Kondor & Pan, "The multiscale Laplacian graph kernel", NIPS 2016: the feature space
Laplacian graph kernel (FLG), the multiscale kernel built from it (MLG) and its randomised
low-rank projection (algorithm 1 of the supplement), as GraKeL 0.1.11's
``MultiscaleLaplacian`` computes them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from kernelkit.data._graphs import GraphBatch, as_graph_batch, hash_combine, mix64
from kernelkit.data._molecules import as_molecule_batch, is_molecule_input
from kernelkit.kernels._base import Batch, Kernel
from kernelkit.kernels._graph_attributes import attributed_graphs
from kernelkit.kernels._graph_pyramid import _adjacency_stacks
from kernelkit.kernels._graphs import (
    _check_label_name,
    _GraphKernel,
    count_features,
    example_graphs,
)
from kernelkit.solvers import cholesky_factor, symmetric_eigh
from kernelkit.solvers._cholesky import CholeskyFactor
from kernelkit.utils._errors import InputError
from kernelkit.utils._validation import check_int, check_positive

__all__ = ["MultiscaleLaplacian", "flg_gram"]

POSITIVE_EIGENVALUE = 1e-6
"""Eigenvalues of a sample Gram at or below this are dropped from the basis (GraKeL's)."""

_PAIR_BUDGET = 1 << 14  # (P x P) matrices per chunk of the pairwise FLG values
_CACHE_GRAPHS = 1 << 17  # graph moments kept (about 100 MB at P = 10)


def _moments(U: np.ndarray, A: np.ndarray, heta: float, gamma: float) -> tuple:
    r"""``S^{-1}`` and :math:`\log|S|` of :math:`S = U^T (L + \eta I)^{-1} U + \gamma I` for a
    stack of graphs: adjacencies ``A`` ``(B, m, m)`` (diagonal ignored), features ``U``
    ``(B, m, P)``; both s.p.d. systems by batched Cholesky factorisations."""
    A = A.copy()
    idx = np.arange(A.shape[-1])
    A[:, idx, idx] = 0.0
    lap = -A
    lap[:, idx, idx] = A.sum(-1) + heta
    Ut = torch.from_numpy(np.ascontiguousarray(U, dtype=np.float64))
    S = Ut.mT @ _spd_factor(lap).solve(Ut)
    S.diagonal(dim1=-2, dim2=-1).add_(gamma)
    factor = _spd_factor(S)
    return factor.inverse().numpy(), factor.logdet().numpy()


def _spd_factor(M: np.ndarray | torch.Tensor) -> CholeskyFactor:
    """Cholesky factors of a stack of s.p.d. matrices ``(..., p, p)`` (no jitter)."""
    factor = cholesky_factor(torch.as_tensor(M, dtype=torch.float64), jitter=0.0)
    if not factor.success:
        raise InputError("MultiscaleLaplacian: a covariance S is not positive definite")
    return factor


def flg_gram(
    inv_a: np.ndarray,
    logdet_a: np.ndarray,
    inv_b: np.ndarray,
    logdet_b: np.ndarray,
    *,
    symmetric: bool = False,
) -> np.ndarray:
    r"""GraKeL's FLG values between two lists of moments, ``(len(a), len(b))``:

    .. math:: k(a, b) = |S_a^{-1} + S_b^{-1}|^{-1/2}\, |S_a|^{-1/4}\, |S_b|^{-1/4},

    the paper's FLG kernel (Kondor & Pan 2016) times :math:`2^{-P/2}`;
    computed in chunks of ``_PAIR_BUDGET`` matrices (``symmetric``: ``a`` is ``b``, the
    upper triangle only).
    """
    na, nb = len(inv_a), len(inv_b)
    out = np.zeros((na, nb))
    rows = max(1, _PAIR_BUDGET // max(nb, 1))
    for start in range(0, na, rows):
        stop = min(na, start + rows)
        first = start if symmetric else 0  # columns >= the block's first row
        out[start:stop, first:] = (
            _spd_factor(inv_a[start:stop, None] + inv_b[None, first:]).logdet().numpy()
        )
    if symmetric:
        out = np.triu(out) + np.triu(out, 1).T
    return np.exp(-0.5 * out - 0.25 * (logdet_a[:, None] + logdet_b[None, :]))


def _nystrom_map(K: np.ndarray, P: int) -> np.ndarray:
    r""":math:`Q = W_P \Lambda_P^{-1/2}` of the ``P`` largest eigenpairs of a sample Gram, kept
    when above :data:`POSITIVE_EIGENVALUE`: features ``K(x, samples) Q``."""
    eig = symmetric_eigh(K, descending=True, signs=False)
    values, vectors = eig.values.numpy()[:P], eig.vectors.numpy()[:, :P]
    keep = values > POSITIVE_EIGENVALUE
    return vectors[:, keep] / np.sqrt(values[keep])


def _edge_lookup(X: GraphBatch) -> np.ndarray:
    """Sorted keys ``u * N + v`` of the adjacency (both directions) for induced subgraphs."""
    N = int(X.node_ptr[-1])
    src = np.repeat(np.arange(N, dtype=np.int64), np.diff(X.adj_ptr))
    return np.sort(src * N + X.adj_idx.astype(np.int64))


def _induced(keys: np.ndarray, N: int, nodes: np.ndarray) -> np.ndarray:
    """Adjacencies ``(B, m, m)`` of the subgraphs induced by the node lists ``(B, m)``."""
    pair = nodes[:, :, None] * N + nodes[:, None, :]
    pos = np.minimum(np.searchsorted(keys, pair), max(len(keys) - 1, 0))
    return (keys[pos] == pair).astype(np.float64) if len(keys) else np.zeros(pair.shape)


class _Balls:
    """The nodes of every ball :math:`B_r(v)` of a batch, per radius, grouped by size:
    ``levels[i][m] = (centres (B,), members (B, m))`` (global node indices).  Graphs of
    equal size are handled together: reachability by powers of their stacked adjacency."""

    def __init__(self, X: GraphBatch, radii: list[int]):
        self.N = int(X.node_ptr[-1])
        self.keys = _edge_lookup(X)
        groups: list[dict[int, list]] = [{} for _ in radii]
        for graphs, A in _adjacency_stacks(X).values():
            n, starts = A.shape[-1], X.node_ptr[graphs]
            reach = np.broadcast_to(np.eye(n, dtype=bool), A.shape).copy()
            steps = 0
            for level, r in enumerate(radii):
                for _ in range(steps, min(r, n)):
                    reach |= (reach @ A) > 0
                steps = max(steps, min(r, n))
                sizes = reach.sum(-1)
                for m in np.unique(sizes):
                    b, v = np.nonzero(sizes == m)
                    members = np.nonzero(reach[b, v])[1].reshape(len(b), m) + starts[b, None]
                    groups[level].setdefault(int(m), []).append((starts[b] + v, members))
        self.levels = [
            {
                m: (np.concatenate([c for c, _ in parts]), np.concatenate([b for _, b in parts]))
                for m, parts in level.items()
            }
            for level in groups
        ]


class MultiscaleLaplacian(_GraphKernel):
    r"""Multiscale Laplacian graph kernel (fast MLG), on a basis fitted to a set of graphs.

    Kondor & Pan, NIPS 2016.  The **FLG kernel** (the paper's feature space Laplacian graph
    kernel) compares two graphs
    through Gaussians whose covariances couple the node features :math:`U` (rows: nodes, in a
    common basis) with the graph Laplacian :math:`L`,

    .. math:: S = U^T (L + \eta I)^{-1} U + \gamma I, \qquad
              k(G, G') = \big|S^{-1} + S'^{-1}\big|^{-1/2} |S|^{-1/4} |S'|^{-1/4},

    (the paper's kernel, a Bhattacharyya kernel, has :math:`\tfrac12 S^{-1} + \tfrac12
    S'^{-1}` and so equals this one times :math:`2^{P/2}`, :math:`P` the basis dimension;
    GraKeL computes the form above at every level, and so does this kernel).  The **MLG
    kernel** applies it at growing scales: the level-:math:`l`
    kernel between two nodes is the FLG kernel of the subgraphs induced by their
    neighbourhoods :math:`N_l(v)`, the node features being the level-:math:`(l-1)` kernel's;
    level 0 is the base kernel of the nodes, and the graph kernel is the FLG kernel of the
    whole graphs with the level-:math:`L` features.  The neighbourhoods are GraKeL's:
    :math:`N_l(v)` is the ball of radius :math:`2^{l-1}` (GraKeL builds
    :math:`N_{l+1}(v) = \bigcup_{w \in N_l(v)} N_l(w)`; the paper asks only for nested
    neighbourhoods).

    **The fitted basis** (the paper's randomised projection; supplement, algorithm 1).  The
    features of each level are coordinates in a basis fitted to a set of graphs: at every
    level ``n_samples`` nodes of that set are drawn and every node ``v`` gets
    :math:`F_l(v) = k_l(v, \text{samples}) W \Lambda^{-1/2}` from the ``P`` largest
    eigenpairs :math:`(\Lambda, W)` of the samples' Gram that exceed
    :data:`POSITIVE_EIGENVALUE` (the Nyström map).  The basis is state of the kernel, like
    GraKeL's ``fit``:

    * :meth:`fit` computes it from a batch of graphs (GraKeL's ``fit``);
    * an unfitted kernel fits it on the first *reference* set it prepares: the graphs of
      ``k(X)``, the ``Y`` of ``k(X, Y)``, an estimator's training graphs.  So ``k(X)`` on a
      fresh kernel is GraKeL's ``fit_transform(X)`` and a later ``k(Z, X)`` is
      ``fit(X).transform(Z)``;
    * ``set_params`` and ``sklearn.clone`` give an unfitted kernel (a fresh basis per
      cross-validation fold).

    Given the basis, the kernel is a fixed p.d. kernel (a Bhattacharyya kernel of the
    graphs' Gaussians).  The draws replay GraKeL's: one ``numpy.random.RandomState(
    random_state)`` shuffles the list of all nodes (graphs in order, nodes in order) once per
    level, the first ``n_samples`` are that level's samples; so with the same
    ``random_state`` the Gram equals GraKeL's (tests, 1e-8).  Eigenvectors of repeated
    eigenvalues are not unique, but the kernel is invariant under a rotation of the basis;
    only a tie at the ``P``-th eigenvalue of a sample Gram makes the basis ambiguous.

    There is no finite feature map (:meth:`features` is ``None``).  Cost: per level one
    log-determinant of size :math:`P` per node and sample (batched LU) and one solve per
    node neighbourhood; :math:`n^2 / 2` log-determinants of size :math:`P` for a Gram.  A
    graph's moments :math:`(S^{-1}, \log|S|)` are kept under a 64-bit hash of its nodes and
    edges (cleared by a new fit), so the tiles of a Gram compute them once.

    Parameters
    ----------
    L : int
        Number of levels :math:`L` (GraKeL's ``L``); ``L=0`` is the FLG kernel on the base
        features.
    P : int
        Largest basis dimension per level (GraKeL's ``P``).
    gamma : float
        :math:`\gamma > 0`, the regulariser of :math:`S` (GraKeL's ``gamma``).
    heta : float
        :math:`\eta > 0`, the regulariser of the Laplacian (GraKeL's ``heta``).
    n_samples : int
        Nodes drawn per level (GraKeL's ``n_samples``).
    random_state : int
        Seed of the draws (GraKeL's ``random_state``).
    node_label : str or None
        Node attribute holding the discrete label; with ``node_attribute=None`` the base
        kernel is :math:`[\ell(v) = \ell(v')]` (GraKeL given one-hot label vectors);
        ``None``: all nodes alike.
    node_attribute : str or None
        Node attribute holding continuous feature vectors; when given, the base kernel is
        their dot product (GraKeL's node "labels" of this kernel are such vectors).

    Attributes
    ----------
    basis_ : dict or None
        The fitted basis (``None`` until fitted): the level-0 sample features, the samples'
        moments of every level and the Nyström maps.
    """

    def __init__(
        self,
        L: int = 3,
        P: int = 10,
        gamma: float = 0.01,
        heta: float = 0.01,
        n_samples: int = 50,
        *,
        random_state: int = 0,
        node_label: str | None = "label",
        node_attribute: str | None = None,
    ):
        super().__init__()
        self.L = check_int(L, name="L", minimum=0)
        self.P = check_int(P, name="P")
        self.gamma = check_positive(gamma, name="gamma")
        self.heta = check_positive(heta, name="heta")
        self.n_samples = check_int(n_samples, name="n_samples")
        self.random_state = check_int(random_state, name="random_state", minimum=0)
        self.node_label = _check_label_name(node_label, "node_label")
        self.node_attribute = _check_label_name(node_attribute, "node_attribute")
        self.edge_label = None
        self.basis_: dict[str, Any] | None = None
        self._cache: dict[int, tuple[np.ndarray, float]] = {}

    # ------------------------------------------------------------------ input
    def prepare(
        self, X: Any, *, dtype: torch.dtype | None = None, reference: bool = False
    ) -> GraphBatch:
        """Checked GraphBatch; fits the basis on it when it is a reference set and the kernel
        is unfitted (class docstring)."""
        if is_molecule_input(X):
            if self.node_attribute is not None:
                raise InputError(
                    "X: molecules carry no continuous node attributes; build networkx graphs "
                    "or a GraphBatch with node_attributes, or pass node_attribute=None"
                )
            X = as_molecule_batch(X, name="X").to_graphs()
        batch = as_graph_batch(
            X,
            node_label=None if self.node_attribute is not None else self.node_label,
            edge_label=None,
            node_attribute=self.node_attribute,
            name="X",
        )
        if reference and self.basis_ is None:
            self.fit(batch)
        return batch

    def _base(self, X: GraphBatch, nodes: np.ndarray | None = None) -> np.ndarray:
        """Level-0 node representations: attribute vectors, or label codes."""
        if self.node_attribute is not None:
            F = np.asarray(X.node_attributes, dtype=np.float64)
        else:
            F = self._node_codes(X)
        return F if nodes is None else F[nodes]

    def _base_kernel(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if self.node_attribute is not None:
            if a.shape[1] != b.shape[1]:
                raise InputError(
                    f"X: node attributes have {a.shape[1]} components, the fitted basis "
                    f"{b.shape[1]}"
                )
            return a @ b.T
        return (a[:, None] == b[None, :]).astype(np.float64)

    # ------------------------------------------------------------------ basis
    def fit(self, X: Any) -> MultiscaleLaplacian:
        """Fit the basis to the graphs ``X`` (GraKeL's ``fit``); returns ``self``."""
        Xb = self.prepare(X)
        N = int(Xb.node_ptr[-1])
        ns = min(N, self.n_samples)
        rng = np.random.RandomState(self.random_state)
        order = np.arange(N)
        rng.shuffle(order)
        base = self._base(Xb)
        samples = base[order[:ns]]
        Q = _nystrom_map(self._base_kernel(samples, samples), self.P)
        F = self._base_kernel(base, samples) @ Q
        basis: dict[str, Any] = {"base": samples, "Q": [Q], "moments": []}
        balls = _Balls(Xb, self._radii())
        for level in range(self.L):
            rng.shuffle(order)
            pick = order[:ns]
            inv, logdet = self._node_moments(F, balls, level)
            Q = _nystrom_map(
                flg_gram(inv[pick], logdet[pick], inv[pick], logdet[pick], symmetric=True), self.P
            )
            F = flg_gram(inv, logdet, inv[pick], logdet[pick]) @ Q
            basis["moments"].append((inv[pick], logdet[pick]))
            basis["Q"].append(Q)
        self.basis_ = basis
        self._cache = {}
        self._remember(self._graph_keys(Xb), self._graph_moments(Xb, F))
        return self

    def _radii(self) -> list[int]:
        return [2**level for level in range(self.L)]

    def _node_moments(self, F: np.ndarray, balls: _Balls, level: int) -> tuple:
        """Moments of every node's level-``level + 1`` neighbourhood, features ``F``."""
        P = F.shape[1]
        inv, logdet = np.empty((balls.N, P, P)), np.empty(balls.N)
        for centres, members in balls.levels[level].values():
            A = _induced(balls.keys, balls.N, members)
            inv[centres], logdet[centres] = _moments(F[members], A, self.heta, self.gamma)
        return inv, logdet

    def _graph_moments(self, X: GraphBatch, F: np.ndarray) -> tuple:
        """Moments of every whole graph with the top-level features ``F``."""
        P = F.shape[1]
        inv, logdet = np.empty((len(X), P, P)), np.empty(len(X))
        keys, N = _edge_lookup(X), int(X.node_ptr[-1])
        for n in np.unique(X.n_nodes):
            graphs = np.flatnonzero(X.n_nodes == n)
            members = X.node_ptr[graphs][:, None] + np.arange(n)[None, :]
            A = _induced(keys, N, members)
            inv[graphs], logdet[graphs] = _moments(F[members], A, self.heta, self.gamma)
        return inv, logdet

    def _graph_keys(self, X: GraphBatch) -> np.ndarray:
        """A 64-bit hash of every graph's nodes (position, base representation) and edges."""
        gi, local = X.graph_index, np.arange(int(X.node_ptr[-1])) - X.node_ptr[X.graph_index]
        base = self._base(X)
        if base.ndim == 2:
            base = hash_combine(*base.T.view(np.int64)) if base.shape[1] else np.zeros(len(base))
        src = np.repeat(np.arange(len(gi)), np.diff(X.adj_ptr))
        nodes = count_features(gi, hash_combine(local, base).view(np.int64), len(X))
        edges = count_features(
            gi[src], hash_combine(local[src], local[X.adj_idx]).view(np.int64), len(X)
        )
        keys = []
        for F in (nodes, edges):
            mixed = mix64(F.keys.view(np.uint64) ^ mix64(F.values.astype(np.uint64)))
            total = np.zeros(len(X), np.uint64)
            np.add.at(total, np.repeat(np.arange(len(X)), np.diff(F.indptr)), mixed)
            keys.append(total)
        return hash_combine(X.n_nodes, *keys).view(np.int64)

    def _remember(self, keys: np.ndarray, moments: tuple[np.ndarray, np.ndarray]) -> None:
        if len(self._cache) + len(keys) > _CACHE_GRAPHS:
            self._cache = {}
        self._cache.update(zip(keys.tolist(), zip(*moments, strict=True), strict=True))

    def graph_moments(self, X: GraphBatch) -> tuple[np.ndarray, np.ndarray]:
        r""":math:`S^{-1}` ``(n, P, P)`` and :math:`\log|S|` ``(n,)`` of every graph of a
        prepared batch in the fitted basis (kept per graph, keyed by a hash of the graph, so
        the tiles of a Gram do not recompute them)."""
        if self.basis_ is None:
            raise InputError(
                "MultiscaleLaplacian: the basis is not fitted; call fit(graphs) or evaluate "
                "k(X) / k(X, Y) first (the basis is fitted on X, resp. Y)"
            )
        keys = self._graph_keys(X)
        missing = np.array([i for i, key in enumerate(keys.tolist()) if key not in self._cache])
        if len(missing):
            new = X[missing]
            basis = self.basis_
            F = self._base_kernel(self._base(new), basis["base"]) @ basis["Q"][0]
            balls = _Balls(new, self._radii())
            for level, ((s_inv, s_logdet), Q) in enumerate(
                zip(basis["moments"], basis["Q"][1:], strict=True)
            ):
                inv, logdet = self._node_moments(F, balls, level)
                F = flg_gram(inv, logdet, s_inv, s_logdet) @ Q
            self._remember(keys[missing], self._graph_moments(new, F))
        found = [self._cache[key] for key in keys.tolist()]
        return np.stack([f[0] for f in found]), np.array([f[1] for f in found])

    # ------------------------------------------------------------------ kernel
    def features(self, X: Batch) -> None:
        """None: the FLG kernel has no finite feature map."""
        return None

    def block(self, X: Batch, Y: Batch) -> torch.Tensor:
        inv_x, ld_x = self.graph_moments(X)
        inv_y, ld_y = (inv_x, ld_x) if Y is X else self.graph_moments(Y)
        return torch.as_tensor(flg_gram(inv_x, ld_x, inv_y, ld_y, symmetric=Y is X))

    def block_diag(self, X: Batch) -> torch.Tensor:
        inv, logdet = self.graph_moments(X)
        twice = _spd_factor(2.0 * inv).logdet().numpy()
        return torch.as_tensor(np.exp(-0.5 * twice - 0.5 * logdet))

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        X, Y = example_graphs()
        A, B = attributed_graphs()
        return [
            (cls(L=2, P=5, n_samples=12), X, Y),
            (cls(node_attribute="attributes", random_state=3), A, B),
        ]
