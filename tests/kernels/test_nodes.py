"""Kernels on the nodes of a graph (issue 3): against scipy.linalg.expm, numpy inv/pinv and the
course's closed forms and tables (part 2, section 5)."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
import scipy.linalg as sla
import torch

from kernelkit.kernels._nodes import CommuteTime, Diffusion, RegularizedLaplacian, graph_laplacian
from kernelkit.testing import check_kernel
from kernelkit.utils._errors import InputError

# the course's 5-node tree: edges 1-3, 2-3, 3-4, 4-5 (0-based here); node i is the i-th node of
# list(TREE.nodes), so the nodes are added in order first
TREE = nx.Graph()
TREE.add_nodes_from(range(5))
TREE.add_edges_from([(0, 2), (1, 2), (2, 3), (3, 4)])
TREE_L = np.array(
    [
        [1, 0, -1, 0, 0],
        [0, 1, -1, 0, 0],
        [-1, -1, 3, -1, 0],
        [0, 0, -1, 2, -1],
        [0, 0, 0, -1, 1],
    ],
    dtype=float,
)
ALL = np.arange(5)


def random_weighted_graph(m: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    A = np.triu(rng.uniform(0.1, 2.0, (m, m)) * (rng.random((m, m)) < 0.4), 1)
    return A + A.T


def test_laplacian_of_course_tree():
    L = graph_laplacian(nx.to_numpy_array(TREE, nodelist=range(5)))
    np.testing.assert_array_equal(L, TREE_L)


@pytest.mark.parametrize("beta", [0.1, 0.7, 2.0])
def test_diffusion_equals_expm(beta):
    A = random_weighted_graph(12, 1)
    L = np.diag(A.sum(1)) - A
    K = Diffusion(A, beta=beta)(np.arange(12)).numpy()
    np.testing.assert_allclose(K, sla.expm(-beta * L), atol=1e-12)


def test_diffusion_complete_graph_closed_form():
    """Course: K_m, t = 0.3: K_ii = 0.378504, K_ij = 0.155374."""
    m, t = 5, 0.3
    K = Diffusion(nx.complete_graph(m), beta=t)(np.arange(m)).numpy()
    np.testing.assert_allclose(np.diag(K), (1 + (m - 1) * math.exp(-t * m)) / m, atol=1e-12)
    assert K[0, 1] == pytest.approx((1 - math.exp(-t * m)) / m, abs=1e-12)
    assert K[0, 0] == pytest.approx(0.378504, abs=1e-6)
    assert K[0, 1] == pytest.approx(0.155374, abs=1e-6)


def test_diffusion_cycle_closed_form():
    m, t = 7, 0.4
    K = Diffusion(nx.cycle_graph(m), beta=t)(np.arange(m)).numpy()
    for i, j in [(0, 0), (0, 1), (0, 3), (2, 6)]:
        expected = (
            sum(
                math.exp(-2 * t * (1 - math.cos(2 * math.pi * nu / m)))
                * math.cos(2 * math.pi * nu * (i - j) / m)
                for nu in range(m)
            )
            / m
        )
        assert K[i, j] == pytest.approx(expected, abs=1e-12)


def test_regularized_laplacian_equals_inverse_and_course_table():
    A = random_weighted_graph(10, 2)
    L = np.diag(A.sum(1)) - A
    K = RegularizedLaplacian(A, eps=0.3)(np.arange(10)).numpy()
    np.testing.assert_allclose(K, np.linalg.inv(L + 0.3 * np.eye(10)), atol=1e-12)
    course = np.array(
        [
            [0.60, 0.10, 0.19, 0.08, 0.04],
            [0.10, 0.60, 0.19, 0.08, 0.04],
            [0.19, 0.19, 0.38, 0.15, 0.08],
            [0.08, 0.08, 0.15, 0.46, 0.23],
            [0.04, 0.04, 0.08, 0.23, 0.62],
        ]
    )
    np.testing.assert_allclose(RegularizedLaplacian(TREE, eps=1.0)(ALL).numpy(), course, atol=6e-3)


def test_commute_time_equals_pinv_and_course_table():
    A = random_weighted_graph(10, 3)
    L = np.diag(A.sum(1)) - A
    K = CommuteTime(A)(np.arange(10)).numpy()
    np.testing.assert_allclose(K, np.linalg.pinv(L, hermitian=True), atol=1e-10)
    course = np.array(
        [
            [0.88, -0.12, 0.08, -0.32, -0.52],
            [-0.12, 0.88, 0.08, -0.32, -0.52],
            [0.08, 0.08, 0.28, -0.12, -0.32],
            [-0.32, -0.32, -0.12, 0.48, 0.28],
            [-0.52, -0.52, -0.32, 0.28, 1.08],
        ]
    )
    Kt = CommuteTime(TREE)(ALL).numpy()
    np.testing.assert_allclose(Kt, course, atol=1e-12)
    np.testing.assert_allclose(Kt @ np.ones(5), 0.0, atol=1e-12)  # K 1 = 0


def test_commute_time_disconnected_graph_equals_pinv():
    A = np.zeros((5, 5))
    A[0, 1] = A[1, 0] = A[2, 3] = A[3, 2] = A[3, 4] = A[4, 3] = 1.0
    L = np.diag(A.sum(1)) - A
    np.testing.assert_allclose(
        CommuteTime(A)(np.arange(5)).numpy(), np.linalg.pinv(L, hermitian=True), atol=1e-12
    )


def test_indexing_cross_blocks_and_columns():
    k = Diffusion(TREE, beta=0.5)
    full = k(ALL)
    torch.testing.assert_close(
        k(np.array([[3], [0]]), np.array([4, 4, 1])), full[[3, 0]][:, [4, 4, 1]]
    )
    torch.testing.assert_close(k.diag(np.array([2, 4])), full.diagonal()[[2, 4]])
    torch.testing.assert_close(k(torch.tensor([1, 2])), full[[1, 2]][:, [1, 2]])


def test_set_params_invalidates_the_cache():
    k = Diffusion(TREE, beta=0.5)
    before = k(ALL)
    k.set_params(beta=1.5)
    L = TREE_L
    np.testing.assert_allclose(k(ALL).numpy(), sla.expm(-1.5 * L), atol=1e-12)
    assert not torch.allclose(before, k(ALL))


# check_kernel's clone check compares parameters with ==, so the graph is given as nested tuples
TREE_T = tuple(map(tuple, nx.to_numpy_array(TREE).tolist()))


@pytest.mark.parametrize(
    "kernel",
    [Diffusion(TREE_T, beta=0.4), RegularizedLaplacian(TREE_T, eps=0.2), CommuteTime(TREE_T)],
    ids=lambda k: type(k).__name__,
)
def test_check_kernel(kernel):
    check_kernel(kernel, np.array([0, 1, 2, 3, 4, 2]), np.array([4, 0]))


def test_errors():
    k = Diffusion(TREE)
    with pytest.raises(InputError, match=r"node indices must lie in \[0, 5\), got 7 at position 1"):
        k(np.array([0, 7]))
    with pytest.raises(InputError, match="integer node indices"):
        k(np.array([0.5, 1.0]))
    with pytest.raises(InputError, match="1-D array"):
        k(np.zeros((2, 2), dtype=int))
    with pytest.raises(InputError, match="at least one node"):
        k(np.array([], dtype=int))
    with pytest.raises(InputError, match="symmetric"):
        Diffusion(np.array([[0, 1], [0, 0]]))
    with pytest.raises(InputError, match="non-negative"):
        Diffusion(np.array([[0, -1], [-1, 0]]))
    with pytest.raises(InputError, match="directed"):
        Diffusion(nx.DiGraph([(0, 1)]))
    with pytest.raises(InputError, match="beta"):
        Diffusion(TREE, beta=0.0)
    with pytest.raises(InputError, match="eps"):
        RegularizedLaplacian(TREE, eps=-1.0)
