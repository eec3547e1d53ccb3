"""Graph kernels (issue 3): WL and shortest path against GraKeL, random walk against the closed
form on the explicit product graph and the course's test values, bad input."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
import scipy.linalg as sla
import torch

from kernelkit.data._graphs import GraphBatch
from kernelkit.kernels._features import sparse_feature_gram
from kernelkit.kernels._graphs import ShortestPath, WeisfeilerLehman
from kernelkit.kernels._random_walk import RandomWalk
from kernelkit.testing import check_kernel
from kernelkit.utils._errors import InputError


def random_graphs(n: int, seed: int, *, max_nodes: int = 10, edge_labels: bool = False):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        k = int(rng.integers(1, max_nodes + 1))
        g = nx.gnp_random_graph(k, 0.35, seed=int(rng.integers(2**31)))
        for v in g.nodes:
            g.nodes[v]["label"] = "ABC"[int(rng.integers(3))]
        if edge_labels:
            for u, v in g.edges:
                g.edges[u, v]["label"] = int(rng.integers(2))
        out.append(g)
    return out


GRAPHS = random_graphs(40, 0)


def grakel_graphs(graphs):
    grakel = pytest.importorskip("grakel")
    return list(grakel.graph_from_networkx(graphs, node_labels_tag="label"))


# ---------------------------------------------------------------------- Weisfeiler-Lehman
@pytest.mark.parametrize("n_iter", [1, 2, 4])
def test_wl_equals_grakel(n_iter):
    from grakel.kernels import VertexHistogram
    from grakel.kernels import WeisfeilerLehman as GWL

    expected = GWL(n_iter=n_iter, base_graph_kernel=VertexHistogram).fit_transform(
        grakel_graphs(GRAPHS)
    )
    K = WeisfeilerLehman(n_iter)(GRAPHS).numpy()
    np.testing.assert_allclose(K, expected, rtol=0, atol=1e-9)


def test_wl_zero_iterations_is_vertex_histogram():
    from grakel.kernels import VertexHistogram

    expected = VertexHistogram().fit_transform(grakel_graphs(GRAPHS))
    np.testing.assert_allclose(WeisfeilerLehman(0)(GRAPHS).numpy(), expected, atol=1e-9)


def test_wl_cross_block_equals_grakel_transform():
    from grakel.kernels import VertexHistogram
    from grakel.kernels import WeisfeilerLehman as GWL

    gk = GWL(n_iter=3, base_graph_kernel=VertexHistogram)
    gk.fit(grakel_graphs(GRAPHS[:25]))
    expected = gk.transform(grakel_graphs(GRAPHS[25:]))
    K = WeisfeilerLehman(3)(GRAPHS[25:], GRAPHS[:25]).numpy()
    np.testing.assert_allclose(K, expected, atol=1e-9)


def _course_wl_graphs():
    """Course part 2, section 4: the two graphs reconstructed to reproduce the slide."""

    def make(labels, edges):
        g = nx.Graph()
        for v, lab in enumerate(labels):
            g.add_node(v, label=lab)
        g.add_edges_from(edges)
        return g

    # G: labels 1,1,2,3,4,5 (nodes 0..5), edges 1a-4, 1b-4, 2-3, 2-5, 3-4, 3-5, 4-5
    G = make([1, 1, 2, 3, 4, 5], [(0, 4), (1, 4), (2, 3), (2, 5), (3, 4), (3, 5), (4, 5)])
    # G': labels 1,2,2,3,4,5, edges 1-4, 2a-3, 2b-4, 2b-5, 3-4, 3-5, 4-5
    H = make([1, 2, 2, 3, 4, 5], [(0, 4), (1, 3), (2, 4), (2, 5), (3, 4), (3, 5), (4, 5)])
    return [G, H]


@pytest.mark.parametrize("n_iter", [1, 2, 3])
def test_wl_course_values(n_iter):
    K = WeisfeilerLehman(n_iter)(_course_wl_graphs()).numpy()
    assert K[0, 1] == 11  # 7 from h = 0 plus 4, and stays 11 for h = 2, 3
    if n_iter == 1:
        assert K[0, 0] == 16 and K[1, 1] == 14


def test_wl_features_independent_batches_agree():
    k = WeisfeilerLehman(3)
    F_all = k.features(k.prepare(GRAPHS))
    F_a, F_b = k.features(k.prepare(GRAPHS[:15])), k.features(k.prepare(GRAPHS[15:]))
    np.testing.assert_allclose(
        sparse_feature_gram(F_a, F_b).numpy(), sparse_feature_gram(F_all, F_all)[:15, 15:].numpy()
    )


def test_wl_edge_labels_change_the_kernel_and_stay_psd():
    graphs = random_graphs(20, 3, edge_labels=True)
    K_plain = WeisfeilerLehman(2)(graphs)
    K_edge = WeisfeilerLehman(2, edge_label="label")(graphs)
    assert not torch.allclose(K_plain, K_edge)
    # iteration 0 features do not depend on edges; edge-aware relabelling only refines
    assert bool((K_edge <= K_plain + 1e-9).all())
    check_kernel(WeisfeilerLehman(2, edge_label="label"), graphs[:8], graphs[8:12])


def test_wl_isomorphic_graphs_same_features():
    g = GRAPHS[5]
    perm = np.random.default_rng(1).permutation(g.number_of_nodes())
    h = nx.relabel_nodes(g, {v: int(perm[i]) for i, v in enumerate(g.nodes)})
    K = WeisfeilerLehman(3)([g, h]).numpy()
    assert K[0, 1] == K[0, 0] == K[1, 1]


# ---------------------------------------------------------------------- shortest path
@pytest.mark.parametrize("with_labels", [True, False])
def test_shortest_path_equals_grakel(with_labels):
    from grakel.kernels import ShortestPath as GSP

    expected = GSP(with_labels=with_labels).fit_transform(grakel_graphs(GRAPHS))
    k = ShortestPath(node_label="label" if with_labels else None)
    np.testing.assert_allclose(k(GRAPHS).numpy(), expected, atol=1e-9)


def test_shortest_path_brute_force_features():
    """Counts of (label u, label v, d) over ordered pairs, by networkx BFS."""
    g, h = GRAPHS[7], GRAPHS[11]

    def phi(graph):
        out = {}
        for u, dist in nx.all_pairs_shortest_path_length(graph):
            for v, d in dist.items():
                if u != v:
                    key = (graph.nodes[u]["label"], graph.nodes[v]["label"], d)
                    out[key] = out.get(key, 0) + 1
        return out

    pg, ph = phi(g), phi(h)
    expected = sum(c * ph.get(key, 0) for key, c in pg.items())
    assert ShortestPath()([g], [h]).item() == expected


def test_shortest_path_chunking_spans_many_graphs():
    graphs = random_graphs(300, 5, max_nodes=12)
    k = ShortestPath()
    K = k(graphs)
    parts = torch.cat([k(graphs[i : i + 37], graphs) for i in range(0, 300, 37)])
    torch.testing.assert_close(K, parts)


# ---------------------------------------------------------------------- random walk
def _explicit_product(g1, g2, node_labels, edge_labels):
    V = [
        (a, b)
        for a in g1.nodes
        for b in g2.nodes
        if not node_labels or g1.nodes[a]["label"] == g2.nodes[b]["label"]
    ]
    A = np.zeros((len(V), len(V)))
    for i, (a, b) in enumerate(V):
        for j, (c, d) in enumerate(V):
            if g1.has_edge(a, c) and g2.has_edge(b, d):
                if not edge_labels or g1.edges[a, c]["label"] == g2.edges[b, d]["label"]:
                    A[i, j] = 1.0
    return A


def _closed_form(g1, g2, lam, kind, p, node_labels, edge_labels):
    A = _explicit_product(g1, g2, node_labels, edge_labels)
    if A.shape[0] == 0:
        return 0.0
    if p is not None:
        total, P = 0.0, np.eye(len(A))
        for k in range(p + 1):
            total += (lam**k if kind == "geometric" else lam**k / math.factorial(k)) * P.sum()
            P = P @ A
        return total
    if kind == "geometric":
        return np.linalg.inv(np.eye(len(A)) - lam * A).sum()
    return sla.expm(lam * A).sum()


@pytest.mark.parametrize(
    ("lam", "kind", "p", "node_label", "edge_label"),
    [
        (0.05, "geometric", None, "label", None),
        (0.05, "geometric", None, "label", "label"),
        (0.04, "geometric", None, None, None),
        (0.6, "exponential", None, "label", "label"),
        (0.3, "exponential", 3, None, None),
        (0.5, "geometric", 4, "label", None),
    ],
)
def test_random_walk_equals_closed_form(lam, kind, p, node_label, edge_label):
    graphs = random_graphs(9, 11, max_nodes=7, edge_labels=True)
    k = RandomWalk(lam, kind=kind, p=p, node_label=node_label, edge_label=edge_label)
    expected = np.array(
        [[_closed_form(a, b, lam, kind, p, node_label, edge_label) for b in graphs] for a in graphs]
    )
    np.testing.assert_allclose(k(graphs).numpy(), expected, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(k(graphs[:4], graphs[4:]).numpy(), expected[:4, 4:], rtol=1e-9)
    np.testing.assert_allclose(k.diag(graphs).numpy(), np.diag(expected), rtol=1e-9)


def test_random_walk_unlabelled_equals_grakel_baseline():
    from grakel.kernels import RandomWalk as GRW

    graphs = random_graphs(10, 2, max_nodes=6)
    expected = GRW(lamda=0.05, method_type="baseline").fit_transform(grakel_graphs(graphs))
    np.testing.assert_allclose(RandomWalk(0.05, node_label=None)(graphs).numpy(), expected)


def test_random_walk_course_values():
    """Course part 2, section 4: edge x edge = 4/(1-beta), triangle x triangle = 9/(1-4 beta)."""
    edge, tri = nx.path_graph(2), nx.cycle_graph(3)
    k = RandomWalk(0.3, node_label=None)
    assert k([edge]).item() == pytest.approx(4 / (1 - 0.3), rel=1e-12)
    assert RandomWalk(0.1, node_label=None)([tri]).item() == pytest.approx(15.0, rel=1e-12)
    # n-th order term 1^T A_x^n 1 = 9 * 4^n (walks of n edges): the p-walk kernel differences
    for n in range(1, 5):
        a = RandomWalk(0.1, p=n, node_label=None)([tri]).item()
        b = RandomWalk(0.1, p=n - 1, node_label=None)([tri]).item()
        assert a - b == pytest.approx(9 * 4**n * 0.1**n, rel=1e-12)


def test_random_walk_divergence_is_refused():
    tri = nx.cycle_graph(3)
    with pytest.raises(InputError, match=r"lam.*diverges.*rho=4.*< 1/rho = 0.25"):
        RandomWalk(0.25, node_label=None)([tri])
    # the exponential kernel and the truncated series always converge
    assert np.isfinite(RandomWalk(0.25, kind="exponential", node_label=None)([tri]).item())
    assert np.isfinite(RandomWalk(0.25, p=5, node_label=None)([tri]).item())


def test_random_walk_labels_allow_larger_lam():
    """With labels the product graph shrinks: rho(A_x) < rho(A) rho(A') is found exactly."""
    g = nx.path_graph(4)
    for v, lab in zip(g.nodes, "AABB", strict=True):
        g.nodes[v]["label"] = lab
    rho = max(abs(np.linalg.eigvalsh(nx.to_numpy_array(g))))
    lam = 1.0 / rho**2 * 1.2  # beyond the cheap bound, yet convergent with labels
    A = _explicit_product(g, g, True, False)
    rho_x = max(abs(np.linalg.eigvalsh(A)))
    assert lam * rho_x < 1
    value = RandomWalk(lam)([g]).item()
    assert value == pytest.approx(_closed_form(g, g, lam, "geometric", None, True, False))


# ---------------------------------------------------------------------- shared behaviour
@pytest.mark.parametrize(
    "kernel",
    [WeisfeilerLehman(2), ShortestPath(), RandomWalk(0.05)],
    ids=lambda k: type(k).__name__,
)
def test_check_kernel_on_random_graphs(kernel):
    graphs = random_graphs(12, 8, max_nodes=8)
    check_kernel(kernel, graphs[:9], graphs[9:])


@pytest.mark.parametrize("cls", [WeisfeilerLehman, ShortestPath, RandomWalk])
def test_graph_kernels_take_graph_batches_and_edge_lists(cls):
    edges = [[(0, 1), (1, 2)], [(0, 1)], [(0, 1), (1, 2), (2, 0)]]
    labels = [["a", "b", "a"], ["a", "b"], ["b", "b", "a"]]
    batch = GraphBatch.from_edge_lists(edges, node_labels=labels)
    graphs = []
    for e, lab in zip(edges, labels, strict=True):
        g = nx.Graph()
        g.add_nodes_from((i, {"label": x}) for i, x in enumerate(lab))
        g.add_edges_from(e)
        graphs.append(g)
    k = cls()
    torch.testing.assert_close(k(batch), k(graphs))
    torch.testing.assert_close(k(batch[[2, 0]], batch[1:]), k(graphs)[[2, 0]][:, 1:])


@pytest.mark.parametrize("cls", [WeisfeilerLehman, ShortestPath, RandomWalk])
def test_graph_kernel_errors(cls):
    k = cls()
    unlabelled = [nx.path_graph(3), nx.path_graph(2)]
    with pytest.raises(InputError, match=r"X\[0\]: node 0 has no attribute 'label'"):
        k(unlabelled)
    g = nx.path_graph(2)
    nx.set_node_attributes(g, "C", "label")
    with pytest.raises(InputError, match=r"X\[1\]: graph has no nodes"):
        k([g, nx.Graph()])
    with pytest.raises(InputError, match=r"X\[1\]: expected a networkx graph, got int"):
        k([g, 3])
    with pytest.raises(InputError, match="at least one graph"):
        k([])
    with pytest.raises(InputError, match="undirected"):
        k([nx.DiGraph(g)])
    batch = GraphBatch.from_edge_lists([[(0, 1)]])
    with pytest.raises(InputError, match=r"X\[0\]: graph has no node labels.*'label'"):
        k(batch)
    # unlabelled graphs are fine once the kernel is told to ignore labels
    assert k.set_params(node_label=None)(unlabelled).shape == (2, 2)


def test_missing_edge_label_is_named():
    g = nx.path_graph(3)
    nx.set_node_attributes(g, "C", "label")
    g.edges[0, 1]["bond"] = 1
    with pytest.raises(InputError, match=r"X\[0\]: edge \(1, 2\) has no attribute 'bond'"):
        WeisfeilerLehman(1, edge_label="bond")([g])


def test_parameter_validation():
    with pytest.raises(InputError, match="n_iter"):
        WeisfeilerLehman(-1)
    with pytest.raises(InputError, match="kind"):
        RandomWalk(0.1, kind="harmonic")
    with pytest.raises(InputError, match="lam"):
        RandomWalk(0.0)
    with pytest.raises(InputError, match="node_label"):
        ShortestPath(node_label=3)


# ---------------------------------------------------------------------- estimators
def test_kernel_svc_on_graphs_in_pipeline_and_grid_search():
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import Pipeline

    from kernelkit.estimators import KernelSVC

    # two classes told apart by structure only: cycles vs paths with the same labels
    graphs, y = [], []
    for n in range(4, 16):
        for cyclic in (0, 1):
            g = nx.cycle_graph(n) if cyclic else nx.path_graph(n)
            nx.set_node_attributes(g, "C", "label")
            graphs.append(g)
            y.append(cyclic)
    y = np.array(y)
    svc = KernelSVC(kernel=WeisfeilerLehman(3), C=10.0).fit(graphs, y)
    assert svc.score(graphs, y) == 1.0
    pipe = Pipeline([("svc", KernelSVC(kernel=WeisfeilerLehman(0), C=10.0))])
    search = GridSearchCV(pipe, {"svc__kernel__n_iter": [0, 1, 3]}, cv=3).fit(graphs, y)
    # n_iter = 0 sees only label counts (equal within a size), so relabelling must win
    assert search.best_params_["svc__kernel__n_iter"] > 0
    assert search.cv_results_["mean_test_score"][0] < search.best_score_
    assert search.predict(graphs[:4]).shape == (4,)
