"""Mixup (section 5) and label-logic (section 6) invariances on the joint kernel.

Oracles: central finite differences of ``lambda -> <V, k~_{x^_lambda} y~_lambda^T>`` (eq. 33's
``Z``), the hinge arguments ``f(x, a) -+ f(x, b)`` of eqs. (35)-(37), and SLSQP-checked solvers.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.linear_model import LogisticRegression

from kernelkit import InvariantEmbedding
from kernelkit.gram._nystrom import nystrom_basis
from kernelkit.invariance import LabelLogicInvariance, MixupInvariance
from kernelkit.invariance._joint import joint_scores
from kernelkit.kernels import Gaussian
from kernelkit.utils._errors import InputError


@pytest.fixture
def setting():
    gen = torch.Generator().manual_seed(0)
    X = torch.randn(7, 3, generator=gen, dtype=torch.float64)
    Y = torch.eye(3, dtype=torch.float64)[torch.tensor([0, 1, 2, 0, 1, 2, 0])]
    kernel = Gaussian(sigma=1.3)
    basis = nystrom_basis(kernel(X, X))

    def embed(A):
        return basis.features(kernel(A, X))

    V = torch.randn(basis.dim, 3, generator=gen, dtype=torch.float64)
    return X, Y, embed, V


def test_mixup_representers_are_lambda_derivatives(setting):
    X, Y, embed, V = setting
    inv = MixupInvariance(n_pairs=4, n_grid=3, random_state=0)
    reps = inv.representers(embed, X, Y)
    Z = torch.einsum("mrd,mrl->mdl", reps.left, reps.right) * np.sqrt(4)
    pairs = inv.pairs(7)
    h = 1e-5
    for row, (p, g) in enumerate(zip(reps.point.tolist(), reps.kind.tolist(), strict=True)):
        i, j = pairs[p]
        lam = g / 2

        def f(t, i=i, j=j):
            x = (t * X[i] + (1 - t) * X[j])[None]
            y = t * Y[i] + (1 - t) * Y[j]
            return float(embed(x)[0] @ V @ y)

        expected = (f(lam + h) - f(lam - h)) / (2 * h)
        assert float((V * Z[row]).sum()) == pytest.approx(expected, rel=1e-6, abs=1e-8)
    assert reps.group_by == "point" and len(reps) == 12


def test_label_logic_representers_are_the_hinge_arguments(setting):
    X, Y, embed, V = setting
    inv = LabelLogicInvariance(
        implications=[("cat", "animal")],
        exclusions=[("cat", "dog")],
        labels=["cat", "dog", "animal"],
    )
    reps = inv.representers(embed, X, Y)
    F = embed(X) @ V  # f(x_i, l)
    values = torch.einsum("mrd,mrl,dl->m", reps.left, reps.right, V) * np.sqrt(7)
    np.testing.assert_allclose(values[0::2].numpy(), (F[:, 0] - F[:, 2]).numpy(), atol=1e-12)
    np.testing.assert_allclose(values[1::2].numpy(), (F[:, 0] + F[:, 1]).numpy(), atol=1e-12)
    assert reps.one_sided and reps.point.tolist()[:4] == [0, 1, 2, 3]


def test_label_logic_embedding_is_certified_and_predicts(setting, one_torch_thread):
    X, Y, _, _ = setting
    inv = LabelLogicInvariance(implications=[(0, 2)], exclusions=[(0, 1)])
    emb = InvariantEmbedding(Gaussian(sigma=1.3), [inv], tol=1e-9)
    F = emb.fit_transform(X.numpy(), Y.numpy())
    assert F.shape == (7, 3 * emb.n_components_ * 3) == (7, emb.get_feature_names_out().size)
    assert emb.certificates_.max() <= 1e-9
    model = LogisticRegression().fit(F.reshape(21, -1), Y.numpy().reshape(-1))
    scores = joint_scores(F, model)
    F3 = emb.embed(X.numpy()).features.numpy()
    np.testing.assert_array_equal(F3.reshape(7, -1), emb.transform(X.numpy()))
    np.testing.assert_allclose(scores, joint_scores(F3, model), rtol=1e-12)
    assert scores.shape == (7, 3)


def test_mixup_embedding_is_certified(setting, one_torch_thread):
    X = setting[0]
    emb = InvariantEmbedding(
        Gaussian(sigma=1.3), [MixupInvariance(n_grid=4, random_state=1)], tol=1e-9
    )
    emb.fit(X.numpy(), np.array([0, 1, 2, 0, 1, 2, 0]))
    result = emb.embed(X.numpy()[:3])
    assert result.features.shape == (3, 3, emb.n_components_ * 3)
    assert float(result.gap.max()) <= 1e-9


def test_labels_outside_the_hierarchy_are_named(setting):
    X, Y, embed, _ = setting
    with pytest.raises(InputError, match=r"implications\[0\].*'bird' is outside the hierarchy"):
        LabelLogicInvariance([("bird", "animal")], labels=["cat", "dog", "animal"]).representers(
            embed, X, Y
        )
    with pytest.raises(InputError, match=r"exclusions\[0\].*5 is outside the hierarchy"):
        LabelLogicInvariance(exclusions=[(0, 5)]).representers(embed, X, Y)
    with pytest.raises(InputError, match="empty invariance set"):
        LabelLogicInvariance().representers(embed, X, Y)
    with pytest.raises(InputError, match=r"y: joint invariances .* need the labels in fit"):
        InvariantEmbedding(invariances=[MixupInvariance()]).fit(X.numpy())


def test_mixup_sum_in_feature_space_is_the_metric_inverse(setting):
    X = setting[0]
    y = np.array([0, 1, 2, 0, 1, 2, 0])
    emb = InvariantEmbedding(
        Gaussian(sigma=1.3),
        [MixupInvariance(n_pairs=14, n_grid=5, random_state=2)],
        aggregate="sum",
        strength=0.7,
        strength_unit="absolute",
        features="iota",
    ).fit(X.numpy(), y)
    Z = emb.seminorm_.dense.numpy()
    assert Z.shape[0] > Z.shape[1] and emb.seminorm_.gram is None  # m = 70 > D = 21
    result = emb.embed(X.numpy())
    K = emb.nystrom_features(X.numpy())
    M = np.eye(Z.shape[1]) + 0.7 * Z.T @ Z
    L = 3
    points = np.einsum("nd,lk->nldk", K, np.eye(L)).reshape(len(X) * L, -1)
    expected = np.linalg.solve(M, points.T).T.reshape(len(X), L, -1)
    np.testing.assert_allclose(result.features.numpy(), expected, atol=1e-12)
    assert float(result.gap.max()) < 1e-12


@pytest.mark.parametrize("kind", ["mixup", "label_logic"])
def test_joint_metric_features_on_the_augmented_basis(setting, kind, one_torch_thread):
    """``||phi(x, l)||^2 = 1 / J`` (the s.i.p. norm of ``G_(x, l)``) on the augmented basis."""
    X, Y = setting[0].numpy(), setting[1].numpy()
    if kind == "mixup":
        inv = MixupInvariance(n_pairs=5, n_grid=4, random_state=1)
    else:
        inv = LabelLogicInvariance(implications=[(0, 2)], exclusions=[(0, 1)])
    emb = InvariantEmbedding(
        Gaussian(sigma=1.3), [inv], basis="augmented", features="metric", tol=1e-11
    ).fit(X, Y)
    # mixup embeds its 5 x 4 mixed points; label logic only the training points
    assert emb.landmarks_.shape[0] == (7 + 20 if kind == "mixup" else 7)
    result = emb.embed(X)
    norms = (result.features**2).sum(-1)
    np.testing.assert_allclose(norms.numpy(), 1.0 / result.primal.numpy(), rtol=1e-7)
