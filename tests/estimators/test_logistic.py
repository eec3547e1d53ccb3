"""KernelLogisticRegression against scikit-learn's LogisticRegression, the course's IRLS step
(weighted KRR) and an L-BFGS minimiser of the objective."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.optimize import minimize
from scipy.special import expit, log1p
from sklearn.linear_model import LogisticRegression
from sklearn.multiclass import OneVsRestClassifier

from kernelkit import KernelLogisticRegression
from kernelkit.io import load, save
from kernelkit.kernels import Gaussian
from kernelkit.models._logistic_exact import kernel_logistic_regression
from kernelkit.utils._errors import InputError, ParameterError


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 4))
    y = (X[:, 0] + 0.5 * X[:, 1] + 0.7 * rng.standard_normal(80) > 0).astype(int)
    y3 = np.digitize(X[:, 0] + 0.3 * rng.standard_normal(80), [-0.5, 0.5])
    return X, y, y3


def _sklearn(lam, n):
    """scikit-learn's problem times ``2 n C``: ``C = 1 / (2 n lam)`` (README convention)."""
    return LogisticRegression(
        C=1 / (2 * n * lam), fit_intercept=False, solver="newton-cholesky", tol=1e-12, max_iter=1000
    )


@pytest.mark.parametrize("lam", [1e-3, 0.05, 1.0])
def test_linear_kernel_equals_sklearn_logistic_regression(data, lam, one_torch_thread):
    X, y, _ = data
    ours = KernelLogisticRegression("linear", lam).fit(X, y)
    ref = _sklearn(lam, len(X)).fit(X, y)
    np.testing.assert_allclose(X.T @ ours.dual_coef_, ref.coef_[0], atol=1e-6)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-6)
    np.testing.assert_allclose(ours.decision_function(X), ref.decision_function(X), atol=1e-6)
    assert (ours.predict(X) == ref.predict(X)).all()


def test_multiclass_is_one_vs_rest(data, one_torch_thread):
    X, _, y3 = data
    lam = 0.01
    ours = KernelLogisticRegression("linear", lam).fit(X, y3)
    ref = OneVsRestClassifier(_sklearn(lam, len(X))).fit(X, y3)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-6)
    assert (ours.predict(X) == ref.predict(X)).all()
    assert ours.dual_coef_.shape == (80, 3) and isinstance(ours.n_iter_, int)


def _objective_and_gradient(K, y, lam):
    n = len(y)

    def fun(alpha):
        m = K @ alpha
        J = np.mean(log1p(np.exp(-y * m))) + lam * alpha @ m
        grad = K @ (-y * expit(-y * m)) / n + 2 * lam * m
        return J, grad

    return fun


def test_gaussian_objective_decreases_and_gradient_vanishes(data, one_torch_thread):
    X, y, _ = data
    s = np.where(y == 1, 1.0, -1.0)
    lam, tol = 1e-3, 1e-10
    model = KernelLogisticRegression(Gaussian(1.0), lam, tol=tol).fit(X, y)
    path = np.asarray(model.objectives_[0])
    assert len(path) == model.n_iter_ + 1 and (np.diff(path) <= 0).all()
    K = Gaussian(1.0)(torch.as_tensor(X)).numpy()
    fun = _objective_and_gradient(K, s, lam)
    J, grad = fun(model.dual_coef_)
    assert np.abs(grad).max() <= tol and model.gradient_norm_[0] <= tol
    assert J == pytest.approx(path[-1], abs=1e-12)
    # an independent optimiser (L-BFGS on J, ill-conditioned in alpha) gets no lower
    ref = minimize(fun, np.zeros(len(s)), jac=True, method="L-BFGS-B", options={"gtol": 1e-12})
    assert J - 1e-12 <= ref.fun <= J + 1e-6


def test_first_step_is_the_weighted_krr_of_the_course(data, one_torch_thread):
    """From alpha_0 = 0: W = 1/4, z = 2y, alpha_1 = W^1/2 (W^1/2 K W^1/2 + 2 n lam I)^-1 W^1/2 z
    (course part 1, section 3.3, IRLS step 5, with the WKRR closed form of section 3.2)."""
    X, y, _ = data
    s = np.where(y == 1, 1.0, -1.0)
    n, lam = len(s), 0.1
    K = Gaussian(1.5)(torch.as_tensor(X)).numpy()
    res = kernel_logistic_regression(torch.as_tensor(K), torch.as_tensor(s), lam=lam, max_iter=1)
    w = np.full(n, 0.25)
    expected = np.sqrt(w) * np.linalg.solve(
        np.sqrt(w)[:, None] * K * np.sqrt(w)[None, :] + 2 * n * lam * np.eye(n), np.sqrt(w) * 2 * s
    )
    assert res.iterations == 1 and not res.converged
    np.testing.assert_allclose(res.coef.numpy(), expected, atol=1e-12)


