"""ConcatenatedKernelRegressor: scikit-learn API checks, the closed-form outer layer against
kernel ridge regression on the learned representation (kernelkit and scikit-learn), named
errors, the two-layer advantage on the kinked test function of Bohn et al. (section 4.2), and
``n_restarts="auto"`` against the same 64 initialisations run as one batch, with the
stopping rule and the grouping of the restart objectives recomputed by hand."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from sklearn.kernel_ridge import KernelRidge as SkKernelRidge
from sklearn.model_selection import GridSearchCV
from sklearn.utils.estimator_checks import parametrize_with_checks

from kernelkit.estimators._concatenated import ConcatenatedKernelRegressor, Mixture
from kernelkit.estimators._ridge import KernelRidge
from kernelkit.kernels import Gaussian, Polynomial, TensorMatern
from kernelkit.utils._errors import InputError


def _h1(X: np.ndarray) -> np.ndarray:
    return 1.0 / (0.1 + np.abs(X[:, 0] - X[:, 1]))


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    """Batches of small matrices: one thread avoids OpenMP spinning on the shared machine."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def _data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))
    return X, _h1(X) + 0.01 * rng.standard_normal(n)


@parametrize_with_checks([ConcatenatedKernelRegressor(n_restarts=2, max_iter=5)])
def test_sklearn_compatible(estimator, check) -> None:
    check(estimator)


