"""Lovász theta SDP, the max-margin (SVM-theta) QP and uniform optimal transport (issue 29):
closed forms, brute force over supports / permutations, CVXOPT and SciPy's LP as oracles."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest
from scipy.optimize import linprog

from kernelkit.solvers._theta import lovasz_theta, max_margin_value, max_margin_values, svm_theta
from kernelkit.solvers._transport import wasserstein_uniform
from kernelkit.utils._errors import InputError

pytest.importorskip("cvxopt")


def _adj(g):
    return nx.to_numpy_array(g)


def _random_graphs(count=30):
    """G(n, p) graphs with 1-14 nodes, sparse and dense, some disconnected."""
    rng = np.random.default_rng(7)
    return [
        nx.gnp_random_graph(int(rng.integers(1, 15)), float(rng.uniform(0.1, 0.8)), seed=k)
        for k in range(count)
    ]


@pytest.mark.parametrize(
    ("graph", "theta"),
    [
        (nx.cycle_graph(5), np.sqrt(5)),
        (nx.complete_graph(6), 1.0),
        (nx.empty_graph(7), 7.0),
        (nx.petersen_graph(), 4.0),
        (nx.cycle_graph(7), 7 * np.cos(np.pi / 7) / (1 + np.cos(np.pi / 7))),
        (nx.cycle_graph(6), 3.0),  # perfect graph: theta = independence number
        (nx.path_graph(5), 3.0),
        (nx.complete_bipartite_graph(2, 3), 3.0),
        (nx.empty_graph(1), 1.0),
    ],
    ids=["C5", "K6", "empty7", "Petersen", "C7", "C6", "P5", "K23", "K1"],
)
def test_lovasz_theta_closed_forms(graph, theta):
    res = lovasz_theta(_adj(graph))
    assert res.theta == pytest.approx(theta, rel=1e-7)
    A = _adj(graph)
    G = res.gram
    n = len(A)
    non_adjacent = (A == 0) & ~np.eye(n, dtype=bool)
    np.testing.assert_allclose(np.diag(G), 1.0, atol=1e-12)  # unit vectors
    assert np.abs(G[non_adjacent]).max(initial=0.0) <= 1e-12  # orthogonal if non-adjacent
    assert np.linalg.eigvalsh(G).min() >= -1e-7 * n  # a Gram matrix
    # the whole vertex set's cone is the handle's: theta_V = theta(G)
    assert max_margin_value(G, tol=1e-7)[0] == pytest.approx(theta, rel=1e-6)


def test_lovasz_theta_equals_grakel_on_complements():
    """GraKeL's SDP constrains the non-edges: its number is theta of the complement graph."""
    lt = pytest.importorskip("grakel.kernels.lovasz_theta")
    for g in _random_graphs():
        if len(g) < 2:
            continue
        A = _adj(g)
        _, t = lt._calculate_lovasz_embeddings_(A)
        comp = 1.0 - A - np.eye(len(A))
        assert lovasz_theta(comp).theta == pytest.approx(t, rel=1e-6)


def _brute_force_max_margin(K):
    """max 2 e'a - a'Ka over a >= 0 by enumerating supports (KKT on each)."""
    n = len(K)
    best = 0.0
    for r in range(1, n + 1):
        for S in itertools.combinations(range(n), r):
            S = list(S)
            a = np.zeros(n)
            a[S] = np.linalg.lstsq(K[np.ix_(S, S)], np.ones(r), rcond=None)[0]
            if a.min() >= -1e-12:
                best = max(best, 2 * a.sum() - a @ K @ a)
    return best


@pytest.mark.parametrize("rank", [2, 4, 6])
def test_max_margin_value_brute_force(rank):
    rng = np.random.default_rng(rank)
    for _ in range(10):
        U = rng.normal(size=(rank, 6))
        U[0] = np.abs(U[0]) + 0.05  # an open half-space: the cone program is feasible
        U /= np.linalg.norm(U, axis=0)  # unit vectors: K has a unit diagonal
        K = U.T @ U
        value, alpha = max_margin_value(K)
        assert alpha.min() >= 0
        assert value == pytest.approx(2 * alpha.sum() - alpha @ K @ alpha, rel=1e-9)
        assert value == pytest.approx(_brute_force_max_margin(K), rel=1e-8)


def test_max_margin_value_repeated_vectors():
    K = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    assert max_margin_value(K)[0] == pytest.approx(2.0, rel=1e-12)


