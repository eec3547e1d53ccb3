"""Supervised CKN training pieces: the held-out split, the classifier's initialisation
(against scikit-learn's multinomial logistic regression) and the best-epoch model choice."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.linear_model import LogisticRegression

from kernelkit.models.ckn import CKN
from kernelkit.models.ckn_train import (
    fit_linear_head,
    train_classifier,
    validation_split,
)

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


def test_linear_head_is_sklearns_multinomial_logistic_regression():
    rng = np.random.default_rng(0)
    n, d, lam = 90, 6, 1e-2
    F = rng.standard_normal((n, d))
    y = np.argmax(F[:, :3] + 0.8 * rng.standard_normal((n, 3)), axis=1)
    head = torch.nn.Linear(d, 3, dtype=torch.float64)
    result = fit_linear_head(head, torch.as_tensor(F), torch.as_tensor(y), lam=lam)
    assert result.converged
    # (1/n) sum CE + lam ||W||^2  <=>  sum CE + (1 / (2C)) ||W||^2 with C = 1 / (2 n lam)
    ref = LogisticRegression(C=1.0 / (2 * n * lam), tol=1e-12, max_iter=10000).fit(F, y)
    with torch.no_grad():
        proba = torch.softmax(head(torch.as_tensor(F)), 1).numpy()
    np.testing.assert_allclose(proba, ref.predict_proba(F), atol=1e-6)


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
