r"""Architecture search of the supervised CKN estimators: the parameters set to ``"auto"``.

A greedy (coordinate-wise) search scored by the one internal cross-validation of the CKN
estimators (:func:`kernelkit.models._ckn_head.lam_cv_scores`: ``k``-fold stratified
accuracy of the multinomial logistic regression on the unsupervised features, ``lam`` and
the pyramid's depth chosen with the architecture), on the training part only:

1. the first candidate sets every searched parameter to its first value;
2. for each searched parameter in turn, each other value is tried with the parameters
   already decided at their best values; a candidate replaces the best one only when its
   cross-validated accuracy is higher, or equal with a lower held-out cross-entropy, so ties
   keep the earlier candidate;
3. with ``max_iter="auto"``, the chosen network trained end to end (the estimator's epochs,
   scheme and held-out epoch choice, inside each fold) is the last candidate: it is kept
   only when its cross-validated accuracy is higher than the unsupervised model's (Mairal
   2016, section 4: supervised training starts from the unsupervised model; whether it
   gains is a question for held-out data).

An estimator with ``_parsimony`` (the sequence classifier) uses the one-standard-error rule
in steps 1-2 instead (:func:`~kernelkit.models._ckn_head.beats_by_one_se`): a candidate
replaces the best one only when its error rate is lower by more than one standard error of
the difference, and the pyramid's depth is the fewest levels within one standard error of
the best (:func:`~kernelkit.models._ckn_head.parsimonious_choice`).

Every candidate is scored on the same folds (drawn once from the estimator's generator) and
fitted with the same seed.  Time budget (``ckn_search_seconds`` of
:func:`kernelkit.get_config`): the first candidate is always scored; another one starts only
while the seconds spent since the search began plus the first candidate's seconds stay
within the budget, so the result can depend on the machine's speed, and the candidates left
out are named in the record.  This is model selection by cross-validation over a small
candidate set (course part 1, model selection; the CKN architecture choices of Chen, Jacob &
Mairal 2019, sections 4-5, made by the data instead of fixed).
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass
from typing import Any

import torch

from kernelkit.models._ckn_head import (
    beats_by_one_se,
    cv_folds,
    lam_cv_scores,
    parsimonious_choice,
    stratified_folds,
)
from kernelkit.models._ckn_train import held_out_scores, validation_split
from kernelkit.utils._config import options


@dataclass
class _Scored:
    """A fitted candidate: its cross-validation key, network, inputs and features."""

    key: tuple[float, float, int, float]
    choice: tuple[float, int]
    network: Any
    inputs: torch.Tensor
    generator: torch.Generator
    features: torch.Tensor
    columns: tuple[torch.Tensor | None, ...]


def _score(
    estimator: Any, X: Any, y: torch.Tensor, train: torch.Tensor, fold: torch.Tensor,
    fitted: tuple[torch.Tensor, torch.Generator] | None = None,
) -> _Scored:  # fmt: skip
    """Fit the network of ``estimator.architecture_`` (unless ``fitted``) and score it."""
    Xt, generator = estimator._fit_network(X) if fitted is None else fitted
    features = estimator._features(Xt[train])
    columns = estimator._candidate_columns()
    grid = estimator._lam_grid() if estimator.lam == "auto" else (float(estimator.lam),)
    scores = lam_cv_scores(
        features, y, len(estimator.classes_), fold, column_sets=columns, grid=grid
    )
    key, choice = parsimonious_choice(scores, len(y)) if estimator._parsimony else min(scores)
    return _Scored(key, choice, estimator.network_, Xt, generator, features, columns)


def _fine_tuned_correct(
    estimator: Any, best: _Scored, y: torch.Tensor, train: torch.Tensor, fold: torch.Tensor,
    lam: float, epochs: int,
) -> int:  # fmt: skip
    """Held-out correct predictions, summed over the folds, of the network of ``best``
    trained ``epochs`` epochs on each fold's other folds (as the final fit: ``head_init``,
    ``validation_fraction`` held out to keep the best epoch, ``lam`` fixed)."""
    inputs, correct = best.inputs[train], 0
    for f in range(int(fold.max()) + 1):
        part, test = torch.nonzero(fold != f).flatten(), torch.nonzero(fold == f).flatten()
        fit, held = validation_split(y[part], estimator.validation_fraction, best.generator)
        fit, held = part[fit], part[held]
        network = copy.deepcopy(estimator.network_)
        head, _ = estimator._train_epochs(
            network, (best.features[fit], y[fit]), inputs[fit],
            (inputs[held], y[held]) if len(held) else None, lam, epochs, best.generator,
        )  # fmt: skip
        accuracy, _ = held_out_scores(network, head, inputs[test], y[test], estimator.batch_size)
        correct += round(accuracy * len(test))
    return correct


def search_architecture(
    estimator: Any,
    X: Any,
    fitted: tuple[torch.Tensor, torch.Generator],
    y: torch.Tensor,
    train: torch.Tensor,
    *,
    epochs: int = 0,
) -> tuple[torch.Tensor, torch.Generator, float, torch.Tensor]:
    """Choose the ``"auto"`` parameters of ``estimator`` on ``(X[train], y)`` (module
    docstring).

    ``fitted`` is the network input and generator of the first candidate, whose network is
    ``estimator.network_`` and whose values are ``estimator.architecture_``.  On return the
    estimator holds the best candidate's network (pyramid levels cut to the chosen depth)
    and ``architecture_`` records the chosen values, ``lam``, the cross-validated accuracy
    of every candidate scored, the candidates the budget left out and the seconds spent.
    With ``epochs > 0`` the last candidate is the chosen network trained end to end for
    ``epochs`` epochs (``max_iter="auto"``), kept only when its cross-validated accuracy is
    higher than the unsupervised model's; ``architecture_["max_iter"]`` is then ``epochs``,
    else 0.

    Returns
    -------
    inputs : Tensor
        The network input of all of ``X`` for the chosen candidate.
    generator : torch.Generator
        Its generator (the epochs draw from it).
    lam : float
        The chosen (or given) ridge penalty.
    features : Tensor
        The chosen model's features of ``X[train]``.
    """
    start = time.perf_counter()
    fold = stratified_folds(y, cv_folds(len(y)), fitted[1])
    best = _score(estimator, X, y, train, fold, fitted)
    first_seconds = time.perf_counter() - start
    chosen = dict(estimator.architecture_)
    tried = [{**chosen, "cv_accuracy": -best.key[0] / len(y)}]
    skipped = []

    def starts(candidate: dict[str, Any]) -> bool:
        if time.perf_counter() - start + first_seconds > options().ckn_search_seconds:
            skipped.append(candidate)
            return False
        return True

    for name in [n for n in estimator._searched if getattr(estimator, n) == "auto"]:
        estimator.architecture_ = dict(chosen)  # the values in force while listing `name`'s
        for value in estimator._architecture_values(name)[1:]:
            candidate = {**chosen, name: value}
            if not starts(candidate):
                continue
            estimator.architecture_ = candidate
            scored = _score(estimator, X, y, train, fold)
            tried.append({**candidate, "cv_accuracy": -scored.key[0] / len(y)})
            if (
                beats_by_one_se(scored.key, best.key, len(y))
                if estimator._parsimony
                else scored.key[:2] < best.key[:2]
            ):
                best, chosen = scored, candidate
    estimator.network_ = best.network
    lam, index = best.choice
    if best.columns[index] is not None:
        estimator._keep_candidate(index)
        best.features = best.features[:, best.columns[index]]
    correct = -best.key[0]
    if epochs > 0:
        chosen["max_iter"] = 0
        candidate = {**chosen, "max_iter": epochs}
        if starts(candidate):
            tuned = _fine_tuned_correct(estimator, best, y, train, fold, lam, epochs)
            tried.append({**candidate, "cv_accuracy": tuned / len(y)})
            if tuned > correct:
                chosen, correct = candidate, tuned
    estimator.architecture_ = {
        **chosen,
        **estimator._architecture_extras(),
        "lam": lam,
        "cv_accuracy": correct / len(y),
        "candidates": tried,
        "skipped": skipped,
        "seconds": time.perf_counter() - start,
    }
    return best.inputs, best.generator, lam, best.features
