"""Morgan-index relabelling (kernelkit.kernels.morgan_relabel) against a networkx loop."""

from __future__ import annotations

import numpy as np
import pytest

from kernelkit.kernels import BoundedPath, VertexHistogram, WeisfeilerLehman, morgan_relabel

nx = pytest.importorskip("networkx")


def _graphs(seed: int) -> list:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(6):
        g = nx.gnp_random_graph(int(rng.integers(2, 9)), 0.4, seed=seed * 10 + i)
        for v in g:
            g.nodes[v]["label"] = "CNO"[int(rng.integers(3))]
        out.append(g)
    return out


def _morgan(g, n_iter: int) -> dict:
    m = dict.fromkeys(g.nodes, 1)
    for _ in range(n_iter):
        m = {v: sum(m[u] for u in g.neighbors(v)) for v in g.nodes}
    return m


@pytest.mark.parametrize("n_iter", [0, 1, 3])
def test_relabelled_graphs_equal_a_networkx_relabelling(n_iter):
    X, Y = _graphs(0), _graphs(1)

    def by_hand(graphs: list) -> list:
        out = []
        for g in graphs:
            h, m = g.copy(), _morgan(g, n_iter)
            for v in h:
                h.nodes[v]["label"] = f"{g.nodes[v]['label']}|{m[v]}"
            out.append(h)
        return out

    for kernel in (VertexHistogram(), BoundedPath(2), WeisfeilerLehman(2)):
        got = kernel(morgan_relabel(X, n_iter), morgan_relabel(Y, n_iter)).numpy()
        np.testing.assert_array_equal(got, kernel(by_hand(X), by_hand(Y)).numpy())


def test_morgan_index_counts_walks():
    from kernelkit.data import GraphBatch
    from kernelkit.kernels import morgan_index

    g = nx.star_graph(3)  # centre 0, leaves 1..3
    batch = GraphBatch.from_networkx([g], node_label=None)
    A = nx.to_numpy_array(g, nodelist=list(g.nodes))
    for n_iter in range(4):
        expected = np.linalg.matrix_power(A, n_iter) @ np.ones(4)
        np.testing.assert_array_equal(morgan_index(batch, n_iter), expected)
