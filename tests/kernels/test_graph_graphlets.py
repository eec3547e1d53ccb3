"""Graphlet kernel (issue 29): exact connected graphlets equal a networkx brute force (all
node subsets, VF2 isomorphism classes) on the molecular graphs; GraKeL 0.1.11's exact Gram
differs (its ConSubg misses connected sets, its counts add 1 per class met); the sampled
counts of kernelkit and of GraKeL both match the exact expectation within a z-bound;
features reproduce the Gram; conformance."""

from __future__ import annotations

import itertools
import math
import warnings

import networkx as nx
import numpy as np
import pytest

from kernelkit.data._graphs import hash_combine
from kernelkit.kernels._features import sparse_feature_gram
from kernelkit.kernels._graph_graphlets import (
    GraphletSampling,
    connected_node_sets,
    induced_masks,
    small_graph_tables,
)
from kernelkit.testing import check_kernel
from kernelkit.utils._errors import InputError

from .test_graphs import random_graphs


def _find_class(h, reps):
    """Index of the representative isomorphic to h (VF2), None if none is."""
    for c, r in enumerate(reps):
        if len(r) == len(h) and r.number_of_edges() == h.number_of_edges():
            if nx.is_isomorphic(r, h):
                return c
    return None


def _class_counts(graphs, sizes, connected_only):
    """Brute force: every node subset of the given sizes, classified by VF2 against
    representatives; returns counts (n_graphs, n_classes) and the representatives."""
    reps: list[nx.Graph] = []
    rows = []
    for g in graphs:
        counts: dict[int, int] = {}
        for s in sizes:
            for nodes in itertools.combinations(g.nodes, s):
                h = nx.Graph(g.subgraph(nodes).edges)
                h.add_nodes_from(nodes)
                if connected_only and not nx.is_connected(h):
                    continue
                c = _find_class(h, reps)
                if c is None:
                    c = len(reps)
                    reps.append(h)
                counts[c] = counts.get(c, 0) + 1
        rows.append(counts)
    C = np.zeros((len(graphs), len(reps)))
    for i, counts in enumerate(rows):
        for c, v in counts.items():
            C[i, c] = v
    return C, reps


@pytest.mark.parametrize("k", [3, pytest.param(4, marks=pytest.mark.slow), 5])
def test_exact_equals_brute_force_on_molecular_graphs(molecular_graphs, k):
    graphs = molecular_graphs if k < 5 else molecular_graphs[:60]
    C, _ = _class_counts(graphs, [k], connected_only=True)
    kernel = GraphletSampling(k)
    np.testing.assert_allclose(kernel(graphs).numpy(), C @ C.T, rtol=0, atol=1e-8)
    F = kernel.features(kernel.prepare(graphs))
    np.testing.assert_allclose(sparse_feature_gram(F, F).numpy(), C @ C.T, rtol=0, atol=1e-10)


def test_connected_sets_on_random_graphs():
    graphs = random_graphs(12, 5, max_nodes=9)
    kernel = GraphletSampling(4)
    batch = kernel.prepare(graphs)
    S = connected_node_sets(batch, 4)
    for i, g in enumerate(graphs):
        a = int(batch.node_ptr[i])
        mine = {tuple(r - a) for r in S if batch.node_ptr[i] <= r[0] < batch.node_ptr[i + 1]}
        expected = {
            tuple(sorted(c))
            for c in itertools.combinations(range(len(g)), 4)
            if nx.is_connected(g.subgraph([list(g)[j] for j in c]))
        }
        assert mine == expected


def test_grakel_exact_enumeration_misses_connected_sets():
    """Why GraKeL's exact Gram is not the oracle: its ConSubg finds 4 of the 5 connected
    3-node sets of a 5-cycle, and a count starts at 2 when a graph meets a known class."""
    pytest.importorskip("grakel")
    from grakel.kernels.graphlet_sampling import ConSubg

    G = {i: {(i - 1) % 5, (i + 1) % 5} for i in range(5)}
    assert len(list(ConSubg(G, 3, True))) == 4
    assert GraphletSampling(3)([nx.cycle_graph(5)]).item() == 25


def _expected_sampled(graphs, k, n_samples):
    """E[count] of each class: N sum_s P(s) #{S: |S| = s, G[S] in c} / C(n, s)."""
    sizes = range(1, k + 1)  # graphs of 1 or 2 nodes give samples of their size
    C, reps = _class_counts(graphs, sizes, connected_only=False)
    E = np.zeros_like(C)
    for i, g in enumerate(graphs):
        n = len(g)
        lo, hi = min(3, n), min(k, n)
        for c, r in enumerate(reps):
            if lo <= len(r) <= hi:
                E[i, c] = n_samples * C[i, c] / math.comb(n, len(r)) / (hi - lo + 1)
    return E, reps


