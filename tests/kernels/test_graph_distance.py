"""GraphDistance (exp(-t d_G) on the nodes of a graph) against the course's tables and
counterexample (part 2, section 5), networkx distances and brute-force CPD checks."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from kernelkit.kernels import GraphDistance
from kernelkit.testing import check_kernel
from kernelkit.utils import InputError

TREE = nx.Graph()
TREE.add_nodes_from(range(5))
TREE.add_edges_from([(0, 2), (1, 2), (2, 3), (3, 4)])

# the course's counterexample: nodes 1 and 5 both joined to 2, 3, 4 (K_{2,3})
K23 = nx.Graph()
K23.add_nodes_from(range(5))
K23.add_edges_from([(a, b) for a in (0, 4) for b in (1, 2, 3)])


def test_course_tree_table():
    expected = np.array(
        [
            [1, 0.14, 0.37, 0.14, 0.05],
            [0.14, 1, 0.37, 0.14, 0.05],
            [0.37, 0.37, 1, 0.37, 0.14],
            [0.14, 0.14, 0.37, 1, 0.37],
            [0.05, 0.05, 0.14, 0.37, 1],
        ]
    )
    k = GraphDistance(TREE, t=1.0)
    np.testing.assert_allclose(k(np.arange(5)).numpy(), expected, atol=0.005)
    assert k.conditionally_pd()


def test_equals_exp_of_networkx_distances():
    rng = np.random.default_rng(0)
    for seed in range(5):
        g = nx.random_labeled_tree(9, seed=seed)
        g.add_node(9)  # an isolated node: distance infinity, kernel 0
        d = dict(nx.all_pairs_shortest_path_length(g))
        t = float(rng.uniform(0.1, 2.0))
        expected = np.array([[np.exp(-t * d[i][j]) if j in d[i] else 0.0 for j in g] for i in g])
        np.testing.assert_allclose(GraphDistance(g, t=t)(np.arange(10)).numpy(), expected)


def test_course_counterexample_is_refused():
    """lambda_min(exp(-0.2 d)) = -0.0278, at t = 0.1 -0.0258; positive at t = 0.5 and 1."""
    d = np.array(nx.floyd_warshall_numpy(K23))
    assert np.linalg.eigvalsh(np.exp(-0.2 * d)).min() == pytest.approx(-0.0278, abs=1e-4)
    for t, value in [(0.2, "-0.0278"), (0.1, "-0.0258")]:
        with pytest.raises(InputError, match=value):
            GraphDistance(K23, t=t)
    for t in (0.5, 1.0):
        assert GraphDistance(K23, t=t)(np.arange(5)).numpy().shape == (5, 5)
    assert not GraphDistance(K23, t=1.0).conditionally_pd()


def _cpd_brute_force(d: np.ndarray, rng) -> bool:
    """-d CPD: x^T d x <= 0 for many random x with sum 0 (and the basis e_i - e_j)."""
    n = len(d)
    xs = [rng.standard_normal(n) for _ in range(3000)]
    xs += [np.eye(n)[i] - np.eye(n)[j] for i in range(n) for j in range(n)]
    return all((x - x.mean()) @ d @ (x - x.mean()) <= 1e-9 for x in xs)


@pytest.mark.parametrize(
    "graph",
    [
        nx.cycle_graph(5),
        nx.cycle_graph(6),
        nx.path_graph(6),
        nx.star_graph(4),
        K23,
        nx.complete_bipartite_graph(3, 3),
        nx.petersen_graph(),
    ],
)
def test_conditionally_pd_against_random_directions(graph):
    rng = np.random.default_rng(1)
    d = np.array(nx.floyd_warshall_numpy(graph))
    k = GraphDistance(graph, t=3.0)
    assert k.conditionally_pd() == _cpd_brute_force(d, rng)


def test_check_kernel():
    check_kernel(GraphDistance(TREE, t=0.7), np.array([0, 1, 2, 3, 4, 2]), np.array([4, 0]))
    with pytest.raises(InputError, match="t"):
        GraphDistance(TREE, t=0.0)
