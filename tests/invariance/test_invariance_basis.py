"""The augmented basis, the metric features and the spectral strength of InvariantEmbedding.

Oracles: kernel warping computed by brute force in the explicit 10-dimensional feature space
of the polynomial kernel ``(<x, y> + 1)^2`` on R^3 (``K~ = Phi (I + s D^T D)^{-1} Phi^T``,
``D`` the finite differences of the features), and exact kernel warping on MNIST images by
the Woodbury closed form of Ma et al. (2019), eq. (1), from Gaussian kernel values
(``scipy``), independent of the library.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.linalg
import scipy.spatial

from kernelkit import InvariantEmbedding
from kernelkit.invariance import ImageTransformInvariance, TransformInvariance
from kernelkit.kernels import Gaussian, Polynomial
from kernelkit.utils._errors import InputError

A = np.array([[0.9, 0.2, 0.0], [-0.1, 1.1, 0.3], [0.0, 0.1, 0.8]])
TRANSFORMS = [lambda Z: Z @ A.T, lambda Z: Z + np.array([0.2, -0.1, 0.3])]
# ../shared/data next to the checkout (main) or next to the worktree folder (git worktrees)
MNIST = next(
    (
        root / "shared" / "data" / "mnist5k"
        for root in Path(__file__).resolve().parents[3:5]
        if (root / "shared" / "data" / "mnist5k").is_dir()
    ),
    Path(__file__).resolve().parents[3] / "shared" / "data" / "mnist5k",
)


def _phi(Z):
    """Explicit features of ``(<x, y> + 1)^2`` on R^3 (dimension 10)."""
    p = Z.shape[1]
    cols = [np.ones(len(Z))]
    cols += [np.sqrt(2) * Z[:, i] for i in range(p)] + [Z[:, i] ** 2 for i in range(p)]
    cols += [np.sqrt(2) * Z[:, i] * Z[:, j] for i in range(p) for j in range(i + 1, p)]
    return np.stack(cols, 1)


def _differences(X):
    return np.vstack([_phi(T(X)) - _phi(X) for T in TRANSFORMS])


def _fit(X, **params):
    params = {
        "aggregate": "sum",
        "basis": "augmented",
        "features": "iota",
        "strength_unit": "absolute",
        "tol": 1e-12,
        **params,
    }
    return InvariantEmbedding(Polynomial(2), [TransformInvariance(TRANSFORMS)], **params).fit(X)


@pytest.mark.parametrize("strength", [0.7, 3.0])
def test_augmented_basis_gives_exact_warping_up_to_the_nystrom_error(strength, one_torch_thread):
    rng = np.random.default_rng(0)
    X, Xt = rng.standard_normal((3, 3)), rng.standard_normal((5, 3))
    P = np.vstack([X, Xt])
    D = _differences(X)
    exact = _phi(P) @ scipy.linalg.solve(np.eye(10) + strength * D.T @ D, _phi(P).T)
    emb = _fit(X, strength=strength)
    # 9 centres do not span the 10-dimensional space: the error is that of the Nyström
    # kernel of k itself, k_V - k, with V the span of the centres' features
    C = _phi(np.vstack([X, *(T(X) for T in TRANSFORMS)]))
    project = C.T @ np.linalg.pinv(C @ C.T) @ C
    nystrom_error = _phi(P) @ (project - np.eye(10)) @ _phi(P).T
    np.testing.assert_allclose(emb.sip_kernel(P, P), exact + nystrom_error, atol=1e-9)
    np.testing.assert_allclose(emb.sip_kernel(X, X), exact[:3, :3], atol=1e-9)
    # the landmarks alone project the representers away
    plain = _fit(X, strength=strength, basis="nystrom").sip_kernel(X, X)
    assert np.abs(plain - exact[:3, :3]).max() > 1e-2


def test_augmented_basis_spanning_the_space_is_exact_everywhere(one_torch_thread):
    rng = np.random.default_rng(1)
    X, Xt = rng.standard_normal((5, 3)), rng.standard_normal((7, 3))
    D = _differences(X)
    exact = _phi(Xt) @ scipy.linalg.solve(np.eye(10) + 0.5 * D.T @ D, _phi(X).T)
    np.testing.assert_allclose(_fit(X, strength=0.5).sip_kernel(Xt, X), exact, atol=1e-9)


def test_metric_features_reproduce_the_warped_kernel(one_torch_thread):
    """Quadratic case: ``phi(x)^T phi(y) = k~_x^T M^{-1} k~_y`` (brute force)."""
    rng = np.random.default_rng(2)
    X, Xt = rng.standard_normal((5, 3)), rng.standard_normal((4, 3))
    D = _differences(X)
    exact = _phi(Xt) @ scipy.linalg.solve(np.eye(10) + 2.0 * D.T @ D, _phi(Xt).T)
    F = _fit(X, strength=2.0, features="metric").transform(Xt)
    np.testing.assert_allclose(F @ F.T, exact, atol=1e-9)
    F_iota = _fit(X, strength=2.0).transform(Xt)  # iota sees M^-2, not the warped kernel
    assert np.abs(F_iota @ F_iota.T - exact).max() > 1e-2


@pytest.mark.parametrize("reading", ["pairs", "sum_of_max"])
def test_max_metric_features_have_the_sip_norm(reading, one_torch_thread):
    """``||phi(x)||^2 = G(x, x)``, and with one representer max = sum (the quadratic map)."""
    rng = np.random.default_rng(3)
    X, Xt = rng.standard_normal((4, 3)), rng.standard_normal((6, 3))
    emb = _fit(X, aggregate="max", reading=reading, features="metric", strength=1.5)
    F = emb.transform(Xt)
    np.testing.assert_allclose((F * F).sum(1), np.diag(emb.sip_kernel(Xt)), rtol=1e-9)
    one = TransformInvariance(TRANSFORMS[:1], n_points=1, random_state=0)
    single = {"basis": "augmented", "features": "metric", "strength": 1.5, "tol": 1e-13}
    by_max = InvariantEmbedding(Polynomial(2), [one], aggregate="max", reading=reading, **single)
    by_sum = InvariantEmbedding(Polynomial(2), [one], aggregate="sum", **single)
    np.testing.assert_allclose(by_max.fit(X).transform(Xt), by_sum.fit(X).transform(Xt), atol=1e-8)


def test_spectral_strength_scale(one_torch_thread):
    """``strength_unit="spectral"``: ``s = strength / sup_{||v||=1} R(v)^2`` (brute force)."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((5, 3))
    D = _differences(X)
    emb = _fit(X, strength=2.0, strength_unit="spectral")
    top = float(np.linalg.eigvalsh(D.T @ D)[-1])
    np.testing.assert_allclose(emb.seminorm_scale_, top, rtol=1e-9)
    np.testing.assert_allclose(emb.strength_, 2.0 / top, rtol=1e-9)
    pairs = _fit(X, aggregate="max", strength_unit="spectral")
    np.testing.assert_allclose(pairs.seminorm_scale_, float((D * D).sum(1).max()), rtol=1e-9)


