"""Tree-pattern kernels (kernelkit.kernels.TreePattern) against a brute-force count of the
tree-pattern occurrences of small labelled graphs, closed forms, and check_kernel."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest

from kernelkit.kernels import TreePattern, VertexHistogram
from kernelkit.kernels._graph_subtree import matching_sums
from kernelkit.testing import check_kernel
from kernelkit.utils import InputError

nx = pytest.importorskip("networkx")


def _graphs(n: int, seed: int, max_degree: int = 3) -> list:
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        g = nx.gnp_random_graph(int(rng.integers(1, 7)), 0.45, seed=int(rng.integers(2**31)))
        if g.number_of_nodes() and max(d for _, d in g.degree) > max_degree:
            continue
        for v in g:
            g.nodes[v]["label"] = "CN"[int(rng.integers(2))]
        for u, v in g.edges:
            g.edges[u, v]["label"] = int(rng.integers(2))
        out.append(g)
    return out


def _occurrences(g, u, parent, depth: int, tottering: bool, edges: bool) -> Counter:
    """Counter canonical tree -> number of tree-pattern occurrences rooted at ``u``: the
    children are a subset of the neighbours (minus the parent if non-tottering), each the
    root of an occurrence of depth - 1."""
    label = g.nodes[u]["label"]
    out: Counter = Counter({(label, ()): 1})
    if depth == 0:
        return out
    nbrs = [w for w in g.neighbors(u) if tottering or w != parent]
    subs = {w: _occurrences(g, w, u, depth - 1, tottering, edges) for w in nbrs}
    for size in range(1, len(nbrs) + 1):
        for chosen in itertools.combinations(nbrs, size):
            for combo in itertools.product(*(subs[w].items() for w in chosen)):
                kids = tuple(
                    sorted(
                        (g.edges[u, w]["label"] if edges else None, t)
                        for w, (t, _) in zip(chosen, combo, strict=True)
                    )
                )
                out[(label, kids)] += math.prod(c for _, c in combo)
    return out


def _size(t) -> int:
    return 1 + sum(_size(c) for _, c in t[1])


def _aut(t) -> int:
    """Automorphisms of a labelled rooted tree: permutations of identical child branches."""
    out = 1
    for branch, m in Counter(t[1]).items():
        out *= math.factorial(m) * _aut(branch[1]) ** m
    return out


def _brute_force(gx, gy, depth, lam, tottering, edges) -> np.ndarray:
    def psi(g) -> Counter:
        c: Counter = Counter()
        for u in g:
            c.update(_occurrences(g, u, None, depth, tottering, edges))
        return c

    px, py = [psi(g) for g in gx], [psi(g) for g in gy]
    K = np.zeros((len(gx), len(gy)))
    for i, a in enumerate(px):
        for j, b in enumerate(py):
            K[i, j] = sum(lam ** _size(t) * _aut(t) * n * b[t] for t, n in a.items() if t in b)
    return K


def test_matching_sums_against_enumeration():
    rng = np.random.default_rng(0)
    W = rng.random((5, 3, 4))
    expected = np.zeros(5)
    for p in range(5):
        for size in range(4):
            for rows in itertools.combinations(range(3), size):
                for cols in itertools.permutations(range(4), size):
                    expected[p] += math.prod(W[p, r, c] for r, c in zip(rows, cols, strict=True))
    np.testing.assert_allclose(matching_sums(W), expected, rtol=1e-12)
    np.testing.assert_allclose(matching_sums(W.transpose(0, 2, 1)), expected, rtol=1e-12)


@pytest.mark.parametrize("tottering", [True, False])
@pytest.mark.parametrize(
    ("depth", "lam", "edges"), [(1, 1.0, False), (2, 0.5, True), (2, 1.0, False)]
)
def test_equals_brute_force_tree_pattern_counts(depth, lam, edges, tottering):
    graphs = _graphs(10, seed=depth)
    k = TreePattern(depth, lam=lam, tottering=tottering, edge_label="label" if edges else None)
    expected = _brute_force(graphs, graphs[:6], depth, lam, tottering, edges)
    np.testing.assert_allclose(k(graphs, graphs[:6]).numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(
        k.diag(graphs).numpy(),
        np.diag(_brute_force(graphs, graphs, depth, lam, tottering, edges)),
        rtol=1e-12,
    )


def test_depth_three_on_cycles_and_paths():
    graphs = [nx.cycle_graph(5), nx.path_graph(4), nx.cycle_graph(4), nx.path_graph(6)]
    for g in graphs:
        nx.set_node_attributes(g, {v: "CN"[v % 2] for v in g}, "label")
    for tottering in (True, False):
        expected = _brute_force(graphs, graphs, 3, 0.7, tottering, False)
        got = TreePattern(3, lam=0.7, tottering=tottering)(graphs).numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_depth_zero_is_the_vertex_histogram():
    graphs = _graphs(8, seed=7)
    np.testing.assert_allclose(
        TreePattern(0)(graphs).numpy(), VertexHistogram()(graphs).numpy(), rtol=0, atol=1e-12
    )


def test_closed_form_on_one_edge():
    """Unlabelled edge, depth 1: k_1(u, v) = 1 + k_0 = 2 for each of the 4 node pairs: K = 8;
    depth d: k_d = 1 + k_{d-1}, so K = 4 (d + 1)."""
    edge = nx.path_graph(2)
    for d in range(5):
        assert TreePattern(d, node_label=None)([edge]).item() == pytest.approx(4.0 * (d + 1))


@pytest.mark.parametrize(
    "kernel",
    [TreePattern(2), TreePattern(3, lam=0.5, edge_label="label"), TreePattern(2, tottering=False)],
)
def test_check_kernel(kernel):
    graphs = _graphs(12, seed=11)
    check_kernel(kernel, graphs[:8], graphs[8:])


def test_bad_arguments():
    with pytest.raises(InputError, match="depth"):
        TreePattern(-1)
    with pytest.raises(InputError, match="lam"):
        TreePattern(2, lam=0.0)