def test_outer_layer_is_kernel_ridge_on_inner_representation() -> None:
    X, y = _data(40)
    Xt, _ = _data(25, seed=1)
    lam, sigma = 1e-3, 0.4
    model = ConcatenatedKernelRegressor(
        Polynomial(2), Gaussian(sigma), lam=lam, mu=1e-3, n_restarts=4, max_iter=30
    ).fit(X, y)
    Z, Zt = model.inner_transform(X), model.inner_transform(Xt)
    assert Z.shape == (40, 2)
    ours = KernelRidge(Gaussian(sigma), lam=lam).fit(Z, y).predict(Zt)
    sk = SkKernelRidge(alpha=len(y) * lam, kernel="rbf", gamma=1 / (2 * sigma**2)).fit(Z, y)
    np.testing.assert_allclose(model.predict(Xt), ours, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(model.predict(Xt), sk.predict(Zt), rtol=1e-7, atol=1e-9)


def test_interpolation_reproduces_the_data() -> None:
    X, y = _data(30, seed=2)
    model = ConcatenatedKernelRegressor(
        Polynomial(1), TensorMatern(1.0), interpolate=True, mu=1 / 30, n_restarts=4, max_iter=30
    ).fit(X, y)
    np.testing.assert_allclose(model.predict(X), y, rtol=0, atol=1e-6)
    assert np.isfinite(model.restart_objectives_).all()
    assert model.objective_ == pytest.approx(model.restart_objectives_.min(), rel=1e-10)


def test_two_layer_beats_single_layer_on_kink() -> None:
    X, y = _data(60, seed=3)
    g = np.linspace(-1, 1, 41)
    G = np.stack(np.meshgrid(g, g), -1).reshape(-1, 2)
    lam = 2.0**-9 / 60
    single = KernelRidge(Gaussian(0.1), lam=lam).fit(X, y)
    two = ConcatenatedKernelRegressor(
        Polynomial(1), Gaussian(0.1), lam=lam, mu=lam, n_restarts=8, max_iter=100
    ).fit(X, y)
    rmse1 = np.sqrt(np.mean((single.predict(G) - _h1(G)) ** 2))
    rmse2 = np.sqrt(np.mean((two.predict(G) - _h1(G)) ** 2))
    assert rmse2 < 0.8 * rmse1  # n = 100 in examples/concatenated_regression.py: far larger gap


def test_mixture_deep_chain_and_grid_search() -> None:
    X, y = _data(25, seed=4)
    mix = Mixture([Gaussian(0.1), Gaussian(1.0), Gaussian(10.0), Polynomial(1), Polynomial(2)])
    model = ConcatenatedKernelRegressor(mix, Polynomial(1), n_restarts=2, max_iter=10).fit(X, y)
    assert model.inner_transform(X).shape == (25, 5)
    deep = ConcatenatedKernelRegressor(
        [Polynomial(1), Gaussian(1.0)], Gaussian(0.5), inner_dim=[3, 2], n_restarts=2, max_iter=10
    ).fit(X, y)
    assert deep.inner_transform(X[:4]).shape == (4, 2)
    # the outer layer of the deep chain is kernel ridge on the composed representation
    Z = deep.inner_transform(X)
    sk = SkKernelRidge(alpha=len(y) * deep.lam, kernel="rbf", gamma=1 / (2 * 0.5**2)).fit(Z, y)
    np.testing.assert_allclose(deep.predict(X), sk.predict(Z), rtol=1e-7, atol=1e-9)
    grid = {"lam": [1e-3, 1e-2], "mu": [1e-3, 1e-1]}
    est = ConcatenatedKernelRegressor(Polynomial(1), Gaussian(0.5), n_restarts=2, max_iter=10)
    search = GridSearchCV(est, grid, cv=3).fit(X, y)
    assert search.best_params_["lam"] in grid["lam"] and search.best_params_["mu"] in grid["mu"]
    assert len(search.cv_results_["mean_test_score"]) == 4


def test_named_errors() -> None:
    X, y = _data(10)
    with pytest.raises(InputError, match="lam"):
        ConcatenatedKernelRegressor(lam=0.0, n_restarts=1).fit(X, y)
    Xd = np.vstack([X, X[:1]])
    yd = np.append(y, y[0] + 1.0)
    with pytest.raises(InputError, match=r"duplicate.*separation > 0"):
        ConcatenatedKernelRegressor(interpolate=True, n_restarts=1).fit(Xd, yd)
    with pytest.raises(InputError, match="inner_dim"):
        ConcatenatedKernelRegressor(Mixture([Gaussian(1.0), Polynomial(1)]), inner_dim=3).fit(X, y)
    with pytest.raises(InputError, match="inner_kernel"):
        ConcatenatedKernelRegressor(inner_kernel="rbf").fit(X, y)
    with pytest.raises(InputError, match="mu"):
        ConcatenatedKernelRegressor(mu=[1e-3, 1e-3], n_restarts=1).fit(X, y)
    with pytest.raises(InputError, match="y"):
        ConcatenatedKernelRegressor(n_restarts=1).fit(X, np.c_[y, y])


def test_torch_input_gives_torch_output() -> None:
    X, y = _data(12)
    Xt = torch.as_tensor(X)
    model = ConcatenatedKernelRegressor(n_restarts=2, max_iter=5).fit(Xt, torch.as_tensor(y))
    out = model.predict(Xt)
    assert isinstance(out, torch.Tensor) and out.shape == (12,)


# ----------------------------------------------- n_restarts="auto" (issue 14, item 3)
@pytest.mark.parametrize(
    ("inner", "lam", "patience", "races"),
    [(Polynomial(1), 0.1, 8, False), (Polynomial(2), 1e-3, 3, True)],
)
def test_auto_reaches_the_best_of_the_same_64_initialisations(inner, lam, patience, races):
    """Oracle: the int fit of the same 64 initialisations (brute force, every restart to
    its end); the rule (pilot agreement, else a race of the rest) recomputed by hand."""
    X, y = _data(20)
    kw = {"lam": lam, "mu": lam, "max_iter": 30, "random_state": 2}
    auto = ConcatenatedKernelRegressor(
        inner, Gaussian(0.3), n_restarts="auto", patience=patience, **kw
    ).fit(X, y)
    full = ConcatenatedKernelRegressor(inner, Gaussian(0.3), n_restarts=64, **kw).fit(X, y)
    values, n_run = auto.restart_objectives_, auto.n_restarts_run_
    pilot = values[:patience]
    agree = bool(np.all(np.isfinite(pilot)) and pilot.max() - pilot.min() <= 1e-6 * pilot.min())
    assert agree is not races
    assert n_run == (64 if races else patience) == len(values) == len(auto.restart_eliminated_)
    eliminated = auto.restart_eliminated_
    assert bool(eliminated.any()) is races
    # restarts not eliminated end as in the int fit (merged ones within the optima tolerance)
    ends = full.restart_objectives_[:n_run]
    np.testing.assert_allclose(values[~eliminated], ends[~eliminated], rtol=2e-6)
    # eliminated restarts were stopped on their way down, at or above where they end
    assert np.all(values[eliminated] >= ends[eliminated] * (1 - 1e-12))
    assert auto.objective_ == pytest.approx(full.objective_, rel=1e-6)
    assert auto.objective_ == pytest.approx(values.min(), rel=1e-12)
    np.testing.assert_allclose(auto.predict(X), full.predict(X), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("n_restarts", ["auto", 12])
def test_optima_group_the_restart_objectives(n_restarts):
    X, y = _data(20, seed=1)
    model = ConcatenatedKernelRegressor(
        Polynomial(2), Gaussian(0.3), n_restarts=n_restarts, max_iter=40, random_state=0
    ).fit(X, y)
    objective, count = model.optima_["objective"], model.optima_["count"]
    kept = ~model.restart_eliminated_
    values = model.restart_objectives_[kept]
    assert count.sum() == np.isfinite(values).sum() == kept.sum()
    assert np.all(np.diff(objective) >= 0) and objective[0] == model.objective_
    # brute force: restarts whose objectives differ by more than the tolerance are different
    # optima, so the optima are at least as many as the groups of equal objectives
    order = np.sort(values)
    groups = 1 + int(np.sum(np.diff(order) > 1e-6 * np.abs(order[1:])))
    assert len(objective) >= groups
    for v in objective:  # every optimum is the lowest value of some restart
        assert np.any(values == v)


def test_auto_and_patience_are_validated():
    X, y = _data(30)
    with pytest.raises(InputError, match="n_restarts"):
        ConcatenatedKernelRegressor(n_restarts="many").fit(X, y)
    with pytest.raises(InputError, match="patience"):
        ConcatenatedKernelRegressor(n_restarts="auto", patience=0).fit(X, y)
    assert ConcatenatedKernelRegressor(n_restarts="auto").get_params()["patience"] == 8


def _section_4_2(h: str, setting: str, p: int, n_restarts: int | str):
    """The four settings of Bohn et al. section 4.2 (N = 100 points of ``h1`` or ``h2``)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1.0, 1.0, size=(100, 2))
    clean = _h1(X) if h == "h1" else (X[:, 0] * X[:, 1] > 0.15).astype(float)
    y = clean + 0.01 * rng.standard_normal(100)
    if setting == "interpolation":
        kw = {"outer_kernel": TensorMatern(s=1.0), "interpolate": True, "mu": 1.0 / 100}
    else:
        kw = {"outer_kernel": Gaussian(sigma=0.1), "lam": 2.0**-9, "mu": 2.0**-9}
    model = ConcatenatedKernelRegressor(
        Polynomial(degree=p), n_restarts=n_restarts, max_iter=300, random_state=0, **kw
    )
    return model, X, y


SECTION_4_2 = [
    (h, setting, p)
    for h in ("h1", "h2")
    for setting, p in [
        ("least squares", 1),
        ("least squares", 2),
        ("interpolation", 1),
        ("interpolation", 2),
    ]
]
RACE_MISS = pytest.mark.xfail(
    strict=True,
    reason="measured: the one restart of 64 that reaches the best (restart 9, still moving at "
    "max_iter) ranks 12th-43rd of 64 by objective at iterations 4-96 and leaves the race; "
    "auto ends 0.18 % above",
)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("h", "setting", "p"),
    [
        pytest.param(*case, marks=RACE_MISS) if case == ("h1", "interpolation", 2) else case
        for case in SECTION_4_2
    ],
)
def test_auto_reaches_the_best_of_64_restarts_on_the_section_4_2_settings(h, setting, p):
    """Oracle: the brute-force best of the 64 restarts of the paper (every one to its end)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # restarts stopping at max_iter, as in the paper's runs
        full, X, y = _section_4_2(h, setting, p, 64)
        full.fit(X, y)
        auto = _section_4_2(h, setting, p, "auto")[0].fit(X, y)
    assert auto.objective_ <= full.objective_ * (1 + 1e-6)


def test_gamma_is_a_deprecated_alias_of_separation():
    """The coth penalty weight is ``separation``; ``gamma`` (a kernel width everywhere else)
    still works, with a FutureWarning, and gives the same fit."""
    rng = np.random.default_rng(11)
    X = rng.standard_normal((20, 2))
    y = np.sin(X[:, 0])
    kw = {"n_restarts": 2, "max_iter": 5, "random_state": 0}
    new = ConcatenatedKernelRegressor(separation=0.1, **kw).fit(X, y)
    with pytest.warns(FutureWarning, match="'gamma' was renamed 'separation'"):
        old = ConcatenatedKernelRegressor(gamma=0.1, **kw).fit(X, y)
    np.testing.assert_array_equal(new.predict(X), old.predict(X))
    zero = ConcatenatedKernelRegressor(**kw).fit(X, y)
    assert not np.array_equal(new.predict(X), zero.predict(X))


def test_lam_auto_is_the_k_fold_path_of_refitted_clones():
    """``lam="auto"``: a hand loop of fixed-``lam`` fits on ``KFold(5, shuffle, seed 0)``
    gives the scores of every ``lam`` visited, from ``1e-1`` down, and ``lam_`` is the best;
    with ``interpolate=True`` it is refused by name."""
    from sklearn.model_selection import KFold

    from kernelkit import get_config

    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, size=(40, 2))
    y = np.sin(3 * X[:, 0]) * X[:, 1] + 0.05 * rng.normal(size=40)
    kw = dict(n_restarts=2, max_iter=20, random_state=0)
    model = ConcatenatedKernelRegressor(lam="auto", **kw).fit(X, y)
    visited = len(model.cv_results_["params"])
    grid = np.logspace(-1, -9, 17)[:visited]
    hand = [
        np.mean(
            [
                ConcatenatedKernelRegressor(lam=lam, **kw).fit(X[tr], y[tr]).score(X[te], y[te])
                for tr, te in KFold(5, shuffle=True, random_state=0).split(X)
            ]
        )
        for lam in grid
    ]
    np.testing.assert_allclose(model.cv_results_["mean_test_score"], hand, atol=1e-10)
    assert type(model.lam_) is float and model.lam_ == grid[int(np.argmax(hand))]
    patience = get_config()["logistic_patience"]
    assert visited == 17 or visited - 1 - int(np.argmax(hand)) == patience + 1
    with pytest.raises(ValueError, match="interpolate=True has none"):
        ConcatenatedKernelRegressor(lam="auto", interpolate=True, **kw).fit(X, y)
