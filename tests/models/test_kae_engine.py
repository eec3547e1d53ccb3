"""Engine of the kernel autoencoders (kernelkit.models), against closed forms and brute force."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.kernel_ridge import KernelRidge as SkKernelRidge

from kernelkit.kernels import Gaussian, Linear
from kernelkit.models import KernelChain, KernelLayer, build_autoencoder, ridge_coefficients, train
from kernelkit.models._autoencoder import AutoencoderData, train_alternating
from kernelkit.models._ridge import psd_factor, ridge_loss_projected, ridge_trace_loss, sym_outer
from kernelkit.solvers._training import NonFiniteObjectiveWarning
from kernelkit.utils._errors import InputError, NotPSDError

F64 = torch.float64


@pytest.fixture(autouse=True)
def _one_thread():
    """These problems are tiny: one thread avoids OpenMP spin contention on a shared CPU."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _data(n=40, d=6, seed=0):
    g = torch.Generator().manual_seed(seed)
    scale = torch.linspace(2.0, 0.2, d, dtype=F64)
    return torch.randn(n, d, generator=g, dtype=F64) * scale


def _long_form(K, X, lam):
    """(1/n)||X - K Phi||^2 + lam tr(Phi^T K Phi) at Phi = (K + n lam I)^{-1} X (eq. 55)."""
    n = K.shape[0]
    Phi = torch.linalg.solve(K + n * lam * torch.eye(n, dtype=K.dtype), X)
    R = X - K @ Phi
    return (R * R).sum() / n + lam * (Phi * (K @ Phi)).sum()


def test_collapsed_identity_matches_long_form_value_and_gradient():
    X = _data()
    n = X.shape[0]
    B = psd_factor(X @ X.T)
    Y = torch.randn(n, 2, dtype=F64, requires_grad=True)
    k, lam = Gaussian(1.3), 0.02
    short = ridge_trace_loss(k.block(Y, Y), B, lam)
    long = _long_form(k.block(Y, Y), X, lam)
    assert torch.allclose(short, long, rtol=1e-10)
    g_short = torch.autograd.grad(short, Y)[0]
    g_long = torch.autograd.grad(_long_form(k.block(Y, Y), X, lam), Y)[0]
    assert torch.allclose(g_short, g_long, rtol=1e-8, atol=1e-12)


def test_ridge_trace_gradcheck():
    X = _data(n=15, d=4)
    B = psd_factor(X @ X.T)
    Y = torch.randn(15, 2, dtype=F64, requires_grad=True)
    k = Gaussian(0.9)
    assert torch.autograd.gradcheck(lambda Y: ridge_trace_loss(k.block(Y, Y), B, 0.05), (Y,))


def test_projected_forms_equal_the_dual_form():
    X = _data()
    n = X.shape[0]
    B, trace = X, float((X * X).sum())
    Z = torch.randn(n, 3, dtype=F64)
    # linear kernel in primal form (C = Z, identity penalty) vs the dual n x n form
    primal = ridge_loss_projected(Z, None, B, 0.01, trace)
    assert torch.allclose(primal, ridge_trace_loss(Z @ Z.T, B, 0.01), rtol=1e-10)
    # landmark form with all points as landmarks (C = K_mm = K) vs the dual form
    K = Gaussian(1.0).block(Z, Z)
    assert torch.allclose(ridge_loss_projected(K, K, B, 0.01, trace), _long_form(K, X, 0.01))


def test_ridge_coefficients_match_scikit_learn():
    X = _data()
    n = X.shape[0]
    K = Gaussian(2.0).block(X, X)
    y = torch.sin(X[:, :2])
    lam = 0.003
    coef = ridge_coefficients(K, y, lam)
    sk = SkKernelRidge(alpha=n * lam, kernel="precomputed").fit(K.numpy(), y.numpy())
    np.testing.assert_allclose(coef.numpy(), sk.dual_coef_, rtol=1e-7, atol=1e-10)


def test_sym_outer_blocks():
    V = torch.randn(300, 7, dtype=F64)
    np.testing.assert_allclose(sym_outer(V, block=64).numpy(), (V @ V.T).numpy(), atol=1e-12)


