r"""Graphlet kernel: counts of small induced subgraphs, enumerated exactly or sampled.

Shervashidze, Vishwanathan, Petri, Mehlhorn & Borgwardt, "Efficient graphlet kernels for
large graph comparison", AISTATS 2009, sections 2-3 (course part 2, "subgraph kernels";
GraKeL's ``GraphletSampling``).  Also the isomorphism classes of graphs on at most 5 nodes
(:func:`small_graph_tables`) shared with :mod:`kernelkit.kernels._graph_matching`.
"""

from __future__ import annotations

import itertools
import math
from functools import cache
from typing import Any

import numpy as np

from kernelkit.data._graphs import GraphBatch, hash_combine, mix64
from kernelkit.kernels._base import Kernel
from kernelkit.kernels._features import SparseFeatures
from kernelkit.kernels._graphs import _GraphKernel, count_features, example_graphs
from kernelkit.utils._errors import InputError
from kernelkit.utils._validation import check_int

__all__ = ["GraphletSampling", "connected_node_sets", "induced_masks", "small_graph_tables"]

MAX_GRAPHLET_SIZE = 5
"""Largest graphlet size: the class tables hold all ``2^(s(s-1)/2)`` graphs on ``s`` nodes."""

# GraKeL's number of isomorphism classes of graphs on k nodes (its ``a`` for sampling bounds)
_N_CLASSES = {1: 1, 2: 2, 3: 4, 4: 8, 5: 19}


@cache
def node_pairs(s: int) -> np.ndarray:
    """The pairs ``(i, j)``, ``i < j``, of ``s`` positions, ``(s(s-1)/2, 2)``; pair ``b`` is
    bit ``b`` of an adjacency mask."""
    return np.array(list(itertools.combinations(range(s), 2)), dtype=np.int64).reshape(-1, 2)


