"""Core framework (issue 29): core numbers against networkx, Grams against GraKeL 0.1.11's
CoreFramework on 200 molecular graphs, features, conformance; GraphBatch.induced."""

from __future__ import annotations

import warnings

import networkx as nx
import numpy as np
import pytest
import torch

from kernelkit.data._graphs import GraphBatch
from kernelkit.kernels._features import sparse_feature_gram
from kernelkit.kernels._graph_core import CoreFramework, core_numbers
from kernelkit.kernels._graph_histograms import NeighborhoodHash
from kernelkit.kernels._graphs import ShortestPath, WeisfeilerLehman
from kernelkit.testing import check_kernel
from kernelkit.utils._errors import InputError

from .conftest import grakel_input
from .test_graphs import random_graphs

gk = pytest.importorskip("grakel.kernels")


def test_core_numbers_equal_networkx():
    graphs = [nx.gnp_random_graph(k, 0.3, seed=k) for k in range(1, 40)]
    graphs.append(nx.complete_graph(6))
    batch = GraphBatch.from_networkx(graphs, node_label=None)
    expected = np.concatenate([[nx.core_number(g)[v] for v in g] for g in graphs])
    np.testing.assert_array_equal(core_numbers(batch), expected)


def test_induced_subgraphs_equal_networkx():
    graphs = random_graphs(15, 1, max_nodes=9, edge_labels=True)
    batch = GraphBatch.from_networkx(graphs, edge_label="label")
    keep = np.random.default_rng(0).random(int(batch.node_ptr[-1])) < 0.6
    sub = batch.induced(keep)
    for i, g in enumerate(graphs):
        a = int(batch.node_ptr[i])
        nodes = [v for j, v in enumerate(g) if keep[a + j]]
        h = nx.convert_node_labels_to_integers(g.subgraph(nodes))
        np.testing.assert_array_equal(sub.adjacency(i).toarray(), nx.to_numpy_array(h))
        b = int(sub.node_ptr[i])
        labels = [batch.node_labels[a + j] for j in range(len(g)) if keep[a + j]]
        np.testing.assert_array_equal(sub.node_labels[b : b + len(labels)], labels)
    assert len(sub.adj_idx) == len(sub.edge_labels)


def _grakel_cf(graphs, base, **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return gk.CoreFramework(base_graph_kernel=base, **params).fit_transform(
            grakel_input(graphs)
        )


@pytest.mark.parametrize(
    ("ours", "base", "params"),
    [
        (CoreFramework(), gk.ShortestPath, {}),
        (CoreFramework().normalized(), gk.ShortestPath, {"normalize": True}),
        (
            CoreFramework(WeisfeilerLehman(3)),
            (gk.WeisfeilerLehman, {"n_iter": 3, "base_graph_kernel": gk.VertexHistogram}),
            {},
        ),
        (
            CoreFramework(NeighborhoodHash(2)),
            (gk.NeighborhoodHash, {"R": 2, "bits": 24, "random_state": 0}),
            {},
        ),
    ],
    ids=["sp", "sp-normalized", "wl", "nh"],
)
def test_equals_grakel_on_molecular_graphs(molecular_graphs, ours, base, params):
    expected = _grakel_cf(molecular_graphs, base, **params)
    np.testing.assert_allclose(ours(molecular_graphs).numpy(), expected, rtol=0, atol=1e-8)


def test_sum_over_cores_brute_force():
    """sum_i k(C_i(G), C_i(G')) with the cores taken by networkx.k_core."""
    graphs = random_graphs(12, 6, max_nodes=10)
    base = WeisfeilerLehman(2)

    def core(g, i):
        return nx.k_core(g, i) if i > 0 else g

    top = max(max(nx.core_number(g).values()) for g in graphs)
    expected = np.zeros((12, 12))
    for i in range(top + 1):
        cores = [core(g, i) for g in graphs]
        for a, ga in enumerate(cores):
            for b, gb in enumerate(cores):
                if len(ga) and len(gb):
                    expected[a, b] += base([ga], [gb]).item()
    np.testing.assert_allclose(CoreFramework(base)(graphs).numpy(), expected)
    above = CoreFramework(base, min_core=0)(graphs).numpy()
    np.testing.assert_allclose(above, expected - base(graphs).numpy())


@pytest.mark.parametrize(
    "kernel",
    [CoreFramework(), CoreFramework(WeisfeilerLehman(2)), CoreFramework(NeighborhoodHash(2))],
    ids=repr,
)
def test_check_kernel_and_features(kernel, molecular_graphs):
    check_kernel(kernel, molecular_graphs[:25], molecular_graphs[25:32])
    F = kernel.features(kernel.prepare(molecular_graphs))
    if isinstance(kernel.base_, NeighborhoodHash):
        assert F is None
        return
    np.testing.assert_allclose(
        sparse_feature_gram(F, F).numpy(), kernel(molecular_graphs).numpy(), atol=1e-10
    )


def test_grid_search_reaches_base_parameters():
    k = CoreFramework(WeisfeilerLehman(1))
    k.set_params(base_graph_kernel__n_iter=3, min_core=0)
    assert k.base_.n_iter == 3 and k.min_core == 0
    graphs = random_graphs(6, 2)
    torch.testing.assert_close(k(graphs), CoreFramework(WeisfeilerLehman(3), min_core=0)(graphs))
    with pytest.raises(InputError, match="base_graph_kernel"):
        CoreFramework("ShortestPath")
    with pytest.raises(InputError, match="min_core"):
        CoreFramework(min_core=-2)
    assert isinstance(CoreFramework().base_, ShortestPath)
