"""GraphBatch (issue 3): construction from networkx and edge lists, deterministic label codes,
indexing against a per-graph rebuild, and bad input."""

from __future__ import annotations

import hashlib

import networkx as nx
import numpy as np
import pytest

from kernelkit.data._graphs import GraphBatch, as_graph_batch, label_codes
from kernelkit.utils._errors import InputError


def labelled(n: int, seed: int) -> nx.Graph:
    g = nx.gnp_random_graph(n, 0.4, seed=seed)
    for v in g.nodes:
        g.nodes[v]["label"] = "XYZ"[v % 3]
    for k, (u, v) in enumerate(g.edges):
        g.edges[u, v]["bond"] = k % 2
    return g


GRAPHS = [labelled(n, s) for s, n in enumerate([5, 1, 7, 3, 6, 4])]


def test_label_codes_are_blake2b_of_str():
    expected = int.from_bytes(hashlib.blake2b(b"C", digest_size=8).digest(), "little", signed=True)
    np.testing.assert_array_equal(label_codes(["C", "C"]), [expected, expected])
    assert label_codes([1])[0] == label_codes(["1"])[0]
    assert label_codes(["C"])[0] != label_codes(["N"])[0]


def blake(value: object) -> int:
    digest = hashlib.blake2b(str(value).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


@pytest.mark.parametrize(
    "values", [["C", "N", "C", ""], [3, 1, 3], [1, 1.0, True, "1", np.int64(1), (1, 2), -0.0, 0.0]]
)
def test_label_codes_equal_one_hash_per_value(values):
    np.testing.assert_array_equal(label_codes(values), [blake(v) for v in values])


def test_from_networkx_reads_views_self_loops_and_named_nodes():
    g = nx.Graph()
    g.add_nodes_from([("b", {"label": "B"}), ("a", {"label": 2}), ("c", {"label": "B"})])
    g.add_edges_from(
        [("a", "b", {"bond": 1}), ("c", "c", {"bond": "loop"}), ("c", "a", {"bond": 2})]
    )
    view = GRAPHS[2].subgraph([6, 0, 3, 4])
    batch = GraphBatch.from_networkx([g, view], node_label="label", edge_label="bond")
    for i, h in enumerate([g, view]):
        order = list(h.nodes)
        np.testing.assert_array_equal(batch.adjacency(i).toarray(), nx.to_numpy_array(h, order))
        a = batch.node_ptr[i]
        np.testing.assert_array_equal(
            batch.node_labels[a : a + len(order)], [blake(h.nodes[v]["label"]) for v in order]
        )
        for v in range(a, batch.node_ptr[i + 1]):  # edge labels by brute force over h.edges
            for e in range(batch.adj_ptr[v], batch.adj_ptr[v + 1]):
                u = order[batch.adj_idx[e] - a]
                assert batch.edge_labels[e] == blake(h.edges[order[v - a], u]["bond"])


def test_from_networkx_matches_adjacency_and_labels():
    batch = GraphBatch.from_networkx(GRAPHS, edge_label="bond")
    assert len(batch) == len(GRAPHS)
    np.testing.assert_array_equal(batch.n_nodes, [g.number_of_nodes() for g in GRAPHS])
    np.testing.assert_array_equal(batch.n_edges, [g.number_of_edges() for g in GRAPHS])
    for i, g in enumerate(GRAPHS):
        expected = nx.to_numpy_array(g, nodelist=list(g.nodes))
        np.testing.assert_array_equal(batch.adjacency(i).toarray(), expected)
        a = batch.node_ptr[i]
        np.testing.assert_array_equal(
            batch.node_labels[a : a + g.number_of_nodes()],
            label_codes([g.nodes[v]["label"] for v in g.nodes]),
        )
        back = batch.to_networkx(i)
        assert nx.is_isomorphic(back, g)


def test_edge_lists_equal_networkx():
    edges = [list(g.edges) for g in GRAPHS]
    labels = [[g.nodes[v]["label"] for v in sorted(g.nodes)] for g in GRAPHS]
    bonds = [[g.edges[e]["bond"] for e in g.edges] for g in GRAPHS]
    a = GraphBatch.from_edge_lists(edges, node_labels=labels, edge_labels=bonds)
    b = GraphBatch.from_networkx(GRAPHS, edge_label="bond")
    for name in ("node_ptr", "adj_ptr", "adj_idx", "node_labels", "edge_labels"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))


@pytest.mark.parametrize("idx", [slice(1, 4), np.array([4, 0, 4]), 2, -1, [5, 1]])
def test_indexing_equals_rebuilding(idx):
    batch = GraphBatch.from_networkx(GRAPHS, edge_label="bond")
    rows = np.atleast_1d(np.arange(len(GRAPHS))[idx if not isinstance(idx, int) else [idx]])
    expected = GraphBatch.from_networkx([GRAPHS[i] for i in rows], edge_label="bond")
    got = batch[idx]
    for name in ("node_ptr", "adj_ptr", "adj_idx", "node_labels", "edge_labels"):
        np.testing.assert_array_equal(getattr(got, name), getattr(expected, name))


def test_errors_name_graph_and_attribute():
    g = nx.path_graph(3)
    with pytest.raises(InputError, match=r"X\[0\]: node 0 has no attribute 'label'"):
        GraphBatch.from_networkx([g])
    with pytest.raises(InputError, match=r"X\[1\]: expected a networkx graph, got str"):
        GraphBatch.from_networkx([GRAPHS[0], "G"])
    with pytest.raises(InputError, match=r"X\[0\]: edge \(0, 1\) has no attribute 'w'"):
        GraphBatch.from_networkx([g], node_label=None, edge_label="w")
    with pytest.raises(InputError, match=r"X\[0\]: graph has no nodes"):
        as_graph_batch([nx.Graph()], node_label=None)
    assert len(as_graph_batch([nx.Graph()], node_label=None, allow_empty_graphs=True)) == 1
    with pytest.raises(InputError, match="expected a list of networkx graphs"):
        as_graph_batch(nx.path_graph(2))
    with pytest.raises(InputError, match=r"X\[0\]: edge endpoints must lie in \[0, 2\)"):
        GraphBatch.from_edge_lists([[(0, 2)]], n_nodes=[2])
    with pytest.raises(InputError, match="duplicate edges"):
        GraphBatch.from_edge_lists([[(0, 1), (1, 0)]])
    with pytest.raises(InputError, match=r"X\[0\]: expected 3 node labels, got 2"):
        GraphBatch.from_edge_lists([[(0, 1)]], n_nodes=[3], node_labels=[["a", "b"]])
