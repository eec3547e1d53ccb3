"""KernelRidge's lam grid / "auto" / kernel_params selection and its conformal intervals."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.kernel_ridge import KernelRidge as SkKernelRidge
from sklearn.model_selection import GridSearchCV, KFold

from kernelkit import KernelRidge
from kernelkit.kernels import Gaussian
from kernelkit.models._conformal import jackknife_plus, loo_operator
from kernelkit.models._falkon import choose_solver
from kernelkit.models._ridge_path import lam_grid, ridge_spectrum
from kernelkit.utils._errors import InputError, ParameterError

GRID = [1e-5, 1e-4, 1e-3, 1e-2, 1e-1]


def _data(n=120, seed=0, noise=0.3):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 2))
    y = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 / 2 + noise * rng.normal(size=n)
    return X, y


def test_loo_grid_picks_the_brute_force_optimum_and_refits():
    X, y = _data()
    model = KernelRidge(Gaussian(sigma=1.0), lam=GRID, cv="loo").fit(X, y)
    K = Gaussian(sigma=1.0)(torch.as_tensor(X)).numpy()
    n = len(y)
    brute = []
    for lam in GRID:
        r = []
        for i in range(n):
            keep = np.arange(n) != i
            sk = SkKernelRidge(alpha=n * lam, kernel="precomputed")
            sk.fit(K[np.ix_(keep, keep)], y[keep])
            r.append(y[i] - sk.predict(K[i : i + 1, keep])[0])
        brute.append(np.mean(np.square(r)))
    np.testing.assert_allclose(-model.cv_results_["mean_test_score"], brute, rtol=1e-8)
    assert model.lam_ == GRID[int(np.argmin(brute))]
    assert list(model.cv_results_["rank_test_score"]).index(1) == int(np.argmin(brute))
    plain = KernelRidge(Gaussian(sigma=1.0), lam=model.lam_).fit(X, y)
    np.testing.assert_allclose(model.dual_coef_, plain.dual_coef_, atol=1e-8)
    np.testing.assert_allclose(model.predict(X[:5]), plain.predict(X[:5]), atol=1e-8)
    assert model.loo_residuals_.shape == (n,)


def test_kfold_grid_equals_grid_search_cv():
    X, y = _data(90, seed=1)
    model = KernelRidge(Gaussian(sigma=1.0), lam=GRID, cv=3).fit(X, y)
    search = GridSearchCV(
        KernelRidge(Gaussian(sigma=1.0)), {"lam": GRID}, cv=3, scoring="neg_mean_squared_error"
    ).fit(X, y)
    np.testing.assert_allclose(
        model.cv_results_["mean_test_score"], search.cv_results_["mean_test_score"], rtol=1e-8
    )
    np.testing.assert_allclose(
        model.cv_results_["std_test_score"], search.cv_results_["std_test_score"], rtol=1e-6
    )
    assert model.lam_ == search.best_params_["lam"]


@pytest.mark.parametrize("cv", ["loo", "gcv"])
def test_auto_lam_is_no_worse_than_the_grid(cv):
    X, y = _data(150, seed=2)
    model = KernelRidge(Gaussian(sigma=1.0), lam="auto", cv=cv).fit(X, y)
    spec = ridge_spectrum(Gaussian(sigma=1.0)(torch.as_tensor(X)), torch.as_tensor(y))
    best_grid = -model.cv_results_["mean_test_score"].max()
    assert float(spec.criterion(model.lam_, cv)) <= best_grid + 1e-12


@pytest.mark.parametrize("twins", [False, True])
@pytest.mark.parametrize("cv", ["loo", "gcv"])
def test_auto_lam_is_the_minimum_between_the_best_grid_values_neighbours(cv, twins):
    """The zoom in ``log lam`` against SciPy's bounded Brent minimiser of the same criterion
    on the same bracket (the best lattice value's neighbours), with and without twin groups."""
    from scipy.optimize import minimize_scalar

    from kernelkit.models._ridge_path import duplicate_groups

    X, y = _data(150, seed=7)
    if twins:
        X, y = np.concatenate([X, X[:20]]), np.concatenate([y, y[:20] + 0.1])
    model = KernelRidge(Gaussian(sigma=1.0), lam="auto", cv=cv).fit(X, y)
    K = Gaussian(sigma=1.0)(torch.as_tensor(X))
    spec = ridge_spectrum(K, torch.as_tensor(y), groups=duplicate_groups(K))
    assert bool(spec.groups) == twins
    grid = lam_grid()
    best = int(spec.path(grid, cv).argmin())
    bracket = np.log(grid[[max(best - 1, 0), min(best + 1, len(grid) - 1)]])
    brent = minimize_scalar(
        lambda t: float(spec.criterion(float(np.exp(t)), cv)),
        bounds=tuple(bracket),
        method="bounded",
        options={"xatol": 1e-10},
    )
    assert model.lam_ == pytest.approx(float(np.exp(brent.x)), rel=1e-3)
    assert float(spec.criterion(model.lam_, cv)) <= brent.fun * (1 + 1e-9)


def test_zoom_options_set_the_rounds_and_points():
    """``lam_zoom_rounds=0`` keeps the best lattice value; one round of 3 points can only
    land on the bracket's ends or its middle (or the parabola's vertex, scored after);
    fewer than two points are refused by name."""
    from kernelkit import config_context

    X, y = _data(150, seed=7)
    spec = ridge_spectrum(Gaussian(sigma=1.0)(torch.as_tensor(X)), torch.as_tensor(y))
    grid = lam_grid()
    best = float(grid[int(spec.path(grid, "gcv").argmin())])
    with config_context(lam_zoom_rounds=0):
        model = KernelRidge(Gaussian(sigma=1.0), lam="auto", cv="gcv").fit(X, y)
    assert model.lam_ == best
    default = KernelRidge(Gaussian(sigma=1.0), lam="auto", cv="gcv").fit(X, y)
    assert default.lam_ != best
    step = np.log(grid[1] / grid[0])
    with config_context(lam_zoom_rounds=1, lam_zoom_points=3):
        coarse = KernelRidge(Gaussian(sigma=1.0), lam="auto", cv="gcv").fit(X, y)
    offset = np.log(coarse.lam_ / best) / step
    assert abs(offset) <= 1 + 1e-12
    assert spec.criterion(coarse.lam_, "gcv") >= spec.criterion(default.lam_, "gcv") - 1e-15
    with pytest.raises(InputError, match="lam_zoom_points: expected a finite value >= 2"):
        with config_context(lam_zoom_points=1):
            pass


@pytest.mark.parametrize("solver", ["exact", "nystrom"])
def test_auto_lam_stays_on_the_lattice_range_when_the_criterion_falls_beyond_it(solver):
    """Noiseless smooth targets: the criterion keeps falling as lam -> 0 (unbounded, the
    exact refinement reached ~1e-44); the refinement stops at the lattice's edge."""
    X = np.random.default_rng(0).normal(size=(80, 1))
    model = KernelRidge(lam="auto", solver=solver, n_centers=40).fit(X, np.sin(X[:, 0]))
    grid = lam_grid()
    assert grid.min() <= model.lam_ <= grid.max()
    assert model.lam_ == pytest.approx(grid.min(), rel=1e-9)


def test_kernel_params_auto_lowers_the_loo_error_from_the_median_heuristic():
    X, y = _data(150, seed=3)
    X = X * 5.0  # the median heuristic is far from the best width
    start = KernelRidge(lam="auto").fit(X, y)
    tuned = KernelRidge(lam="auto", kernel_params="auto").fit(X, y)
    assert tuned.kernel_.sigma != start.kernel_.sigma
    loo = lambda m: float(np.mean(m.loo_residuals_**2))  # noqa: E731
    assert loo(tuned) < loo(start)
    listed = KernelRidge(lam=1e-3, kernel_params=["sigma"]).fit(X, y)
    assert listed.lam_ == 1e-3 and listed.kernel_.sigma != start.kernel_.sigma


def test_kernel_params_search_is_at_least_the_coarse_width_grid():
    """The coordinate search scores each width by its best LOO over the lam grid and keeps a
    trial only when it lowers that score, so it ends at least as low as the brute-force grid
    over the median-heuristic width times 2^-2 .. 2^2 and the same lam values."""
    from scipy.spatial.distance import pdist

    from kernelkit.gram import gram

    X, y = _data(120, seed=5)
    X = X * 3.0
    model = KernelRidge(lam=GRID, kernel_params="auto").fit(X, y)
    tuned = -model.cv_results_["mean_test_score"].max()
    sigma0 = float(np.median(pdist(X)))
    Y = torch.as_tensor(y)

    def best_loo(sigma: float) -> float:
        spec = ridge_spectrum(gram(Gaussian(sigma=sigma), X), Y)
        return min(float(spec.criterion(lam, "loo")) for lam in GRID)

    brute = [best_loo(sigma0 * 2.0**k) for k in (-2, -1, 0, 1, 2)]
    assert tuned <= min(brute) + 1e-12
    assert tuned == pytest.approx(best_loo(model.kernel_.sigma), rel=1e-10)
    assert model.lam_ in GRID


def test_splitters_and_split_lists_equal_grid_search_cv():
    """``cv`` takes a scikit-learn splitter or a list of ``(train, test)`` pairs, as
    ``GridSearchCV``: the same folds give its scores."""
    X, y = _data(90, seed=2)
    splitter = KFold(3, shuffle=True, random_state=0)
    search = GridSearchCV(
        KernelRidge(Gaussian(sigma=1.0)),
        {"lam": GRID},
        cv=splitter,
        scoring="neg_mean_squared_error",
    ).fit(X, y)
    for cv in (splitter, list(splitter.split(X))):
        model = KernelRidge(Gaussian(sigma=1.0), lam=GRID, cv=cv).fit(X, y)
        np.testing.assert_allclose(
            model.cv_results_["mean_test_score"], search.cv_results_["mean_test_score"], rtol=1e-8
        )
        assert model.lam_ == search.best_params_["lam"]


def test_weighted_grid_equals_repeated_rows():
    X, y = _data(60, seed=4)
    w = np.r_[np.full(30, 2.0), np.ones(30)]
    weighted = KernelRidge(Gaussian(sigma=1.0), lam=GRID, cv="gcv").fit(X, y, sample_weight=w)
    ref = KernelRidge(Gaussian(sigma=1.0), lam=weighted.lam_).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(weighted.dual_coef_, ref.dual_coef_, atol=1e-8)


def test_loo_of_repeated_rows_equals_the_weighted_fit():
    """Integer weights fit the model of the repeated rows; leaving each group of repeated
    rows out together (``loo_groups_``) makes the LOO criterion and residuals agree too."""
    X, y = _data(60, seed=4)
    w = np.r_[np.full(30, 2.0), np.ones(30)]
    weighted = KernelRidge(Gaussian(sigma=1.0), lam=GRID, cv="loo").fit(X, y, sample_weight=w)
    Xr, yr = np.r_[X, X[:30]], np.r_[y, y[:30]]
    repeated = KernelRidge(Gaussian(sigma=1.0), lam=GRID, cv="loo").fit(Xr, yr)
    np.testing.assert_allclose(
        repeated.cv_results_["mean_test_score"], weighted.cv_results_["mean_test_score"], rtol=1e-8
    )
    assert repeated.lam_ == weighted.lam_
    np.testing.assert_allclose(repeated.loo_residuals_[:60], weighted.loo_residuals_, atol=1e-8)
    groups = repeated.loo_groups_
    assert len(set(groups)) == 60 and (groups[60:] == groups[:30]).all()
    assert len(set(weighted.loo_groups_)) == 60
    K = Gaussian(sigma=1.0)(torch.as_tensor(Xr)).numpy()
    gram = KernelRidge("precomputed", lam="auto").fit(K, yr)
    assert (gram.loo_groups_[60:] == gram.loo_groups_[:30]).all()
    assert len(set(gram.loo_groups_)) == 60


def test_jackknife_plus_uses_the_brute_force_leave_one_out_models():
    X, y = _data(40, seed=5)
    Xt = _data(7, seed=6)[0]
    k = Gaussian(sigma=1.0)
    n, lam = 40, 1e-2
    K, Kt = k(torch.as_tensor(X)), k(torch.as_tensor(Xt), torch.as_tensor(X))
    G = loo_operator(K, n * lam)
    coef = G @ torch.as_tensor(y)
    r = coef / G.diagonal()
    loo_pred = (Kt @ coef)[:, None] - (Kt @ G) * r[None, :]
    for i in range(n):
        keep = np.arange(n) != i
        sk = SkKernelRidge(alpha=n * lam, kernel="precomputed")
        sk.fit(K.numpy()[np.ix_(keep, keep)], y[keep])
        np.testing.assert_allclose(loo_pred[:, i], sk.predict(Kt.numpy()[:, keep]), atol=1e-9)
        assert float(r[i]) == pytest.approx(y[i] - sk.predict(K.numpy()[i : i + 1, keep])[0])
    out = jackknife_plus(Kt @ coef, Kt @ G, r, 0.2)
    lo = np.sort((loo_pred - r.abs()).numpy(), 1)[:, int(np.floor(0.2 * 41)) - 1]
    hi = np.sort((loo_pred + r.abs()).numpy(), 1)[:, int(np.ceil(0.8 * 41)) - 1]
    np.testing.assert_allclose(out.numpy(), np.c_[lo, hi], atol=1e-12)


def test_conformal_coverage_on_synthetic_data():
    """90% intervals: mean coverage of 10 splits (300 train, 1000 test) within 0.90 +- 0.03.

    Per split the coverage given the training set varies with sd ~ sqrt(0.09 / 300) plus the
    binomial sd of 1000 test points, ~0.02 together; the mean of 10 has sd ~0.007, so
    +-0.03 is about 4 sd.  Jackknife+ is narrower than split conformal on average (it uses
    every point for both fitting and calibration).
    """
    cover = {"jackknife+": [], "split": []}
    width = {"jackknife+": [], "split": []}
    for seed in range(10):
        X, y = _data(1300, seed=100 + seed, noise=0.5)
        model = KernelRidge(Gaussian(sigma=1.0), lam=1e-3, random_state=seed).fit(X[:300], y[:300])
        for method in cover:
            iv = model.predict_interval(X[300:], alpha=0.1, method=method)
            assert iv.shape == (1000, 2)
            cover[method].append(np.mean((iv[:, 0] <= y[300:]) & (y[300:] <= iv[:, 1])))
            width[method].append(np.mean(iv[:, 1] - iv[:, 0]))
    for method in cover:
        assert abs(np.mean(cover[method]) - 0.9) <= 0.03, (method, cover[method])
    assert np.mean(width["jackknife+"]) < np.mean(width["split"])


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"lam": "best"}, "lam"),
        ({"lam": [1e-3, -1.0]}, "lam"),
        ({"cv": "kfold"}, "cv"),
        ({"cv": 1}, "cv"),
        ({"kernel_params": "all"}, "kernel_params"),
        ({"kernel_params": ["width"]}, "kernel_params"),
        ({"kernel_params": "auto", "cv": 3}, "cv"),
        ({"lam": [1e-3], "solver": "nystrom", "n_centers": 5, "cv": 3}, "lam"),
    ],
)
def test_bad_selection_parameters_are_named(params, match):
    X, y = _data(20)
    with pytest.raises((InputError, ParameterError), match=match):
        KernelRidge(Gaussian(sigma=1.0), **params).fit(X, y)


