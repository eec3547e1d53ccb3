"""KernelSVC against scikit-learn's SVC (libsvm) on the same data and kernel."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import SVC

from kernelkit import KernelSVC
from kernelkit.kernels import FeatureSpaceGaussian, Gaussian, Linear, Precomputed, PrecomputedBatch


@pytest.fixture
def data():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((90, 3))
    Xt = rng.standard_normal((25, 3))
    y_bin = (X[:, 0] + 0.5 * X[:, 1] ** 2 > 0.3).astype(int)
    y_multi = np.where(X[:, 0] > 0.4, "a", np.where(X[:, 1] > 0, "b", "c"))
    return X, Xt, y_bin, y_multi


@pytest.mark.parametrize("target", ["binary", "multiclass"])
@pytest.mark.parametrize(("sigma", "C"), [(1.0, 1.0), (0.5, 10.0)])
def test_decisions_match_sklearn_rbf(data, target, sigma, C):
    X, Xt, y_bin, y_multi = data
    y = y_bin if target == "binary" else y_multi
    ours = KernelSVC(Gaussian(sigma), C=C).fit(X, y)
    ref = SVC(kernel="rbf", gamma=1 / (2 * sigma**2), C=C).fit(X, y)
    dec, dec_ref = ours.decision_function(Xt), ref.decision_function(Xt)
    assert dec.shape == dec_ref.shape
    assert np.abs(dec - dec_ref).max() < 1e-8 * max(1.0, np.abs(dec_ref).max())
    assert (ours.predict(Xt) == ref.predict(Xt)).all()
    assert np.array_equal(ours.support_, ref.support_)
    assert np.array_equal(ours.classes_, ref.classes_)
    assert np.allclose(ours.dual_coef_, ref.dual_coef_, atol=1e-10)
    assert np.allclose(ours.intercept_, ref.intercept_, atol=1e-10)
    assert ours.score(Xt, ref.predict(Xt)) == 1.0


def test_precomputed_and_gram_only_kernel(data):
    """A Gaussian on the feature space of a linear Gram is the Gaussian on the vectors."""
    X, Xt, y, _ = data
    sigma = 0.8
    ref = SVC(kernel="rbf", gamma=1 / (2 * sigma**2)).fit(X, y)
    K, Kt = X @ X.T, Xt @ X.T
    ours = KernelSVC(FeatureSpaceGaussian(Precomputed(), sigma=sigma)).fit(K, y)
    test = PrecomputedBatch(torch.as_tensor(Kt), diag=torch.as_tensor((Xt**2).sum(1)))
    dec = ours.decision_function(test)
    assert np.abs(dec - ref.decision_function(Xt)).max() < 1e-8
    plain = KernelSVC(Precomputed()).fit(rbf_kernel(X, gamma=0.3), y)
    ref_pre = SVC(kernel="precomputed").fit(rbf_kernel(X, gamma=0.3), y)
    Kt_rbf = rbf_kernel(Xt, X, gamma=0.3)
    assert np.abs(plain.decision_function(Kt_rbf) - ref_pre.decision_function(Kt_rbf)).max() < 1e-10


def test_kkt_margin_support_vectors(data):
    """0 < |y_i alpha_i| < C  =>  y_i (f(x_i) + b) = 1 (course 3.6, with libsvm's intercept)."""
    X, _, y, _ = data
    C = 2.0
    model = KernelSVC(Linear(), C=C, tol=1e-8).fit(X, y)
    coef = np.abs(model.dual_coef_[0])
    margin = model.support_[(coef > 1e-8) & (coef < C - 1e-8)]
    assert len(margin) > 0
    signed = np.where(y[margin] == model.classes_[1], 1.0, -1.0)
    assert np.allclose(signed * model.decision_function(X[margin]), 1.0, atol=1e-5)
    assert (coef <= C + 1e-12).all()
    assert abs(model.dual_coef_[0].sum()) < 1e-8  # sum_i y_i alpha_i = 0


def test_class_weight_and_torch_input(data):
    X, Xt, y, _ = data
    ours = KernelSVC(Gaussian(1.0), class_weight="balanced").fit(torch.as_tensor(X), y)
    ref = SVC(kernel="rbf", gamma=0.5, class_weight="balanced").fit(X, y)
    dec = ours.decision_function(torch.as_tensor(Xt))
    assert isinstance(dec, torch.Tensor)
    assert np.abs(dec.numpy() - ref.decision_function(Xt)).max() < 1e-8
    pred = ours.predict(torch.as_tensor(Xt))
    assert isinstance(pred, torch.Tensor)
    assert np.array_equal(pred.numpy(), ref.predict(Xt))
