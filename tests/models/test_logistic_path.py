"""``lam="auto"`` of kernel logistic regression (models/_logistic_path.py): the held-out path
against brute-force cold fits on the same split, the warm-started and preconditioner-reusing
Newton-PCG against cold fits, the held-out scores against scikit-learn's metrics."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.metrics import log_loss, zero_one_loss

from kernelkit import KernelLogisticRegression
from kernelkit.gram import gram
from kernelkit.gram._nystrom import centre_indices
from kernelkit.kernels import Gaussian
from kernelkit.models._falkon import nystrom_system
from kernelkit.models._falkon_logistic import (
    logistic_preconditioner,
    nystrom_logistic_fit,
    nystrom_logistic_onepass,
)
from kernelkit.models._logistic_path import (
    held_out_scores,
    holdout_rows,
    logistic_lam_path,
    one_standard_error,
    relative_grid,
)
from kernelkit.utils._errors import InputError
from kernelkit.utils._validation import EncodedLabels, signed_targets

KERNEL = Gaussian(1.0)


@pytest.fixture
def problem():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((500, 2))
    y = (np.sin(2 * X[:, 0]) + X[:, 1] + 0.6 * rng.standard_normal(500) > 0).astype(int)
    idx = centre_indices(KERNEL, torch.as_tensor(X), 60, random_state=0)
    system = nystrom_system(KERNEL, torch.as_tensor(X), idx, lam=2 * relative_grid()[-1])
    return X, y, system


def _cold_held_out_loss(system, y, held_out, lam, solver):
    """Held-out log loss of the converged fit on the other rows (weights n / n_tr)."""
    n = len(y)
    weights = torch.as_tensor(~held_out, dtype=torch.float64) * n / (~held_out).sum()
    if solver == "onepass":
        res = nystrom_logistic_onepass(
            system, y, lam, sample_weight=weights, max_newton=100, newton_tol=1e-14
        )
    else:
        res = nystrom_logistic_fit(
            None,
            None,
            y,
            system.indices,
            lam,
            sample_weight=weights,
            system=system,
            max_newton=100,
            newton_tol=1e-14,
            tol=1e-12,
        )
    f = system.op.matmat(res.coef)[:, 0].numpy()[held_out]
    proba = 1 / (1 + np.exp(-f))
    return log_loss(y[held_out], proba, labels=[0, 1])


@pytest.mark.parametrize("solver", ["pcg", "onepass"])
def test_path_follows_cold_fits_on_the_same_split(problem, solver):
    X, y, system = problem
    held_out = holdout_rows(len(X), 0)
    path = logistic_lam_path(system, y, held_out, solver=solver)
    cold = np.array([_cold_held_out_loss(system, y, held_out, lam, solver) for lam in path.lams])
    # one warm-started Newton step per half decade stays close to the lam path: the same
    # argmin, and the one-standard-error choice within one grid step of the cold fits' (the
    # path's losses lag the converged ones by up to 5%, the standard error is 2-3%)
    low = int(np.argmin(cold))
    assert int(np.argmin(path.loss)) == low
    np.testing.assert_allclose(path.loss, cold, rtol=0.05)
    cold_choice = min(i for i, v in enumerate(cold) if v <= cold[low] + path.se[low])
    assert abs(path.best - cold_choice) <= 1
    assert path.best == one_standard_error(path.loss, path.se)
    results = path.cv_results()
    assert results["rank_test_score"][low] == 1
    np.testing.assert_array_equal(results["param_lam"], path.lams)


@pytest.mark.parametrize("solver", ["pcg", "onepass"])
def test_refit_equals_a_cold_fit_at_the_chosen_lam(problem, solver):
    X, y, _ = problem
    kw = dict(solver="nystrom", nystrom_method=solver, n_centers=60, tol=1e-12, random_state=0)
    auto = KernelLogisticRegression(KERNEL, "auto", **kw).fit(X, y)
    assert auto.lam_ in relative_grid() and auto.cv_results_["rank_test_score"].min() == 1
    res = auto.cv_results_
    chosen = one_standard_error(-res["mean_test_score"], res["sem_test_score"])
    assert res["params"][chosen] == {"lam": auto.lam_}
    cold = KernelLogisticRegression(KERNEL, lam=auto.lam_, **kw).fit(X, y)
    np.testing.assert_array_equal(auto.center_indices_, cold.center_indices_)
    expected = cold.decision_function(X)
    np.testing.assert_allclose(
        auto.decision_function(X), expected, rtol=0, atol=1e-6 * np.abs(expected).max()
    )


def test_warm_start_and_a_kept_preconditioner_reach_the_cold_solution(problem):
    X, y, system = problem
    lam = 1e-4
    cold = nystrom_logistic_fit(
        None, None, y, system.indices, lam, system=system, newton_tol=1e-14, tol=1e-12
    )
    stale = logistic_preconditioner(system, torch.zeros(len(X), 1, dtype=torch.float64), 1e-2)
    warm = nystrom_logistic_fit(
        None,
        None,
        y,
        system.indices,
        lam,
        system=system,
        newton_tol=1e-14,
        tol=1e-12,
        coef0=0.5 * cold.coef,
        preconditioner=stale,
        rebuild_after=np.inf,
    )
    np.testing.assert_allclose(warm.coef, cold.coef, rtol=0, atol=1e-6 * cold.coef.abs().max())
    np.testing.assert_allclose(warm.scores, system.op.matmat(warm.coef), atol=1e-9)
    again = nystrom_logistic_fit(
        None,
        None,
        y,
        system.indices,
        lam,
        system=system,
        newton_tol=1e-14,
        tol=1e-12,
        coef0=cold.coef,
        scores0=cold.scores,
    )
    assert again.n_newton == 1 and again.converged


def test_held_out_scores_equal_sklearn_metrics():
    rng = np.random.default_rng(3)
    f = torch.as_tensor(rng.standard_normal((50, 3)))
    labels = rng.integers(0, 3, 50)
    _, Y = signed_targets(labels)
    loss, error, se = held_out_scores(f, Y.double())
    expected = sum(
        log_loss((labels == c).astype(int), 1 / (1 + np.exp(-f[:, c].numpy())), labels=[0, 1])
        for c in range(3)
    )
    assert loss == pytest.approx(expected, rel=1e-12)
    assert error == pytest.approx(zero_one_loss(labels, f.numpy().argmax(1)))
    rows = sum(np.logaddexp(0, -np.where(labels == c, 1, -1) * f[:, c].numpy()) for c in range(3))
    assert se == pytest.approx(rows.std(ddof=1) / np.sqrt(50), rel=1e-12)
    _, Y2 = signed_targets(labels > 0)
    _, error2, _ = held_out_scores(f[:, :1], Y2.double())
    assert error2 == pytest.approx(zero_one_loss(labels > 0, f[:, 0].numpy() >= 0))


def test_encoded_labels_give_the_same_path_and_pass_through_signed_targets(problem):
    X, y, system = problem
    labels = np.array(["b", "a", "c"])[(X[:, 0] > 0).astype(int) + (X[:, 1] > 0)]
    encoded = EncodedLabels.of(labels)
    classes, Y = signed_targets(encoded)
    assert classes is encoded.classes and Y is encoded.Y
    np.testing.assert_array_equal(classes, ["a", "b", "c"])
    held_out = holdout_rows(len(y), 0)
    raw = logistic_lam_path(system, labels, held_out, relative_grid()[:4])
    fast = logistic_lam_path(system, encoded, held_out, relative_grid()[:4])
    np.testing.assert_array_equal(raw.loss, fast.loss)
    torch.testing.assert_close(raw.coef, fast.coef, rtol=0, atol=0)


def test_holdout_rows_are_reproducible_and_independent_of_the_centres():
    a, b = holdout_rows(1000, 7), holdout_rows(1000, 7)
    np.testing.assert_array_equal(a, b)
    assert a.sum() == 200 and not np.array_equal(a, holdout_rows(1000, 8))
    same_seed_draw = np.zeros(1000, dtype=bool)
    same_seed_draw[np.random.default_rng(7).choice(1000, 200, replace=False)] = True
    assert (a & same_seed_draw).sum() < 100  # not the centres' stream
    assert holdout_rows(2, 0).sum() == 1


def test_one_standard_error_rule():
    loss = np.array([0.6, 0.3, 0.21, 0.2, 0.205, 0.3])
    se = np.full(6, 0.02)
    assert one_standard_error(loss, se) == 2  # the largest lam within 0.2 + 0.02
    assert one_standard_error(loss, np.zeros(6)) == 3  # no noise: the argmin


def test_named_errors(problem):
    X, y, system = problem
    with pytest.raises(InputError, match="n >= 2"):
        holdout_rows(1)
    with pytest.raises(InputError, match="lams: expected decreasing"):
        logistic_lam_path(system, y, holdout_rows(len(X), 0), [1e-3, 1e-2])
    with pytest.raises(InputError, match="held_out: expected a boolean mask"):
        logistic_lam_path(system, y, np.zeros(len(X), dtype=bool))


def test_exact_path_follows_cold_exact_fits():
    from kernelkit.models._logistic_exact import exact_lam_path, kernel_logistic_regression

    rng = np.random.default_rng(1)
    X = rng.standard_normal((200, 2))
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * rng.standard_normal(200) > 0, 1.0, -1.0)
    K = torch.as_tensor(gram(KERNEL, X)).double()
    Y = torch.as_tensor(y)[:, None]
    held_out = holdout_rows(200, 0)
    path = exact_lam_path(K, Y, held_out)
    tr = torch.as_tensor(~held_out)
    cold = []
    for lam in path.lams:
        alpha = kernel_logistic_regression(K[tr][:, tr], Y[tr, 0], lam=lam, tol=1e-12).coef
        f = (K[torch.as_tensor(held_out)][:, tr] @ alpha).numpy()
        cold.append(log_loss(y[held_out] > 0, 1 / (1 + np.exp(-f)), labels=[False, True]))
    low = int(np.argmin(cold))
    assert int(np.argmin(path.loss)) == low
    np.testing.assert_allclose(path.loss, cold, rtol=0.05)
    cold_choice = min(i for i, v in enumerate(cold) if v <= cold[low] + path.se[low])
    assert abs(path.best - cold_choice) <= 1
    model = KernelLogisticRegression(KERNEL, "auto", solver="exact", tol=1e-12, random_state=0)
    model.fit(X, y)
    assert model.lam_ == path.lam
    cold_fit = KernelLogisticRegression(KERNEL, path.lam, solver="exact", tol=1e-12).fit(X, y)
    np.testing.assert_allclose(model.dual_coef_, cold_fit.dual_coef_, rtol=0, atol=1e-8)


def test_the_grid_follows_the_kernel_scale_and_bad_lam_is_named():
    from kernelkit.utils._errors import ParameterError

    rng = np.random.default_rng(2)
    X = rng.standard_normal((150, 2))
    y = (X[:, 0] + 0.5 * rng.standard_normal(150) > 0).astype(int)
    K = np.asarray(gram(KERNEL, X))
    kw = dict(lam="auto", tol=1e-12, random_state=0)
    one = KernelLogisticRegression("precomputed", **kw).fit(K, y)
    four = KernelLogisticRegression("precomputed", **kw).fit(4 * K, y)
    assert four.lam_ == pytest.approx(4 * one.lam_, rel=1e-12)  # the same model, lam scaled
    np.testing.assert_allclose(four.decision_function(4 * K), one.decision_function(K), atol=1e-8)
    with pytest.raises(ParameterError, match=r"lam: .* or a str among \['auto'\]"):
        KernelLogisticRegression(lam="best").fit(X, y)
    with pytest.raises(InputError, match="mean k"):
        from kernelkit.models._logistic_path import auto_grid

        auto_grid(torch.zeros(3))
