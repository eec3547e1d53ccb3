"""Nyström kernel logistic regression by Newton + Falkon CG (models/_falkon_logistic.py)
against scikit-learn's LogisticRegression on the explicit Nyström features."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.linear_model import LogisticRegression
from sklearn.multiclass import OneVsRestClassifier

from kernelkit.gram import gram
from kernelkit.gram._nystrom import centre_indices
from kernelkit.kernels import Gaussian, Spectrum
from kernelkit.models._falkon import nystrom_system
from kernelkit.models._falkon_logistic import (
    hessian_sample,
    logistic_preconditioner,
    nystrom_logistic_decision,
    nystrom_logistic_fit,
)

KERNEL = Gaussian(1.5)


def _features(kernel, X, C):
    """``phi(x) = L^{-1} k_C(x)`` with ``K_CC = L L^T``: ``phi^T phi' = k_C^T K_CC^{-1} k_C'``."""
    L = np.linalg.cholesky(gram(kernel, C))
    return np.linalg.solve(L, gram(kernel, X, C).T).T


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    return X, rng


@pytest.mark.parametrize("classes", [2, 4])
def test_equals_sklearn_logistic_regression_on_nystrom_features(classes, one_torch_thread):
    X, _ = _data()
    score = X[:, 0] * X[:, 1] if classes == 2 else X[:, 0] + 0.5 * X[:, 1] ** 2
    y = np.digitize(score, np.quantile(score, np.linspace(0, 1, classes + 1)[1:-1]))
    labels = np.array(["a", "b", "c", "d"])[y]
    n, lam = len(X), 1e-3
    idx = centre_indices(KERNEL, torch.as_tensor(X), 40, random_state=0)
    res = nystrom_logistic_fit(KERNEL, torch.as_tensor(X), labels, idx, lam, tol=1e-10)
    assert res.converged and list(res.classes) == sorted(set(labels))
    lr = LogisticRegression(C=1 / (2 * n * lam), fit_intercept=False, tol=1e-12, max_iter=10000)
    ref = lr if classes == 2 else OneVsRestClassifier(lr)
    C = X[idx]
    ref.fit(_features(KERNEL, X, C), labels)
    Xt = _data(80, seed=1)[0]
    ours = nystrom_logistic_decision(KERNEL, torch.as_tensor(Xt), res).numpy()
    theirs = ref.decision_function(_features(KERNEL, Xt, C)).reshape(len(Xt), -1)
    assert np.abs(ours - theirs).max() <= 1e-5 * np.abs(theirs).max()


def test_sample_weight_equals_sklearn(one_torch_thread):
    X, rng = _data()
    y = (X[:, 0] + 0.3 * rng.standard_normal(len(X)) > 0).astype(int)
    w = rng.uniform(0.1, 3.0, len(X))
    n, lam = len(X), 1e-2
    idx = centre_indices(KERNEL, torch.as_tensor(X), 30, random_state=1)
    res = nystrom_logistic_fit(KERNEL, torch.as_tensor(X), y, idx, lam, sample_weight=w, tol=1e-10)
    C = X[idx]
    ref = LogisticRegression(C=1 / (2 * n * lam), fit_intercept=False, tol=1e-12, max_iter=10000)
    ref.fit(_features(KERNEL, X, C), y, sample_weight=w)
    ours = nystrom_logistic_decision(KERNEL, torch.as_tensor(X), res).numpy()[:, 0]
    theirs = ref.decision_function(_features(KERNEL, X, C))
    assert np.abs(ours - theirs).max() <= 1e-5 * np.abs(theirs).max()


def test_strings_are_classified_through_gram_blocks(one_torch_thread):
    rng = np.random.default_rng(2)
    S = ["".join(rng.choice(list("ACGT"), size=int(rng.integers(8, 15)))) for _ in range(80)]
    y = np.array([s.count("A") > s.count("T") for s in S], int)
    kernel = Spectrum(k=2).normalized()
    res = nystrom_logistic_fit(kernel, S, y, np.arange(0, 80, 4), 1e-3, tol=1e-10)
    C = [S[i] for i in range(0, 80, 4)]
    L = np.linalg.cholesky(gram(kernel, C) + 1e-10 * np.eye(20))
    phi = np.linalg.solve(L, gram(kernel, S, C).T).T
    ref = LogisticRegression(C=1 / (2 * 80 * 1e-3), fit_intercept=False, tol=1e-12, max_iter=10000)
    ref.fit(phi, y)
    ours = nystrom_logistic_decision(kernel, S, res).numpy()[:, 0]
    np.testing.assert_allclose(ours, ref.decision_function(phi), rtol=1e-4, atol=1e-4)


def test_inexact_newton_reaches_the_exact_newton_solution(one_torch_thread):
    """The forcing term changes the CG tolerances of the Newton steps, not the solution:
    ``forcing=0.5`` and ``forcing=0`` (every CG to ``tol``) end at the same coefficients,
    the inexact run with fewer CG iterations in all."""
    X, rng = _data(400)
    y = (X[:, 0] * X[:, 1] + 0.3 * rng.standard_normal(len(X)) > 0).astype(int)
    idx = centre_indices(KERNEL, torch.as_tensor(X), 60, random_state=0)
    kw = dict(tol=1e-10, max_iter=200, newton_tol=1e-14)
    exact = nystrom_logistic_fit(KERNEL, torch.as_tensor(X), y, idx, 1e-5, forcing=0.0, **kw)
    inexact = nystrom_logistic_fit(KERNEL, torch.as_tensor(X), y, idx, 1e-5, forcing=0.5, **kw)
    assert exact.converged and inexact.converged
    f_exact = nystrom_logistic_decision(KERNEL, torch.as_tensor(X), exact)
    f_inexact = nystrom_logistic_decision(KERNEL, torch.as_tensor(X), inexact)
    assert float((f_exact - f_inexact).abs().max()) <= 1e-6 * float(f_exact.abs().max())
    assert inexact.n_cg < exact.n_cg


def test_bad_input_is_named():
    X, _ = _data(20)
    idx = np.arange(5)
    with pytest.raises(ValueError, match=r"^lam: expected a finite lam > 0"):
        nystrom_logistic_fit(KERNEL, torch.as_tensor(X), np.arange(20) % 2, idx, 0.0)
    with pytest.raises(ValueError, match=r"^y: expected at least 2 classes"):
        nystrom_logistic_fit(KERNEL, torch.as_tensor(X), np.zeros(20), idx, 1e-2)
    with pytest.raises(ValueError, match=r"^y: expected 20 labels"):
        nystrom_logistic_fit(KERNEL, torch.as_tensor(X), np.arange(19) % 2, idx, 1e-2)
    with pytest.raises(ValueError, match=r"^forcing: expected a CG tolerance in \[0, 1\)"):
        nystrom_logistic_fit(KERNEL, torch.as_tensor(X), np.arange(20) % 2, idx, 1e-2, forcing=1.0)


def test_row_sampled_preconditioner_reaches_the_same_solution_in_fewer_iterations(
    one_torch_thread,
):
    """``sampled=True`` (the preconditioner's Hessian averaged over ``8 m`` sampled rows once
    the CG iterations pay for it) changes the CG iterations, not the solution; at a ``lam``
    far below ``1 / m`` it needs fewer of them than Falkon's estimate on the ``m`` centres."""
    X, rng = _data(2000)
    y = (X[:, 0] * X[:, 1] + 0.3 * rng.standard_normal(len(X)) > 0).astype(int)
    idx = centre_indices(KERNEL, torch.as_tensor(X), 40, random_state=0)
    kw = dict(tol=1e-10, max_iter=500, newton_tol=1e-14)
    falkon = nystrom_logistic_fit(KERNEL, torch.as_tensor(X), y, idx, 1e-7, **kw)
    sampled = nystrom_logistic_fit(KERNEL, torch.as_tensor(X), y, idx, 1e-7, sampled=True, **kw)
    assert falkon.converged and sampled.converged
    f_falkon = nystrom_logistic_decision(KERNEL, torch.as_tensor(X), falkon)
    f_sampled = nystrom_logistic_decision(KERNEL, torch.as_tensor(X), sampled)
    assert float((f_falkon - f_sampled).abs().max()) <= 1e-6 * float(f_falkon.abs().max())
    assert sampled.n_cg < falkon.n_cg


