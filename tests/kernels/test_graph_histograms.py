"""Vertex / edge histograms, WL optimal assignment and neighbourhood hash (issue 29): equal to
GraKeL 0.1.11 on 200 molecular graphs, features reproduce the Gram, conformance, brute force."""

from __future__ import annotations

import warnings

import networkx as nx
import numpy as np
import pytest

from kernelkit.kernels._features import sparse_feature_gram
from kernelkit.kernels._graph_histograms import (
    EdgeHistogram,
    NeighborhoodHash,
    VertexHistogram,
    WeisfeilerLehmanOptimalAssignment,
    unary_features,
)
from kernelkit.kernels._graphs import ShortestPath, WeisfeilerLehman, count_features
from kernelkit.testing import check_kernel
from kernelkit.utils._errors import InputError

from .conftest import grakel_input
from .test_graphs import random_graphs

gk = pytest.importorskip("grakel.kernels")


def _grakel(kernel, graphs, *, edge_labels=True):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return kernel.fit_transform(grakel_input(graphs, edge_labels=edge_labels))


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        (VertexHistogram(), lambda: gk.VertexHistogram()),
        (EdgeHistogram(), lambda: gk.EdgeHistogram()),
        (
            WeisfeilerLehmanOptimalAssignment(1),
            lambda: gk.WeisfeilerLehmanOptimalAssignment(n_iter=1),
        ),
        (WeisfeilerLehmanOptimalAssignment(), lambda: gk.WeisfeilerLehmanOptimalAssignment()),
        (
            WeisfeilerLehmanOptimalAssignment(3).normalized(),
            lambda: gk.WeisfeilerLehmanOptimalAssignment(n_iter=3, normalize=True),
        ),
        (NeighborhoodHash(), lambda: gk.NeighborhoodHash(bits=24, random_state=0)),
        (
            NeighborhoodHash(4, nh_type="count_sensitive"),
            lambda: gk.NeighborhoodHash(R=4, nh_type="count_sensitive", bits=24, random_state=0),
        ),
    ],
    ids=lambda k: "grakel" if getattr(k, "__name__", "") == "<lambda>" else repr(k)[:60],
)
def test_equals_grakel_on_molecular_graphs(molecular_graphs, ours, theirs):
    expected = _grakel(theirs(), molecular_graphs)
    np.testing.assert_allclose(ours(molecular_graphs).numpy(), expected, rtol=0, atol=1e-8)


@pytest.mark.parametrize("n_iter", [1, 2, 4])
def test_wloa_equals_grakel_with_isolated_nodes(n_iter):
    graphs = random_graphs(30, 4, max_nodes=9)  # G(n, 0.35): isolated nodes and single nodes
    assert any(d == 0 for g in graphs for _, d in g.degree)
    expected = _grakel(
        gk.WeisfeilerLehmanOptimalAssignment(n_iter=n_iter), graphs, edge_labels=False
    )
    K = WeisfeilerLehmanOptimalAssignment(n_iter)(graphs).numpy()
    np.testing.assert_allclose(K, expected, atol=1e-8)


def test_wloa_is_histogram_intersection_brute_force():
    """k = sum over iterations and labels of min(counts), from WL labels computed by networkx."""
    graphs = random_graphs(12, 9, max_nodes=8)
    h = 3

    def wl_counts(g):
        lab = {v: str(g.nodes[v]["label"]) for v in g}
        out = {}
        for it in range(h + 1):
            for v in g:
                out[(it, lab[v])] = out.get((it, lab[v]), 0) + 1
            lab = {v: lab[v] + "(" + ",".join(sorted(lab[u] for u in g[v])) + ")" for v in g}
        return out

    C = [wl_counts(g) for g in graphs]
    expected = np.array([[sum(min(c, b.get(k, 0)) for k, c in a.items()) for b in C] for a in C])
    K = WeisfeilerLehmanOptimalAssignment(h)(graphs).numpy()
    np.testing.assert_array_equal(K, expected)


