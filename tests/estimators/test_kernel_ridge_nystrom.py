"""KernelRidge(solver="nystrom"), one-pass and PCG (Falkon) against exact KRR, scikit-learn Ridge
on explicit Nyström features, and the errors, warnings and progress reports of the issue."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.linear_model import Ridge
from sklearn.model_selection import GridSearchCV, KFold

from kernelkit import KernelLogisticRegression, KernelRidge, get_config
from kernelkit.gram import gram
from kernelkit.gram._centres import weighted_centres
from kernelkit.kernels import Gaussian, Spectrum
from kernelkit.models import _falkon as falkon
from kernelkit.models._falkon import (
    cg_passes,
    choose_solver,
    nystrom_system,
    nystrom_validation_errors,
    solver_costs,
)
from kernelkit.solvers._nystrom_normal import to_features
from kernelkit.utils._errors import ConvergenceWarning, InputError


def _data(n=150, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.05 * rng.standard_normal(n)
    return X, y


def _features(kernel, X, C):
    """Explicit Nyström features ``K_XC L^{-T}`` with ``K_CC = L L^T`` (NumPy oracle)."""
    L = np.linalg.cholesky(gram(kernel, C))
    return np.linalg.solve(L, gram(kernel, X, C).T).T


@pytest.mark.parametrize("method", ["pcg", "onepass"])
@pytest.mark.parametrize("multi", [False, True])
def test_all_points_as_centres_equal_exact_krr(multi, method, one_torch_thread):
    X, y = _data()
    Y = np.c_[y, np.cos(X[:, 2])] if multi else y
    w = np.random.default_rng(1).uniform(0.2, 2.0, len(X))
    for sw in (None, w):
        exact = KernelRidge(Gaussian(1.5), lam=1e-3).fit(X, Y, sample_weight=sw)
        falkon = KernelRidge(
            Gaussian(1.5),
            lam=1e-3,
            solver="nystrom",
            nystrom_method=method,
            n_centers=len(X),
            tol=1e-12,
        ).fit(X, Y, sample_weight=sw)
        Xt = _data(40, seed=5)[0]
        ref = exact.predict(Xt)
        bound = 1e-6 if method == "pcg" else 1e-8  # one-pass: no CG tolerance
        assert np.abs(falkon.predict(Xt) - ref).max() <= bound * np.abs(ref).max()
        assert falkon.dual_coef_.shape == exact.dual_coef_.shape


@pytest.mark.parametrize("method", ["pcg", "onepass"])
def test_fewer_centres_equal_sklearn_ridge_on_nystrom_features(method, one_torch_thread):
    X, y = _data()
    n, lam, kernel = len(X), 1e-3, Gaussian(1.2)
    model = KernelRidge(
        kernel,
        lam=lam,
        solver="nystrom",
        nystrom_method=method,
        n_centers=30,
        tol=1e-11,
        max_iter=500,
        random_state=0,
    ).fit(X, y)
    C = X[model.center_indices_]
    ridge = Ridge(alpha=n * lam, fit_intercept=False, solver="cholesky")
    ridge.fit(_features(kernel, X, C), y)
    Xt = _data(50, seed=2)[0]
    np.testing.assert_allclose(
        model.predict(Xt), ridge.predict(_features(kernel, Xt, C)), rtol=1e-6, atol=1e-8
    )
    assert len(model.dual_coef_) == 30 and (model.n_iter_ > 1) == (method == "pcg")


@pytest.mark.parametrize("cls", [KernelRidge, KernelLogisticRegression])
def test_one_solver_vocabulary_and_the_deprecated_onepass(cls):
    # solver="nystrom" is the approximation, its method chosen by cost unless given;
    # solver="onepass" still fits, as solver="nystrom", nystrom_method="onepass", with a
    # FutureWarning; solver_ is "exact" or "nystrom" in every estimator
    X, y = _data()
    if cls is KernelLogisticRegression:
        y = (y > np.median(y)).astype(int)
    kw = dict(lam=1e-3, n_centers=30, random_state=0, tol=1e-10)
    with pytest.warns(FutureWarning, match="solver='onepass' is deprecated"):
        old = cls(Gaussian(1.5), solver="onepass", **kw).fit(X, y)
    new = cls(Gaussian(1.5), solver="nystrom", nystrom_method="onepass", **kw).fit(X, y)
    assert old.solver_ == new.solver_ == "nystrom"
    assert old.nystrom_method_ == new.nystrom_method_ == "onepass"
    np.testing.assert_array_equal(old.dual_coef_, new.dual_coef_)
    chosen = cls(Gaussian(1.5), solver="nystrom", **kw).fit(X, y)
    d, c, steps = X.shape[1], 1, 1
    if cls is KernelLogisticRegression:
        steps = get_config()["logistic_newton_steps"]
    expected = choose_solver(
        len(X), 30, d=d, c=c, exact=False, newton_steps=steps, keep=True,
        **({"tol": 1e-10, "lam": 1e-3} if cls is KernelRidge else {}),
    )  # fmt: skip
    assert chosen.solver_ == "nystrom" and chosen.nystrom_method_ == expected
    exact = cls(Gaussian(1.5), solver="exact", **kw).fit(X, y)
    assert exact.solver_ == "exact" and not hasattr(exact, "nystrom_method_")


def test_auto_picks_by_the_cost_model_and_records_it():
    X, y = _data()
    assert KernelRidge(Gaussian(1.5)).fit(X, y).solver_ == "exact"  # n <= n_centers
    rng = np.random.default_rng(0)
    Xl = rng.standard_normal((12_000, 3))  # exact: n^3 / 3 = 5.8e11 flops > exact_flops
    yl = np.sin(Xl.sum(1))
    kw = dict(lam=1e-4, n_centers=200, random_state=0, tol=1e-8, max_iter=500)
    auto = KernelRidge(Gaussian(2.0), **kw).fit(Xl, yl)
    assert auto.nystrom_method_ == "onepass" and auto.n_iter_ == 1
    pcg = KernelRidge(Gaussian(2.0), solver="nystrom", nystrom_method="pcg", **kw).fit(Xl, yl)
    np.testing.assert_allclose(auto.predict(Xl[:300]), pcg.predict(Xl[:300]), rtol=0, atol=1e-6)
    # the model: one-pass below a few thousand centres, PCG above, exact when cheap
    assert choose_solver(10**6, 1000, d=10, tol=1e-4) == "onepass"
    assert choose_solver(10**6, 10_000, d=10, tol=1e-4) == "pcg"
    assert choose_solver(3000, 1000, d=10) == "exact"
    assert KernelRidge(Gaussian(1.5), lam=0.0).fit(Xl[:2000], yl[:2000]).solver_ == "exact"


# Fit seconds (wall) of bench_falkon.py's problem (d = 10, tol = 1e-4, lam = 1e-6), one-pass
# against PCG with K_nm streamed at every pass, quiet machine, one run each (docs/scale.md,
# "Cost model"); the rows at m <= 1000 are far apart in the model (ratio <= 0.4)
STREAMED_FITS = {
    (10**4, 2000): (1.86, 1.97),
    (10**4, 5000): (12.17, 10.15),
    (10**5, 2000): (15.80, 16.44),
}


@pytest.mark.parametrize(("n", "m"), sorted(STREAMED_FITS))
def test_auto_picks_a_solver_near_the_measured_faster_of_each_streamed_row(n, m):
    # the crossover rows: the pick is the faster solver or within 20% of it (m = 5000 at
    # n = 10^4: one-pass modelled 3% cheaper, measured 20% slower)
    seconds = dict(zip(("onepass", "pcg"), STREAMED_FITS[n, m], strict=True))
    for exact in (True, False):
        pick = choose_solver(n, m, d=10, tol=1e-4, exact=exact)
        assert seconds[pick] <= 1.2 * min(seconds.values())
    assert choose_solver(10**5, 5000, d=10, tol=1e-4) == "pcg"  # modelled 2.5x apart
    for m_small in (500, 1000):
        assert choose_solver(10**5, m_small, d=10, tol=1e-4) == "onepass"
    assert cg_passes(2 * m, tol=1e-4) < cg_passes(m, tol=1e-4) < cg_passes(m, tol=1e-6)


@pytest.mark.parametrize(("m", "faster"), [(500, "onepass"), (1000, "pcg"), (5000, "pcg")])
def test_auto_with_the_kept_block_picks_the_measured_faster_solver(m, faster):
    # n = 10^5, d = 10, tol = 1e-4, fresh processes (docs/scale.md, "Cost model"): one-pass
    # 2.17 s against PCG on the kept K_nm 4.84 s at m = 500; 7.21 s against 4.25 s at
    # m = 1000; 89 s against 17.2 s at m = 5000
    assert choose_solver(10**5, m, d=10, tol=1e-4, keep=True) == faster
    kept = solver_costs(10**5, m, d=10, tol=1e-4, keep=True)["pcg"]
    assert kept < solver_costs(10**5, m, d=10, tol=1e-4)["pcg"] / (2 if m <= 1000 else 1)


# CG iterations of KernelRidge(solver="nystrom") on bench_falkon's problem at n = 10^5
# (benchmarks/screen_cg_iterations.py, results/screen_cg_iterations.json), tol = 1e-4,
# lam = 1e-7 ... 1e-3
MEASURED_ITERATIONS = {
    500: (117, 61, 25, 12, 7),
    1000: (83, 41, 19, 10, 6),
    2000: (58, 27, 14, 8, 5),
}


@pytest.mark.parametrize("m", sorted(MEASURED_ITERATIONS))
def test_cg_passes_follow_the_measured_iterations_over_lam(m):
    # about 2x per decade of lam: the model within 0.6-1.7x of the iterations over four
    # decades, where a lam-blind count was 7.5x off at lam = 1e-3
    for lam, measured in zip((1e-7, 1e-6, 1e-5, 1e-4, 1e-3), MEASURED_ITERATIONS[m], strict=True):
        assert 0.6 <= cg_passes(m, tol=1e-4, lam=lam) / measured <= 1.7
    assert cg_passes(m, tol=1e-4, lam=1e-6) == cg_passes(m, tol=1e-4)  # the calibration lam


def test_auto_prices_lam_and_the_unmapped_one_pass():
    # measured (wall, fit + predict, benchmarks/screen_unmapped.py --fits; distributed.md):
    # n = 10^5, m = 500, lam = 1e-3, tol = 1e-3: PCG on the kept block 0.31 s, one-pass 0.50 s
    assert choose_solver(10**5, 500, d=10, tol=1e-3, keep=True, lam=1e-3) == "pcg"
    assert choose_solver(10**5, 500, d=10, tol=1e-3, keep=True, lam=1e-3, unmapped=True) == ("pcg")
    # the Dask 10^7 case (m = 500, lam = 1e-4, tol = 1e-3, streamed): PCG 66.6 s against the
    # mapped one-pass's 116.9 s; the unmapped one-pass 55.2 s and 48.3 s against 70.9 and 75.9
    dask = {"d": 10, "tol": 1e-3, "exact": False, "lam": 1e-4}
    assert choose_solver(10**7, 500, **dask) == "pcg"
    assert choose_solver(10**7, 500, **dask, unmapped=True) == "onepass"
    # the README table's lam = 1e-6: the choices of the lam-blind model
    for n in (10**4, 10**5, 10**6):
        for m in (500, 1000, 2000, 5000):
            for keep in (False, True):
                blind = choose_solver(n, m, d=10, tol=1e-4, keep=keep)
                assert choose_solver(n, m, d=10, tol=1e-4, keep=keep, lam=1e-6) == blind


def test_auto_takes_the_unmapped_one_pass_once_the_factor_allows_it(monkeypatch):
    # n = 2·10^4, m = 300, lam = 1e-4, tol = 1e-3: the mapped one-pass is priced above PCG,
    # the unmapped one (bound about 5e-5) below it; measured at n = 10^5 (same problem):
    # one-pass 0.25 s (unmapped), PCG 0.29 s, "auto" 0.25 s
    # (results/screen_unmapped_fits_100000_cpu_lam1e-4.json)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20_000, 10)).astype(np.float32)
    y = np.sin(X @ np.linspace(-1, 1, 10) / 4) + 0.1 * rng.standard_normal(20_000)
    assert choose_solver(20_000, 300, d=10, tol=1e-3, keep=True, lam=1e-4) == "pcg"
    calls, bounds = [], []
    monkeypatch.setattr(falkon, "to_features", lambda *a: calls.append(1) or to_features(*a))
    bound = falkon.unmapped_error_bound
    monkeypatch.setattr(falkon, "unmapped_error_bound", lambda *a: bounds.append(1) or bound(*a))
    kw = {"lam": 1e-4, "tol": 1e-3, "n_centers": 300, "random_state": 0}
    auto = KernelRidge(Gaussian(5.0), **kw).fit(X, y)
    # the choice and the pass share one bound (one dpocon per system)
    assert auto.nystrom_method_ == "onepass" and calls == [1] and bounds == [1]
    pcg = KernelRidge(
        Gaussian(5.0), solver="nystrom", nystrom_method="pcg", **{**kw, "tol": 1e-10}
    ).fit(X, y)
    pred = pcg.predict(X[:2000])
    assert np.abs(auto.predict(X[:2000]) - pred).max() <= 1e-3 * np.abs(pred).max()


@pytest.mark.parametrize("n, m", [(10**4, 500), (10**4, 1000), (10**5, 1000)])
def test_auto_picks_the_measured_faster_logistic_solver(n, m):
    # Newton-PCG was faster on each (KernelLogisticRegression's defaults at n = 10^4; the
    # benchmark row at n = 10^5), measured in CPU seconds (docs/scale.md, "Cost model")
    assert choose_solver(n, m, d=10, newton_steps=8) == "pcg"


def test_float32_input_stays_float32_and_matches_float64(one_torch_thread):
    X, y = _data(n=400)
    kw = dict(
        lam=1e-3,
        solver="nystrom",
        nystrom_method="pcg",
        n_centers=60,
        random_state=0,
        tol=1e-8,
        max_iter=300,
    )
    m64 = KernelRidge(Gaussian(1.5), **kw).fit(X, y)
    m32 = KernelRidge(Gaussian(1.5), **kw).fit(X.astype(np.float32), y)
    p32 = m32.predict(X.astype(np.float32))
    assert p32.dtype == np.float32
    assert np.abs(p32 - m64.predict(X)).max() < 1e-3 * np.abs(y).max()


def test_float32_input_matches_float64_at_small_lam(one_torch_thread):
    """Float32 kernel blocks, float64 products and factors: at ``lam = 1e-6`` (``K_mm`` far
    more ill-conditioned than float32's epsilon) the predictions stay within 0.1% of the
    target's range of the float64 fit's, and CG takes as many iterations."""
    X, y = _data(n=1200)
    Xt = _data(n=300, seed=4)[0]
    kw = dict(
        lam=1e-6,
        solver="nystrom",
        nystrom_method="pcg",
        n_centers=150,
        random_state=0,
        tol=1e-8,
        max_iter=600,
    )
    m64 = KernelRidge(Gaussian(1.5), **kw).fit(X, y)
    m32 = KernelRidge(Gaussian(1.5), **kw).fit(X.astype(np.float32), y)
    p32, p64 = m32.predict(Xt.astype(np.float32)), m64.predict(Xt)
    assert np.abs(p32 - p64).max() < 1e-3 * np.ptp(p64)
    assert m32.n_iter_ <= 1.1 * m64.n_iter_


def test_strings_through_gram_blocks_equal_exact(one_torch_thread):
    rng = np.random.default_rng(0)
    S = ["".join(rng.choice(list("ACGT"), size=int(rng.integers(8, 15)))) for _ in range(60)]
    y = np.array([s.count("A") - s.count("T") for s in S], float)
    exact = KernelRidge(Spectrum(k=2), lam=1e-2).fit(S, y)
    falkon = KernelRidge(
        Spectrum(k=2), lam=1e-2, solver="nystrom", nystrom_method="pcg", n_centers=60, tol=1e-12
    )
    falkon.fit(S, y)
    np.testing.assert_allclose(falkon.predict(S), exact.predict(S), rtol=1e-6, atol=1e-8)


def test_bad_input_gets_named_errors():
    X, y = _data(n=20)
    for method in ("pcg", "onepass"):  # more centres than points: the exact fit, warned
        with pytest.warns(UserWarning, match="n_centers=21 is more than the 20 training points"):
            model = KernelRidge(
                Gaussian(1.0), solver="nystrom", nystrom_method=method, n_centers=21
            ).fit(X, y)
        assert model.solver_ == "exact"
        exact = KernelRidge(Gaussian(1.0), solver="exact").fit(X, y)
        np.testing.assert_array_equal(model.dual_coef_, exact.dual_coef_)
    with pytest.raises(InputError, match=r"^n_centers: .*range \[1, inf\)"):
        KernelRidge(solver="nystrom", nystrom_method="pcg", n_centers=0).fit(X, y)
    with pytest.raises(InputError, match=r"^lam: expected lam > 0 with solver='nystrom'"):
        KernelRidge(solver="nystrom", nystrom_method="pcg", n_centers=5, lam=0.0).fit(X, y)
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(InputError, match="NaN"):
        KernelRidge(solver="nystrom", nystrom_method="pcg", n_centers=5).fit(bad, y)
    t = torch.as_tensor(bad)
    with pytest.raises(InputError, match=r"^X: expected finite values"):
        KernelRidge(solver="nystrom", nystrom_method="pcg", n_centers=5).fit(t, torch.as_tensor(y))


def test_cg_stopped_by_max_iter_warns_with_the_residual(one_torch_thread):
    X, y = _data()
    with pytest.warns(ConvergenceWarning, match=r"max_iter=2 .*CG relative residual \d"):
        KernelRidge(
            solver="nystrom", nystrom_method="pcg", n_centers=40, lam=1e-3, max_iter=2, tol=1e-12
        ).fit(X, y)


def test_verbose_reports_the_cg_residuals(capsys, one_torch_thread):
    X, y = _data()
    seen = []
    pcg = dict(
        solver="nystrom", nystrom_method="pcg", n_centers=40, lam=1e-3
    )  # a float lam: PCG, no lam path
    KernelRidge(**pcg, verbose=lambda k, r: seen.append((k, r))).fit(X, y)
    assert [k for k, _ in seen] == list(range(1, len(seen) + 1)) and seen[-1][1] <= 1e-6
    KernelRidge(**pcg, verbose=1).fit(X, y)
    out, err = capsys.readouterr()
    assert out == "" and "[KernelRidge] iter 1/100 residual=" in err


def test_lam_grid_in_one_cg_run_equals_separate_fits(one_torch_thread):
    X, y = _data()
    Xv, yv = _data(60, seed=3)
    lams = [1e-4, 1e-2, 1.0]
    kernel = Gaussian(1.5)
    Xt = torch.as_tensor(X)
    idx = weighted_centres(Xt, 40, None, 0)  # KernelRidge's uniform draw (distinct points)
    errors = nystrom_validation_errors(
        nystrom_system(kernel, Xt, idx),
        torch.as_tensor(y),
        torch.as_tensor(Xv),
        torch.as_tensor(yv),
        lams,
        tol=1e-11,
        max_iter=500,
    )
    for lam, err in zip(lams, errors, strict=True):
        model = KernelRidge(
            kernel,
            lam=lam,
            solver="nystrom",
            nystrom_method="pcg",
            n_centers=40,
            random_state=0,
            tol=1e-11,
            max_iter=500,
        ).fit(X, y)
        assert err == pytest.approx(np.mean((model.predict(Xv) - yv) ** 2), rel=1e-6)


def test_grid_search_over_lam_and_sigma(one_torch_thread):
    X, y = _data()
    cv = KFold(3, shuffle=True, random_state=0)
    base = KernelRidge(
        Gaussian(), solver="nystrom", nystrom_method="pcg", n_centers=50, random_state=0
    )
    grid = {"lam": [1e-4, 1e-1], "kernel__sigma": [0.5, 2.0]}
    search = GridSearchCV(base, grid, cv=cv).fit(X, y)
    for params, score in zip(
        search.cv_results_["params"], search.cv_results_["mean_test_score"], strict=True
    ):
        manual = []
        for tr, te in cv.split(X):
            est = KernelRidge(
                Gaussian(params["kernel__sigma"]),
                lam=params["lam"],
                solver="nystrom",
                nystrom_method="pcg",
                n_centers=50,
                random_state=0,
            )
            manual.append(est.fit(X[tr], y[tr]).score(X[te], y[te]))
        assert score == pytest.approx(np.mean(manual), abs=1e-10)
    assert search.best_params_ == {"kernel__sigma": 2.0, "lam": 1e-4}


def test_save_load_round_trip(tmp_path, one_torch_thread):
    from kernelkit.io import load, save

    X, y = _data()
    model = KernelRidge(
        Gaussian(1.5), solver="nystrom", nystrom_method="pcg", n_centers=30, random_state=0
    ).fit(X, y)
    save(model, tmp_path / "m", overwrite=True)
    again = load(tmp_path / "m")
    np.testing.assert_array_equal(again.predict(X), model.predict(X))
    np.testing.assert_array_equal(again.center_indices_, model.center_indices_)


def test_one_default_number_of_centres():
    # docs/approximations.md: n_centers=1000 wherever solver has a Nyström choice, and
    # solver_ speaks the same words there
    import inspect

    import kernelkit

    with_choice = []
    for name in kernelkit.__all__:
        cls = getattr(kernelkit, name)
        if not inspect.isclass(cls) or "solver" not in inspect.signature(cls).parameters:
            continue
        params = inspect.signature(cls).parameters
        if "n_centers" in params:
            with_choice.append(name)
            assert params["n_centers"].default == 1000, name
    assert {"KernelRidge", "GaussianProcessRegressor", "KernelPCA", "KernelKMeans"} <= set(
        with_choice
    )


def test_a_lam_path_runs_on_the_one_pass_statistics_whatever_the_method():
    # the nystrom_method docstring: lam="auto" or a list runs on the one-pass statistics
    X, y = _data()
    for lam in ("auto", [1e-4, 1e-2]):
        model = KernelRidge(
            Gaussian(1.5), lam=lam, solver="nystrom", nystrom_method="pcg", n_centers=30,
            random_state=0,
        ).fit(X, y)  # fmt: skip
        assert model.solver_ == "nystrom" and model.nystrom_method_ == "onepass"
