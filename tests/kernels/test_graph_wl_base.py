"""WL relabelling as preprocessing for another base kernel (WeisfeilerLehman(base_graph_kernel=))
against GraKeL's general WL kernel and against a networkx transcription of the relabelling."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from kernelkit.kernels import (
    RandomWalk,
    ShortestPath,
    VertexHistogram,
    WeisfeilerLehman,
)
from kernelkit.testing import check_kernel
from kernelkit.utils import InputError


def _graphs(n: int, seed: int) -> list:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        g = nx.gnp_random_graph(int(rng.integers(1, 9)), 0.4, seed=int(rng.integers(2**31)))
        for v in g:
            g.nodes[v]["label"] = "ABC"[int(rng.integers(3))]
        out.append(g)
    return out


GRAPHS = _graphs(30, 5)


def _wl_relabel(graphs: list, n_iter: int) -> list[list]:
    """Graphs of iterations 0..n_iter, label = (own label, sorted neighbour labels) as text."""
    levels = [graphs]
    for _ in range(n_iter):
        nxt = []
        for g in levels[-1]:
            h = g.copy()
            for v in g:
                nbrs = sorted(str(g.nodes[u]["label"]) for u in g.neighbors(v))
                h.nodes[v]["label"] = repr((str(g.nodes[v]["label"]), nbrs))
            nxt.append(h)
        levels.append(nxt)
    return levels


@pytest.mark.parametrize("n_iter", [1, 2, 3])
def test_wl_shortest_path_equals_grakel(n_iter):
    grakel = pytest.importorskip("grakel")
    from grakel.kernels import ShortestPath as GSP
    from grakel.kernels import WeisfeilerLehman as GWL

    gg = list(grakel.graph_from_networkx(GRAPHS, node_labels_tag="label"))
    expected = GWL(n_iter=n_iter, base_graph_kernel=GSP).fit_transform(gg)
    K = WeisfeilerLehman(n_iter, base_graph_kernel=ShortestPath())(GRAPHS).numpy()
    np.testing.assert_allclose(K, expected, rtol=0, atol=1e-9)


def test_base_without_features_equals_sum_over_relabelled_graphs():
    base = RandomWalk(0.2, p=3)
    k = WeisfeilerLehman(2, base_graph_kernel=base)
    assert k.features(k.prepare(GRAPHS[:3])) is None
    expected = sum(base(level[:12], level[12:20]).numpy() for level in _wl_relabel(GRAPHS, 2))
    np.testing.assert_allclose(k(GRAPHS[:12], GRAPHS[12:20]).numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(
        k.diag(GRAPHS).numpy(),
        sum(base.diag(level).numpy() for level in _wl_relabel(GRAPHS, 2)),
        rtol=1e-12,
    )


def test_vertex_histogram_base_is_the_subtree_kernel():
    plain = WeisfeilerLehman(3)(GRAPHS).numpy()
    based = WeisfeilerLehman(3, base_graph_kernel=VertexHistogram())(GRAPHS).numpy()
    np.testing.assert_allclose(based, plain, rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    "base", [ShortestPath(), RandomWalk(0.1, p=2), RandomWalk(0.5, kind="markov")]
)
def test_check_kernel(base):
    check_kernel(WeisfeilerLehman(2, base_graph_kernel=base), GRAPHS[:8], GRAPHS[8:12])


def test_bad_base():
    with pytest.raises(InputError, match="base_graph_kernel"):
        WeisfeilerLehman(2, base_graph_kernel=ShortestPath(node_label=None))
    with pytest.raises(InputError, match="base_graph_kernel"):
        WeisfeilerLehman(2, base_graph_kernel="sp")
