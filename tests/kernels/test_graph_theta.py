"""Lovász-theta and SVM-theta kernels (issue 29): the subset means by brute force over all
subsets, an independent cone program (CVXOPT), GraKeL's SVM-theta features, conformance."""

from __future__ import annotations

import itertools
import warnings

import networkx as nx
import numpy as np
import pytest

from kernelkit.data._graphs import GraphBatch
from kernelkit.kernels._graph_theta import LovaszTheta, SvmTheta, subset_sample_sizes
from kernelkit.solvers._theta import lovasz_theta, svm_theta
from kernelkit.testing import check_kernel
from kernelkit.utils._errors import InputError

from .conftest import grakel_input

pytest.importorskip("cvxopt")


def _small_graphs(count=12, seed=3):
    rng = np.random.default_rng(seed)
    return [
        nx.gnp_random_graph(int(rng.integers(2, 7)), float(rng.uniform(0.2, 0.8)), seed=k)
        for k in range(count)
    ]


def _dense(F, n_graphs):
    keys = np.unique(F.keys)
    out = np.zeros((n_graphs, len(keys)))
    for g in range(n_graphs):
        sl = slice(F.indptr[g], F.indptr[g + 1])
        out[g, np.searchsorted(keys, F.keys[sl])] = F.values[sl]
    return keys, out


def test_svm_theta_features_are_the_mean_over_all_subsets():
    graphs = _small_graphs()
    batch = GraphBatch.from_networkx(graphs, node_label=None)
    k = SvmTheta((1, 4))
    keys, phi = _dense(k.features(batch), len(graphs))
    for g, G in enumerate(graphs):
        alpha = svm_theta(nx.to_numpy_array(G))[1]
        for d in range(1, 5):
            subsets = list(itertools.combinations(range(len(G)), d))
            expected = np.mean([alpha[list(S)].sum() for S in subsets]) if subsets else 0.0
            got = phi[g, np.searchsorted(keys, d)] if d in keys else 0.0
            assert got == pytest.approx(expected, rel=1e-12, abs=1e-12)


def _cone_value(U):
    """min ||c||^2 s.t. U^T c >= 1 (the enclosing cone) by CVXOPT's QP, from explicit vectors."""
    cvxopt = pytest.importorskip("cvxopt")
    p = U.shape[0]
    sol = cvxopt.solvers.qp(
        cvxopt.matrix(2 * np.eye(p)),
        cvxopt.matrix(np.zeros(p)),
        cvxopt.matrix(-U.T.copy()),
        cvxopt.matrix(-np.ones(U.shape[1])),
        options={"show_progress": False, "abstol": 1e-12, "reltol": 1e-12, "feastol": 1e-12},
    )
    c = np.asarray(sol["x"]).ravel()
    return c @ c


def test_lovasz_theta_features_exhaustive_against_cone_program():
    """With more samples than subsets every subset is used; each theta_S is recomputed from
    explicit vectors of the labelling (eigendecomposition of its Gram) by a primal QP."""
    graphs = _small_graphs(8)
    batch = GraphBatch.from_networkx(graphs, node_label=None)
    k = LovaszTheta(n_samples=500, subsets_size_range=(1, 3))
    keys, phi = _dense(k.features(batch), len(graphs))
    for g, G in enumerate(graphs):
        gram = lovasz_theta(nx.to_numpy_array(G)).gram
        w, V = np.linalg.eigh(gram)
        U = (V * np.sqrt(np.clip(w, 0, None))).T  # columns u_i with U^T U = gram
        for d in range(1, min(3, len(G)) + 1):
            subsets = list(itertools.combinations(range(len(G)), d))
            expected = np.mean([_cone_value(U[:, list(S)]) for S in subsets])
            assert phi[g, np.searchsorted(keys, d)] == pytest.approx(expected, rel=1e-6)


def test_lovasz_theta_whole_vertex_set_gives_theta():
    k = LovaszTheta(n_samples=5, subsets_size_range=(5, 5))
    assert k([nx.cycle_graph(5)]).item() == pytest.approx(5.0, rel=1e-6)  # theta(C5)^2
    k = LovaszTheta(n_samples=5, subsets_size_range=(10, 10))
    assert k([nx.petersen_graph()]).item() == pytest.approx(16.0, rel=1e-6)


def test_lovasz_theta_sampling_is_unbiased(molecular_graphs):
    """The sampled means agree with the exhaustive means within Monte-Carlo error."""
    graphs = [g for g in molecular_graphs if 6 <= len(g) <= 10][:10]
    batch = GraphBatch.from_networkx(graphs, node_label=None)
    exact = LovaszTheta(n_samples=10_000, subsets_size_range=(2, 3))
    _, phi_exact = _dense(exact.features(batch), len(graphs))
    draws = np.stack(
        [
            _dense(LovaszTheta(30, (2, 3), random_state=s).features(batch), len(graphs))[1]
            for s in range(8)
        ]
    )
    mean, se = draws.mean(0), draws.std(0, ddof=1) / np.sqrt(len(draws))
    assert (np.abs(mean - phi_exact) <= 4 * se + 1e-9).all()


def test_subsets_depend_on_the_graph_only(molecular_graphs):
    graphs = molecular_graphs[:12]
    k = LovaszTheta(20)
    K = k(graphs).numpy()
    np.testing.assert_allclose(k(graphs[:5], graphs[5:]).numpy(), K[:5, 5:], rtol=1e-12)


def test_sample_allocation_follows_grakel():
    from grakel.tools import distribute_samples

    for n in (3, 8, 20, 40):
        ours = subset_sample_sizes(n, (2, 8), 50)
        theirs = distribute_samples(n, (2, 8), 50)
        for d, m in theirs.items():
            assert ours[d] == m
        assert all(m == 1 for d, m in ours.items() if d not in theirs)


def test_grakel_svm_theta_features_do_not_depend_on_the_graph(molecular_graphs):
    """GraKeL's one-class SVM (nu = 0.5) coefficients sum to n / 2: its features estimate
    d / 2 for every graph, which is why kernelkit follows the paper instead."""
    gk = pytest.importorskip("grakel.kernels")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = gk.SvmTheta(random_state=0, subsets_size_range=(2, 4), n_samples=60)
        model.fit(grakel_input(molecular_graphs[:40], edge_labels=False))
    phi = np.array([x.ravel() for x in model.X])
    np.testing.assert_allclose(phi.mean(0), [1.0, 1.5, 2.0], rtol=0.05)
    ours = _dense(
        SvmTheta((2, 4)).features(GraphBatch.from_networkx(molecular_graphs[:40], node_label=None)),
        40,
    )[1]
    assert np.ptp(ours[:, 0]) > 0.3 * ours[:, 0].mean()  # graph-dependent


@pytest.mark.parametrize("kernel", [SvmTheta(), LovaszTheta(10, (1, 4))], ids=repr)
def test_check_kernel_on_molecules(molecular_graphs, kernel):
    check_kernel(kernel, molecular_graphs[:10], molecular_graphs[10:14])


def test_bad_parameters_name_the_argument():
    with pytest.raises(InputError, match="subsets_size_range"):
        SvmTheta((3, 2))
    with pytest.raises(InputError, match="subsets_size_range"):
        LovaszTheta(10, [2, 3])
    with pytest.raises(InputError, match="n_samples"):
        LovaszTheta(0)
