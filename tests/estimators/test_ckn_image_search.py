"""The architecture search of ``CKNClassifier`` (``subsamplings`` / ``n_filters`` = "auto")
and the supervised epochs chosen by held-out folds (``max_iter="auto"``, both CKN
classifiers).

Planted tasks whose right answer is known by construction; the oracle of a final model is
the estimator fitted with the chosen values given explicitly.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_ckn_estimators import _bars

from kernelkit import CKNClassifier, SequenceCKNClassifier, config_context

pytestmark = pytest.mark.usefixtures("one_torch_thread")

SMALL = {"n_filters": (4, 6), "patch_sizes": (3, 2), "n_patches": 300, "random_state": 0}


def test_the_pooling_candidates_are_scored_and_the_best_one_is_the_fixed_model():
    X, y = _bars(60, 0)
    clf = CKNClassifier(**SMALL, subsamplings="auto").fit(X, y)
    arch = clf.architecture_
    assert [c["subsamplings"] for c in arch["candidates"]] == [(2, 5), (2, 3)]
    assert arch["cv_accuracy"] == max(c["cv_accuracy"] for c in arch["candidates"])
    assert arch["skipped"] == [] and arch["lam"] == clf.lam_
    assert (
        clf.network_.output_shape(8, 8)[1:]
        == {(2, 5): (1, 1), (2, 3): (2, 2)}[arch["subsamplings"]]
    )
    # oracle: the model fitted with the chosen architecture given explicitly
    fixed = CKNClassifier(**SMALL, subsamplings=arch["subsamplings"], lam=arch["lam"]).fit(X, y)
    np.testing.assert_allclose(clf.decision_function(X), fixed.decision_function(X), rtol=1e-8)
    assert fixed.architecture_ == {"lam": arch["lam"]}


def test_the_anchors_candidates_and_the_budget():
    X, y = _bars(40, 0)
    params = {**SMALL, "n_filters": "auto", "subsamplings": "auto", "n_patches": 200}
    with config_context(ckn_search_seconds=1e-9):
        clf = CKNClassifier(**params).fit(X, y)
    arch = clf.architecture_
    assert [(c["subsamplings"], c["n_filters"]) for c in arch["candidates"]] == [
        ((2, 5), (64, 256))
    ]
    assert arch["skipped"] == [
        {"subsamplings": (2, 3), "n_filters": (64, 256)},
        {"subsamplings": (2, 5), "n_filters": (128, 512)},
    ]
    assert [layer.weight.shape[0] for layer in clf.network_.layers] == [64, 256]


def test_fine_tuning_is_kept_where_it_beats_the_unsupervised_model_on_held_out_folds():
    """The planted motif of ``test_ckn_estimators``: with 4 anchors k-means on background
    8-mers misses it and the alternating training finds it (seeds as there)."""
    from tests.estimators.test_ckn_estimators import _planted

    X, y = _planted(200, 0)
    X_test, y_test = _planted(300, 1)
    params = {"n_filters": 4, "k": 8, "sigma": 0.5, "n_bins": 1, "alphabet": "dna",
              "normalize": False, "lam": 1e-6, "pooling": "mean", "lr": 0.05,
              "batch_size": 32, "random_state": 3}  # fmt: skip
    with config_context(ckn_search_seconds=600.0):
        clf = SequenceCKNClassifier(**params, max_iter="auto").fit(X, y)
    arch = clf.architecture_
    assert [c["max_iter"] for c in arch["candidates"][1:]] == [100]
    unsupervised, tuned = (c["cv_accuracy"] for c in arch["candidates"])
    assert tuned > unsupervised and arch["max_iter"] == 100 and arch["cv_accuracy"] == tuned
    assert clf.best_epoch_ > 0 and clf.score(X_test, y_test) >= 0.95


def test_fine_tuning_is_not_kept_where_the_unsupervised_model_is_not_beaten():
    """Bars: the unsupervised features already separate the classes on every fold, so no
    training can be more accurate there; the fit is then the unsupervised model."""
    X, y = _bars(60, 0)
    params = {**SMALL, "subsamplings": (2, 2), "lr": 0.05, "batch_size": 10}
    with config_context(ckn_search_seconds=600.0):
        clf = CKNClassifier(**params, max_iter="auto").fit(X, y)
    arch = clf.architecture_
    assert [c.get("max_iter") for c in arch["candidates"]] == [None, 100]
    assert arch["candidates"][0]["cv_accuracy"] == 1.0 and arch["max_iter"] == 0
    assert clf.n_iter_ == 0
    fixed = CKNClassifier(**params, max_iter=0, lam=arch["lam"]).fit(X, y)
    np.testing.assert_allclose(clf.decision_function(X), fixed.decision_function(X), rtol=1e-8)