def test_bad_interval_arguments_are_named():
    X, y = _data(20)
    model = KernelRidge(Gaussian(sigma=1.0)).fit(X, y)
    with pytest.raises(InputError, match="alpha"):
        model.predict_interval(X, alpha=1.5)
    with pytest.raises(InputError, match="method"):
        model.predict_interval(X, method="cv+")


def test_auto_with_folds_is_the_fold_scored_grid():
    from kernelkit.models._ridge_path import lam_grid

    rng = np.random.default_rng(3)
    X = rng.normal(size=(120, 3))
    y = np.sin(X.sum(1)) + 0.1 * rng.normal(size=120)
    auto = KernelRidge(Gaussian(sigma=1.0), lam="auto", cv=3).fit(X, y)
    grid = KernelRidge(Gaussian(sigma=1.0), lam=list(lam_grid()), cv=3).fit(X, y)
    assert auto.lam_ == grid.lam_
    np.testing.assert_array_equal(
        auto.cv_results_["mean_test_score"], grid.cv_results_["mean_test_score"]
    )


def test_default_lam_is_auto_and_its_criterion_follows_the_solver():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(150, 3))
    y = np.sin(X.sum(1)) + 0.1 * rng.normal(size=150)
    assert KernelRidge().get_params()["lam"] == "auto"
    assert KernelRidge().get_params()["cv"] is None
    exact = KernelRidge(Gaussian(sigma=1.0)).fit(X, y)  # cv=None: leave-one-out when exact
    loo = KernelRidge(Gaussian(sigma=1.0), lam="auto", cv="loo").fit(X, y)
    assert exact.solver_ == "exact" and exact.lam_ == loo.lam_
    np.testing.assert_array_equal(exact.loo_residuals_, loo.loo_residuals_)
    kw = dict(solver="nystrom", nystrom_method="onepass", n_centers=30, random_state=0)
    nys = KernelRidge(Gaussian(sigma=1.0), **kw).fit(X, y)  # cv=None: GCV on Nyström
    gcv = KernelRidge(Gaussian(sigma=1.0), cv="gcv", **kw).fit(X, y)
    assert nys.lam_ == gcv.lam_ and not hasattr(nys, "loo_residuals_")