@cache
def small_graph_tables(s: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Isomorphism classes of the graphs on ``s <= 5`` labelled positions.

    Returns ``(perms, pair_pos, permuted)``: the ``s!`` permutations ``(P, s)``; ``pair_pos[p,
    b]`` the bit that pair ``b`` moves to when position :math:`i` moves to ``perms[p, i]``;
    and ``permuted[mask, p]`` the adjacency mask of ``mask`` relabelled by ``p``.  The
    canonical form of a mask is ``permuted[mask].min()`` (the same for isomorphic graphs)
    and its automorphisms are the ``p`` with ``permuted[mask, p] == mask``.
    """
    pairs = node_pairs(s)
    m = len(pairs)
    perms = np.array(list(itertools.permutations(range(s))), dtype=np.int64).reshape(-1, s)
    index = np.zeros((s, s), dtype=np.int64)
    index[pairs[:, 0], pairs[:, 1]] = np.arange(m)
    index[pairs[:, 1], pairs[:, 0]] = np.arange(m)
    pair_pos = index[perms[:, pairs[:, 0]], perms[:, pairs[:, 1]]]
    bits = (np.arange(2**m)[:, None] >> np.arange(m)) & 1
    permuted = (bits[:, None, :] << pair_pos[None, :, :]).sum(-1)
    return perms, pair_pos, permuted


def _edge_keys(X: GraphBatch) -> np.ndarray:
    n = int(X.node_ptr[-1])
    src = np.repeat(np.arange(n, dtype=np.int64), np.diff(X.adj_ptr))
    return src * max(n, 1) + X.adj_idx


def induced_masks(X: GraphBatch, S: np.ndarray, edge_keys: np.ndarray | None = None) -> tuple:
    """Adjacency masks (bit ``b`` = pair ``b`` of :func:`node_pairs`) of the subgraphs induced
    by the rows of global node ids ``S`` ``(R, s)``, and each pair's position in the CSR
    adjacency (``-1``: no edge), ``(R, s(s-1)/2)``."""
    keys = _edge_keys(X) if edge_keys is None else edge_keys
    pairs = node_pairs(S.shape[1])
    query = S[:, pairs[:, 0]] * max(int(X.node_ptr[-1]), 1) + S[:, pairs[:, 1]]
    if len(keys) == 0:
        return np.zeros(len(S), dtype=np.int64), np.full(query.shape, -1)
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    at = np.minimum(np.searchsorted(sorted_keys, query), len(keys) - 1)
    hit = sorted_keys[at] == query
    mask = (hit.astype(np.int64) << np.arange(len(pairs))).sum(1)
    return mask, np.where(hit, order[at], -1)


def connected_node_sets(X: GraphBatch, k: int) -> np.ndarray:
    """All node sets of size ``k`` inducing a connected subgraph, as sorted rows of global
    node ids ``(R, k)`` (grown from single nodes by adding a neighbour, deduplicated)."""
    n = int(X.node_ptr[-1])
    deg = np.diff(X.adj_ptr)
    width = max(int(deg.max(initial=0)), 1)
    nbr = np.full((n + 1, width), -1, dtype=np.int64)
    rows = np.repeat(np.arange(n), deg)
    nbr[rows, np.arange(len(X.adj_idx)) - X.adj_ptr[rows]] = X.adj_idx
    S = np.arange(n, dtype=np.int64)[:, None]
    for s in range(1, k):
        cand = nbr[S].reshape(len(S), s * width)
        ok = (cand >= 0) & ~(cand[:, :, None] == S[:, None, :]).any(-1)
        r, c = np.nonzero(ok)
        grown = np.concatenate([S[r], cand[r, c][:, None]], axis=1)
        grown.sort(axis=1)
        S = np.unique(grown, axis=0) if len(grown) else np.zeros((0, s + 1), dtype=np.int64)
    return S


def _graph_seeds(X: GraphBatch) -> np.ndarray:
    """A 64-bit hash per graph of its size and its numbered edge list."""
    gi = X.graph_index
    src = np.repeat(np.arange(int(X.node_ptr[-1])), np.diff(X.adj_ptr))
    local_u, local_v = src - X.node_ptr[gi[src]], X.adj_idx - X.node_ptr[gi[src]]
    seeds = mix64(X.n_nodes.astype(np.uint64))
    with np.errstate(over="ignore"):
        np.add.at(seeds, gi[src], mix64(hash_combine(local_u, local_v)))
    return seeds


class GraphletSampling(_GraphKernel):
    r"""Graphlet kernel: dot product of graphlet counts, all connected ones or sampled ones.

    Shervashidze et al., AISTATS 2009, section 2, eq. (1) and section 3 (GraKeL's
    ``GraphletSampling``).  With :math:`f_G(c)` the number of (enumerated or sampled) node
    sets of :math:`G` whose induced subgraph lies in the isomorphism class :math:`c`,

    .. math:: k(G, G') = \sum_c f_G(c)\, f_{G'}(c)

    (unnormalised counts, as GraKeL; ``k.normalized()`` is GraKeL's ``normalize=True``).

    * ``sampling=None``: :math:`f_G(c)` counts all node sets of size exactly ``k`` inducing
      a *connected* subgraph of class :math:`c` (exact enumeration, as GraKeL's ``ConSubg``).
    * ``sampling={"n_samples": N}``: :math:`N` draws per graph of a size
      :math:`s` uniform in :math:`\{\min(3, n), .., \min(k, n)\}` and of :math:`s` distinct
      nodes uniformly at random; every induced subgraph (connected or not) is counted, so
      :math:`E f_G(c) = N \sum_s P(s) \, \#\{S : |S| = s, G[S] \in c\} / \binom{n}{s}`.
      ``{"delta": δ, "epsilon": ε, "a": a}`` sets :math:`N = \lceil 2 (a \log_{10} 2 +
      \log_{10}(1/δ)) / ε^2 \rceil` (their Theorem 1 as GraKeL writes it; ``a=-1``: the
      number of classes of size ``k``).

    Each graph's draws come from a generator seeded by ``random_state`` and the graph
    (its size and numbered edge list), so a graph gets the same features in every batch.
    The classes are those of the unlabelled graphs (node labels are not used, as in GraKeL).

    GraKeL 0.1.11 adds 1 to a count the first time a graph meets a class that an earlier
    graph (or itself, earlier) opened (``local_values[(i, k)] = 1`` then ``+= 1``), so its
    Gram is that of the counts plus these ones; the tests rebuild it from this kernel's
    counts exactly.

    Parameters
    ----------
    k : int
        Graphlet size, 3 to 5 (GraKeL's ``k``).
    sampling : dict or None
        ``None`` (exact connected graphlets of size ``k``), ``{"n_samples": N}`` or
        ``{"delta", "epsilon", "a"}`` (GraKeL's ``sampling``).
    random_state : int
        Seed of the sampling (GraKeL's ``random_state``).
    """

    def __init__(self, k: int = 5, *, sampling: dict | None = None, random_state: int = 0):
        super().__init__()
        self.k = check_int(k, name="k", minimum=3)
        if self.k > MAX_GRAPHLET_SIZE:
            raise InputError(f"k: expected an integer in [3, {MAX_GRAPHLET_SIZE}], got {k!r}")
        self.sampling = sampling
        self.n_samples_ = self._n_samples(sampling)
        self.random_state = check_int(random_state, name="random_state", minimum=0)
        self.node_label = None
        self.edge_label = None

    def _n_samples(self, sampling: Any) -> int | None:
        if sampling is None:
            return None
        if not isinstance(sampling, dict):
            raise InputError(f"sampling: expected None or a dict, got {sampling!r}")
        if "n_samples" in sampling:
            return check_int(sampling["n_samples"], name="sampling['n_samples']", minimum=1)
        if not {"delta", "epsilon", "a"} & set(sampling):
            raise InputError(
                "sampling: expected the key 'n_samples' or some of 'delta', 'epsilon', 'a', "
                f"got {sorted(sampling)}"
            )
        delta, eps = sampling.get("delta", 0.05), sampling.get("epsilon", 0.05)
        for name, value in (("delta", delta), ("epsilon", eps)):
            if not isinstance(value, (int, float)) or not 0 < value < 1:
                raise InputError(f"sampling['{name}']: expected a number in (0, 1), got {value!r}")
        a = sampling.get("a", -1)
        if not isinstance(a, int) or a == 0 or a < -1:
            raise InputError(f"sampling['a']: expected a positive integer or -1, got {a!r}")
        a = _N_CLASSES[self.k] if a == -1 else a
        return math.ceil(2 * (a * np.log10(2) + np.log10(1 / delta)) / eps**2)

    def _sampled_sets(self, X: GraphBatch) -> dict[int, list[np.ndarray]]:
        """Sampled node sets per size ``s``: rows of global node ids."""
        by_size: dict[int, list[np.ndarray]] = {}
        seeds = _graph_seeds(X)
        N = self.n_samples_
        for g in range(len(X)):
            n = int(X.n_nodes[g])
            if n == 0:
                continue
            rng = np.random.default_rng([self.random_state, int(seeds[g])])
            lo, hi = min(3, n), min(self.k, n)
            sizes = rng.integers(lo, hi + 1, size=N)
            nodes = np.argsort(rng.random((N, n)), axis=1)[:, :hi] + X.node_ptr[g]
            for s in range(lo, hi + 1):
                by_size.setdefault(s, []).append(nodes[sizes == s, :s])
        return by_size

    def features(self, X: GraphBatch) -> SparseFeatures:
        """Counts of the graphlet classes per graph (keys: hash of size and canonical mask)."""
        if self.n_samples_ is None:
            sets = {self.k: [connected_node_sets(X, self.k)]}
        else:
            sets = self._sampled_sets(X)
        edge_keys = _edge_keys(X)
        gid, keys = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
        for s, parts in sets.items():
            S = np.concatenate(parts)
            _, _, permuted = small_graph_tables(s)
            mask, _ = induced_masks(X, S, edge_keys)
            canon = permuted.min(1)[mask]
            gid.append(X.graph_index[S[:, 0]])
            keys.append(hash_combine(np.full(len(S), s), canon).view(np.int64))
        return count_features(np.concatenate(gid), np.concatenate(keys), len(X))

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        X, Y = example_graphs()
        return [(cls(3), X, Y), (cls(4, sampling={"n_samples": 20}, random_state=1), X, Y)]
