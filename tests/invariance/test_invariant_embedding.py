"""InvariantEmbedding: Nyström and warped-kernel identities, readings, certificates, errors.

Oracles: the Nyström kernel and the warped kernel of Ma et al. (2019), eq. (1), computed
directly from kernel evaluations with ``scipy.linalg``.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

from kernelkit import InvariantEmbedding
from kernelkit.invariance import TransformInvariance, fit_dual_rrm
from kernelkit.kernels import Gaussian
from kernelkit.utils._errors import InputError

SIGMA = 1.5
#: the landmark basis, eq. (26)'s iota and absolute strengths (the oracles below are written
#: for them; the library's defaults are ``"auto"``, ``"auto"``, ``"spectral"``)
LANDMARK = {"basis": "nystrom", "features": "iota", "strength_unit": "absolute"}


def _k(A, B):
    return np.exp(-scipy.spatial.distance.cdist(A, B, "sqeuclidean") / (2 * SIGMA**2))


def _shift(X):
    return X + np.array([0.3, -0.2, 0.1])


def _scale(X):
    return 1.1 * X


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    return rng.standard_normal((14, 3)), rng.standard_normal((6, 3))


def test_no_invariance_features_give_the_nystrom_kernel(data, one_torch_thread):
    X, Xt = data
    emb = InvariantEmbedding(Gaussian(sigma=SIGMA)).fit(X)
    Z = emb.transform(Xt)
    expected = _k(Xt, X) @ scipy.linalg.solve(_k(X, X), _k(X, Xt))
    np.testing.assert_allclose(Z @ Z.T, expected, atol=1e-6)
    assert np.all(emb.certificates_ == 0)


def _nystrom_warped(X, A, B, transforms, strength):
    """Eq. (1) with every kernel value replaced by the Nyström kernel on landmarks X."""
    Kzz = _k(X, X)

    def kn(P, Q):
        return _k(P, X) @ scipy.linalg.solve(Kzz, _k(X, Q))

    def z(P):  # z_j(p) = k(p, T x_j) - k(p, x_j), all transforms stacked
        return np.hstack([kn(P, T(X)) - kn(P, X) for T in transforms])

    TX = np.vstack([T(X) for T in transforms])
    XX = np.vstack([X for _ in transforms])
    Kz = kn(TX, TX) - kn(TX, XX) - kn(XX, TX) + kn(XX, XX)
    inner = scipy.linalg.solve(np.eye(len(Kz)) / strength + Kz, z(B).T)
    return kn(A, B) - z(A) @ inner


@pytest.mark.parametrize("strength", [1.0, 0.3])
def test_sum_aggregation_is_kernel_warping(data, strength, one_torch_thread):
    X, Xt = data
    transforms = [_shift, _scale]
    emb = InvariantEmbedding(
        Gaussian(sigma=SIGMA),
        [TransformInvariance(transforms)],
        aggregate="sum",
        strength=strength,
        **LANDMARK,
    ).fit(X)
    expected = _nystrom_warped(X, Xt, X, transforms, strength)
    np.testing.assert_allclose(emb.sip_kernel(Xt, X), expected, atol=1e-6)
    assert emb.certificates_.max() < 1e-8


def test_sum_aggregation_is_exact_warping_when_landmarks_span_the_representers(one_torch_thread):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((6, 3))
    P = np.vstack([X, -X])  # closed under the involution T(x) = -x: representers in the span

    def negate(A):
        return -A

    emb = InvariantEmbedding(
        Gaussian(sigma=SIGMA),
        [TransformInvariance([negate])],
        aggregate="sum",
        jitter=1e-14,
        **LANDMARK,
    ).fit(P)

    def z(A):  # z_j(a) = k(a, T p_j) - k(a, p_j)
        return _k(A, -P) - _k(A, P)

    Kz = _k(-P, -P) - _k(-P, P) - _k(P, -P) + _k(P, P)  # <z_i, z_j>_H
    exact = _k(P, P) - z(P) @ scipy.linalg.solve(np.eye(len(P)) + Kz, z(P).T)
    np.testing.assert_allclose(emb.sip_kernel(P, P), exact, atol=1e-6)


@pytest.mark.parametrize("reading", ["pairs", "transforms", "sum_of_max"])
def test_max_readings_are_certified(data, reading, one_torch_thread):
    X, Xt = data
    emb = InvariantEmbedding(
        Gaussian(sigma=SIGMA),
        [TransformInvariance([_shift, _scale])],
        aggregate="max",
        reading=reading,
        tol=1e-9,
    ).fit(X)
    result = emb.embed(Xt)
    assert float(result.gap.max()) <= 1e-9
    assert bool((result.dual <= result.primal * (1 + 1e-12)).all())
    # iota = v / J(v) with <v, k~> = 1, so <iota, k~_x> = 1 / J(v): G(x, x) = 1 / J
    G = emb.sip_kernel(Xt)
    np.testing.assert_allclose(np.diag(G), 1.0 / result.primal.numpy(), rtol=1e-9)


def test_readings_order_their_semi_norms(data, one_torch_thread):
    """Per point: max_{t,j} <= max_t sum_j and max_{t,j} <= sum_j max_t <= sum_{t,j}."""
    X, Xt = data
    values = {}
    for aggregate, reading in [
        ("max", "pairs"),
        ("max", "transforms"),
        ("max", "sum_of_max"),
        ("sum", "pairs"),
    ]:
        emb = InvariantEmbedding(
            Gaussian(sigma=SIGMA),
            [TransformInvariance([_shift, _scale])],
            aggregate=aggregate,
            reading=reading,
            tol=1e-10,
            **LANDMARK,
        ).fit(X)
        values[aggregate, reading] = emb.embed(Xt).primal.numpy()
    tol = 1e-9
    assert np.all(values["max", "pairs"] <= values["max", "transforms"] + tol)
    assert np.all(values["max", "pairs"] <= values["max", "sum_of_max"] + tol)
    assert np.all(values["max", "transforms"] <= values["sum", "pairs"] + tol)
    assert np.all(values["max", "sum_of_max"] <= values["sum", "pairs"] + tol)


def test_landmark_subset_and_float32(data, one_torch_thread):
    X, Xt = data
    emb = InvariantEmbedding(
        Gaussian(sigma=SIGMA),
        [TransformInvariance([_shift])],
        n_centers=10,
        random_state=0,
        tol=1e-5,
        **LANDMARK,
    )
    Z = emb.fit(X.astype(np.float32)).transform(Xt.astype(np.float32))
    assert Z.dtype == np.float32 and Z.shape == (6, emb.n_components_)
    assert emb.landmarks_.shape[0] == 10


def test_transform_with_wrong_shape_is_named(data):
    X, _ = data
    emb = InvariantEmbedding(Gaussian(sigma=SIGMA), [TransformInvariance([lambda A: A[:, :2]])])
    with pytest.raises(InputError, match=r"transforms\[0\].*keep the input shape \(14, 3\)"):
        emb.fit(X)


def test_empty_invariance_set_is_named(data):
    X, _ = data
    with pytest.raises(InputError, match="empty invariance set"):
        InvariantEmbedding(Gaussian(sigma=SIGMA), [TransformInvariance([])]).fit(X)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"aggregate": "mean"}, "aggregate"),
        ({"reading": "x"}, "reading"),
        ({"strength": -1.0}, "strength"),
        ({"invariances": [object()]}, r"invariances\[0\]"),
    ],
)
def test_bad_parameters_are_named(data, params, message):
    X, _ = data
    with pytest.raises(InputError, match=message):
        InvariantEmbedding(Gaussian(sigma=SIGMA), **params).fit(X)


def test_fit_dual_rrm_squared_sum_is_warped_kernel_ridge(data, one_torch_thread):
    """Quadratic semi-norm: B is the warped RKHS of eq. (1), so the dual RRM with the squared
    loss (1/n) sum (y - f)^2 / 2 + lam ||f||_B^2 is kernel ridge regression with the warped
    (Nyström) kernel: (K_w + 2 n lam I) alpha = y."""
    X, Xt = data
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    transforms, strength, lam = [_shift, _scale], 0.3, 0.01
    emb = InvariantEmbedding(
        Gaussian(sigma=SIGMA),
        [TransformInvariance(transforms)],
        aggregate="sum",
        strength=strength,
        **LANDMARK,
    ).fit(X)
    result = fit_dual_rrm(emb, X, y, lam=lam, loss="squared", max_iter=200, tol=1e-12)
    scores = emb.nystrom_features(Xt) @ result.iota.numpy()
    K_w = _nystrom_warped(X, X, X, transforms, strength)
    alpha = scipy.linalg.solve(K_w + 2 * len(y) * lam * np.eye(len(y)), y)
    expected = _nystrom_warped(X, Xt, X, transforms, strength) @ alpha
    np.testing.assert_allclose(scores, expected, atol=1e-6)
    with pytest.raises(InputError, match="embedding: expected a fitted InvariantEmbedding"):
        fit_dual_rrm(InvariantEmbedding(Gaussian(sigma=SIGMA)).fit(X), X, y)