def test_layer_norm_and_forward_brute_force_with_operator():
    g = torch.Generator().manual_seed(3)
    S = torch.randn(9, 2, dtype=F64, generator=g)
    Zq = torch.randn(4, 2, dtype=F64, generator=g)
    M = torch.randn(3, 3, dtype=F64, generator=g)
    A = M @ M.T
    k = Gaussian(0.7)
    layer = KernelLayer(k, 9, 3, operator=A)
    with torch.no_grad():
        layer.coef.copy_(torch.randn(9, 3, dtype=F64, generator=g))
    Phi = layer.coef.detach()
    # f(z) = sum_i k(z, s_i) A phi_i ; ||f||^2 = sum_ij k(s_i, s_j) <phi_i, A phi_j>  (eq. 10)
    kk = lambda a, b: float(torch.exp(-((a - b) ** 2).sum() / (2 * 0.7**2)))  # noqa: E731
    brute_f = torch.stack([sum(kk(z, S[i]) * (A @ Phi[i]) for i in range(9)) for z in Zq])
    brute_norm = sum(
        kk(S[i], S[j]) * float(Phi[i] @ A @ Phi[j]) for i in range(9) for j in range(9)
    )
    np.testing.assert_allclose(layer(Zq, S).detach().numpy(), brute_f.numpy(), rtol=1e-12)
    assert float(layer.norm_sq(k.block(S, S)).detach()) == pytest.approx(brute_norm, rel=1e-12)


def test_operator_validation():
    with pytest.raises(InputError, match="operator"):
        KernelLayer(Gaussian(), 5, 2, operator=torch.ones(3, 3))
    with pytest.raises(InputError, match="symmetric"):
        KernelLayer(Gaussian(), 5, 2, operator=torch.tensor([[1.0, 2.0], [0.0, 1.0]]))
    with pytest.raises(NotPSDError, match="operator"):
        KernelLayer(Gaussian(), 5, 2, operator=torch.tensor([[1.0, 0.0], [0.0, -1.0]]))


def test_chain_new_data_on_training_points_and_landmarks_equal_exact():
    X = _data(n=20, d=3)
    k1 = Gaussian(2.0)
    K1 = k1.block(X, X)
    layers = [KernelLayer(None, 20, 3), KernelLayer(Gaussian(1.0), 20, 2)]
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for layer in layers:
            layer.coef.copy_(torch.randn(layer.coef.shape, generator=g, dtype=F64) * 0.3)
    chain = KernelChain(layers)
    exact = chain.forward_train(K1)
    # new-data pass (cross rows only) on the training points reproduces the training pass
    enc = chain.encode(K1, exact.supports)
    np.testing.assert_allclose(enc.detach().numpy(), exact.outputs[-1].detach().numpy())
    # landmark mode with every point a landmark is the exact mode
    lm = chain.forward_train(K1, K1)
    for a, b in zip(lm.norms, exact.norms, strict=True):
        assert float(a.detach()) == pytest.approx(float(b.detach()), rel=1e-12)


def _kpca_setting(n=50, d=8, p=3, seed=0):
    X = _data(n=n, d=d, seed=seed)
    K = X @ X.T
    data = AutoencoderData(K1=K, out_factor=psd_factor(K), out_trace=float(torch.trace(K)))
    return X, K, data


def test_kpca_connection_eckart_young():
    """Section 3.2: 2-layer K2AE, linear kernels, identity operators, lam = 0."""
    p = 3
    _, K, data = _kpca_setting(p=p)
    n = K.shape[0]
    model = build_autoencoder(
        data, (p,), [None, Linear()], (0.0, 0.0), init="random", random_state=0
    )
    start = float(model.objective(data)[0])
    res = train(model, data, max_iter=300, tol=1e-13)
    eig = np.linalg.eigvalsh(K.numpy())[::-1]
    optimum = eig[p:].sum() / n
    assert start > 1.05 * optimum  # the random start is far from the optimum
    assert res.best == pytest.approx(optimum, rel=1e-2)
    # codes span the kernel PCA subspace: cosines of the principal angles are 1
    Z = model.chain.forward_train(K).outputs[-1].detach().numpy()
    U = np.linalg.eigh(K.numpy())[1][:, -p:]
    Q = np.linalg.qr(Z)[0]
    np.testing.assert_allclose(np.linalg.svd(Q.T @ U, compute_uv=False), 1.0, atol=1e-4)


def test_kpca_init_is_the_kpca_map():
    p = 3
    _, K, data = _kpca_setting(p=p)
    model = build_autoencoder(data, (p,), [None, Linear()], (0.0, 0.0), init="kpca")
    w, U = np.linalg.eigh(K.numpy())
    expected = U[:, -p:] * np.sqrt(w[-p:])  # K Phi = U Lambda^{1/2}
    Z = model.chain.forward_train(K).outputs[-1].detach().numpy()
    np.testing.assert_allclose(np.abs(Z), np.abs(expected[:, ::-1]), atol=1e-8)
    assert float(model.objective(data)[0]) == pytest.approx(w[:-p].sum() / K.shape[0], rel=1e-8)