def test_svm_theta_against_cvxopt_qp():
    cvxopt = pytest.importorskip("cvxopt")
    for g in _random_graphs():
        A = _adj(g)
        omega, alpha = svm_theta(A)
        n = len(A)
        if not A.any():
            assert omega == n
            continue
        K = np.eye(n) + A / -np.linalg.eigvalsh(A)[0]
        sol = cvxopt.solvers.qp(
            cvxopt.matrix(2 * K),
            cvxopt.matrix(-2.0 * np.ones(n)),
            cvxopt.matrix(-np.eye(n)),
            cvxopt.matrix(np.zeros(n)),
            options={"show_progress": False, "abstol": 1e-12, "reltol": 1e-12},
        )
        expected = -sol["primal objective"]
        assert omega == pytest.approx(expected, rel=1e-7)
        assert alpha.sum() == pytest.approx(omega, rel=1e-12)


def test_svm_theta_closed_forms():
    assert svm_theta(_adj(nx.empty_graph(5)))[0] == 5.0
    assert svm_theta(_adj(nx.complete_graph(5)))[0] == pytest.approx(1.0, rel=1e-12)
    # C5: rho = 2 cos(pi/5)... regular graph, alpha uniform: omega = n / (1 + d / rho)
    rho = -2 * np.cos(4 * np.pi / 5)
    assert svm_theta(_adj(nx.cycle_graph(5)))[0] == pytest.approx(5 / (1 + 2 / rho), rel=1e-10)


def _lp_transport(M):
    n, m = M.shape
    A = np.zeros((n + m, n * m))
    for i in range(n):
        A[i, i * m : (i + 1) * m] = 1
    for j in range(m):
        A[n + j, j::m] = 1
    b = np.r_[np.full(n, 1 / n), np.full(m, 1 / m)]
    return linprog(M.ravel(), A_eq=A, b_eq=b, bounds=(0, None), method="highs").fun


@pytest.mark.parametrize(("n", "m"), [(1, 1), (1, 4), (4, 1), (5, 5), (3, 7), (6, 4)])
def test_wasserstein_uniform_against_linprog(n, m):
    pytest.importorskip("ot")
    rng = np.random.default_rng(n * 10 + m)
    M = rng.random((n, m))
    assert wasserstein_uniform(M) == pytest.approx(_lp_transport(M), abs=1e-10)


def test_wasserstein_uniform_graph_sized_views():
    """The network simplex on graph-sized blocks (33 x 31, ties from repeated rows), given
    non-contiguous views and transposes, against POT's public ``ot.emd2`` and SciPy's LP."""
    ot = pytest.importorskip("ot")
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(33, 4)), rng.normal(size=(31, 4))
    x[5:9] = x[0]  # repeated embeddings: degenerate costs
    M = np.sqrt(((x[:, None] - y[None]) ** 2).sum(-1))
    wide = np.hstack([M, rng.random((33, 5))])
    expected = ot.emd2(np.full(33, 1 / 33), np.full(31, 1 / 31), M)
    assert expected == pytest.approx(_lp_transport(M), abs=1e-9)
    for block in (M, wide[:, :31], M.T, np.asfortranarray(M)):
        assert wasserstein_uniform(block) == pytest.approx(expected, abs=1e-12)


def test_wasserstein_equal_sizes_is_best_permutation():
    rng = np.random.default_rng(1)
    M = rng.random((6, 6))
    best = min(M[range(6), p].sum() for p in itertools.permutations(range(6))) / 6
    assert wasserstein_uniform(M) == pytest.approx(best, abs=1e-14)


def test_bad_inputs_name_the_argument():
    with pytest.raises(InputError, match="A: expected a non-empty square"):
        lovasz_theta(np.zeros((2, 3)))
    with pytest.raises(InputError, match="M: expected a non-empty"):
        wasserstein_uniform(np.zeros((0, 3)))


def test_batched_support_enumeration_equals_active_set():
    rng = np.random.default_rng(11)
    for d in (1, 3, 6):
        Ks = []
        for _ in range(40):
            U = rng.normal(size=(3, d))
            U[0] = np.abs(U[0]) + 0.05
            U /= np.linalg.norm(U, axis=0)
            Ks.append(U.T @ U)
        Ks.append(np.ones((d, d)))  # all vectors equal: omega = 1
        values = max_margin_values(np.array(Ks))
        expected = [max_margin_value(K)[0] for K in Ks]
        np.testing.assert_allclose(values, expected, rtol=1e-8)
        assert values[-1] == pytest.approx(1.0, rel=1e-8)
