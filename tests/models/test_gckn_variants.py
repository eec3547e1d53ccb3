"""GraphCKNClassifier(normalize="auto", standardize="auto"): the internal cross-validation
chooses the feature scaling with lam and the layers, and the chosen model equals the one
fitted with that choice fixed; the defaults are normalised, not standardised."""

from __future__ import annotations

import numpy as np
import pytest

import kernelkit.estimators._ckn_base as ckn_base
from kernelkit import GraphCKNClassifier
from kernelkit.models._ckn_head import lam_cv_grid
from kernelkit.models._gckn import gckn_lam_grid
from kernelkit.models._ridge_path import lam_grid
from kernelkit.utils._errors import InputError

nx = pytest.importorskip("networkx")


@pytest.fixture(autouse=True)
def _one_thread(one_torch_thread):
    """Tiny problems: one torch thread."""


def _rings_and_chains(n: int = 24) -> tuple[list, list]:
    rng = np.random.default_rng(0)
    graphs, y = [], []
    for i in range(n):
        ring = i % 2 == 0
        g = nx.cycle_graph(int(rng.integers(5, 9))) if ring else nx.path_graph(7)
        for v in g:
            g.nodes[v]["label"] = int(rng.integers(2))
        graphs.append(g)
        y.append("ring" if ring else "chain")
    return graphs, y


def _choose_candidate(monkeypatch, index: int) -> dict:
    """Make the internal CV choose candidate ``index`` with ``lam = 1e-3``; the returned dict
    records the candidates' widths, the features and the ``lam`` grid it was given."""
    seen: dict = {}

    def choose(features, codes, n_classes, *, generator, column_sets, grid, **kw):
        seen.update(widths=[int(c.sum()) for c in column_sets], features=features, grid=grid)
        return 1e-3, index

    monkeypatch.setattr(ckn_base, "cross_validate_lam", choose)
    return seen


# candidate k of the cross-validation: variant k // 2 of (normalised, plain) x (not
# standardised, standardised), then 1 or 2 layers
CANDIDATES = [(n, s, layers) for n in (True, False) for s in (False, True) for layers in (1, 2)]


@pytest.mark.parametrize("index", range(8))
def test_each_candidate_equals_the_model_fitted_with_it_fixed(index, monkeypatch):
    graphs, y = _rings_and_chains()
    seen = _choose_candidate(monkeypatch, index)
    auto = {"normalize": "auto", "standardize": "auto"}
    clf = GraphCKNClassifier((6, 4), (2, 0), sigma=1.5, top_sigma=None, random_state=0, **auto)
    clf.fit(graphs, y)
    norm, std, layers = CANDIDATES[index]
    assert seen["widths"] == [18, 22] * 4
    assert seen["features"].shape == (24, 4 * 22)
    assert (clf.network_.normalize, clf.network_.standardize) == (norm, std)
    assert len(clf.network_.layers) == layers
    fixed = GraphCKNClassifier(
        (6, 4)[:layers],
        (2, 0)[:layers],
        normalize=norm,
        standardize=std,
        sigma=1.5,
        top_sigma=None,
        lam=1e-3,
        random_state=0,
    ).fit(graphs, y)
    np.testing.assert_allclose(
        clf.decision_function(graphs), fixed.decision_function(graphs), rtol=1e-8, atol=1e-10
    )
    # the concatenated candidate features hold each variant's features of the fixed model
    v = index // 2
    block = seen["features"][:, v * 22 : v * 22 + (18 if layers == 1 else 22)]
    np.testing.assert_allclose(
        block.numpy(),
        fixed.network_(fixed._inputs(graphs, reset=False)).detach().numpy(),
        rtol=1e-10,
        atol=1e-12,
    )


def test_fixed_lam_or_defaults_use_normalised_plain_features():
    graphs, y = _rings_and_chains()
    auto = {"normalize": "auto", "standardize": "auto"}
    clf = GraphCKNClassifier(6, 2, lam=1e-3, random_state=0, **auto).fit(graphs, y)
    assert (clf.network_.normalize, clf.network_.standardize) == (True, False)
    clf = GraphCKNClassifier(6, 2, random_state=0).fit(graphs, y)
    assert (clf.network_.normalize, clf.network_.standardize) == (True, False)


def test_auto_fit_is_consistent_and_predicts():
    graphs, y = _rings_and_chains()
    auto = {"normalize": "auto", "standardize": "auto"}
    clf = GraphCKNClassifier((6, 4), (2, 0), random_state=0, **auto).fit(graphs, y)
    assert clf.score(graphs, y) == 1.0
    again = GraphCKNClassifier((6, 4), (2, 0), random_state=0, **auto).fit(graphs, y)
    np.testing.assert_array_equal(clf.decision_function(graphs), again.decision_function(graphs))


# candidate k of the default cross-validation with a sigma and a max_length grid: network
# k // 2 of (sigma 1.0, 0.5) x (max_length (2, 0), (1, 0)), then 1 or 2 layers
GRID = [(s, k, layers) for s in (1.0, 0.5) for k in ((2, 0), (1, 0)) for layers in (1, 2)]