def _finite_and_k2ae(n=30, lam=(1e-3, 1e-3)):
    X = _data(n=n, d=4, seed=2)
    sigma = 3.0
    K1 = Gaussian(sigma).block(X, X)
    finite = AutoencoderData(K1=K1, out_factor=X, out_trace=float((X * X).sum()), targets=X)
    K_in = X @ X.T  # a linear input kernel: the K2AE sees X only through K_in
    k2 = AutoencoderData(K1=K1, out_factor=psd_factor(K_in), out_trace=float(torch.trace(K_in)))
    return finite, k2


def test_k2ae_linear_input_equals_finite_kae_from_same_init():
    finite, k2 = _finite_and_k2ae()
    lam = (1e-2, 1e-2)
    kern = [None, Gaussian(1.0)]
    m_fin = build_autoencoder(finite, (2,), kern, lam, closed_form=False, init="kpca")
    m_k2 = build_autoencoder(k2, (2,), kern, lam, init="kpca")
    # same start: the finite model's last layer starts at its ridge optimum
    assert float(m_fin.objective(finite)[0]) == pytest.approx(
        float(m_k2.objective(k2)[0]), rel=1e-8
    )
    # joint training of all layers is ill-conditioned (small lam): it needs more iterations
    # than the variable-projection K2AE, which eliminates the last layer exactly
    r_fin = train(m_fin, finite, max_iter=700, tol=1e-12)
    r_k2 = train(m_k2, k2, max_iter=300, tol=1e-12)
    assert r_k2.best < 0.9 * r_k2.history[0]
    assert r_fin.best == pytest.approx(r_k2.best, rel=1e-2)


def test_finite_kae_objective_gradcheck():
    finite, _ = _finite_and_k2ae(n=12)
    model = build_autoencoder(finite, (2,), [None, Gaussian(1.0)], (1e-2, 1e-2), closed_form=False)
    a = model.chain.layers[0].coef.detach().clone().requires_grad_(True)
    b = model.head.coef.detach().clone().requires_grad_(True)

    def objective(a, b):
        params = {"chain.layers.0.coef": a, "head.coef": b}
        return torch.func.functional_call(model, params, (finite,))

    assert torch.autograd.gradcheck(objective, (a, b))


def test_k2ae_objective_gradcheck():
    _, k2 = _finite_and_k2ae(n=12)
    model = build_autoencoder(k2, (2,), [None, Gaussian(1.0)], (1e-2, 1e-2))
    a = model.chain.layers[0].coef.detach().clone().requires_grad_(True)
    f = lambda a: torch.func.functional_call(model, {"chain.layers.0.coef": a}, (k2,))  # noqa: E731
    assert torch.autograd.gradcheck(f, (a,))


def test_alternating_algorithm_decreases_towards_joint_optimum():
    _, k2 = _finite_and_k2ae()
    kern, lam = [None, Gaussian(1.0)], (1e-3, 1e-3)
    m_alt = build_autoencoder(k2, (2,), kern, lam)
    r_alt = train_alternating(m_alt, k2, max_iter=200, lr=0.5)
    m_joint = build_autoencoder(k2, (2,), kern, lam)
    r_joint = train(m_joint, k2, max_iter=150, tol=1e-10)
    assert r_alt.best < r_alt.history[0]
    assert r_alt.best >= r_joint.best * (1 - 1e-6)
    # its objective with N_L fixed equals the profile objective after the N_L update
    assert float(m_alt.objective(k2)[0]) <= r_alt.best * (1 + 1e-9)


def test_non_finite_objective_stops_keeps_best_and_warns():
    _, k2 = _finite_and_k2ae(n=15)
    model = build_autoencoder(k2, (2,), [None, Gaussian(1.0)], (1e-3, 1e-3))
    original = model.objective
    calls = {"n": 0}

    def flaky(data):
        calls["n"] += 1
        value, parts = original(data)
        return (value * float("nan"), parts) if calls["n"] > 4 else (value, parts)

    model.objective = flaky
    with pytest.warns(NonFiniteObjectiveWarning, match="non-finite"):
        res = train(model, k2, max_iter=50)
    assert res.stopped == "non_finite"
    model.objective = original
    assert float(model.objective(k2)[0]) == pytest.approx(res.best, rel=1e-12)
    assert np.isfinite(res.best)


def test_closed_form_nonlinear_needs_positive_lam():
    _, k2 = _finite_and_k2ae(n=10)
    model = build_autoencoder(k2, (2,), [None, Gaussian(1.0)], (1e-3, 0.0))
    with pytest.raises(InputError, match="lam"):
        model.objective(k2)
