"""Wasserstein Weisfeiler-Lehman kernel (issue 29): a networkx transcription of the embedding
and SciPy's LP for the transport on 30 small attributed graphs, the 1-D closed form
(SciPy's wasserstein_distance), conformance where the kernel is p.d."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from scipy.optimize import linprog
from scipy.stats import wasserstein_distance

from kernelkit.kernels._graph_wwl import WassersteinWeisfeilerLehman
from kernelkit.testing import check_kernel
from kernelkit.utils._errors import InputError

pytest.importorskip("ot")


def _attributed(count=30, dim=3, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for k in range(count):
        g = nx.gnp_random_graph(int(rng.integers(1, 9)), 0.4, seed=k)  # isolated nodes too
        for v in g:
            g.nodes[v]["attributes"] = rng.normal(size=dim)
        out.append(g)
    return out


def _embedding(g, h):
    """a^(t+1)(v) = (a^t(v) + mean of the neighbours' a^t) / 2, concatenated, node by node."""
    a = {v: np.asarray(g.nodes[v]["attributes"], float) for v in g}
    layers = [a]
    for _ in range(h):
        prev = layers[-1]
        nxt = {}
        for v in g:
            nbrs = list(g.neighbors(v))
            mean = sum(prev[u] for u in nbrs) / len(nbrs) if nbrs else 0.0 * prev[v]
            nxt[v] = 0.5 * (prev[v] + mean)
        layers.append(nxt)
    return np.array([np.concatenate([layer[v] for layer in layers]) for v in g])


def _lp_wasserstein(x, y):
    n, m = len(x), len(y)
    M = np.sqrt(((x[:, None, :] - y[None, :, :]) ** 2).sum(-1))
    A = np.zeros((n + m, n * m))
    for i in range(n):
        A[i, i * m : (i + 1) * m] = 1
    for j in range(m):
        A[n + j, j::m] = 1
    b = np.r_[np.full(n, 1 / n), np.full(m, 1 / m)]
    return linprog(M.ravel(), A_eq=A, b_eq=b, bounds=(0, None), method="highs").fun


@pytest.mark.parametrize("n_iter", [0, 2])
def test_distances_equal_brute_force(n_iter):
    graphs = _attributed()
    k = WassersteinWeisfeilerLehman(n_iter, gamma=0.7)
    emb = [_embedding(g, n_iter) for g in graphs]
    D = np.zeros((len(emb), len(emb)))
    for i, j in zip(*np.triu_indices(len(emb), 1), strict=True):
        D[i, j] = D[j, i] = _lp_wasserstein(emb[i], emb[j])
    batch = k.prepare(graphs)
    np.testing.assert_allclose(k.distances(batch, batch), D, atol=1e-8)
    np.testing.assert_allclose(k(graphs).numpy(), np.exp(-0.7 * D), atol=1e-8)
    np.testing.assert_allclose(
        k(graphs[:9], graphs[9:]).numpy(), np.exp(-0.7 * D[:9, 9:]), atol=1e-8
    )


def test_one_dimensional_attributes_closed_form():
    graphs = _attributed(15, dim=1, seed=4)
    x = [np.array([g.nodes[v]["attributes"][0] for v in g]) for g in graphs]
    D = np.array([[wasserstein_distance(a, b) for b in x] for a in x])
    k = WassersteinWeisfeilerLehman(0)
    batch = k.prepare(graphs)
    np.testing.assert_allclose(k.distances(batch, batch), D, atol=1e-12)


def test_check_kernel_where_positive_definite():
    """1-D attributes, no iteration: exp(-gamma W_1) is p.d. (L1 distance of distribution
    functions, conditionally negative definite)."""
    graphs = _attributed(12, dim=1, seed=2)
    check_kernel(WassersteinWeisfeilerLehman(0, gamma=2.0), graphs[:8], graphs[8:])


def test_attributed_molecules(attributed_molecular_graphs):
    graphs = attributed_molecular_graphs[:25]
    k = WassersteinWeisfeilerLehman(2, gamma=0.5)
    K = k(graphs).numpy()
    emb = [_embedding(g, 2) for g in graphs[:6]]
    expected = np.exp(-0.5 * np.array([[_lp_wasserstein(a, b) for b in emb] for a in emb]))
    np.testing.assert_allclose(K[:6, :6], expected, atol=1e-8)
    np.testing.assert_allclose(np.diag(K), 1.0)


def test_errors_name_the_argument():
    with pytest.raises(InputError, match="gamma"):
        WassersteinWeisfeilerLehman(gamma=0)
    with pytest.raises(InputError, match="n_iter"):
        WassersteinWeisfeilerLehman(-1)
    with pytest.raises(InputError, match="attributes"):
        WassersteinWeisfeilerLehman()([nx.path_graph(3)])
