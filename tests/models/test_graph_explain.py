"""GraphCKNClassifier.explain: the minimal connected subgraph that keeps the prediction
(course part 3, section 9), against a brute-force enumeration of all node subsets and a
planted motif."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from kernelkit import GraphCKNClassifier, config_context
from kernelkit.models._graph_explain import grow_connected_sets
from kernelkit.utils._errors import InputError

nx = pytest.importorskip("networkx")
pytest.importorskip("matplotlib")


@pytest.fixture(autouse=True)
def _one_thread(one_torch_thread):
    """Tiny problems: one torch thread."""


def _labelled(graph, labels):
    for v, lab in zip(graph.nodes, labels, strict=True):
        graph.nodes[v]["label"] = int(lab)
    return graph


def _connected_subsets(graph):
    """Every node subset inducing a connected subgraph, by brute force over all subsets."""
    nodes = list(graph.nodes)
    return [
        frozenset(c)
        for r in range(1, len(nodes) + 1)
        for c in itertools.combinations(nodes, r)
        if nx.is_connected(graph.subgraph(c))
    ]


def test_grown_sets_are_the_connected_subsets():
    graph = nx.Graph([(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 5), (1, 5), (5, 6)])
    brute = _connected_subsets(graph)
    sets = [frozenset()]
    for size in range(1, 8):
        sets = grow_connected_sets(graph, sets)
        assert sorted(map(sorted, sets)) == sorted(sorted(s) for s in brute if len(s) == size)


def _rings_and_chains(n=30):
    rng = np.random.default_rng(0)
    graphs, y = [], []
    for i in range(n):
        ring = i % 2 == 0
        g = nx.cycle_graph(int(rng.integers(4, 8))) if ring else nx.path_graph(6)
        graphs.append(_labelled(g, rng.integers(2, size=g.number_of_nodes())))
        y.append(int(ring))
    return graphs, y


@pytest.fixture(scope="module")
def rings_model():
    graphs, y = _rings_and_chains()
    return GraphCKNClassifier((8, 4), (2, 0), sigma=0.5, lam=1e-3, random_state=0).fit(graphs, y)


def _margin(clf, graphs, target):
    d = np.asarray(clf.decision_function(graphs), dtype=float)
    return d if target == clf.classes_[1] else -d


@pytest.mark.parametrize("seed", range(3))
def test_explanation_is_the_brute_force_minimum(rings_model, seed):
    rng = np.random.default_rng(seed)
    graph = nx.cycle_graph(6) if seed != 1 else nx.path_graph(6)
    graph.add_edge(0, 6)
    graph = _labelled(graph, rng.integers(2, size=7))
    target = rings_model.predict([graph])[0]
    nodes, figure = rings_model.explain(graph)
    subsets = _connected_subsets(graph)
    keep = [s for s in subsets if rings_model.predict([graph.subgraph(s).copy()])[0] == target]
    size = min(len(s) for s in keep)
    best = [s for s in keep if len(s) == size]
    margins = _margin(rings_model, [graph.subgraph(s).copy() for s in best], target)
    assert nodes == set(best[int(np.argmax(margins))])
    assert figure.axes and "prediction" in figure.axes[0].get_title()


def _motif_data(n=60, seed=0):
    """Background trees of label-0 nodes; class 1 carries the path 1-2-3, class 0 one of its
    proper connected fragments; a third of the graphs are the motif or fragment alone."""
    rng = np.random.default_rng(seed)
    fragments = [(1,), (2,), (3,), (1, 2), (2, 3)]
    graphs, y = [], []
    for i in range(n):
        labels = (1, 2, 3) if i % 2 else fragments[(i // 2) % len(fragments)]
        size = 0 if i % 3 == 0 else int(rng.integers(4, 8))
        g = nx.random_labeled_tree(size, seed=int(rng.integers(1 << 30))) if size else nx.Graph()
        g = _labelled(g, [0] * size)
        first = size
        for j, lab in enumerate(labels):
            g.add_node(first + j, label=lab)
            if j:
                g.add_edge(first + j - 1, first + j)
        if size:
            g.add_edge(int(rng.integers(size)), first + int(rng.integers(len(labels))))
        graphs.append(g)
        y.append(i % 2)
    return graphs, y


def test_a_planted_motif_is_in_the_explanation():
    graphs, y = _motif_data()
    clf = GraphCKNClassifier((16, 8), (2, 0), sigma=0.5, lam=1e-4, random_state=0)
    clf.fit(graphs, y)
    tests, ty = _motif_data(20, seed=1)
    explained = 0
    for g, label in zip(tests, ty, strict=True):
        if label != 1 or g.number_of_nodes() == 3:
            continue
        assert clf.predict([g])[0] == 1
        nodes, _ = clf.explain(g)
        motif = {v for v, d in g.nodes(data=True) if d["label"] > 0}
        assert motif <= nodes
        assert clf.predict([g.subgraph(nodes).copy()])[0] == 1
        explained += 1
    assert explained >= 5


def test_pruning_beyond_the_cap_is_minimal_for_single_removals(rings_model):
    graph = _labelled(nx.cycle_graph(7), [0, 1, 1, 0, 1, 0, 0])
    target = rings_model.predict([graph])[0]
    with config_context(explain_max_subgraphs=1):
        nodes, _ = rings_model.explain(graph)
    assert nx.is_connected(graph.subgraph(nodes))
    assert rings_model.predict([graph.subgraph(nodes).copy()])[0] == target
    for v in nodes:
        rest = nodes - {v}
        if rest and nx.is_connected(graph.subgraph(rest)):
            assert rings_model.predict([graph.subgraph(rest).copy()])[0] != target


def test_bad_graphs_are_refused_by_name(rings_model):
    with pytest.raises(InputError, match="graph"):
        rings_model.explain(np.zeros((3, 2)))
    two = _labelled(nx.Graph([(0, 1), (2, 3)]), [0, 1, 0, 1])
    with pytest.raises(InputError, match="graph"):
        rings_model.explain(two)
