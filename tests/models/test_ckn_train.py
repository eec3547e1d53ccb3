"""Supervised CKN training pieces: the held-out split, the classifier's initialisation
(against scikit-learn's multinomial logistic regression) and the best-epoch model choice."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.linear_model import LogisticRegression

from kernelkit.models._ckn import CKN
from kernelkit.models._ckn_head import (
    cross_validate_lam,
    fit_linear_head,
    lam_cv_grid,
    stratified_folds,
)
from kernelkit.models._ckn_seq import GappedKmerLayer
from kernelkit.models._ckn_train import train_alternating, train_classifier, validation_split

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_validation_split_is_a_stratified_partition():
    y = torch.as_tensor([0] * 20 + [1] * 9 + [2] * 1 + [3] * 2)
    train, held = validation_split(y, 0.2, torch.Generator().manual_seed(0))
    assert sorted(torch.cat([train, held]).tolist()) == list(range(len(y)))
    counts = torch.bincount(y[held], minlength=4).tolist()
    assert counts == [4, 2, 0, 0]  # round(0.2 n_c), at least one member left in training
    assert set(y[train].tolist()) == {0, 1, 2, 3}
    train0, held0 = validation_split(y, 0.0, torch.Generator().manual_seed(0))
    assert len(held0) == 0 and train0.tolist() == list(range(len(y)))


@pytest.mark.parametrize("n, d, seed", [(90, 6, 0), (40, 150, 3)])
def test_linear_head_is_sklearns_multinomial_logistic_regression(n, d, seed):
    """Oracle: scikit-learn on the raw features.  ``d > n`` is solved on the rows' span
    coordinates and mapped back: ``W`` then lies in the rows' span (the minimum-norm
    minimiser), and new rows get scikit-learn's probabilities too."""
    rng = np.random.default_rng(seed)
    lam = 1e-2
    F = rng.standard_normal((n, d))
    y = np.argmax(F[:, :3] + 0.8 * rng.standard_normal((n, 3)), axis=1)
    head = torch.nn.Linear(d, 3, dtype=torch.float64)
    result = fit_linear_head(head, torch.as_tensor(F), torch.as_tensor(y), lam=lam)
    assert result.converged
    # (1/n) sum CE + lam ||W||^2  <=>  sum CE + (1 / (2C)) ||W||^2 with C = 1 / (2 n lam)
    ref = LogisticRegression(C=1.0 / (2 * n * lam), tol=1e-12, max_iter=10000).fit(F, y)
    rows = np.vstack([F, rng.standard_normal((7, d))])
    with torch.no_grad():
        proba = torch.softmax(head(torch.as_tensor(rows)), 1).numpy()
    expected = ref.predict_proba(rows)
    np.testing.assert_allclose(proba[:n], expected[:n], atol=1e-6)
    # new rows: the solvers' stopping tolerances (the unreduced run differs by 2e-6 too)
    np.testing.assert_allclose(proba[n:], expected[n:], atol=1e-5)
    if d > n:
        W = head.weight.detach().numpy()
        coef, *_ = np.linalg.lstsq(F.T, W.T, rcond=None)
        np.testing.assert_allclose(F.T @ coef, W.T, atol=1e-8)


def test_training_keeps_the_best_held_out_epoch_and_stops_early():
    g = torch.Generator().manual_seed(0)
    X = torch.randn(48, 1, 6, 6, generator=g, dtype=torch.float64)
    y = (X[:, 0, :3].sum((1, 2)) > X[:, 0, 3:].sum((1, 2))).long()
    net = CKN(1, (4,), (3,), (3,), shift=0.01)
    head = torch.nn.Linear(4 * 2 * 2, 2, dtype=torch.float64)
    Xv, yv = X[36:], y[36:]
    log = train_classifier(net, head, X[:36], y[:36], lam=0.0, n_epochs=30, lr=0.2,
                           batch_size=6, generator=g, validation=(Xv, yv),
                           n_iter_no_change=3)  # fmt: skip
    accuracies = [acc for acc, _ in log.validation]
    assert len(accuracies) == len(log.objective) + 1
    best = log.validation[log.best_epoch]
    assert best[0] == max(accuracies)
    assert all(ce >= best[1] for acc, ce in log.validation if acc == best[0])
    assert len(log.objective) < 30 and len(log.objective) - log.best_epoch == 3
    with torch.no_grad():
        logits = head(net(Xv).flatten(1))
    assert float((logits.argmax(1) == yv).double().mean()) == best[0]


