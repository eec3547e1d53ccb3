"""SMO for libsvm's dual with one equality constraint (:mod:`kernelkit.solvers._smo`)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.svm import SVR

from kernelkit.solvers._smo import smo
from kernelkit.utils._errors import InputError


def _svr_dual(K: np.ndarray, y: np.ndarray, C: np.ndarray, eps: float):
    n = len(y)
    s = np.r_[np.ones(n), -np.ones(n)]

    def column(t: int) -> np.ndarray:
        return s[t] * s * np.tile(K[:, t % n], 2)

    return column, np.tile(np.diag(K), 2), np.r_[eps - y, eps + y], s, np.r_[C, C]


@pytest.mark.parametrize("weighted", [False, True])
def test_smo_solves_libsvm_epsilon_svr(weighted):
    """Oracle: scikit-learn's SVR (libsvm) on the same precomputed Gram, tol 1e-8."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 2))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(50)
    K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 2)
    w = rng.uniform(0.5, 2.0, 50) if weighted else np.ones(50)
    res = smo(*_svr_dual(K, y, 3.0 * w, 0.1), tol=1e-8)
    beta = res.solution[:50] - res.solution[50:]
    sk = SVR(kernel="precomputed", C=3.0, epsilon=0.1, tol=1e-8).fit(K, y, sample_weight=w)
    assert res.converged and res.violation <= 1e-8
    np.testing.assert_allclose(K @ beta - res.rho, sk.predict(K), atol=1e-5)
    assert abs(beta.sum()) < 1e-10  # the equality constraint
    assert np.all(res.solution >= 0) and np.all(res.solution <= np.r_[3.0 * w, 3.0 * w] + 1e-12)


def test_warm_start_and_max_iter():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((30, 2))
    y = X[:, 0]
    K = X @ X.T + 1.0
    small = smo(*_svr_dual(K, y, np.full(30, 0.1), 0.05), tol=1e-8)
    cold = smo(*_svr_dual(K, y, np.full(30, 1.0), 0.05), tol=1e-8)
    warm = smo(*_svr_dual(K, y, np.full(30, 1.0), 0.05), tol=1e-8, a0=small.solution)
    np.testing.assert_allclose(warm.gradient, cold.gradient, atol=1e-6)
    stopped = smo(*_svr_dual(K, y, np.full(30, 1.0), 0.05), tol=1e-12, max_iter=3)
    assert stopped.iterations == 3 and not stopped.converged


def test_bad_signs_are_named():
    column, diag, p, s, u = _svr_dual(np.eye(3), np.zeros(3), np.ones(3), 0.1)
    with pytest.raises(InputError, match="signs"):
        smo(column, diag, p, 2 * s, u)
    with pytest.raises(InputError, match="upper"):
        smo(column, diag, p, s, -u)
