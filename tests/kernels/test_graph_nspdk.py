"""NSPDK (issue 29): brute-force transcription of the invariant with nested tuples (no
hashing), invariance under renumbering, the invariant against rooted-subgraph isomorphism on
molecular graphs, features, conformance."""

from __future__ import annotations

import itertools
from collections import Counter

import networkx as nx
import numpy as np
import pytest

from kernelkit.kernels._features import sparse_feature_gram
from kernelkit.kernels._graph_nspdk import NeighborhoodSubgraphPairwiseDistance as NSPDK
from kernelkit.testing import check_kernel
from kernelkit.utils._errors import InputError

from .test_graphs import random_graphs


def _canonical(g, dist, root, r, edge_labels):
    ball = [w for w in g if dist[root].get(w, np.inf) <= r]
    node = {
        w: (dist[root][w], tuple(sorted((dist[w][x], g.nodes[x]["label"]) for x in ball)))
        for w in ball
    }
    edges = sorted(
        (*sorted((node[a], node[b])), g.edges[a, b]["label"] if edge_labels else None)
        for a, b in g.subgraph(ball).edges
    )
    return tuple(sorted(node.values())), tuple(edges)


def _brute_force(graphs, R, D, edge_labels=True):
    feats = []
    for g in graphs:
        dist = dict(nx.all_pairs_shortest_path_length(g))
        canon = {(r, v): _canonical(g, dist, v, r, edge_labels) for r in range(R + 1) for v in g}
        blocks = {}
        for u, v in itertools.product(g, g):
            d = dist[u].get(v)
            if d is not None and d <= D:
                for r in range(R + 1):
                    blocks.setdefault((r, d), Counter())[(canon[r, u], canon[r, v])] += 1
        feats.append(blocks)
    K = np.zeros((len(graphs), len(graphs)))
    for i, j in itertools.product(range(len(graphs)), repeat=2):
        for block, a in feats[i].items():
            b = feats[j].get(block)
            if b:
                dot = sum(c * b.get(key, 0) for key, c in a.items())
                norm = np.sqrt(sum(c * c for c in a.values()) * sum(c * c for c in b.values()))
                K[i, j] += dot / norm
    return K


@pytest.mark.parametrize(("R", "D", "edges"), [(1, 2, True), (2, 3, False), (3, 4, True)])
def test_equals_brute_force(R, D, edges):
    graphs = random_graphs(14, 21, max_nodes=9, edge_labels=True)
    k = NSPDK(R, D, edge_label="label" if edges else None)
    np.testing.assert_allclose(k(graphs).numpy(), _brute_force(graphs, R, D, edges), atol=1e-10)


def test_equals_brute_force_on_molecular_graphs(molecular_graphs):
    graphs = molecular_graphs[:40]
    np.testing.assert_allclose(NSPDK(2, 3)(graphs).numpy(), _brute_force(graphs, 2, 3), atol=1e-10)


def test_renumbering_invariance(molecular_graphs):
    rng = np.random.default_rng(0)
    k = NSPDK()
    for g in molecular_graphs[:20]:
        perm = rng.permutation(len(g))
        h = nx.relabel_nodes(g, {v: int(perm[i]) for i, v in enumerate(g)})
        K = k([g, h]).numpy()
        assert K[0, 1] == pytest.approx(K[0, 0], rel=1e-12)


def test_invariant_against_rooted_isomorphism(molecular_graphs):
    """Equal rooted hashes => isomorphic rooted neighbourhoods (labels, bond types, root); and
    isomorphic neighbourhoods whose whole-graph distances are their own => equal hashes."""
    k = NSPDK(2, 0)
    graphs = molecular_graphs[:40]
    batch = k.prepare(graphs)
    balls, hashes, geodesic = [], [], []
    for i, g in enumerate(graphs):
        H, _ = k.rooted_hashes(batch, np.array([i]))
        dist = dict(nx.all_pairs_shortest_path_length(g))
        for j, v in enumerate(g):
            ball = nx.ego_graph(g, v, radius=2).copy()
            ball.nodes[v]["root"] = True
            inner = dict(nx.all_pairs_shortest_path_length(ball))
            geodesic.append(all(inner[a][b] == dist[a][b] for a in ball for b in ball))
            balls.append(ball)
            hashes.append(int(H[2, 0, j]))
    match = nx.algorithms.isomorphism.categorical_node_match(["label", "root"], [None, False])
    edge = nx.algorithms.isomorphism.categorical_edge_match("label", None)
    rng = np.random.default_rng(1)
    pairs = [tuple(p) for p in rng.integers(len(balls), size=(300, 2))]
    by_hash = {}
    for j, h in enumerate(hashes):
        by_hash.setdefault(h, []).append(j)
    pairs += [(m[0], m[-1]) for m in by_hash.values() if len(m) > 1][:300]
    for a, b in pairs:
        iso = nx.is_isomorphic(balls[a], balls[b], node_match=match, edge_match=edge)
        if hashes[a] == hashes[b]:
            assert iso
        elif geodesic[a] and geodesic[b]:
            assert not iso


def test_features_check_kernel_and_errors(molecular_graphs):
    k = NSPDK()
    F = k.features(k.prepare(molecular_graphs))
    np.testing.assert_allclose(
        sparse_feature_gram(F, F).numpy(), k(molecular_graphs).numpy(), atol=1e-10
    )
    check_kernel(k, molecular_graphs[:30], molecular_graphs[30:36])
    with pytest.raises(InputError, match="r"):
        NSPDK(-1)
    with pytest.raises(InputError, match=r"X\[0\]: edge .* has no attribute 'label'"):
        NSPDK(node_label=None)([nx.path_graph(3)])