def test_sampled_preconditioner_of_every_row_is_the_exact_hessian(one_torch_thread):
    """With ``n <= 8 m`` the sample is every row: its preconditioner's data term is
    ``K_nm^T W K_nm / n``, so ``B^T H B`` is the identity (up to the jitter of ``T``)."""
    X, rng = _data(200)
    idx = centre_indices(KERNEL, torch.as_tensor(X), 30, random_state=0)
    system = nystrom_system(KERNEL, torch.as_tensor(X), idx, lam=1e-4)
    sample = hessian_sample(system)
    assert (sample.rows == np.arange(200)).all()
    Knm = gram(KERNEL, torch.as_tensor(X), torch.as_tensor(X[idx]))
    torch.testing.assert_close(sample.K, Knm.double(), atol=1e-12, rtol=0)
    f = torch.as_tensor(rng.standard_normal((200, 1)))
    pre = logistic_preconditioner(system, f, 1e-4, sample=sample)
    W = torch.sigmoid(f) * torch.sigmoid(-f)
    L = system.factor.L
    H = Knm.T @ (W * Knm) / 200 + 2e-4 * (L @ L.T)
    B = pre.apply(torch.eye(30, dtype=torch.float64))
    torch.testing.assert_close(B.T @ H @ B, torch.eye(30, dtype=torch.float64), atol=1e-8, rtol=0)
