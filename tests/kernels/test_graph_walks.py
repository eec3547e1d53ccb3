"""Walk-kernel variants of kernelkit.kernels.RandomWalk (marginalised / Markov, non-tottering,
n-th order) against brute-force enumeration of the walks of small labelled graphs and against
closed forms."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from kernelkit.kernels import BoundedPath, RandomWalk
from kernelkit.testing import check_kernel
from kernelkit.utils import InputError

nx = pytest.importorskip("networkx")


def _random_graphs(n: int, seed: int, tree: bool = False) -> list:
    rng = np.random.default_rng(seed)
    graphs = []
    for i in range(n):
        size = int(rng.integers(2, 7))
        if tree:
            g = nx.random_labeled_tree(size, seed=seed * 100 + i)
        else:
            g = nx.gnp_random_graph(size, 0.5, seed=seed * 100 + i)
        for v in g:
            g.nodes[v]["label"] = "CN"[int(rng.integers(2))]
        for u, v in g.edges:
            g.edges[u, v]["label"] = int(rng.integers(2))
        graphs.append(g)
    return graphs


def _walk_weights(g, length: int, kind: str, lam: float, tottering: bool, edges: bool) -> dict:
    """Sum of the walk weights of every label sequence of walks with ``length`` edges: each
    walk enumerated node by node (Markov: start, step and stop probabilities multiplied)."""
    out: dict = defaultdict(float)
    n = g.number_of_nodes()

    def successors(walk: tuple) -> list:
        nbrs = list(g.neighbors(walk[-1]))
        if not tottering and len(walk) > 1:
            nbrs = [w for w in nbrs if w != walk[-2]]
        return nbrs

    def grow(walk: tuple, weight: float, seq: tuple) -> None:
        nxt = successors(walk)
        if len(walk) == length + 1:
            if kind == "markov":
                weight *= (1 - lam) if nxt else 1.0
            out[seq] += weight
            return
        for w in nxt:
            step = lam / len(nxt) if kind == "markov" else 1.0
            lab = (g.edges[walk[-1], w]["label"] if edges else None, g.nodes[w]["label"])
            grow((*walk, w), weight * step, (*seq, lab))

    for v in g:
        grow((v,), 1.0 / n if kind == "markov" else 1.0, (g.nodes[v]["label"],))
    return out


def _brute_force(graphs_x, graphs_y, lengths, mu, kind, lam, tottering, edges) -> np.ndarray:
    K = np.zeros((len(graphs_x), len(graphs_y)))
    for k in lengths:
        fx = [_walk_weights(g, k, kind, lam, tottering, edges) for g in graphs_x]
        fy = [_walk_weights(g, k, kind, lam, tottering, edges) for g in graphs_y]
        for i, a in enumerate(fx):
            for j, b in enumerate(fy):
                K[i, j] += mu(k) * sum(w * b[s] for s, w in a.items() if s in b)
    return K


@pytest.mark.parametrize("tottering", [True, False])
@pytest.mark.parametrize("edges", [False, True])
def test_markov_equals_enumerated_walk_probabilities(tottering, edges):
    graphs = _random_graphs(6, seed=1)
    lam = 0.3  # product walks of length k weigh <= 0.09^k: length 12 leaves < 1e-12
    k = RandomWalk(lam, kind="markov", tottering=tottering, edge_label="label" if edges else None)
    expected = _brute_force(
        graphs, graphs[:4], range(13), lambda _: 1.0, "markov", lam, tottering, edges
    )
    np.testing.assert_allclose(k(graphs, graphs[:4]).numpy(), expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(
        k.diag(graphs).numpy(),
        np.diag(
            _brute_force(graphs, graphs, range(13), lambda _: 1.0, "markov", lam, tottering, edges)
        ),
        rtol=1e-9,
    )


@pytest.mark.parametrize("tottering", [True, False])
def test_truncated_and_order_walks_equal_enumeration(tottering):
    graphs = _random_graphs(6, seed=2)
    lam = 0.4
    truncated = RandomWalk(lam, p=4, tottering=tottering, edge_label="label")
    expected = _brute_force(
        graphs, graphs, range(5), lambda k: lam**k, "geometric", lam, tottering, True
    )
    np.testing.assert_allclose(truncated(graphs).numpy(), expected, rtol=1e-12)
    order = RandomWalk(lam, kind="order", p=3, tottering=tottering)
    expected = _brute_force(graphs, graphs, [3], lambda k: lam**k, "order", lam, tottering, False)
    np.testing.assert_allclose(order(graphs).numpy(), expected, rtol=1e-12)


def test_order_closed_forms_of_the_course():
    """Unlabelled edge x edge: 1^T A_x^n 1 = 4; triangle x triangle: 9 * 4^n."""
    edge, tri = nx.path_graph(2), nx.complete_graph(3)
    for n in range(5):
        k = RandomWalk(1.0, kind="order", p=n, node_label=None)
        assert k([edge]).item() == pytest.approx(4.0)
        assert k([tri]).item() == pytest.approx(9.0 * 4**n)
    # on a path of 3 nodes the non-tottering walks of 2 edges are the 2 end-to-end paths,
    # against 6 walks with steps back
    path3 = nx.path_graph(3)
    k2 = RandomWalk(1.0, kind="order", p=2, node_label=None, tottering=False)
    assert k2([path3]).item() == pytest.approx(4.0)
    assert RandomWalk(1.0, kind="order", p=2, node_label=None)([path3]).item() == 36.0


def test_markov_closed_form_on_one_edge():
    """One edge, no labels: K = sum_k c^2k (1-c)^2 = (1-c)/(1+c); non-tottering: the walk must
    stop after one step, K = (1-c)^2 + c^2."""
    edge = nx.path_graph(2)
    for c in (0.2, 0.5, 0.9):
        k = RandomWalk(c, kind="markov", node_label=None)
        assert k([edge]).item() == pytest.approx((1 - c) / (1 + c), rel=1e-9)
        k = RandomWalk(c, kind="markov", node_label=None, tottering=False)
        assert k([edge]).item() == pytest.approx((1 - c) ** 2 + c**2, rel=1e-12)


def test_non_tottering_walks_are_paths_on_trees():
    """On trees a walk without a step back is a simple path (course part 2, section 4)."""
    trees = _random_graphs(8, seed=3, tree=True)
    walks = RandomWalk(1.0, p=3, tottering=False, edge_label="label")
    paths = BoundedPath(3, edge_label="label")
    np.testing.assert_allclose(walks(trees).numpy(), paths(trees).numpy(), rtol=1e-12)


@pytest.mark.parametrize(
    "kernel",
    [
        RandomWalk(0.7, kind="markov"),
        RandomWalk(0.5, kind="markov", tottering=False, edge_label="label"),
        RandomWalk(0.1, tottering=False),
        RandomWalk(0.5, kind="order", p=3),
    ],
)
def test_check_kernel(kernel):
    graphs = _random_graphs(12, seed=4)
    check_kernel(kernel, graphs[:8], graphs[8:])


def test_bad_arguments():
    with pytest.raises(InputError, match="lam"):
        RandomWalk(1.0, kind="markov")
    with pytest.raises(InputError, match="p"):
        RandomWalk(0.5, kind="order")
    with pytest.raises(InputError, match="kind"):
        RandomWalk(0.5, kind="marginal")