def test_weighted_nystrom_selection_fits_the_chosen_lam():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(200, 2))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=200)
    w = rng.uniform(0.0, 3.0, size=200)
    kw = dict(solver="nystrom", nystrom_method="onepass", n_centers=40, random_state=0)
    for cv in (None, "loo"):
        auto = KernelRidge(Gaussian(sigma=1.0), cv=cv, **kw).fit(X, y, sample_weight=w)
        fixed = KernelRidge(Gaussian(sigma=1.0), lam=auto.lam_, **kw).fit(X, y, sample_weight=w)
        np.testing.assert_array_equal(auto.center_indices_, fixed.center_indices_)
        np.testing.assert_allclose(auto.predict(X), fixed.predict(X), rtol=0, atol=1e-8)


def test_lam_path_solver_prices_the_eigendecomposition():
    # n = 4000 > ~3700: the exact path's n x n eigendecomposition (6 n^3 = 3.8e11 modelled
    # flops) is over exact_flops (3e11) and costs more than the one-pass path with the
    # default 1000 centres (solver_costs(..., select=True)); n = 3360 stays exact (2.3e11)
    rng = np.random.default_rng(6)
    X = rng.normal(size=(4000, 2))
    y = np.sin(X[:, 0])
    assert KernelRidge(Gaussian(sigma=1.0)).fit(X, y).nystrom_method_ == "onepass"
    assert choose_solver(3360, 1000, select=True) == "exact"
    assert choose_solver(3700, 1000, select=True) == "onepass"
    assert KernelRidge(Gaussian(sigma=1.0), lam=1e-3).fit(X[:1500], y[:1500]).solver_ == "exact"


def test_selection_runs_without_the_torch_optim_lbfgs(monkeypatch):
    """The ``log lam`` refinement runs on :func:`kernelkit.solvers.lbfgs_batched` and the
    kernel parameters by a coordinate search, never on ``torch.optim.LBFGS`` (which imports
    ``torch._dynamo``: seconds, once per process)."""

    def refuse(*args, **kwargs):
        raise AssertionError("torch.optim's L-BFGS called by KernelRidge's selection")

    monkeypatch.setattr(torch.optim, "LBFGS", refuse)
    X = np.random.default_rng(7).normal(size=(60, 2))
    assert KernelRidge().fit(X, X[:, 0]).lam_ > 0
    assert (
        KernelRidge(solver="nystrom", nystrom_method="onepass", n_centers=10).fit(X, X[:, 0]).lam_
        > 0
    )
    assert KernelRidge(kernel_params="auto").fit(X, X[:, 0]).kernel_.sigma > 0