def test_defaults_are_the_augmented_basis_metric_map_and_spectral_unit(one_torch_thread):
    """Default settings with a transformation invariance (brute force as above)."""
    rng = np.random.default_rng(6)
    X, Xt = rng.standard_normal((5, 3)), rng.standard_normal((4, 3))
    D = _differences(X)
    inv = [TransformInvariance(TRANSFORMS)]
    quad = InvariantEmbedding(Polynomial(2), inv, aggregate="sum", strength=2.0).fit(X)
    assert (quad.basis_used_, quad.features_used_) == ("augmented", "metric")
    assert quad.landmarks_.shape[0] == 15  # 5 points and their 2 x 5 transformed copies
    s = 2.0 / float(np.linalg.eigvalsh(D.T @ D)[-1])
    exact = _phi(Xt) @ scipy.linalg.solve(np.eye(10) + s * D.T @ D, _phi(Xt).T)
    F = quad.transform(Xt)
    np.testing.assert_allclose(F @ F.T, exact, atol=1e-9)
    # the max aggregation, reading (a): strength 1 over max_j ||d_j||^2, metric features
    pairs = InvariantEmbedding(Polynomial(2), inv, tol=1e-12).fit(X)
    np.testing.assert_allclose(pairs.strength_, 1.0 / float((D * D).sum(1).max()), rtol=1e-9)
    F = pairs.transform(Xt)
    np.testing.assert_allclose((F * F).sum(1), np.diag(pairs.sip_kernel(Xt)), rtol=1e-9)
    # reading (b) has no metric map: "auto" gives iota
    blocks = InvariantEmbedding(Polynomial(2), inv, reading="transforms").fit(X)
    assert blocks.features_used_ == "iota"