def _z_scores(counts, E, n_samples):
    """Counts of N draws with success probability p = E / N: (count - E) / sqrt(N p (1-p))."""
    p = E / n_samples
    sd = np.sqrt(n_samples * p * (1 - p))
    ok = sd > 0
    assert np.array_equal(counts[~ok], E[~ok])  # certain classes are always drawn, or never
    return (counts[ok] - E[ok]) / sd[ok]


def _key(h):
    """kernelkit's key of the class of a whole small graph."""
    batch = GraphletSampling(3).prepare([h])
    mask, _ = induced_masks(batch, np.arange(len(h))[None, :])
    canon = small_graph_tables(len(h))[2].min(1)[mask]
    return int(hash_combine(np.array([len(h)]), canon).view(np.int64)[0])


def test_sampled_counts_match_expectation_for_both_samplers():
    """z = (count - E) / sd over all (graph, class) cells with a non-degenerate variance:
    |z| < 5 for every cell and the mean z within 5 / sqrt(cells), kernelkit and GraKeL."""
    graphs = random_graphs(15, 21, max_nodes=9)
    k, N = 5, 3000
    E, reps = _expected_sampled(graphs, k, N)
    kernel = GraphletSampling(k, sampling={"n_samples": N}, random_state=3)
    F = kernel.features(kernel.prepare(graphs))
    keys = [_key(h) for h in reps]
    assert len(set(keys)) == len(keys)  # VF2's classes get distinct keys
    order = np.argsort(keys)
    ours = np.zeros_like(E)
    ours[:, order] = F.to_csr(np.array(keys)[order]).toarray()
    assert ours.sum() == N * sum(len(g) > 0 for g in graphs)  # no key outside the classes
    z = _z_scores(ours, E, N)
    assert np.abs(z).max() < 5
    assert abs(z.mean()) < 5 / np.sqrt(len(z))

    grakel = pytest.importorskip("grakel")
    from grakel.kernels import GraphletSampling as GrakelGraphlets

    theirs = GrakelGraphlets(k=k, sampling={"n_samples": N}, random_state=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs.fit_transform(grakel.graph_from_networkx(graphs, node_labels_tag="label"))
    P = theirs._phi_X.copy()
    first = np.argmax(P > 0, axis=0)
    P -= (P > 0) & (np.arange(len(graphs))[:, None] != first[None, :])  # GraKeL's +1
    counts = np.zeros_like(E)
    for b, sg in theirs._graph_bins.items():
        h = nx.Graph()
        h.add_nodes_from(sg._vertices)
        h.add_edges_from((u, w.name) for u, v in sg._vertices.items() for w in v.edges)
        c = _find_class(h, reps)
        assert c is not None  # GraKeL's bins are among the exact enumeration's classes
        counts[:, c] += P[:, b]
    z = _z_scores(counts, E, N)
    assert np.abs(z).max() < 5
    assert abs(z.mean()) < 5 / np.sqrt(len(z))


def test_sampling_is_per_graph_and_reproducible(molecular_graphs):
    kernel = GraphletSampling(4, sampling={"n_samples": 50}, random_state=7)
    K = kernel(molecular_graphs[:40]).numpy()
    K_part = kernel(molecular_graphs[10:20], molecular_graphs[:40]).numpy()
    np.testing.assert_array_equal(K_part, K[10:20])
    other = GraphletSampling(4, sampling={"n_samples": 50}, random_state=8)(molecular_graphs[:40])
    assert not np.array_equal(other.numpy(), K)
    F = kernel.features(kernel.prepare(molecular_graphs))
    np.testing.assert_allclose(
        sparse_feature_gram(F, F).numpy(), kernel(molecular_graphs).numpy(), atol=1e-10
    )


def test_n_samples_from_delta_epsilon():
    k = GraphletSampling(5, sampling={"delta": 0.1, "epsilon": 0.1})
    assert k.n_samples_ == math.ceil(2 * (19 * np.log10(2) + np.log10(10)) / 0.01)
    assert GraphletSampling(3, sampling={"a": 2}).n_samples_ == math.ceil(
        2 * (2 * np.log10(2) + np.log10(20)) / 0.05**2
    )


@pytest.mark.parametrize(
    "kernel",
    [GraphletSampling(3), GraphletSampling(5), GraphletSampling(4, sampling={"n_samples": 30})],
    ids=repr,
)
def test_check_kernel(kernel, molecular_graphs):
    check_kernel(kernel, molecular_graphs[:30], molecular_graphs[30:40])


def test_parameter_errors():
    with pytest.raises(InputError, match="k"):
        GraphletSampling(6)
    with pytest.raises(InputError, match="k"):
        GraphletSampling(2)
    with pytest.raises(InputError, match="sampling"):
        GraphletSampling(sampling=10)
    with pytest.raises(InputError, match="n_samples"):
        GraphletSampling(sampling={"n_samples": 0})
    with pytest.raises(InputError, match="delta"):
        GraphletSampling(sampling={"delta": 2.0})
    with pytest.raises(InputError, match="'a'"):
        GraphletSampling(sampling={"a": -3})
    with pytest.raises(InputError, match="sampling"):
        GraphletSampling(sampling={"samples": 3})
