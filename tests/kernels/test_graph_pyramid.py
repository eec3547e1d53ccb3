"""Pyramid match (issue 29): level histograms and Gram equal GraKeL 0.1.11's on the molecular
graphs whose spectral embedding is canonical (GraKeL's in-loop level weighting); brute-force
histograms; features reproduce the Gram; conformance."""

from __future__ import annotations

import warnings

import networkx as nx
import numpy as np
import pytest

from kernelkit.kernels._features import sparse_feature_gram
from kernelkit.kernels._graph_histograms import unary_features
from kernelkit.kernels._graph_pyramid import PyramidMatch, spectral_embedding
from kernelkit.testing import check_kernel
from kernelkit.utils._errors import InputError

from .conftest import grakel_input
from .test_graphs import random_graphs


def _canonical(g, d, L):
    """Simple selected eigenvalues, a clear cut to the rest, no coordinate on a cell border:
    only then is |U| unique and are GraKeL's cells (from ARPACK / numpy.linalg.eig) ours."""
    A = nx.to_numpy_array(g)
    lam = np.linalg.eigvalsh(A)
    sel = lam
    if len(A) > d + 1:
        order = np.argsort(-np.abs(lam))
        sel, rest = lam[order[:d]], lam[order[d:]]
        if np.abs(sel).min() - np.abs(rest).max() < 1e-6:
            return False
    if len(sel) > 1 and np.diff(np.sort(sel)).min() < 1e-6:
        return False
    U = spectral_embedding(A, d)
    for level in range(L):
        f = U * 2**level
        inner = (f > 1e-9) & (f < 2**level - 1e-9)
        if np.abs(f - np.round(f))[inner].min(initial=1.0) < 1e-7:
            return False
    return True


def _intersections(k, graphs):
    H = k.level_histograms(k.prepare(graphs))
    return np.stack([sparse_feature_gram(unary_features(h), unary_features(h)).numpy() for h in H])


@pytest.mark.parametrize(("L", "d", "with_labels"), [(4, 6, True), (3, 4, False)])
def test_equals_grakel_on_canonical_molecular_graphs(molecular_graphs, L, d, with_labels):
    """Same level intersections and same Gram as GraKeL (1e-8) wherever the embedding is
    unique; elsewhere GraKeL's ARPACK start vector is random and so is its Gram."""
    gk = pytest.importorskip("grakel.kernels")
    graphs = [g for g in molecular_graphs if _canonical(g, d, L)]
    assert len(graphs) >= 60
    theirs = gk.PyramidMatch(L=L, d=d, with_labels=with_labels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        K_grakel = theirs.fit_transform(grakel_input(graphs, edge_labels=False))
    inter_grakel = np.array(
        [[[np.minimum(a[p], b[p]).sum() for b in theirs.X] for a in theirs.X] for p in range(L)]
    )
    k = PyramidMatch(L, d, node_label="label" if with_labels else None)
    np.testing.assert_array_equal(_intersections(k, graphs), inter_grakel)
    np.testing.assert_allclose(k(graphs).numpy(), K_grakel, rtol=0, atol=1e-8)
    np.testing.assert_allclose(
        k.normalized()(graphs).numpy(),
        K_grakel / np.sqrt(np.outer(np.diag(K_grakel), np.diag(K_grakel))),
        rtol=0,
        atol=1e-12,
    )


@pytest.mark.parametrize("L", [1, 2, 4, 6])
def test_weights_are_grakels_in_loop_accumulation(L):
    """GraKeL adds eq. (6) after every level, with the levels not yet computed at 0."""
    inter = np.random.default_rng(L).random(L)
    accumulated = 0.0
    for t in range(L):
        It = np.where(np.arange(L) <= t, inter, 0.0)
        accumulated += It[L - 1] + sum(
            2.0 ** -(L - p - 1) * (It[p] - It[p + 1]) for p in range(L - 1)
        )
    k = PyramidMatch(L)
    assert k.weights() @ inter == pytest.approx(accumulated, rel=1e-14)
    assert (k.weights() > 0).all()
    expected = [L * 2.0 ** -(L - 1)] + [(L - p) * 2.0 ** -(L - p) for p in range(1, L)]
    np.testing.assert_allclose(k.weights(), expected if L > 1 else [1.0])


def test_features_reproduce_gram(molecular_graphs):
    k = PyramidMatch()
    F = k.features(k.prepare(molecular_graphs))
    np.testing.assert_allclose(
        sparse_feature_gram(F, F).numpy(), k(molecular_graphs).numpy(), rtol=0, atol=1e-10
    )


def test_histograms_brute_force():
    """Cells floor(|u| 2^l) (the last cell closed) of the top-d eigenvectors, per label."""
    graphs = random_graphs(8, 3, max_nodes=10)
    k = PyramidMatch(3, 4)
    inter = _intersections(k, graphs)
    hist = []
    for g in graphs:
        U = spectral_embedding(nx.to_numpy_array(g), 4)
        per_level = []
        for level in range(3):
            c = {}
            for v, node in enumerate(g):
                for q in range(U.shape[1]):
                    cell = min(int(np.floor(U[v, q] * 2**level)), 2**level - 1)
                    key = (g.nodes[node]["label"], q, cell)
                    c[key] = c.get(key, 0) + 1
            per_level.append(c)
        hist.append(per_level)
    for level in range(3):
        expected = [
            [sum(min(n, b[level].get(key, 0)) for key, n in a[level].items()) for b in hist]
            for a in hist
        ]
        np.testing.assert_array_equal(inter[level], expected)


def test_spectral_embedding_selection():
    A = nx.to_numpy_array(nx.star_graph(8))  # eigenvalues +-sqrt(8) and 0 (x7)
    U = spectral_embedding(A, 2)
    _, vec = np.linalg.eigh(A)  # oracle: NumPy's LAPACK against kernelkit.solvers
    np.testing.assert_allclose(U, np.abs(vec[:, [-1, 0]]))


def test_check_kernel_and_errors(molecular_graphs):
    check_kernel(PyramidMatch(), molecular_graphs[:25], molecular_graphs[25:31])
    check_kernel(PyramidMatch(2, 3, node_label=None), molecular_graphs[:20])
    with pytest.raises(InputError, match="L"):
        PyramidMatch(0)
    with pytest.raises(InputError, match="d"):
        PyramidMatch(d=0)