def test_auto_basis_caps_the_centres_and_leaves_joint_invariances_on_landmarks(
    monkeypatch, one_torch_thread
):
    import kernelkit.estimators._invariant as module
    from kernelkit.invariance import MixupInvariance

    rng = np.random.default_rng(7)
    X = rng.standard_normal((5, 3))
    moved = np.vstack([T(X) for T in TRANSFORMS])
    monkeypatch.setattr(module, "AUTO_MAX_CENTRES", 8)
    capped = InvariantEmbedding(Polynomial(2), [TransformInvariance(TRANSFORMS)], random_state=0)
    centres = capped.fit(X).landmarks_
    assert centres.shape[0] == 8
    np.testing.assert_array_equal(centres[:5], X)
    # the other 3 are distinct transformed points
    hits = [np.flatnonzero(np.abs(moved - row).max(1) < 1e-12) for row in centres[5:]]
    assert all(h.size == 1 for h in hits) and len({int(h[0]) for h in hits}) == 3
    full = _fit(X, strength=1.0)  # basis="augmented" explicitly: no cap
    assert full.landmarks_.shape[0] == 15
    y = np.array([0, 1, 2, 0, 1])
    joint = InvariantEmbedding(Polynomial(2), [MixupInvariance(n_grid=3, random_state=0)])
    assert joint.fit(X, y).basis_used_ == "nystrom" and joint.landmarks_.shape[0] == 5
    assert InvariantEmbedding(Polynomial(2)).fit(X).basis_used_ == "nystrom"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"basis": "landmarks"}, "basis"),
        ({"features": "sqrt"}, "features"),
        ({"strength_unit": "relative"}, "strength_unit"),
        ({"aggregate": "max", "reading": "transforms", "features": "metric"}, "features"),
    ],
)
def test_bad_options_are_named(params, message):
    X = np.random.default_rng(5).standard_normal((4, 3))
    with pytest.raises(InputError, match=message):
        _fit(X, **params)


def _gauss(P, Q, sigma):
    return np.exp(-scipy.spatial.distance.cdist(P, Q, "sqeuclidean") / (2 * sigma**2))


@pytest.mark.slow
def test_mnist_sip_kernel_is_exact_warping(one_torch_thread):
    """Done-when of issue 14: 300 MNIST images, one-pixel shifts and +-10 degree rotations."""
    if not MNIST.is_dir():
        pytest.skip(f"MNIST not found at {MNIST}")
    data = np.loadtxt(MNIST / "mnist_5k.csv.gz", delimiter=",", max_rows=300)
    X = data[:, :784] / 255.0
    invariances = [
        ImageTransformInvariance(shift=1.0, transforms=("shift_left", "shift_up")),
        ImageTransformInvariance(shift=-1.0, transforms=("shift_left", "shift_up")),
        ImageTransformInvariance(angle=10.0, transforms=("rotate",)),
        ImageTransformInvariance(angle=-10.0, transforms=("rotate",)),
    ]
    sigma = float(np.median(scipy.spatial.distance.pdist(X)))
    # the default settings: augmented basis, spectral strength 1
    emb = InvariantEmbedding(Gaussian(sigma), invariances, aggregate="sum").fit(X)
    assert emb.basis_used_ == "augmented" and emb.landmarks_.shape[0] == 300 + 6 * 300
    import torch

    moved = np.vstack([t.numpy() for inv in invariances for t in inv.transformed(torch.tensor(X))])
    base = np.tile(X, (len(moved) // len(X), 1))
    # g_j(x) = k(x, T x_j) - k(x, x_j); Gamma_ij = <g_i, g_j>_H
    g = _gauss(X, moved, sigma) - _gauss(X, base, sigma)
    gamma = (
        _gauss(moved, moved, sigma)
        - _gauss(moved, base, sigma)
        - _gauss(base, moved, sigma)
        + _gauss(base, base, sigma)
    )
    s = emb.strength_
    exact = _gauss(X, X, sigma) - g @ scipy.linalg.solve(np.eye(len(gamma)) / s + gamma, g.T)
    error = np.linalg.norm(emb.sip_kernel(X) - exact) / np.linalg.norm(exact)
    assert error < 1e-3