@pytest.mark.parametrize("index", range(8))
def test_each_sigma_and_length_candidate_equals_the_model_fitted_with_it_fixed(index, monkeypatch):
    graphs, y = _rings_and_chains()
    seen = _choose_candidate(monkeypatch, index)
    grid = {"sigma": (1.0, 0.5), "max_length": ((2, 0), (1, 0)), "top_sigma": None}
    clf = GraphCKNClassifier((6, 4), random_state=0, **grid).fit(graphs, y)
    sigma, lengths, layers = GRID[index]
    # widths: 1 layer (k + 1) 6, 2 layers + 4 (the second layer's paths of 0 edges)
    assert seen["widths"] == [18, 22, 12, 16] * 2
    assert seen["grid"] == gckn_lam_grid()
    assert len(clf.network_.layers) == layers
    assert clf.network_.layers[0].max_length == lengths[0]
    assert not hasattr(clf, "_networks")
    fixed = GraphCKNClassifier(
        (6, 4)[:layers], lengths[:layers], sigma=sigma, top_sigma=None, lam=1e-3, random_state=0
    ).fit(graphs, y)
    np.testing.assert_allclose(
        clf.decision_function(graphs), fixed.decision_function(graphs), rtol=1e-8, atol=1e-10
    )


# candidate k with a graph-level layer grid: network k // 2 of (sigma 1.0, 0.5) x (top_sigma
# None, 0.5); without a graph-level layer 1 or 2 layers, with one both layers (one candidate)
TOP_GRID = [c for s in (1.0, 0.5) for c in ((s, None, 1), (s, None, 2), (s, 0.5, 2))]


@pytest.mark.parametrize("index", range(6))
def test_each_top_sigma_candidate_equals_the_model_fitted_with_it_fixed(index, monkeypatch):
    graphs, y = _rings_and_chains()
    seen = _choose_candidate(monkeypatch, index)
    grid = {"sigma": (1.0, 0.5), "top_sigma": (None, 0.5), "top_filters": 10}
    clf = GraphCKNClassifier((6, 4), (2, 0), random_state=0, **grid).fit(graphs, y)
    sigma, top_sigma, layers = TOP_GRID[index]
    # the graph-level layer: min(top_filters, n_graphs) = 10 features
    assert seen["widths"] == [18, 22, 10] * 2
    assert (clf.network_.top is None) == (top_sigma is None)
    assert len(clf.network_.layers) == layers
    fixed = GraphCKNClassifier(
        (6, 4)[:layers],
        (2, 0)[:layers],
        sigma=sigma,
        top_sigma=top_sigma,
        top_filters=10,
        lam=1e-3,
        random_state=0,
    ).fit(graphs, y)
    np.testing.assert_allclose(
        clf.decision_function(graphs), fixed.decision_function(graphs), rtol=1e-8, atol=1e-10
    )


def test_gckn_lam_grid_is_a_wider_window_of_the_one_lattice():
    grid = np.array(gckn_lam_grid())
    cv = np.array(lam_cv_grid())
    lattice = lam_grid()
    assert all(np.isclose(lattice, v, rtol=1e-12).any() for v in grid)
    assert grid.min() < cv.min() and grid.max() > cv.max()
    assert all(np.isclose(grid, v, rtol=1e-12).any() for v in cv)
    np.testing.assert_allclose(np.diff(np.log10(grid)), 1.0)


@pytest.mark.parametrize(
    "params",
    [
        {"sigma": (1.0, -1.0)},
        {"sigma": ()},
        {"max_length": ((2, 0), (2, -1))},
        {"top_sigma": (None, 0.0)},
        {"top_sigma": ()},
    ],
)
def test_bad_candidates_are_refused_by_name(params):
    graphs, y = _rings_and_chains(8)
    name = next(iter(params))
    with pytest.raises(InputError, match=name):
        GraphCKNClassifier((6, 4), random_state=0, **params).fit(graphs, y)


@pytest.mark.parametrize("repeats", [1, 3])
def test_the_cv_repeats_option_reaches_the_internal_cross_validation(repeats, monkeypatch):
    """``graph_ckn_cv_repeats`` is the number of fold draws GraphCKNClassifier asks for
    below 1000 training graphs; from 1000, one."""
    from kernelkit import config_context

    graphs, y = _rings_and_chains()
    seen = []

    def choose(features, codes, n_classes, *, n_repeats, **kw):
        seen.append(n_repeats)
        return 1e-3, 0

    monkeypatch.setattr(ckn_base, "cross_validate_lam", choose)
    with config_context(graph_ckn_cv_repeats=repeats):
        GraphCKNClassifier((6,), 2, sigma=1.5, top_sigma=None, random_state=0).fit(graphs, y)
    assert seen == [repeats]
    assert GraphCKNClassifier()._lam_cv_repeats(999) == 2
    assert GraphCKNClassifier()._lam_cv_repeats(1000) == 1  # 3 folds of 333+: one draw
