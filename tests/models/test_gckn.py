"""GCKN (course part 3, section 9): paths against networkx, the one-layer features against the
relaxed path kernel computed by a brute-force loop over all pairs of paths, node-permutation
invariance, and the data plumbing of the path batches."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from kernelkit import GraphCKNClassifier, GraphCKNFeatures
from kernelkit.data import GraphBatch
from kernelkit.models._gckn import GraphPaths, enumerate_paths

nx = pytest.importorskip("networkx")


@pytest.fixture(autouse=True)
def _one_thread(one_torch_thread):
    """Tiny problems: one torch thread."""


def _labelled(edges: list[tuple[int, int]], labels: list[str]) -> nx.Graph:
    g = nx.Graph()
    for v, lab in enumerate(labels):
        g.add_node(v, label=lab)
    g.add_edges_from(edges)
    return g


def _two_graphs() -> list[nx.Graph]:
    """A 5-cycle with a chord and a pendant, and a labelled star-with-triangle."""
    g1 = _labelled(
        [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0), (1, 3), (4, 5)], ["C", "N", "C", "O", "C", "N"]
    )
    g2 = _labelled([(0, 1), (0, 2), (0, 3), (1, 2), (3, 4)], ["C", "C", "O", "N", "C"])
    return [g1, g2]


def _simple_paths(g: nx.Graph, length: int) -> list[tuple]:
    """Brute force: every sequence of ``length + 1`` distinct nodes joined by edges (DFS)."""
    out: list[tuple] = []

    def grow(path: tuple) -> None:
        if len(path) == length + 1:
            out.append(path)
            return
        for v in g.neighbors(path[-1]):
            if v not in path:
                grow((*path, v))

    for u in g.nodes:
        grow((u,))
    return out


@pytest.mark.parametrize(
    ("graph", "counts"),
    [
        (nx.path_graph(4), [4, 6, 4, 2]),
        (nx.cycle_graph(3), [3, 6, 6, 0]),
        (nx.star_graph(3), [4, 6, 6, 0]),
    ],
)
def test_path_counts_on_toy_graphs_equal_simple_path_enumeration(graph, counts):
    batch = GraphBatch.from_networkx([graph], node_label=None)
    found, _ = enumerate_paths(batch.adj_ptr, batch.adj_idx, graph.number_of_nodes(), 3)
    assert [len(p) for p in found] == counts
    for length, paths in enumerate(found):
        expected = sorted(_simple_paths(graph, length))
        assert sorted(map(tuple, paths.tolist())) == expected
        # networkx's simple paths between every ordered pair of nodes, as a second oracle
        nx_paths = [
            tuple(p)
            for s in graph
            for t in graph
            if s != t
            for p in nx.all_simple_paths(graph, s, t, cutoff=length)
            if len(p) == length + 1
        ]
        assert sorted(nx_paths) == (expected if length else [])


def _relaxed_path_kernel(g: nx.Graph, h: nx.Graph, max_length: int, sigma: float) -> float:
    """sum_l sum_{p in P_l(g)} sum_{p' in P_l(h)} exp(-||a(p) - a(p')||^2 / (2 (l + 1) sigma^2))
    with one-hot labels: ||a(p) - a(p')||^2 = 2 (number of positions with different labels)."""
    total = 0.0
    for length in range(max_length + 1):
        for p in _simple_paths(g, length):
            for q in _simple_paths(h, length):
                mismatches = sum(
                    g.nodes[a]["label"] != h.nodes[b]["label"] for a, b in zip(p, q, strict=True)
                )
                total += math.exp(-2.0 * mismatches / (2.0 * (length + 1) * sigma**2))
    return total


def _exact_anchors(est: GraphCKNFeatures, graphs: list, generator: torch.Generator) -> None:
    """Every distinct path feature of ``graphs`` as an anchor (padded with random unit
    directions to ``n_filters``): the Nyström map is then exact on these paths."""
    batch = est._inputs(graphs, reset=False)
    for length, anchors in enumerate(est.network_.layers[0].maps):
        p = batch.paths[length]
        rows = torch.unique(batch.x[p].reshape(p.shape[0], -1), dim=0)
        q, d = est.network_.layers[0].n_filters, batch.x.shape[1]
        extra = torch.randn(q - rows.shape[0], length + 1, d, generator=generator, dtype=rows.dtype)
        extra = extra / torch.linalg.vector_norm(extra, dim=2, keepdim=True)
        anchors.set_anchors(torch.cat([rows, extra.reshape(-1, rows.shape[1])]))


@pytest.mark.parametrize("max_length", [0, 1, 3])
def test_one_layer_with_all_paths_as_anchors_is_the_relaxed_path_kernel(max_length):
    graphs, sigma = _two_graphs(), 0.6
    est = GraphCKNFeatures(
        60, max_length, sigma=sigma, shift=0.0, normalize=False, standardize=False, random_state=0
    ).fit(graphs)
    _exact_anchors(est, graphs, torch.Generator().manual_seed(1))
    Phi = est.transform(graphs)
    expected = np.array(
        [[_relaxed_path_kernel(g, h, max_length, sigma) for h in graphs] for g in graphs]
    )
    np.testing.assert_allclose(Phi @ Phi.T, expected, rtol=1e-8, atol=0)


def test_one_layer_exact_on_continuous_attributes():
    """Continuous attributes, standardised over the training nodes and scaled to unit norm
    (the estimator's preprocessing, redone here): the Gaussian on the sphere
    ``exp((mean_j <x_j, x'_j> - 1) / sigma^2)`` over the path positions ``j``."""
    rng = np.random.default_rng(0)
    graphs = _two_graphs()
    for g in graphs:
        for v in g:
            g.nodes[v]["attributes"] = rng.normal(size=3) + np.array([1.5, 0.0, 0.0])
    sigma, k = 0.7, 2
    est = GraphCKNFeatures(
        90,
        k,
        node_label=None,
        sigma=sigma,
        shift=0.0,
        normalize=False,
        standardize=False,
        random_state=0,
    )
    est.fit(graphs)
    _exact_anchors(est, graphs, torch.Generator().manual_seed(2))
    Phi = est.transform(graphs)

    raw = np.array([g.nodes[v]["attributes"] for g in graphs for v in g])
    mean, std = raw.mean(0), raw.std(0)

    def unit(a: np.ndarray) -> np.ndarray:
        z = (a - mean) / std
        return z / np.linalg.norm(z)

    def kernel(g: nx.Graph, h: nx.Graph) -> float:
        total = 0.0
        for length in range(k + 1):
            for p in _simple_paths(g, length):
                for q in _simple_paths(h, length):
                    cosines = [
                        unit(g.nodes[a]["attributes"]) @ unit(h.nodes[b]["attributes"])
                        for a, b in zip(p, q, strict=True)
                    ]
                    total += math.exp((np.mean(cosines) - 1.0) / sigma**2)
        return total

    expected = np.array([[kernel(g, h) for h in graphs] for g in graphs])
    np.testing.assert_allclose(Phi @ Phi.T, expected, rtol=1e-8, atol=0)


def _permuted(g: nx.Graph, rng: np.random.Generator) -> nx.Graph:
    """The same graph with its nodes renamed and inserted in a random order."""
    order = list(rng.permutation(list(g.nodes)))
    name = {v: f"n{i}" for i, v in enumerate(rng.permutation(list(g.nodes)))}
    h = nx.Graph()
    for v in order:
        h.add_node(name[v], **g.nodes[v])
    edges = list(g.edges)
    for i in rng.permutation(len(edges)):
        a, b = edges[i]
        h.add_edge(name[b], name[a])
    return h


@pytest.mark.parametrize("n_filters", [8, (8, 6)])
def test_features_are_invariant_to_node_permutation(n_filters):
    rng = np.random.default_rng(3)
    graphs = [nx.gnp_random_graph(9, 0.3, seed=s) for s in range(12)]
    for g in graphs:
        for v in g:
            g.nodes[v]["label"] = int(rng.integers(3))
    est = GraphCKNFeatures(n_filters, 3, random_state=0).fit(graphs)
    permuted = [_permuted(g, rng) for g in graphs]
    np.testing.assert_allclose(
        est.transform(permuted), est.transform(graphs), rtol=1e-10, atol=1e-12
    )


def test_k0_is_the_sum_of_node_embeddings():
    """``max_length = 0``: Phi(G) = sum_u psi(a(u)) (course part 3, GCKN checks)."""
    graphs = _two_graphs()
    est = GraphCKNFeatures(4, 0, normalize=False, standardize=False, random_state=0).fit(graphs)
    layer = est.network_.layers[0]
    batch = est._inputs(graphs, reset=False)
    anchors = layer.maps[0]
    Z = anchors.anchors()[:, 0]
    psi = anchors.kappa(batch.x @ Z.T)  # unit one-hot rows
    from kernelkit.solvers._matfun import inverse_sqrt

    psi = psi @ inverse_sqrt(anchors.anchor_gram(), shift=layer.shift)
    expected = torch.stack(
        [psi[a:b].sum(0) for a, b in zip(batch.node_ptr[:-1], batch.node_ptr[1:], strict=True)]
    )
    np.testing.assert_allclose(est.transform(graphs), expected.detach().numpy(), rtol=1e-12)


def test_graph_batch_input_equals_networkx_input_and_subsets_equal_the_whole():
    graphs = _two_graphs() * 3
    est = GraphCKNFeatures((6, 5), 2, random_state=0).fit(graphs)
    batch = GraphBatch.from_networkx(graphs)
    np.testing.assert_allclose(est.transform(batch), est.transform(graphs), rtol=1e-12)
    paths = est._inputs(graphs, reset=False)
    sub = paths[torch.tensor([4, 1])]
    direct = est._inputs([graphs[4], graphs[1]], reset=False)
    for a, b in zip(sub.paths, direct.paths, strict=True):
        assert torch.equal(a, b)
    assert torch.equal(sub.x, direct.x)
    assert isinstance(paths[1:3], GraphPaths) and len(paths[1:3]) == 2


def test_unseen_labels_and_missing_labels():
    graphs = _two_graphs()
    est = GraphCKNFeatures(4, 1, random_state=0).fit(graphs)
    new = _labelled([(0, 1)], ["C", "Xe"])  # "Xe" unseen: zero one-hot, no contribution
    only_c = _labelled([(0, 1)], ["C", "C"])
    assert est.transform([new]).shape == (1, est.n_components_)
    assert np.isfinite(est.transform([new])).all()
    assert not np.allclose(est.transform([new]), est.transform([only_c]))
    with pytest.raises(ValueError, match="label"):
        est.transform([nx.path_graph(3)])
    with pytest.raises(ValueError, match="fitted on graphs"):
        est.transform(np.ones((2, 3)))


def _rings_and_chains(n: int = 24) -> tuple[list, list]:
    rng = np.random.default_rng(0)
    graphs, y = [], []
    for i in range(n):
        ring = i % 2 == 0
        g = nx.cycle_graph(7) if ring else nx.path_graph(7)
        for v in g:
            g.nodes[v]["label"] = int(rng.integers(2))
        graphs.append(g)
        y.append("ring" if ring else "chain")
    return graphs, y


@pytest.mark.slow
def test_classifier_lam_auto_chooses_the_number_of_layers():
    graphs, y = _rings_and_chains()
    clf = GraphCKNClassifier((8, 8), 2, random_state=0).fit(graphs, y)
    assert len(clf.network_.layers) in (1, 2)
    assert clf.decision_function(graphs).shape == (24,)
    assert clf.score(graphs, y) == 1.0


def test_classifier_trains_end_to_end():
    graphs, y = _rings_and_chains()
    unsup = GraphCKNClassifier(8, 2, lam=1e-3, random_state=0).fit(graphs, y)
    assert unsup.score(graphs, y) == 1.0 and unsup.n_iter_ == 0
    sup = GraphCKNClassifier(8, 2, lam=1e-3, max_iter=3, random_state=0).fit(graphs, y)
    assert len(sup.history_) == sup.n_iter_ >= 1
    proba = sup.predict_proba(graphs)
    np.testing.assert_allclose(proba.sum(1), 1.0)
    assert sup.decision_function(graphs).shape == (24,)
    moved = [
        not torch.equal(a, b)
        for a, b in zip(unsup.network_.parameters(), sup.network_.parameters(), strict=True)
    ]
    assert any(moved) or sup.best_epoch_ == 0


def test_per_layer_path_lengths_and_normalised_layer_blocks():
    graphs = _two_graphs() * 2
    est = GraphCKNFeatures((6, 5), (2, 0), standardize=False, random_state=0).fit(graphs)
    assert [layer.max_length for layer in est.network_.layers] == [2, 0]
    Phi = est.transform(graphs)
    assert Phi.shape == (4, 3 * 6 + 1 * 5) == (4, est.n_components_)
    np.testing.assert_allclose(np.linalg.norm(Phi[:, :18], axis=1), 1.0)
    np.testing.assert_allclose(np.linalg.norm(Phi[:, 18:], axis=1), 1.0)
    with pytest.raises(ValueError, match="max_length"):
        GraphCKNFeatures((6, 5), (2, 0, 1)).fit(graphs)


def test_standardized_features_and_layer_truncation():
    graphs = _two_graphs() * 3
    graphs[1].add_edge(0, 2)
    est = GraphCKNFeatures((6, 5), (2, 0), standardize=True, random_state=0).fit(graphs)
    Phi = est.transform(graphs)
    np.testing.assert_allclose(Phi.mean(0), 0.0, atol=1e-10)
    std = Phi.std(0)
    assert np.all(np.isclose(std, 1.0) | np.isclose(std, 0.0))
    raw = GraphCKNFeatures((6, 5), (2, 0), standardize=False, random_state=0).fit(graphs)
    np.testing.assert_allclose(
        Phi * est.network_.feature_scale.numpy() + est.network_.feature_mean.numpy(),
        raw.transform(graphs),
        rtol=1e-10,
        atol=1e-12,
    )
    from kernelkit.models._gckn import keep_layers

    keep_layers(est.network_, 1)
    np.testing.assert_allclose(est.transform(graphs), Phi[:, :18], rtol=1e-12, atol=1e-12)


def test_graph_level_layer_with_the_training_graphs_as_anchors_is_the_gaussian_kernel():
    """The graph-level layer (``top_sigma``): with the pooled representations ``Phi`` of the
    training graphs as anchors and no shift, ``<Psi(G), Psi(G_j)>`` is the dot-product kernel
    ``||Phi|| ||Phi_j|| exp((cos - 1) / sigma^2)`` written out in NumPy, for training and new
    graphs."""
    rng = np.random.default_rng(4)
    graphs = [nx.gnp_random_graph(int(rng.integers(5, 9)), 0.4, seed=s) for s in range(14)]
    for g in graphs:
        for v in g:
            g.nodes[v]["label"] = int(rng.integers(3))
    y = [i % 2 for i in range(14)]
    sigma = 0.8
    clf = GraphCKNClassifier(
        8, 2, top_sigma=sigma, top_filters=10, shift=0.0, lam=1e-3, random_state=0
    ).fit(graphs[:10], y[:10])
    net = clf.network_
    assert net.top.n_filters == 10 and net.n_features == 10
    pooled = net.pooled(clf._inputs(graphs, reset=False)).detach()
    # top_filters >= the training graphs: the k-means anchors are those graphs (the exact
    # kernel on them), up to their order
    unit = pooled[:10] / torch.linalg.vector_norm(pooled[:10], dim=1, keepdim=True)
    fitted = net.top.maps[0].anchors().reshape(10, -1).detach()
    np.testing.assert_allclose((fitted @ unit.T).max(0).values.numpy(), 1.0, rtol=0, atol=1e-10)
    net.top.maps[0].set_anchors(pooled[:10])
    Psi = net(clf._inputs(graphs, reset=False)).detach().numpy()
    P = pooled.numpy()
    norms = np.linalg.norm(P, axis=1)
    cos = np.clip(P @ P[:10].T / np.outer(norms, norms[:10]), -1.0, 1.0)
    expected = np.outer(norms, norms[:10]) * np.exp((cos - 1.0) / sigma**2)
    np.testing.assert_allclose(Psi @ Psi[:10].T, expected, rtol=1e-7, atol=1e-9)
