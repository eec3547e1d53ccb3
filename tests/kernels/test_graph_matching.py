"""Subgraph matching (issue 29): equal to GraKeL 0.1.11 on 200 molecular graphs (k=5) and
with other size weights / without labels on 60; connected=False equals a VF2 brute force of
Definition 5 (all pairs of induced subgraphs, isomorphisms counted); features reproduce the
Gram; conformance."""

from __future__ import annotations

import itertools
import re
import warnings

import networkx as nx
import numpy as np
import pytest
from networkx.algorithms import isomorphism

from kernelkit.kernels._features import sparse_feature_gram
from kernelkit.kernels._graph_matching import SubgraphMatching
from kernelkit.testing import check_kernel
from kernelkit.utils._errors import InputError

from .conftest import grakel_input
from .test_graphs import random_graphs

gk = pytest.importorskip("grakel.kernels")


def _grakel(graphs, *, labels=True, **params):
    kv = {} if labels else {"kv": None, "ke": None}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gk.SubgraphMatching(**params, **kv).fit_transform(grakel_input(graphs))


@pytest.mark.slow
def test_equals_grakel_on_200_molecular_graphs(molecular_graphs):
    K = SubgraphMatching(5)(molecular_graphs).numpy()
    np.testing.assert_allclose(K, _grakel(molecular_graphs, k=5), rtol=0, atol=1e-8)


@pytest.mark.parametrize(
    ("ours", "params", "labels"),
    [
        (SubgraphMatching(3), {"k": 3}, True),
        (SubgraphMatching(4, lw="decreasing"), {"k": 4, "lw": "decreasing"}, True),
        (SubgraphMatching(3, lw="increasing"), {"k": 3, "lw": "increasing"}, True),
        (SubgraphMatching(3, lw="strong_decreasing"), {"k": 3, "lw": "strong_decreasing"}, True),
        (SubgraphMatching(2, lw=lambda i: 0.5**i), {"k": 2, "lw": lambda i: 0.5**i}, True),
        (SubgraphMatching(4, node_label=None, edge_label=None), {"k": 4}, False),
    ],
    ids=lambda x: re.sub(r" at 0x[0-9a-f]+", "", repr(x))[:50],
)
def test_equals_grakel_variants(molecular_graphs, ours, params, labels):
    graphs = molecular_graphs[:60]
    expected = _grakel(graphs, labels=labels, **params)
    np.testing.assert_allclose(ours(graphs).numpy(), expected, rtol=1e-12, atol=1e-8)
    np.testing.assert_allclose(
        ours.normalized()(graphs).numpy(),
        expected / np.sqrt(np.outer(np.diag(expected), np.diag(expected))),
        atol=1e-12,
    )


def _brute_definition5(graphs, k):
    """Sum over sizes s <= k, node sets S, S' and label-preserving isomorphisms G[S] -> G'[S']."""

    def induced(g):
        out = []
        for s in range(1, k + 1):
            for nodes in itertools.combinations(g.nodes, s):
                out.append(g.subgraph(nodes))
        return out

    subs = [induced(g) for g in graphs]
    nm = isomorphism.categorical_node_match("label", None)
    em = isomorphism.categorical_edge_match("label", None)
    K = np.zeros((len(graphs), len(graphs)))
    for i, j in itertools.combinations_with_replacement(range(len(graphs)), 2):
        total = 0
        for a in subs[i]:
            for b in subs[j]:
                if len(a) == len(b) and a.number_of_edges() == b.number_of_edges():
                    matcher = isomorphism.GraphMatcher(a, b, node_match=nm, edge_match=em)
                    total += sum(1 for _ in matcher.isomorphisms_iter())
        K[i, j] = K[j, i] = total
    return K


def test_full_definition_equals_brute_force():
    graphs = [g for g in random_graphs(14, 4, max_nodes=6, edge_labels=True) if len(g)]
    K = SubgraphMatching(4, connected=False)(graphs).numpy()
    np.testing.assert_allclose(K, _brute_definition5(graphs, 4), rtol=0, atol=1e-8)


def test_features_reproduce_gram(molecular_graphs):
    for kernel in (SubgraphMatching(5), SubgraphMatching(3, connected=False, lw="decreasing")):
        F = kernel.features(kernel.prepare(molecular_graphs))
        K = kernel(molecular_graphs).numpy()
        np.testing.assert_allclose(sparse_feature_gram(F, F).numpy(), K, rtol=1e-12, atol=1e-10)


def test_isomorphic_graphs_are_equal(molecular_graphs):
    g = molecular_graphs[11]
    perm = nx.relabel_nodes(g, {v: len(g) - 1 - i for i, v in enumerate(g)})
    K = SubgraphMatching(4)([g, perm]).numpy()
    assert K[0, 1] == pytest.approx(K[0, 0], rel=1e-12)


@pytest.mark.parametrize(
    "kernel",
    [SubgraphMatching(4), SubgraphMatching(3, connected=False, node_label=None)],
    ids=repr,
)
def test_check_kernel(kernel, molecular_graphs):
    check_kernel(kernel, molecular_graphs[:30], molecular_graphs[30:40])


def test_parameter_errors():
    with pytest.raises(InputError, match="k"):
        SubgraphMatching(6)
    with pytest.raises(InputError, match="lw"):
        SubgraphMatching(3, lw="flat")
    with pytest.raises(InputError, match="lw"):
        SubgraphMatching(3, lw=[1.0, -1.0, 1.0])
    with pytest.raises(InputError, match="lw"):
        SubgraphMatching(3, lw=[1.0, 1.0])
    with pytest.raises(InputError, match="connected"):
        SubgraphMatching(3, connected=1)
