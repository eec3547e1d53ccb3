"""Kernels on networks (course part 2, "Kernels on graphs"; Rapaport et al. 2007): the spectral
node kernel against Diffusion, the network-regularised linear SVM against scikit-learn's linear
SVM on K_G^{1/2} x, and the weights beta = K_G X^T alpha against the decision function."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.linalg
import torch
from sklearn.svm import SVC

from kernelkit import KernelRidge, KernelSVC
from kernelkit.estimators import network_weights
from kernelkit.kernels import (
    Diffusion,
    Linear,
    NetworkLinear,
    RegularizedLaplacian,
    SpectralNode,
)
from kernelkit.testing import check_kernel
from kernelkit.utils._errors import InputError


@pytest.fixture(scope="module")
def graph():
    return nx.barabasi_albert_graph(30, 2, seed=0)


def test_spectral_node_with_exp_transform_equals_diffusion(graph):
    t = 0.7
    nodes = np.arange(30)
    K = SpectralNode(graph, transform=lambda lam: np.exp(-t * lam))(nodes)
    np.testing.assert_allclose(K.numpy(), Diffusion(graph, beta=t)(nodes).numpy(), atol=1e-8)
    L = nx.laplacian_matrix(graph).toarray().astype(float)
    np.testing.assert_allclose(K.numpy(), scipy.linalg.expm(-t * L), atol=1e-8)
    check_kernel(SpectralNode(graph, transform=lambda lam: 1 / (1 + lam) ** 2), nodes[:12])


def test_spectral_node_refuses_a_negative_transform(graph):
    with pytest.raises(InputError, match="transform: expected finite non-negative"):
        SpectralNode(graph, transform=lambda lam: 1 - lam)(np.arange(3))
    with pytest.raises(InputError, match="transform: expected a callable"):
        SpectralNode(graph, transform=2.0)


def _expression(graph, n=60, seed=1):
    """Profiles on the nodes with a planted smooth signal on a neighbourhood (a 'pathway')."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, graph.number_of_nodes()))
    pathway = [0, *graph.neighbors(0)]
    y = np.where(X[:, pathway].sum(1) + 0.5 * rng.normal(size=n) > 0, 1, -1)
    return X, y


def test_network_svm_equals_linear_svm_on_root_features(graph):
    X, y = _expression(graph)
    network = RegularizedLaplacian(graph, eps=0.5)
    K_G = network.node_gram().numpy()
    w, U = np.linalg.eigh(K_G)
    root = (U * np.sqrt(np.clip(w, 0, None))) @ U.T  # independent square root
    C = 0.3
    ours = KernelSVC(kernel=NetworkLinear(network), C=C, tol=1e-10).fit(X, y)
    ref = SVC(kernel="linear", C=C, tol=1e-10).fit(X @ root, y)
    Xt = np.random.default_rng(2).normal(size=(20, 30))
    np.testing.assert_allclose(
        ours.decision_function(Xt), ref.decision_function(Xt @ root), atol=1e-6, rtol=0
    )
    np.testing.assert_allclose(
        NetworkLinear(network).network_features(Xt).numpy(), Xt @ root, atol=1e-10
    )
    beta = network_weights(ours)  # f(x) = beta^T x + b
    np.testing.assert_allclose(
        Xt @ beta + float(ours.intercept_[0]), ours.decision_function(Xt), atol=1e-8
    )
    # beta = K_G^{1/2} w with w the linear SVM's weights in feature space
    np.testing.assert_allclose(beta, root @ ref.coef_[0], atol=1e-6)


def test_network_ridge_weights_and_penalty(graph):
    X, y = _expression(graph, n=40)
    K_G = Diffusion(graph, beta=0.5).node_gram().numpy()
    lam = 0.05
    model = KernelRidge(kernel=NetworkLinear(K_G), lam=lam).fit(X, y.astype(float))
    beta = network_weights(model)
    # closed form of min (1/n) ||y - X beta||^2 + lam beta^T K_G^{-1} beta
    n = len(X)
    expected = np.linalg.solve(X.T @ X + n * lam * np.linalg.inv(K_G), X.T @ y)
    np.testing.assert_allclose(beta, expected, rtol=1e-6, atol=1e-8)


def test_network_linear_check_kernel_and_errors(graph):
    rng = np.random.default_rng(3)
    small = NetworkLinear(Diffusion(nx.path_graph(6), beta=0.3))
    check_kernel(
        small, torch.as_tensor(rng.normal(size=(7, 6))), torch.as_tensor(rng.normal(size=(3, 6)))
    )
    k = NetworkLinear(Diffusion(graph, beta=0.3))
    X = rng.normal(size=(8, 30))
    K_G = scipy.linalg.expm(-0.3 * nx.laplacian_matrix(graph).toarray().astype(float))
    np.testing.assert_allclose(k(torch.as_tensor(X)).numpy(), X @ K_G @ X.T, rtol=1e-10)
    with pytest.raises(InputError, match="X: expected 30 features"):
        k(torch.zeros(2, 5))
    with pytest.raises(InputError, match="network: expected a kernel on the nodes"):
        NetworkLinear(Linear())
    with pytest.raises(InputError, match="network: expected a symmetric"):
        NetworkLinear(np.triu(np.ones((3, 3))))
    with pytest.raises(InputError, match="NetworkLinear"):
        network_weights(KernelRidge(kernel="rbf").fit(rng.normal(size=(5, 2)), np.ones(5)))
    Xl, yl = rng.normal(size=(30, 4)), rng.choice([-1, 1], size=30)
    plain = KernelSVC(kernel=Linear(), tol=1e-8).fit(Xl, yl)
    ref = SVC(kernel="linear", tol=1e-8).fit(Xl, yl)
    np.testing.assert_allclose(network_weights(plain), ref.coef_[0], atol=1e-6)


def test_graph_search_equals_the_primal_qp(graph):
    from scipy.optimize import minimize

    from kernelkit.models import graph_search

    network = RegularizedLaplacian(graph, eps=1.0)
    query = [3, 7, 21]
    f = graph_search(network, query)
    # independent primal: min 1/2 f^T K^{-1} f s.t. f_q >= 1, K^{-1} = L + I
    H = nx.laplacian_matrix(graph).toarray().astype(float) + np.eye(30)
    res = minimize(
        lambda g: 0.5 * g @ H @ g,
        np.ones(30),
        jac=lambda g: H @ g,
        constraints=[
            {"type": "ineq", "fun": lambda g: g[query] - 1, "jac": lambda g: np.eye(30)[query]}
        ],
        method="SLSQP",
        options={"ftol": 1e-14, "maxiter": 500},
    )
    assert res.success
    np.testing.assert_allclose(f, res.x, atol=1e-6)
    assert np.all(f[query] >= 1 - 1e-9)
    with pytest.raises(InputError, match="query"):
        graph_search(network, [])
    with pytest.raises(InputError, match="query"):
        graph_search(network, [40])