def test_neighborhood_hash_brute_force():
    """Direct transcription of Hido & Kashima's rounds on Python ints, then the Tanimoto mean."""
    graphs = random_graphs(10, 2, max_nodes=8)
    k = NeighborhoodHash(2, nh_type="count_sensitive", bits=16)
    batch = k.prepare(graphs)
    bits, mask = 16, (1 << 16) - 1

    def rot(x, d):
        d %= bits
        return ((x << d) & mask) | (x >> (bits - d)) if d else x

    levels = []
    for i, g in enumerate(graphs):
        a = int(batch.node_ptr[i])
        lab = {v: int(batch.node_labels[a + j]) & mask for j, v in enumerate(g)}
        per = []
        for _ in range(2):
            new = {}
            for v in g:
                acc = rot(lab[v], 1)
                nb = [lab[u] for u in g[v]]
                for value in set(nb):
                    occ = nb.count(value)
                    acc ^= rot(value ^ occ, occ)
                new[v] = acc
            lab = new
            per.append(sorted(lab.values()))
        levels.append(per)

    def tanimoto(x, y):
        c = sum(min(x.count(v), y.count(v)) for v in set(x))
        return c / (len(x) + len(y) - c)

    expected = np.array(
        [
            [np.mean([tanimoto(p, q) for p, q in zip(a, b, strict=True)]) for b in levels]
            for a in levels
        ]
    )
    np.testing.assert_allclose(k(graphs).numpy(), expected, atol=1e-12)


@pytest.mark.parametrize(
    "kernel",
    [
        WeisfeilerLehman(3),
        WeisfeilerLehman(2, edge_label="label"),
        ShortestPath(),
        VertexHistogram(),
        EdgeHistogram(),
        WeisfeilerLehmanOptimalAssignment(4),
    ],
    ids=repr,
)
def test_features_reproduce_gram(molecular_graphs, kernel):
    F = kernel.features(kernel.prepare(molecular_graphs))
    K = kernel(molecular_graphs).numpy()
    np.testing.assert_allclose(sparse_feature_gram(F, F).numpy(), K, rtol=0, atol=1e-10)
    F_a = kernel.features(kernel.prepare(molecular_graphs[:50]))
    np.testing.assert_allclose(sparse_feature_gram(F_a, F).numpy(), K[:50], atol=1e-10)


def test_unary_features_give_histogram_intersection():
    rng = np.random.default_rng(0)
    H = rng.integers(0, 5, size=(6, 9))
    rows, cols = np.nonzero(H)
    F = count_features(rows, cols.astype(np.int64), 6)
    F.values = H[rows, cols].astype(float)[np.lexsort((cols, rows))]
    U = unary_features(F)
    expected = np.minimum(H[:, None, :], H[None, :, :]).sum(-1)
    np.testing.assert_array_equal(sparse_feature_gram(U, U).numpy(), expected)
    F.values = F.values + 0.5
    with pytest.raises(InputError, match="integer counts"):
        unary_features(F)


@pytest.mark.parametrize(
    "kernel",
    [
        VertexHistogram(),
        EdgeHistogram(),
        WeisfeilerLehmanOptimalAssignment(3),
        NeighborhoodHash(3),
        NeighborhoodHash(2, nh_type="count_sensitive", bits=64),
    ],
    ids=repr,
)
def test_check_kernel(kernel, molecular_graphs):
    check_kernel(kernel, molecular_graphs[:30], molecular_graphs[30:40])


def test_isomorphic_graphs_and_parameter_errors():
    g = random_graphs(1, 3, max_nodes=9)[0]
    h = nx.relabel_nodes(g, {v: 8 - v for v in g})
    for k in (WeisfeilerLehmanOptimalAssignment(3), NeighborhoodHash(3)):
        K = k([g, h]).numpy()
        assert K[0, 1] == pytest.approx(K[0, 0])
    with pytest.raises(InputError, match="nh_type"):
        NeighborhoodHash(nh_type="sorted")
    with pytest.raises(InputError, match="bits"):
        NeighborhoodHash(bits=65)
    with pytest.raises(InputError, match="R"):
        NeighborhoodHash(0)
    with pytest.raises(InputError, match=r"X\[0\]: edge .* has no attribute 'label'"):
        EdgeHistogram()([nx.path_graph(3)])
