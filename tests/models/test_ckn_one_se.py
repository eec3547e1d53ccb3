"""The one-standard-error rule of the CKN internal cross-validation.

Oracle: the rule written out from Hastie, Tibshirani & Friedman (ESL, 2nd ed., section
7.10) with the binomial standard error of an error rate, by a loop over hand-made scores.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from kernelkit.models._ckn_head import (
    beats_by_one_se,
    cross_validate_lam,
    lam_cv_scores,
    parsimonious_choice,
    stratified_folds,
)


def _entry(correct, entropy, index, lam):
    return ((-float(correct), float(entropy), index, lam), (lam, index))


def _oracle(scores, n):
    """First column set whose best error is <= the lowest error + its binomial SE."""
    best = {}
    for key, (lam, s) in scores:
        if s not in best or (key, (lam, s)) < best[s]:
            best[s] = (key, (lam, s))
    errors = {s: 1 - (-best[s][0][0]) / n for s in best}
    low = min(errors.values())
    se = math.sqrt(low * (1 - low) / n)
    first = min(s for s in best if errors[s] <= low + se)
    return best[first]


@pytest.mark.parametrize(
    ("correct_0", "correct_1", "expected_set"),
    [(90, 92, 0), (90, 95, 1), (90, 90, 0), (93, 90, 0), (99, 100, 1)],
)
def test_the_depth_is_the_fewest_levels_within_one_standard_error(
    correct_0, correct_1, expected_set
):
    n = 100
    scores = [
        _entry(correct_0 - 3, 40.0, 0, 1e-1),
        _entry(correct_0, 30.0, 0, 1e-3),
        _entry(correct_1, 20.0, 1, 1e-4),
        _entry(correct_1 - 1, 25.0, 1, 1e-2),
    ]
    chosen = parsimonious_choice(scores, n)
    assert chosen == _oracle(scores, n)
    assert chosen[1][1] == expected_set
    # within the chosen set, the best accuracy (then cross-entropy, then lam) wins
    assert chosen == min(e for e in scores if e[1][1] == expected_set)


def test_a_candidate_replaces_the_earlier_one_only_beyond_one_standard_error():
    n = 95
    old = (-90.0, 10.0, 0, 1e-4)
    # errors 5/95 and 2/95: the difference 0.0316 against one standard error of the
    # difference sqrt((0.0526 * 0.9474 + 0.0211 * 0.9789) / 95) = 0.0270 (2.6 sequences)
    assert not beats_by_one_se((-92.0, 5.0, 0, 1e-4), old, n)
    assert beats_by_one_se((-93.0, 5.0, 0, 1e-4), old, n)
    assert not beats_by_one_se((-90.0, 1.0, 0, 1e-4), old, n)  # a tie keeps the earlier
    assert not beats_by_one_se((-80.0, 1.0, 0, 1e-4), old, n)
    for correct in range(80, 96):
        e_new, e_old = 1 - correct / n, 1 - 90 / n
        se = math.sqrt((e_new * (1 - e_new) + e_old * (1 - e_old)) / n)
        assert beats_by_one_se((-float(correct), 0.0, 0, 1e-4), old, n) == (e_old - e_new > se)


def test_cross_validate_lam_with_parsimony_is_the_rule_on_the_same_scores():
    rng = np.random.default_rng(0)
    n = 60
    y = torch.as_tensor(np.arange(n) % 2)
    signal = (2.0 * y.double() - 1.0)[:, None]
    features = torch.cat(
        [signal + torch.as_tensor(rng.normal(0, 1.5, (n, 3))),
         torch.as_tensor(rng.normal(0, 1, (n, 8)))], dim=1
    )  # fmt: skip
    columns = (
        torch.arange(11) < 3,
        torch.ones(11, dtype=torch.bool),
    )
    grid = (1e-4, 1e-2, 1e-1)
    fold = stratified_folds(y, 5, torch.Generator().manual_seed(3))
    scores = lam_cv_scores(features, y, 2, fold, column_sets=columns, grid=grid)
    lam, index = cross_validate_lam(
        features, y, 2, generator=torch.Generator().manual_seed(3), column_sets=columns,
        n_folds=5, grid=grid, parsimony=True,
    )  # fmt: skip
    assert (lam, index) == _oracle(scores, n)[1]
    plain = cross_validate_lam(
        features, y, 2, generator=torch.Generator().manual_seed(3), column_sets=columns,
        n_folds=5, grid=grid,
    )  # fmt: skip
    assert plain == min(scores)[1]
