"""``kernelkit fit --model gp``, ``--lam auto`` and ``predict --std / --interval`` against the
estimators' own methods."""

from __future__ import annotations

import csv
import re

import numpy as np
import pytest

from kernelkit import GaussianProcessRegressor, KernelRidge
from kernelkit.io import load


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=60)
    path = tmp_path / "train.csv"
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "a", "b", "y"])
        for i, (row, target) in enumerate(zip(X, y, strict=True)):
            writer.writerow([f"r{i}", *row, target])
    return path, X, y


def _read(path):
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    return rows[0], np.array([[float(v) for v in r[1:]] for r in rows[1:]])


def test_gp_fit_reports_its_hyperparameters_and_predicts_std_and_intervals(cli, table, tmp_path):
    path, X, _ = table
    model = tmp_path / "gp.zip"
    fit = cli("fit", path, "--model", "gp", "--target", "y", "--out", model, "--quiet")
    assert fit.code == 0, fit.err
    fit = cli("fit", path, "--model", "gp", "--target", "y", "--out", model, "--overwrite")
    assert re.search(r"amplitude=[\d.e+-]+, noise=[\d.e+-]+ \(log marginal likelihood", fit.out)
    out = tmp_path / "p.csv"
    pred = cli("predict", model, path, "--std", "--interval", "0.8", "--out", out)
    assert pred.code == 0, pred.err
    header, values = _read(out)
    assert header == ["id", "prediction", "std", "lower", "upper"]
    gp = load(model)
    assert isinstance(gp, GaussianProcessRegressor)
    mean, std = gp.predict(X, return_std=True)
    np.testing.assert_allclose(values[:, 0], mean, rtol=1e-12)
    np.testing.assert_allclose(values[:, 1], std, rtol=1e-12)
    np.testing.assert_allclose(values[:, 2:], gp.predict_interval(X, alpha=0.2), rtol=1e-12)


def test_ridge_lam_auto_reports_the_choice_and_its_loo_error(cli, table, tmp_path):
    path, X, y = table
    model = tmp_path / "r.zip"
    fit = cli("fit", path, "--model", "ridge", "--lam", "auto", "--target", "y", "--out", model)
    assert fit.code == 0, fit.err
    ridge = load(model)
    assert isinstance(ridge, KernelRidge)
    loo = np.sqrt(np.mean(ridge.loo_residuals_**2))
    assert f"lam={ridge.lam_:.4g} chosen (leave-one-out RMSE {loo:.4g})" in fit.out
    reference = KernelRidge(lam="auto").fit(X, y)
    assert ridge.lam_ == pytest.approx(reference.lam_, rel=1e-6)
    out = tmp_path / "q.csv"
    assert cli("predict", model, path, "--interval", "0.9", "--out", out).code == 0
    header, values = _read(out)
    assert header == ["id", "prediction", "lower", "upper"]
    np.testing.assert_allclose(values[:, 1:], ridge.predict_interval(X, alpha=0.1), rtol=1e-12)
    assert np.all(values[:, 1] <= values[:, 0]) and np.all(values[:, 0] <= values[:, 2])
    # without --lam a ridge chooses its lam too (KernelRidge's default lam="auto")
    default = cli("fit", path, "--model", "ridge", "--target", "y", "--out", model, "--overwrite")
    assert default.code == 0, default.err
    assert load(model).lam_ == ridge.lam_ and "chosen (leave-one-out RMSE" in default.out


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--model", "gp", "--lam", "1e-3"], "a gp learns its noise variance"),
        (["--model", "gp", "--cv", "3"], "a gp learns its hyper-parameters"),
        (["--model", "svc", "--lam", "auto"], "--lam auto: only --model ridge"),
        (["--model", "ridge", "--lam", "auto", "--cv", "3"], "without --cv"),
    ],
)
def test_fit_usage_errors(cli, table, tmp_path, argv, fragment):
    path = table[0]
    result = cli("fit", path, "--target", "y", "--out", tmp_path / "m.zip", *argv)
    assert result.code == 2 and fragment in result.err


def test_predict_usage_errors(cli, table, tmp_path):
    path = table[0]
    model = tmp_path / "r.zip"
    assert cli("fit", path, "--model", "ridge", "--target", "y", "--out", model).code == 0
    bad = cli("predict", model, path, "--interval", "1.5", "--out", tmp_path / "z.csv")
    assert bad.code == 2 and "--interval: expected a level in (0, 1)" in bad.err
    std = cli("predict", model, path, "--std", "--out", tmp_path / "z.csv")
    assert std.code == 2 and "--std: only a gp model" in std.err
    assert not (tmp_path / "z.csv").exists()