def _motif_tensor(n, seed):
    """One-hot DNA ``(n, 4, 30)``, label 1 when ``GATTACA`` is planted somewhere."""
    g = np.random.default_rng(seed)
    codes = g.integers(0, 4, size=(n, 30))
    y = np.arange(n) % 2
    for i in np.flatnonzero(y):
        p = int(g.integers(0, 24))
        codes[i, p : p + 7] = [2, 0, 3, 3, 0, 1, 0]
    x = torch.nn.functional.one_hot(torch.as_tensor(codes), 4).transpose(1, 2)
    return x.to(torch.float64), torch.as_tensor(y)


def test_alternating_training_solves_the_classifier_between_epochs():
    """Chen, Jacob & Mairal (2019): after every epoch the classifier is the convex problem's
    minimiser on the current features (checked against scikit-learn on the kept model),
    anchors stay unit rows, the kept epoch has the lowest held-out loss, early stopping."""
    x, y = _motif_tensor(60, 0)
    g = torch.Generator().manual_seed(0)
    layer = GappedKmerLayer(4, 3, 5, sigma=0.5, shift=0.01)
    layer.set_anchors(torch.randn(3, 5, 4, generator=g, dtype=torch.float64))
    head = torch.nn.Linear(3, 2, dtype=torch.float64)
    lam, n = 1e-3, 48
    with torch.no_grad():
        fit_linear_head(head, layer(x[:n]), y[:n], lam=lam)
    log = train_alternating(layer, head, x[:n], y[:n], lam=lam, n_epochs=8, lr=0.05,
                            batch_size=12, generator=g, validation=(x[n:], y[n:]),
                            n_iter_no_change=3)  # fmt: skip
    assert len(log.validation) == len(log.objective) + 1
    losses = [ce for _, ce in log.validation]
    assert log.best_epoch == int(np.argmin(losses))
    assert len(log.objective) == 8 or len(log.objective) - log.best_epoch == 3
    norms = torch.linalg.vector_norm(layer.weight.detach(), dim=2)
    np.testing.assert_allclose(norms, 1.0, rtol=1e-12)
    with torch.no_grad():
        F = layer(x[:n]).numpy()
        proba = torch.softmax(head(torch.as_tensor(F)), 1).numpy()
    ref = LogisticRegression(C=1.0 / (2 * n * lam), tol=1e-12, max_iter=10000).fit(F, y[:n])
    np.testing.assert_allclose(proba, ref.predict_proba(F), atol=1e-5)


def test_stratified_folds_deal_every_class_evenly():
    y = torch.as_tensor([0] * 10 + [1] * 7 + [2] * 2)
    fold = stratified_folds(y, 3, torch.Generator().manual_seed(0))
    for c, n_c in ((0, 10), (1, 7), (2, 2)):
        counts = torch.bincount(fold[y == c], minlength=3)
        assert int(counts.sum()) == n_c and int(counts.max() - counts.min()) <= 1


def test_cross_validate_lam_is_the_best_cv_accuracy_over_lams_and_column_sets():
    """Oracle: scikit-learn's LogisticRegression(C = 1 / (2 n_train lam)) on the same folds,
    for every lam of the grid and every column set; the chosen pair has the best summed
    held-out accuracy (ties: lower cross-entropy)."""
    rng = np.random.default_rng(1)
    n = 90
    F = rng.standard_normal((n, 8))
    y = ((F[:, 5] + 0.3 * F[:, 0] + 0.4 * rng.standard_normal(n)) > 0).astype(int)
    sets = (torch.arange(8) < 4, None)  # the first set misses the informative column 5
    gen = torch.Generator().manual_seed(3)
    lam, index = cross_validate_lam(
        torch.as_tensor(F), torch.as_tensor(y), 2, generator=gen, column_sets=sets, n_folds=3,
        grid=(1e-3, 1e-2, 1e-1, 1.0), max_iter=500,
    )  # fmt: skip
    fold = stratified_folds(torch.as_tensor(y), 3, torch.Generator().manual_seed(3)).numpy()
    scores = {}
    for s, cols in enumerate(sets):
        Fs = F if cols is None else F[:, cols.numpy()]
        for g in (1e-3, 1e-2, 1e-1, 1.0):
            correct, ce = 0, 0.0
            for f in range(3):
                tr, te = fold != f, fold == f
                ref = LogisticRegression(C=1.0 / (2 * tr.sum() * g), tol=1e-12, max_iter=10000)
                ref.fit(Fs[tr], y[tr])
                correct += int((ref.predict(Fs[te]) == y[te]).sum())
                ce -= float(np.log(ref.predict_proba(Fs[te])[np.arange(te.sum()), y[te]]).sum())
            scores[(g, s)] = (-correct, ce)
    assert (lam, index) == min(scores, key=scores.get)
    assert index == 1
    grid = lam_cv_grid()
    assert grid[0] == 1e-7 and grid[-1] == 1e-1 and len(grid) == 7