def test_damped_newton_on_separable_data(one_torch_thread):
    """Separable data and a tiny lam: weights W_i -> 0 on confident points; the damped steps
    still decrease J monotonically and reach the gradient tolerance."""
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(-3, 0.3, (30, 2)), rng.normal(3, 0.3, (30, 2))])
    y = np.repeat([0, 1], 30)
    model = KernelLogisticRegression(Gaussian(0.5), 1e-7, tol=1e-9, max_iter=200).fit(X, y)
    path = np.asarray(model.objectives_[0])
    assert (np.diff(path) <= 0).all() and model.gradient_norm_[0] <= 1e-9
    assert (model.predict(X) == y).all()


def test_probabilities_labels_and_containers(data, one_torch_thread):
    X, y, _ = data
    labels = np.where(y == 1, "yes", "no")
    model = KernelLogisticRegression(Gaussian(1.0), 0.01).fit(X, labels)
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba.sum(1), 1.0)
    np.testing.assert_allclose(proba[:, 1], expit(model.decision_function(X)))
    assert (model.predict(X) == model.classes_[proba.argmax(1)]).all()
    np.testing.assert_allclose(model.predict_log_proba(X), np.log(proba))
    torch_model = KernelLogisticRegression(Gaussian(1.0), 0.01).fit(torch.as_tensor(X), y)
    assert isinstance(torch_model.predict_proba(torch.as_tensor(X)), torch.Tensor)


def test_precomputed_gram_equals_kernel(data, one_torch_thread):
    X, y, _ = data
    K = Gaussian(1.0)(torch.as_tensor(X)).numpy()
    a = KernelLogisticRegression(Gaussian(1.0), 0.01).fit(X, y)
    b = KernelLogisticRegression("precomputed", 0.01).fit(K, y)
    np.testing.assert_allclose(a.decision_function(X[:7]), b.decision_function(K[:7]), atol=1e-10)


def test_bad_input_gets_named_errors(data):
    X, y, _ = data
    with pytest.raises(InputError, match=r"y: expected binary labels in \{-1, \+1\}, got"):
        kernel_logistic_regression(
            torch.eye(3, dtype=torch.float64), torch.tensor([0, 1, 1]), lam=1
        )
    with pytest.raises(InputError, match="y: expected at least 2 classes"):
        KernelLogisticRegression().fit(X, np.zeros(len(X)))
    with pytest.raises(ParameterError, match="lam: "):
        KernelLogisticRegression(lam=0.0).fit(X, y)
    with pytest.raises(ParameterError, match="solver: "):
        KernelLogisticRegression(solver="lbfgs").fit(X, y)
    with pytest.raises(InputError, match="y: expected 80 targets"):
        KernelLogisticRegression().fit(X, y[:-1])


def test_max_iter_warns(data):
    X, y, _ = data
    with pytest.warns(UserWarning, match=r"KernelLogisticRegression: .*max_iter=1 "):
        KernelLogisticRegression(Gaussian(1.0), 1e-3, max_iter=1).fit(X, y)


def test_save_load_round_trip(data, tmp_path, one_torch_thread):
    X, _, y3 = data
    model = KernelLogisticRegression(Gaussian(1.0), 0.01).fit(X, y3)
    loaded = load(save(model, tmp_path / "klr"))
    np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
    assert loaded.objectives_ == model.objectives_


def test_default_lam_is_chosen_on_held_out_rows(data, one_torch_thread):
    """``lam="auto"`` is the default (docs/toolbox.md): a default fit is the held-out path's,
    the same as asking for it."""
    X, y, _ = data
    default = KernelLogisticRegression(Gaussian(1.0), random_state=0).fit(X, y)
    explicit = KernelLogisticRegression(Gaussian(1.0), "auto", random_state=0).fit(X, y)
    assert default.lam == "auto" and default.lam_ in list(default.cv_results_["param_lam"])
    assert default.lam_ == explicit.lam_
    np.testing.assert_array_equal(default.dual_coef_, explicit.dual_coef_)
