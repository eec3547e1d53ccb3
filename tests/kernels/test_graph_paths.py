"""The bounded path kernel (kernelkit.kernels.BoundedPath) against a brute-force double loop
over all pairs of simple paths, and as the sigma -> 0 limit of the one-layer GCKN."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from kernelkit.kernels import BoundedPath
from kernelkit.testing import check_kernel

nx = pytest.importorskip("networkx")


def _random_graphs(n: int, seed: int) -> list:
    rng = np.random.default_rng(seed)
    graphs = []
    for i in range(n):
        g = nx.gnp_random_graph(int(rng.integers(3, 8)), 0.45, seed=seed * 100 + i)
        for v in g:
            g.nodes[v]["label"] = "CNO"[int(rng.integers(3))]
        for u, v in g.edges:
            g.edges[u, v]["label"] = int(rng.integers(2))
        graphs.append(g)
    return graphs


def _paths(g, length: int) -> list[tuple]:
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


def _signature(g, p: tuple, edges: bool) -> tuple:
    labels = tuple(g.nodes[v]["label"] for v in p)
    if not edges:
        return labels
    return labels + tuple(g.edges[a, b]["label"] for a, b in itertools.pairwise(p))


def _brute(g, h, k: int, edges: bool) -> int:
    return sum(
        _signature(g, p, edges) == _signature(h, q, edges)
        for length in range(k + 1)
        for p in _paths(g, length)
        for q in _paths(h, length)
    )


@pytest.mark.parametrize(("k", "edges"), [(0, False), (2, False), (3, True)])
def test_bounded_path_kernel_equals_the_brute_force_double_loop(k, edges):
    X, Y = _random_graphs(7, 0), _random_graphs(5, 1)
    kernel = BoundedPath(k, edge_label="label" if edges else None)
    expected = np.array([[_brute(g, h, k, edges) for h in Y] for g in X], dtype=float)
    np.testing.assert_array_equal(kernel(X, Y).numpy(), expected)
    check_kernel(kernel, X, Y)


def test_unlabelled_paths_count_by_length():
    g = nx.cycle_graph(4)
    # paths of 0..2 edges in a 4-cycle: 4, 8, 8 (ordered), so k(C4, C4) = 16 + 64 + 64
    assert float(BoundedPath(2, node_label=None)([g])[0, 0]) == 16 + 64 + 64


def test_is_the_small_sigma_limit_of_the_relaxed_path_kernel():
    """One-layer GCKN with every path feature as an anchor and a small sigma: exp(-m / (l+1)
    sigma^2) for m mismatched labels vanishes unless the label sequences agree."""
    import torch

    from kernelkit import GraphCKNFeatures

    graphs = _random_graphs(4, 2)
    est = GraphCKNFeatures(
        120, 2, sigma=0.05, shift=0.0, normalize=False, standardize=False, random_state=0
    ).fit(graphs)
    batch = est._inputs(graphs, reset=False)
    generator = torch.Generator().manual_seed(0)
    for length, anchors in enumerate(est.network_.layers[0].maps):
        p = batch.paths[length]
        rows = torch.unique(batch.x[p].reshape(p.shape[0], -1), dim=0)
        extra = torch.randn(
            120 - rows.shape[0], rows.shape[1], generator=generator, dtype=rows.dtype
        )
        anchors.set_anchors(torch.cat([rows, extra]))
    Phi = est.transform(graphs)
    np.testing.assert_allclose(Phi @ Phi.T, BoundedPath(2)(graphs).numpy(), rtol=1e-10)