def test_cv_scores_of_more_columns_than_samples_are_sklearns_on_the_raw_features():
    """``d > n``: the scores computed on the rows' span coordinates equal scikit-learn's
    LogisticRegression on the raw features, fold by fold (held-out correct predictions
    exactly, summed cross-entropy to 1e-5)."""
    from kernelkit.models._ckn_head import lam_cv_scores, row_space_features

    rng = np.random.default_rng(7)
    n, d = 45, 120
    F = rng.standard_normal((n, d))
    y = np.argmax(F[:, :3] + 1.5 * rng.standard_normal((n, 3)), axis=1)
    R = row_space_features(torch.as_tensor(F)).numpy()
    assert R.shape == (n, n)
    np.testing.assert_allclose(R @ R.T, F @ F.T, rtol=1e-10, atol=1e-9)
    fold = stratified_folds(torch.as_tensor(y), 3, torch.Generator().manual_seed(2))
    grid = (1e-2, 1e-1)
    scores = lam_cv_scores(torch.as_tensor(F), torch.as_tensor(y), 3, fold, grid=grid,
                           max_iter=2000)  # fmt: skip
    for (neg_correct, entropy, _, lam), _choice in scores:
        correct, ce = 0, 0.0
        for f in range(3):
            tr, te = fold.numpy() != f, fold.numpy() == f
            ref = LogisticRegression(C=1.0 / (2 * tr.sum() * lam), tol=1e-12, max_iter=10000)
            ref.fit(F[tr], y[tr])
            correct += int((ref.predict(F[te]) == y[te]).sum())
            ce -= float(np.log(ref.predict_proba(F[te])[np.arange(te.sum()), y[te]]).sum())
        assert -neg_correct == correct
        assert entropy == pytest.approx(ce, rel=1e-5)


def test_repeated_cross_validation_sums_the_scores_of_successive_fold_draws():
    """``n_repeats``: the choice is the smallest key of the two draws' summed scores, the
    draws being the generator's next two partitions (brute force over :func:`lam_cv_scores`)."""
    from kernelkit.models._ckn_head import lam_cv_scores

    rng = np.random.default_rng(4)
    n = 60
    F = torch.as_tensor(rng.standard_normal((n, 6)))
    y = torch.as_tensor(((F[:, 2] + 0.8 * torch.as_tensor(rng.standard_normal(n))) > 0).long())
    sets = (torch.arange(6) < 3, None)
    grid = (1e-3, 1e-2, 1e-1, 1.0)
    chosen = cross_validate_lam(
        F, y, 2, generator=torch.Generator().manual_seed(5), column_sets=sets, n_folds=3,
        grid=grid, n_repeats=2,
    )  # fmt: skip
    gen = torch.Generator().manual_seed(5)
    draws = [
        lam_cv_scores(F, y, 2, stratified_folds(y, 3, gen), column_sets=sets, grid=grid)
        for _ in range(2)
    ]
    summed = {}
    for draw in draws:
        for key, choice in draw:
            correct, entropy = summed.get(choice, (0.0, 0.0))
            summed[choice] = (correct + key[0], entropy + key[1])
    best = min(summed, key=lambda c: (*summed[c], c[1], c[0]))
    assert chosen == best
    folds = [stratified_folds(y, 3, g) for g in [torch.Generator().manual_seed(5)] * 2]
    assert not torch.equal(folds[0], folds[1])  # the second draw is a new partition
