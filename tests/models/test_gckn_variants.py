"""GraphCKNClassifier(normalize="auto", standardize="auto"): the internal cross-validation
chooses the feature scaling with lam and the layers, and the chosen model equals the one
fitted with that choice fixed; the defaults are normalised, not standardised."""

from __future__ import annotations

import numpy as np
import pytest

import kernelkit.estimators._ckn_base as ckn_base
from kernelkit import GraphCKNClassifier

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


# candidate k of the cross-validation: variant k // 2 of (normalised, plain) x (not
# standardised, standardised), then 1 or 2 layers
CANDIDATES = [(n, s, layers) for n in (True, False) for s in (False, True) for layers in (1, 2)]


@pytest.mark.parametrize("index", range(8))
def test_each_candidate_equals_the_model_fitted_with_it_fixed(index, monkeypatch):
    graphs, y = _rings_and_chains()
    seen = {}

    def choose(features, codes, n_classes, *, generator, column_sets, **kw):
        seen["widths"] = [int(c.sum()) for c in column_sets]
        seen["features"] = features
        return 1e-3, index

    monkeypatch.setattr(ckn_base, "cross_validate_lam", choose)
    clf = GraphCKNClassifier((6, 4), (2, 0), normalize="auto", standardize="auto", random_state=0)
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
