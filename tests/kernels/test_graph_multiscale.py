"""Multiscale Laplacian (issue 29): the Gram equals GraKeL 0.1.11's ``MultiscaleLaplacian``
with the same ``random_state`` (fit_transform and fit/transform, attribute vectors and one-hot
labels); the level-0 kernel equals the closed form of the FLG kernel from the raw attributes;
invariance under node renumbering; the fitted-basis contract; conformance."""

from __future__ import annotations

import warnings

import networkx as nx
import numpy as np
import pytest
from sklearn.base import clone

from kernelkit.kernels import MultiscaleLaplacian
from kernelkit.testing import check_kernel
from kernelkit.utils._errors import InputError

from .conftest import grakel_input


def _grakel(graphs, *, random_state=0, **params):
    gk = pytest.importorskip("grakel.kernels")
    theirs = gk.MultiscaleLaplacian(random_state=random_state, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return theirs, theirs.fit_transform(grakel_input(graphs, attributes="attributes"))


def _one_hot(graphs):
    """Copies whose ``attributes`` are the one-hot codes of ``label`` (GraKeL's input)."""
    symbols = sorted({d["label"] for g in graphs for _, d in g.nodes(data=True)})
    out = []
    for g in graphs:
        h = g.copy()
        for _, d in h.nodes(data=True):
            d["attributes"] = np.eye(len(symbols))[symbols.index(d["label"])]
        out.append(h)
    return out


@pytest.mark.parametrize(
    ("L", "random_state"), [pytest.param(3, 0, marks=pytest.mark.slow), (2, 7)]
)
def test_equals_grakel_on_attributed_molecules(attributed_molecular_graphs, L, random_state):
    """Atom-feature vectors as node features: fit_transform and transform equal GraKeL's."""
    graphs, others = attributed_molecular_graphs[:40], attributed_molecular_graphs[40:48]
    theirs, K_grakel = _grakel(graphs, L=L, random_state=random_state)
    k = MultiscaleLaplacian(L=L, random_state=random_state, node_attribute="attributes")
    scale = np.abs(K_grakel).max()
    np.testing.assert_allclose(k(graphs).numpy(), K_grakel, rtol=0, atol=1e-8 * scale)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        K_test = theirs.transform(grakel_input(others, attributes="attributes"))
    np.testing.assert_allclose(k(others, graphs).numpy(), K_test, rtol=0, atol=1e-8 * scale)


def test_labels_equal_grakel_on_one_hot_codes(molecular_graphs):
    """Discrete labels: the delta base kernel is GraKeL's linear kernel on one-hot codes."""
    graphs = molecular_graphs[:30]
    _, K_grakel = _grakel(_one_hot(graphs), L=2, P=6, n_samples=40, gamma=0.1)
    k = MultiscaleLaplacian(L=2, P=6, n_samples=40, gamma=0.1)
    np.testing.assert_allclose(
        k(graphs).numpy(), K_grakel, rtol=0, atol=1e-8 * np.abs(K_grakel).max()
    )


def _random_attributed(count, dim, seed):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        g = nx.gnp_random_graph(int(rng.integers(2, 8)), 0.5, seed=seed * 100 + i)
        for v in g:
            g.nodes[v]["attributes"] = rng.normal(size=dim)
        out.append(g)
    return out


def _flg_closed_form(g, h, gamma, heta):
    """Definition 1 of Kondor & Pan from the raw attributes (GraKeL's scaling, 2^{-d/2})."""

    def S(graph):
        U = np.array([graph.nodes[v]["attributes"] for v in graph])
        lap = nx.laplacian_matrix(graph, nodelist=list(graph)).toarray() + heta * np.eye(len(U))
        return U.T @ np.linalg.inv(lap) @ U + gamma * np.eye(U.shape[1])

    Sg, Sh = S(g), S(h)
    total = np.linalg.inv(Sg) + np.linalg.inv(Sh)
    return np.linalg.det(total) ** -0.5 * (np.linalg.det(Sg) * np.linalg.det(Sh)) ** -0.25


def test_level_zero_is_the_flg_closed_form():
    """With every node sampled and P >= the attribute dimension, the level-0 basis is an
    orthonormal basis of the attribute space, and the FLG kernel does not depend on it."""
    graphs = _random_attributed(12, 3, seed=1)
    k = MultiscaleLaplacian(L=0, P=5, gamma=0.3, heta=0.2, n_samples=500)
    k.set_params(node_attribute="attributes")
    K = k(graphs).numpy()
    brute = np.array([[_flg_closed_form(g, h, 0.3, 0.2) for h in graphs] for g in graphs])
    np.testing.assert_allclose(K, brute, rtol=1e-10, atol=0)


def test_node_renumbering_does_not_change_the_kernel():
    graphs = _random_attributed(15, 2, seed=2)
    k = MultiscaleLaplacian(L=2, P=6, n_samples=30, node_attribute="attributes").fit(graphs)
    rng = np.random.default_rng(0)
    shuffled = [
        nx.relabel_nodes(g, dict(zip(g, rng.permutation(len(g)).tolist(), strict=True)))
        for g in graphs[:5]
    ]
    shuffled = [nx.convert_node_labels_to_integers(g, ordering="sorted") for g in shuffled]
    np.testing.assert_allclose(
        k(shuffled, graphs).numpy(), k(graphs[:5], graphs).numpy(), rtol=1e-9, atol=0
    )


def test_basis_is_fitted_state():
    """fit = the first reference set; clone and set_params drop it; k(Z) keeps it."""
    graphs = _random_attributed(20, 2, seed=3)
    train, test = graphs[:14], graphs[14:]
    fresh = MultiscaleLaplacian(L=1, P=4, n_samples=20, node_attribute="attributes")
    with pytest.raises(InputError, match="not fitted"):
        fresh.block(fresh.prepare(test), fresh.prepare(test))
    K_cross = fresh(test, train).numpy()  # fits on train (the reference)
    fitted = clone(fresh).fit(train)
    np.testing.assert_array_equal(fitted(test, train).numpy(), K_cross)
    assert clone(fresh).basis_ is None
    # evaluated on other graphs, the kernel keeps its basis: K(test, test) != a refit's
    np.testing.assert_allclose(fresh(test).numpy(), fitted(test).numpy(), rtol=1e-12)
    refit = clone(fresh)
    assert not np.allclose(refit(test).numpy(), fresh(test).numpy(), rtol=1e-6)
    assert fresh.set_params(P=3).basis_ is None


def test_diagonal_is_two_to_minus_half_the_basis_dimension():
    """The paper's kernel (with the 1/2's) is 1 on the diagonal; GraKeL's is 2^{-P/2}."""
    graphs = _random_attributed(10, 3, seed=4)
    k = MultiscaleLaplacian(L=2, P=7, node_attribute="attributes").fit(graphs)
    d = k.diag(graphs).numpy()
    np.testing.assert_allclose(d, 2.0 ** (-k.basis_["Q"][-1].shape[1] / 2), rtol=1e-9)


def test_input_errors():
    with pytest.raises(InputError, match="gamma"):
        MultiscaleLaplacian(gamma=0.0)
    with pytest.raises(InputError, match="n_samples"):
        MultiscaleLaplacian(n_samples=0)
    with pytest.raises(InputError, match="molecules carry no continuous"):
        MultiscaleLaplacian(node_attribute="attributes")(["CCO", "CCN"])
    k = MultiscaleLaplacian(L=1, node_attribute="attributes").fit(_random_attributed(5, 2, 0))
    with pytest.raises(InputError, match="2"):
        k(_random_attributed(3, 3, 1))


def test_molecules_and_conformance():
    smiles = ["CCO", "c1ccccc1", "CC(=O)O", "CCN", "C1CC1", "OCC(O)CO", "CCCCCl"]
    check_kernel(MultiscaleLaplacian(L=2, P=5, n_samples=20), smiles[:5], smiles[5:])
    graphs = _random_attributed(9, 2, seed=5)
    check_kernel(MultiscaleLaplacian(node_attribute="attributes"), graphs[:6], graphs[6:])


def test_estimator_fits_the_basis_on_its_training_graphs():
    """KernelRidge's kernel_ (a clone) fits the basis on the training graphs: predictions are
    the closed form (K + n lam I)^-1 y with a basis fitted to the training graphs alone."""
    from kernelkit.estimators import KernelRidge

    graphs = _random_attributed(24, 2, seed=6)
    train, test = graphs[:18], graphs[18:]
    y = np.random.default_rng(0).normal(size=len(train))
    kernel = MultiscaleLaplacian(L=2, P=6, n_samples=40, node_attribute="attributes")
    model = KernelRidge(kernel, lam=1e-2).fit(train, y)
    assert kernel.basis_ is None and model.kernel_.basis_ is not None
    k = clone(kernel).fit(train)
    K, K_test = k(train).numpy(), k(test, train).numpy()
    alpha = np.linalg.solve(K + len(train) * 1e-2 * np.eye(len(train)), y)
    np.testing.assert_allclose(model.predict(test), K_test @ alpha, rtol=1e-8, atol=1e-12)
