"""GraphHopper and propagation kernels (issue 29): brute-force transcriptions of their
definitions on 30 small attributed graphs, GraKeL 0.1.11's GraphHopper, conformance."""

from __future__ import annotations

import itertools
import warnings

import networkx as nx
import numpy as np
import pytest

from kernelkit.data._graphs import GraphBatch
from kernelkit.kernels._features import sparse_feature_gram
from kernelkit.kernels._graph_attributes import (
    GraphHopper,
    Propagation,
    PropagationAttr,
    geodesic_counts,
)
from kernelkit.testing import check_kernel
from kernelkit.utils._errors import InputError

from .conftest import grakel_input


def attributed(n: int, seed: int, *, connected: bool = False, dim: int = 3):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        size = int(rng.integers(1 if not connected else 2, 9))
        g = nx.gnp_random_graph(size, 0.4, seed=int(rng.integers(2**31)))
        while connected and not nx.is_connected(g):
            g = nx.gnp_random_graph(size, 0.4, seed=int(rng.integers(2**31)))
        for v in g:
            g.nodes[v]["attributes"] = rng.normal(size=dim)
            g.nodes[v]["label"] = "ABC"[int(rng.integers(3))]
        out.append(g)
    return out


GRAPHS = attributed(30, 0)  # small, some disconnected, single nodes included


# ---------------------------------------------------------------------- GraphHopper
def _node_kernel(kind, x, y):
    if kind == "linear":
        return float(x @ y)
    if kind == "bridge":
        return max(0.0, 1.0 - np.linalg.norm(x - y) / 4.0)
    mu = 1.0 if kind == "gaussian" else kind[1]
    return float(np.exp(-mu * np.sum((x - y) ** 2)))


def _all_shortest_paths(g):
    paths = []
    for s, t in itertools.product(g, g):
        if nx.has_path(g, s, t):
            paths.extend(nx.all_shortest_paths(g, s, t))
    return paths


def _graphhopper_brute_force(graphs, kind):
    paths = [_all_shortest_paths(g) for g in graphs]
    K = np.zeros((len(graphs), len(graphs)))
    for i, j in itertools.combinations_with_replacement(range(len(graphs)), 2):
        gi, gj = graphs[i], graphs[j]
        total = 0.0
        for p in paths[i]:
            for q in paths[j]:
                if len(p) == len(q):
                    total += sum(
                        _node_kernel(kind, gi.nodes[a]["attributes"], gj.nodes[b]["attributes"])
                        for a, b in zip(p, q, strict=True)
                    )
        K[i, j] = K[j, i] = total
    return K


@pytest.mark.parametrize("kind", ["linear", "gaussian", ("gaussian", 0.3), "bridge"])
def test_graphhopper_equals_brute_force(kind):
    K = GraphHopper(kind)(GRAPHS).numpy()
    np.testing.assert_allclose(K, _graphhopper_brute_force(GRAPHS, kind), rtol=1e-10, atol=1e-8)


def test_geodesic_counts_equal_networkx():
    g = nx.grid_2d_graph(3, 4)
    g.add_edge((0, 0), (2, 3))
    g = nx.convert_node_labels_to_integers(g)
    dist, sigma = geodesic_counts(GraphBatch.from_networkx([g], node_label=None), 0)
    for s, t in itertools.product(g, g):
        assert dist[s, t] == nx.shortest_path_length(g, s, t)
        assert sigma[s, t] == len(list(nx.all_shortest_paths(g, s, t)))


@pytest.mark.parametrize("kind", ["linear", "gaussian", ("gaussian", 0.3), "bridge"])
def test_graphhopper_equals_grakel(kind):
    gk = pytest.importorskip("grakel.kernels")
    graphs = attributed(30, 1, connected=True)  # GraKeL fails on isolated nodes
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = gk.GraphHopper(kernel_type=kind).fit_transform(
            grakel_input(graphs, edge_labels=False, attributes="attributes")
        )
    K = GraphHopper(kind)(graphs).numpy()
    # GraKeL's bridge distances come from sqrt(|x|^2 + |y|^2 - 2<x, y>): 1e-6 round-off
    np.testing.assert_allclose(K, expected, rtol=1e-8 if kind != "bridge" else 1e-6, atol=1e-8)


@pytest.mark.parametrize("kind", ["linear", "gaussian"])
def test_graphhopper_equals_grakel_on_molecular_graphs(attributed_molecular_graphs, kind):
    gk = pytest.importorskip("grakel.kernels")
    graphs = [g for g in attributed_molecular_graphs if nx.is_connected(g) and len(g) > 1]
    assert len(graphs) == 200
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = gk.GraphHopper(kernel_type=kind).fit_transform(
            grakel_input(graphs, edge_labels=False, attributes="attributes")
        )
    np.testing.assert_allclose(GraphHopper(kind)(graphs).numpy(), expected, rtol=1e-8)


