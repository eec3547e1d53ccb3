"""BiasFreeSVC (course part 1, section 3.6) against a generic QP solver (SciPy's SLSQP on the
primal QP) and the course's KKT conditions."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import torch
from scipy.optimize import minimize

from kernelkit import BiasFreeSVC
from kernelkit.estimators._svm_dual import bias_free_svm
from kernelkit.io import load, save
from kernelkit.kernels import Gaussian
from kernelkit.utils._errors import InputError, ParameterError


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 2))
    y = np.where(X[:, 0] + 0.4 * rng.standard_normal(30) > 0, 1, -1)
    Xt = rng.standard_normal((20, 2))
    return X, y, Xt


def _primal_qp(K, y, lam, loss):
    """The primal QP over (w, xi) with ``f = L w``, ``K = L L^T`` (so ``||f||^2 = ||w||^2``):
    ``min (1/n) sum xi_i (or xi_i^2) + lam ||w||^2`` s.t. ``y_i (L w)_i + xi_i >= 1``,
    ``xi >= 0``, by SLSQP; returns ``alpha = L^-T w``."""
    n = len(y)
    L = scipy.linalg.cholesky(K, lower=True)
    squared = loss == "squared_hinge"

    def fun(v):
        w, xi = v[:n], v[n:]
        return ((xi**2).mean() if squared else xi.mean()) + lam * w @ w

    def jac(v):
        w, xi = v[:n], v[n:]
        return np.concatenate([2 * lam * w, 2 * xi / n if squared else np.full(n, 1 / n)])

    A = np.hstack([y[:, None] * L, np.eye(n)])
    B = np.hstack([np.zeros((n, n)), np.eye(n)])
    res = minimize(
        fun,
        np.concatenate([np.zeros(n), np.ones(n)]),
        jac=jac,
        method="SLSQP",
        constraints=[
            {"type": "ineq", "fun": lambda v: A @ v - 1, "jac": lambda v: A},
            {"type": "ineq", "fun": lambda v: B @ v, "jac": lambda v: B},
        ],
        options={"ftol": 1e-15, "maxiter": 1000},
    )
    assert res.success
    return scipy.linalg.solve_triangular(L.T, res.x[:n], lower=False), res.fun


@pytest.mark.parametrize("loss", ["hinge", "squared_hinge"])
def test_decisions_equal_a_generic_qp_solver(data, loss, one_torch_thread):
    X, y, Xt = data
    lam = 0.02
    kernel = Gaussian(1.0)
    model = BiasFreeSVC(kernel, lam, loss=loss, tol=1e-12, max_iter=10000).fit(X, y)
    assert model.duality_gap_[0] < 1e-6
    K = kernel(torch.as_tensor(X)).numpy()
    alpha, value = _primal_qp(K, y, lam, loss)
    Kt = kernel(torch.as_tensor(Xt), torch.as_tensor(X)).numpy()
    np.testing.assert_allclose(model.decision_function(Xt), Kt @ alpha, atol=1e-6)
    f = K @ model.dual_coef_
    phi = np.maximum(1 - y * f, 0)
    primal = (phi.mean() if loss == "hinge" else (phi**2).mean()) + lam * model.dual_coef_ @ f
    assert primal <= value + 1e-9


def test_default_tolerance_certificate_and_kkt(data, one_torch_thread):
    """Default tol: gap below 1e-6.  At a tight tol, the course's KKT pattern: alpha_i = 0
    => y_i f_i >= 1; 0 < y_i alpha_i < C => y_i f_i = 1; y_i alpha_i = C => y_i f_i <= 1."""
    X, y, _ = data
    n, lam = len(y), 0.02
    C = 1 / (2 * n * lam)
    assert BiasFreeSVC(Gaussian(1.0), lam).fit(X, y).duality_gap_[0] < 1e-6
    model = BiasFreeSVC(Gaussian(1.0), lam, tol=1e-13, max_iter=10000).fit(X, y)
    beta = y * model.dual_coef_
    margin = y * (Gaussian(1.0)(torch.as_tensor(X)).numpy() @ model.dual_coef_)
    assert beta.min() >= 0 and beta.max() <= C
    free = (beta > 1e-9) & (beta < C - 1e-9)
    assert free.any() and (beta == 0).any()
    assert (margin[beta == 0] >= 1 - 1e-6).all()
    np.testing.assert_allclose(margin[free], 1.0, atol=1e-5)
    assert (margin[beta >= C - 1e-12] <= 1 + 1e-6).all()
    np.testing.assert_array_equal(model.support_, np.flatnonzero(beta > 0))


def test_squared_hinge_is_hinge_on_shifted_gram_without_box(data, one_torch_thread):
    """Course: the 2-SVM is the hinge SVM dual on K + n lam I with C = +inf."""
    X, y, _ = data
    n, lam = len(y), 0.05
    K = Gaussian(1.0)(torch.as_tensor(X))
    two = bias_free_svm(K, torch.as_tensor(y), lam=lam, loss="squared_hinge", tol=1e-13)
    # with C = inf the hinge dual on K + n lam I is the squared-hinge dual: a tiny lam' makes
    # C' = 1 / (2 n lam') larger than every coefficient
    shifted = K + n * lam * torch.eye(n, dtype=K.dtype)
    one = bias_free_svm(
        shifted, torch.as_tensor(y), lam=1e-9, loss="hinge", tol=1e-22, max_iter=20000
    )
    np.testing.assert_allclose(one.coef.numpy(), two.coef.numpy(), atol=1e-6)


def test_multiclass_one_vs_rest_and_sparse_prediction(one_torch_thread):
    rng = np.random.default_rng(2)
    X = np.vstack([rng.normal(c, 0.4, (20, 2)) for c in ((0, 0), (3, 0), (0, 3))])
    y = np.repeat(["a", "b", "c"], 20)
    model = BiasFreeSVC(Gaussian(1.0), 1e-3).fit(X, y)
    assert model.dual_coef_.shape == (60, 3) and (model.predict(X) == y).all()
    full = Gaussian(1.0)(torch.as_tensor(X)).numpy() @ model.dual_coef_
    np.testing.assert_allclose(model.decision_function(X), full, atol=1e-12)
    assert len(model.support_) < 60


def test_bad_input_gets_named_errors(data):
    X, y, _ = data
    with pytest.raises(InputError, match=r"y: expected binary labels in \{-1, \+1\}, got the"):
        bias_free_svm(torch.eye(3, dtype=torch.float64), torch.tensor([0.0, 1.0, 2.0]), lam=1.0)
    with pytest.raises(ParameterError, match="loss: "):
        BiasFreeSVC(loss="log").fit(X, y)
    with pytest.raises(ParameterError, match="lam: "):
        BiasFreeSVC(lam=-1.0).fit(X, y)


def test_save_load_round_trip(data, tmp_path, one_torch_thread):
    X, y, Xt = data
    model = BiasFreeSVC(Gaussian(1.0), 0.02, loss="squared_hinge").fit(X, y)
    loaded = load(save(model, tmp_path / "svm"))
    np.testing.assert_array_equal(loaded.decision_function(Xt), model.decision_function(Xt))


def test_lam_auto_is_the_best_5_fold_accuracy_of_the_grid():
    """``lam="auto"``: the grid ``mean k(x, x) * 10^{-1..-9}`` scored by a hand-written loop
    over the stratified folds (seed 0) on the Gram, from the largest ``lam`` down until
    the option ``logistic_patience`` values past the best, the best mean accuracy (ties: the larger
    ``lam``), then the fit at that ``lam`` on every row."""
    from sklearn.model_selection import StratifiedKFold

    from kernelkit import get_config
    from kernelkit.estimators import BiasFreeSVC
    from kernelkit.estimators._svm_dual import bias_free_svm
    from kernelkit.kernels import Gaussian

    rng = np.random.default_rng(3)
    X = rng.normal(size=(50, 2))
    y = np.where(X[:, 0] * X[:, 1] > 0, 1, -1)  # separable: every lam converges in a few sweeps
    K = Gaussian(1.0)(torch.as_tensor(X))
    grid = np.logspace(-1, -9, 17)  # the Gaussian's scale is 1
    folds = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
    mean_accuracy = []
    for lam in grid:
        hits = []
        for tr, te in folds:
            ytr = torch.as_tensor(y[tr], dtype=torch.float64)
            coef = bias_free_svm(K[tr][:, tr], ytr, lam=lam).coef
            hits.append(np.mean(np.sign((K[te][:, tr] @ coef).numpy()) == y[te]))
        mean_accuracy.append(np.mean(hits))
    model = BiasFreeSVC(Gaussian(1.0), lam="auto").fit(X, y)
    visited = len(model.cv_results_["params"])  # the path stops logistic_patience past the best
    best = grid[int(np.argmax(mean_accuracy[:visited]))]
    patience = get_config()["logistic_patience"]
    assert visited == len(grid) or visited - 1 - np.argmax(mean_accuracy[:visited]) == patience + 1
    assert type(model.lam_) is float and model.lam_ == pytest.approx(best, rel=1e-12)
    np.testing.assert_allclose(
        model.cv_results_["mean_test_score"], mean_accuracy[:visited], atol=1e-12
    )
    fixed = BiasFreeSVC(Gaussian(1.0), lam=best).fit(X, y)
    np.testing.assert_allclose(model.dual_coef_, fixed.dual_coef_, atol=1e-12)
    assert BiasFreeSVC(Gaussian(1.0), lam=0.01).fit(X, y).lam_ == 0.01
