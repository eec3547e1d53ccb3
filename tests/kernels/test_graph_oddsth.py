"""ODD-STh (issue 29): equal to a nested-tuple brute force of the definition on the molecular
graphs; GraKeL 0.1.11's Gram rebuilt exactly from these features and GraKeL's first-graph
weighting (all graphs at h=1, the graphs whose GraKeL tree strings do not depend on the node
numbering at larger h); features reproduce the Gram; conformance."""

from __future__ import annotations

import warnings
from collections import Counter

import networkx as nx
import numpy as np
import pytest

from kernelkit.kernels._features import sparse_feature_gram
from kernelkit.kernels._graph_oddsth import OddSth
from kernelkit.testing import check_kernel
from kernelkit.utils._errors import InputError

from .conftest import grakel_input
from .test_graphs import random_graphs


def _tree_counts(g, h):
    """Counter of the tree visits T_r(u) as nested (label, sorted children) tuples."""
    counts: Counter = Counter()
    for r in g:
        dist = nx.single_source_shortest_path_length(g, r, cutoff=h)
        memo: dict = {}

        def tree(u, dist=dist, memo=memo):
            if u not in memo:
                below = (
                    [w for w in g[u] if dist.get(w) == dist[u] + 1]
                    if h is None or dist[u] < h
                    else []
                )
                memo[u] = (g.nodes[u].get("label"), tuple(sorted(tree(w) for w in below)))
            return memo[u]

        counts.update(tree(u) for u in dist)
    return counts


def _brute_gram(graphs, h):
    C = [_tree_counts(g, h) for g in graphs]
    return np.array([[sum(n * b.get(t, 0) for t, n in a.items()) for b in C] for a in C])


@pytest.mark.parametrize("h", [None, 1, 2, 4])
def test_equals_brute_force_on_molecular_graphs(molecular_graphs, h):
    graphs = molecular_graphs[:120]
    K = OddSth(h)(graphs).numpy()
    np.testing.assert_allclose(K, _brute_gram(graphs, h), rtol=0, atol=1e-8)


def test_equals_brute_force_on_random_graphs():
    graphs = random_graphs(25, 11, max_nodes=9)  # isolated nodes, several components
    for h in (None, 2):
        K = OddSth(h)(graphs).numpy()
        np.testing.assert_allclose(K, _brute_gram(graphs, h), rtol=0, atol=1e-8)


def _grakel_weighted(kernel, graphs):
    """Phi diag(C) Phi^T with C(T) = f_G(T) of the first graph G of the batch having T."""
    F = kernel.features(kernel.prepare(graphs))
    A = F.to_csr(np.unique(F.keys)).toarray()
    C = A[np.argmax(A > 0, axis=0), np.arange(A.shape[1])]
    return (A * C) @ A.T


def _grakel_gram(h, graphs):
    gk = pytest.importorskip("grakel.kernels")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gk.OddSth(h=h).fit_transform(grakel_input(graphs, edge_labels=False))


def _parse(text):
    """GraKeL's tree string ``label(child,child)`` as a canonical nested tuple."""

    def node(i):
        j = i
        while j < len(text) and text[j] not in "(),":
            j += 1
        children = []
        if j < len(text) and text[j] == "(":
            j += 1
            while text[j] != ")":
                child, j = node(j)
                children.append(child)
                j += text[j] == ","
            j += 1
        return (text[i:j].split("(")[0], tuple(sorted(children))), j

    return node(0)[0]


def _grakel_strings(g, h):
    """GraKeL's tree strings of one graph (its per-graph BigDAG)."""
    grakel = pytest.importorskip("grakel")
    from grakel.kernels.odd_sth import make_big_dag

    x = next(iter(grakel.graph_from_networkx([g], node_labels_tag="label")))
    big = make_big_dag(grakel.Graph(x[0], x[1], {}, "dictionary"), -1 if h is None else h)
    return [v[2] for v in big[0].values()]


def _canonical_in_grakel(graphs, h):
    """The graphs none of whose trees GraKeL writes as two strings (anywhere in the batch)."""
    strings = [_grakel_strings(g, h) for g in graphs]
    spellings: dict = {}
    for per_graph in strings:
        for text in per_graph:
            spellings.setdefault(_parse(text), set()).add(text)
    return [
        g
        for g, per_graph in zip(graphs, strings, strict=True)
        if all(len(spellings[_parse(t)]) == 1 for t in per_graph)
    ]


@pytest.mark.parametrize("h", [None, 2, 3])
def test_grakel_gram_rebuilt_where_its_strings_are_canonical(molecular_graphs, h):
    graphs = _canonical_in_grakel(molecular_graphs, h)
    assert len(graphs) >= 50  # 57 (h=None), 54 (h=2), 55 (h=3) of the 200
    expected = _grakel_gram(h, graphs)
    np.testing.assert_allclose(_grakel_weighted(OddSth(h), graphs), expected, rtol=0, atol=1e-8)


def test_grakel_gram_rebuilt_at_depth_one(molecular_graphs):
    expected = _grakel_gram(1, molecular_graphs)
    got = _grakel_weighted(OddSth(1), molecular_graphs)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-8)


def test_grakel_strings_depend_on_numbering():
    """Why GraKeL is not the oracle at h >= 2: on a path of 5 equal labels its children order
    follows the node numbering, so one tree gets two strings (roots 1 and 3)."""
    g = nx.path_graph(5)
    nx.set_node_attributes(g, "C", "label")
    strings = _grakel_strings(g, 2)
    assert len({_parse(t) for t in strings}) == len(strings) - 1
    assert OddSth(2)([g]).item() == _brute_gram([g], 2)[0, 0]


def test_features_reproduce_gram_and_invariance(molecular_graphs):
    k = OddSth()
    F = k.features(k.prepare(molecular_graphs))
    K = k(molecular_graphs).numpy()
    np.testing.assert_allclose(sparse_feature_gram(F, F).numpy(), K, rtol=0, atol=1e-10)
    g = molecular_graphs[7]
    perm = nx.relabel_nodes(g, {v: len(g) - 1 - i for i, v in enumerate(g)})
    assert k([g, perm]).numpy()[0, 1] == pytest.approx(K[7, 7])


@pytest.mark.parametrize("kernel", [OddSth(), OddSth(2, node_label=None)], ids=repr)
def test_check_kernel(kernel, molecular_graphs):
    check_kernel(kernel, molecular_graphs[:30], molecular_graphs[30:40])


def test_parameter_errors():
    with pytest.raises(InputError, match="h"):
        OddSth(0)
    with pytest.raises(InputError, match="node_label"):
        OddSth(node_label=3)