# ---------------------------------------------------------------------- propagation
def _propagation_brute_force(graphs, k, batch):
    """Algorithm 1 of Neumann et al. with dense per-graph matrices and per-node loops."""
    codes = np.unique(batch.node_labels)
    feats = []
    for i, g in enumerate(graphs):
        a = int(batch.node_ptr[i])
        A = nx.to_numpy_array(g)
        deg = A.sum(1)
        T = np.divide(A, deg[:, None], out=np.zeros_like(A), where=deg[:, None] > 0)
        P = np.zeros((len(g), len(codes)))
        for j in range(len(g)):
            P[j, np.searchsorted(codes, batch.node_labels[a + j])] = 1.0
        counts = {}
        for t in range(k.t_max):
            u, b = k.hash_parameters(t, codes)
            for j in range(len(g)):
                q = np.sqrt(P[j]) if k.M == "H" else P[j]
                key = (t, int(np.floor((q @ u + b) / k.w)))
                counts[key] = counts.get(key, 0) + 1
            P = T @ P
        feats.append(counts)
    return np.array(
        [[sum(c * f.get(key, 0) for key, c in e.items()) for f in feats] for e in feats]
    )


@pytest.mark.parametrize("params", [{}, {"M": "H", "w": 0.1, "t_max": 3}, {"random_state": 7}])
def test_propagation_equals_brute_force(params):
    k = Propagation(**params)
    batch = k.prepare(GRAPHS)
    np.testing.assert_allclose(
        k(GRAPHS).numpy(), _propagation_brute_force(GRAPHS, k, batch), rtol=0, atol=1e-8
    )


@pytest.mark.parametrize("params", [{}, {"M": "L2", "w": 1.0, "t_max": 3}])
def test_propagation_attr_equals_brute_force(params):
    k = PropagationAttr(**params)
    u, b = k.hash_parameters(3)
    feats = []
    for g in GRAPHS:
        A = nx.to_numpy_array(g)
        deg = A.sum(1)
        T = np.divide(A, deg[:, None], out=np.zeros_like(A), where=deg[:, None] > 0)
        P = np.array([g.nodes[v]["attributes"] for v in g])
        counts = {}
        for t in range(k.t_max):
            for row in P:
                key = (t, *np.floor((row * u[t] + b[t]) / k.w).astype(int).tolist())
                counts[key] = counts.get(key, 0) + 1
            P = T @ P
        feats.append(counts)
    expected = [[sum(c * f.get(key, 0) for key, c in e.items()) for f in feats] for e in feats]
    np.testing.assert_allclose(k(GRAPHS).numpy(), np.array(expected), rtol=0, atol=1e-8)


def test_propagation_batches_share_bins():
    for k in (Propagation(), PropagationAttr()):
        F_all = k.features(k.prepare(GRAPHS))
        F_a = k.features(k.prepare(GRAPHS[:11]))
        np.testing.assert_allclose(
            sparse_feature_gram(F_a, F_all).numpy(), k(GRAPHS).numpy()[:11], atol=1e-10
        )


# ---------------------------------------------------------------------- shared
@pytest.mark.parametrize(
    "kernel",
    [
        GraphHopper(),
        GraphHopper(("gaussian", 0.5)),
        GraphHopper("bridge"),
        Propagation(),
        PropagationAttr(),
    ],
    ids=repr,
)
def test_check_kernel(kernel, attributed_molecular_graphs):
    check_kernel(kernel, attributed_molecular_graphs[:25], attributed_molecular_graphs[25:31])


def test_errors():
    g = nx.path_graph(3)
    with pytest.raises(InputError, match=r"X\[0\]: node 0 has no attribute 'attributes'"):
        GraphHopper()([g])
    for v in g:
        g.nodes[v]["attributes"] = [1.0, 2.0] if v else [1.0]
    with pytest.raises(InputError, match="same length on every node"):
        PropagationAttr()([g])
    g.nodes[0]["attributes"] = [np.nan, 1.0]
    with pytest.raises(InputError, match="NaN"):
        GraphHopper()([g])
    with pytest.raises(InputError, match="kernel_type"):
        GraphHopper("polynomial")
    with pytest.raises(InputError, match="M"):
        Propagation(M="L1")
    with pytest.raises(InputError, match="molecules carry no continuous"):
        GraphHopper()(["CCO"])
