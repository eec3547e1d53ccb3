r"""Learning the anchors of a convolutional kernel network (course part 3, sections 6-7).

* Unsupervised: spherical k-means on patches sampled from the previous layer's map
  (:func:`spherical_kmeans`, :func:`fit_image_anchors`), as in the reference implementation
  (course part 3, section 7 and errata 11: anchors of unit norm, clustered on normalised
  patches).
* Supervised (:func:`train_classifier`): backpropagation through the whole network with a
  linear classifier on top, minimising ``(1/n) sum_i L(y_i, W psi_Z(x_i) + b) + lam ||W||^2``
  over ``Z`` and ``(W, b)`` with ``L`` the multinomial logistic loss ("end-to-end kernel
  learning = learning a linear subspace of the RKHS", part 3, section 6; Mairal 2016, §3),
  by minibatch Adam, keeping the epoch of best accuracy on a held-out part of the training
  set (:func:`validation_split`).  The starting point is the unsupervised model: k-means
  anchors and the classifier fitted on their fixed features (:func:`fit_linear_head`), the
  initialisation of Mairal (2016, §3) and of the reference implementation
  (claying/CKN-Pytorch-image, ``experiments/cifar10_sup.py``: ``unsup_train_ckn``, then
  ``unsup_train_classifier`` on the frozen features, then end-to-end SGD with the model of
  best validation accuracy kept).
* Supervised, alternating (:func:`train_alternating`): the scheme of Chen, Jacob & Mairal
  (Bioinformatics 2019, CKN-seq; reference code ``sup_train(..., alternating=True)``) and of
  Mairal (2016, §4): between epochs the classifier is the exact minimiser of the convex
  problem on the current features (:func:`fit_linear_head`); during an epoch only the
  anchors move (minibatch Adam, anchors projected back to unit rows after every step), the
  learning rate is halved when the held-out loss stalls, and the epoch of lowest held-out
  loss is kept.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from kernelkit.models._ckn import CKN, extract_patches
from kernelkit.models._logistic_path import one_standard_error
from kernelkit.models._ridge_path import lam_grid
from kernelkit.models._spherical_kmeans import spherical_kmeans
from kernelkit.solvers import lbfgs
from kernelkit.solvers._lbfgs import LBFGSResult
from kernelkit.solvers._optimizers import cosine_schedule, first_order_optimizer, plateau_schedule
from kernelkit.solvers._training import Step, descend, patience, train_loop
from kernelkit.utils._errors import InputError
from kernelkit.utils._progress import Progress


def sample_rows(rows: torch.Tensor, n_samples: int, generator: torch.Generator) -> torch.Tensor:
    """``n_samples`` rows drawn without replacement (all when fewer), zero rows excluded."""
    keep = torch.linalg.vector_norm(rows, dim=1) > 0
    rows = rows[keep] if bool(keep.any()) else rows
    if rows.shape[0] > n_samples:
        rows = rows[torch.randperm(rows.shape[0], generator=generator)[:n_samples].to(rows.device)]
    return rows


def map_in_batches(
    fn: Callable[[torch.Tensor], torch.Tensor], X: torch.Tensor, batch_size: int
) -> torch.Tensor:
    """``fn`` applied to consecutive batches of ``X`` (no gradient), concatenated."""
    with torch.no_grad():
        return torch.cat([fn(X[i : i + batch_size]) for i in range(0, X.shape[0], batch_size)])


def fit_image_anchors(
    ckn: CKN,
    X: torch.Tensor,
    *,
    n_patches: int,
    n_iter: int,
    generator: torch.Generator,
    batch_size: int = 256,
) -> None:
    """Unsupervised CKN: spherical k-means anchors for each layer in turn.

    For layer ``k``, the maps ``x_{k-1}`` of a random subset of images (about ``2 n_patches``
    patch positions) are computed with the layers already fitted, ``n_patches`` non-zero
    patches are drawn from them, and their spherical k-means centroids become the anchors.
    """
    n = X.shape[0]
    for depth, layer in enumerate(ckn.layers):
        _, h, w = ckn.output_shape(X.shape[2], X.shape[3], depth)
        n_images = min(n, max(1, math.ceil(2 * n_patches / (h * w))))
        idx = torch.randperm(n, generator=generator)[:n_images].to(X.device)
        maps = map_in_batches(lambda b, d=depth: ckn(b, depth=d), X[idx], batch_size)
        P = extract_patches(maps, layer.patch_size)
        rows = sample_rows(P.permute(0, 2, 1).reshape(-1, layer.patch_dim), n_patches, generator)
        layer.set_anchors(
            spherical_kmeans(rows, layer.n_filters, n_iter=n_iter, generator=generator)
        )


def validation_split(
    y: torch.Tensor, fraction: float, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Indices ``(train, validation)`` of a split stratified by class.

    Class ``c`` with ``n_c`` members gives ``min(round(fraction n_c), n_c - 1)`` random
    members to the validation part (at least one member of every class stays in training);
    ``fraction = 0`` gives an empty validation part.  Both index sets are sorted.
    """
    train, held = [], []
    for c in torch.unique(y):
        members = torch.nonzero(y == c).flatten()
        members = members[torch.randperm(len(members), generator=generator).to(y.device)]
        n_held = min(math.floor(fraction * len(members) + 0.5), len(members) - 1)
        held.append(members[:n_held])
        train.append(members[n_held:])
    return torch.cat(train).sort().values, torch.cat(held).sort().values


def fit_linear_head(
    head: nn.Linear,
    features: torch.Tensor,
    y: torch.Tensor,
    *,
    lam: float,
    max_iter: int = 500,
    warm_start: bool = False,
) -> LBFGSResult:
    r"""Multinomial logistic regression on fixed features, written into ``head``.

    Minimises ``(1/n) sum_i CE(W f_i + b, y_i) + lam ||W||^2`` (the objective of
    :func:`train_classifier` with the network frozen) over ``(W, b)`` from zero, in float64,
    by L-BFGS (:func:`kernelkit.solvers.lbfgs`): the classifier of the unsupervised CKN, the
    starting point of the end-to-end training (Mairal 2016, §3).

    Parameters
    ----------
    head : nn.Linear
        Receives the solution (cast to its dtype and device).
    features : tensor, shape (n, d)
        Fixed features ``f_i``.
    y : tensor of int, shape (n,)
        Class codes in ``0 .. head.out_features - 1``.
    lam : float
        Ridge penalty on ``W`` (``b`` is not penalised).
    max_iter : int
        L-BFGS iterations.
    warm_start : bool
        Start from the current ``head`` instead of zero (same minimiser: the problem is
        strictly convex in ``W`` for ``lam > 0``).

    Returns
    -------
    LBFGSResult
    """
    F64 = features.detach().to(torch.float64)
    W = torch.zeros(head.out_features, F64.shape[1], dtype=torch.float64, device=F64.device)
    b = torch.zeros(head.out_features, dtype=torch.float64, device=F64.device)
    if warm_start:
        W.copy_(head.weight.detach())
        b.copy_(head.bias.detach())
    W.requires_grad_(True)
    b.requires_grad_(True)
    codes = y.to(F64.device)

    def objective() -> torch.Tensor:
        return F.cross_entropy(F64 @ W.T + b, codes) + lam * (W**2).sum()

    with one_thread():
        result = lbfgs(
            objective, [W, b], max_iter=max_iter, tolerance_grad=1e-9, tolerance_change=1e-12
        )
    with torch.no_grad():
        head.weight.copy_(W.detach().to(head.weight))
        head.bias.copy_(b.detach().to(head.bias))
    return result


@contextmanager
def one_thread() -> Iterator[None]:
    """Run torch single-threaded inside the block (restored after).

    The classifier's L-BFGS is thousands of small operations; spread over threads each of
    them waits for the others, which on a shared, loaded CPU costs many times the work
    (measured in ``docs/measurements.md``; the result is the same).
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@dataclass
class ClassifierTraining:
    """Record of :func:`train_classifier`.

    Attributes
    ----------
    objective : list of float
        Mean training objective of each epoch.
    validation : list of tuple (float, float)
        ``(accuracy, mean cross-entropy)`` on the held-out part before training (entry 0)
        and after each epoch; empty without a held-out part.
    best_epoch : int
        Epoch of the returned parameters (0: the starting point); the last epoch without a
        held-out part.
    """

    objective: list[float] = field(default_factory=list)
    validation: list[tuple[float, float]] = field(default_factory=list)
    best_epoch: int = 0


def held_out_scores(
    network: nn.Module, head: nn.Linear, X: torch.Tensor, y: torch.Tensor, batch_size: int
) -> tuple[float, float]:
    """``(accuracy, mean cross-entropy)`` of ``head(network(X))`` against ``y``."""
    logits = map_in_batches(lambda b: head(network(b).flatten(1)), X, batch_size)
    accuracy = float((logits.argmax(1) == y).to(torch.float64).mean())
    return accuracy, float(F.cross_entropy(logits, y))


def _run_epochs(
    network: nn.Module,
    head: nn.Linear,
    epoch: Callable[[int], Step],
    log: ClassifierTraining,
    key: Callable[[float, float], Any],
    *,
    n_epochs: int,
    batch_size: int,
    validation: tuple[torch.Tensor, torch.Tensor] | None,
    n_iter_no_change: int | None,
    progress: Progress | None,
) -> ClassifierTraining:
    """Run ``epoch`` for at most ``n_epochs`` epochs in :func:`kernelkit.solvers.train_loop`
    and record the run in ``log``.

    With ``validation`` the starting point is evaluated first (entry 0 of
    ``log.validation``, selection key ``key(accuracy, cross_entropy)``), training stops after
    ``n_iter_no_change`` epochs without a better key and the best epoch's parameters of
    ``network`` and ``head`` are restored.
    """
    start = None
    if validation is not None:
        log.validation.append(held_out_scores(network, head, *validation, batch_size))
        start = Step(None, key=key(*log.validation[0]))
    run = train_loop(
        [network, head],
        epoch,
        max_iter=n_epochs,
        stop=None if validation is None or n_iter_no_change is None else patience(n_iter_no_change),
        start=start,
        keep_best=validation is not None,
        progress=progress,
        unit="epoch",
    )
    log.objective, log.best_epoch = run.history, run.best_iter
    return log


def train_classifier(
    network: nn.Module,
    head: nn.Linear,
    X: torch.Tensor,
    y: torch.Tensor,
    *,
    lam: float,
    n_epochs: int,
    lr: float,
    batch_size: int,
    generator: torch.Generator,
    validation: tuple[torch.Tensor, torch.Tensor] | None = None,
    n_iter_no_change: int | None = None,
    progress: Progress | None = None,
) -> ClassifierTraining:
    r"""Minibatch Adam on ``(1/n) sum_i CE(head(network(x_i)), y_i) + lam ||W||^2``.

    ``network`` maps a batch to features ``(b, d)`` (flattened inside); every trainable
    parameter of ``network`` (the anchors) and of ``head`` moves, from their current values.
    The learning rate decays as a cosine from ``lr`` to 0 over the epochs.  With
    ``validation = (X_val, y_val)`` the held-out accuracy is measured before training and
    after every epoch; training stops after ``n_iter_no_change`` epochs without a better
    one, and the parameters of the best epoch (highest accuracy, then lowest held-out
    cross-entropy; the earliest on ties) are restored, as the reference implementation
    keeps its best validation epoch.  The epochs run in :func:`kernelkit.solvers.train_loop`
    (non-finite stop, ``progress`` receives one line per epoch).

    Returns
    -------
    ClassifierTraining
    """
    if X.shape[0] != y.shape[0]:
        raise InputError(f"y: expected {X.shape[0]} labels, got {y.shape[0]}")
    params = [p for p in (*network.parameters(), *head.parameters()) if p.requires_grad]
    opt = first_order_optimizer("adam", params, lr=lr)
    n = X.shape[0]
    steps = n_epochs * math.ceil(n / batch_size)
    schedule = cosine_schedule(opt, steps)
    log = ClassifierTraining()

    def epoch(it: int) -> Step:
        perm = torch.randperm(n, generator=generator).to(X.device)
        total = 0.0
        for start in range(0, n, batch_size):
            idx = perm[start : start + batch_size]
            logits = head(network(X[idx]).flatten(1))
            loss = F.cross_entropy(logits, y[idx]) + lam * (head.weight**2).sum()
            descend(opt, loss, schedule)
            total += float(loss.detach()) * len(idx)
        if validation is None:
            return Step(total / n)
        acc, ce = held_out_scores(network, head, *validation, batch_size)
        log.validation.append((acc, ce))
        return Step(total / n, key=(-acc, ce), values={"accuracy": acc, "cross_entropy": ce})

    return _run_epochs(
        network,
        head,
        epoch,
        log,
        lambda acc, ce: (-acc, ce),
        n_epochs=n_epochs,
        batch_size=batch_size,
        validation=validation,
        n_iter_no_change=n_iter_no_change,
        progress=progress,
    )


def lam_cv_grid() -> tuple[float, ...]:
    """Ridge penalties tried by :func:`cross_validate_lam`: the decades ``1e-7 .. 1e-1`` of
    the one ``lam`` lattice (:func:`~kernelkit.models._ridge_path.lam_grid`; normalised
    features of norm about 1 need the larger ones, raw mean-pooled k-mer features the smaller
    ones)."""
    return tuple(float(v) for v in lam_grid(1e-7, 1e-1, per_decade=1))


def stratified_folds(y: torch.Tensor, n_folds: int, generator: torch.Generator) -> torch.Tensor:
    """Fold index (``0 .. n_folds - 1``) of every sample, each class dealt round-robin over
    the folds in a random order, so every fold holds ``floor`` or ``ceil`` of ``n_c / n_folds``
    members of class ``c``."""
    fold = torch.empty_like(y)
    for c in torch.unique(y):
        members = torch.nonzero(y == c).flatten()
        members = members[torch.randperm(len(members), generator=generator).to(y.device)]
        fold[members] = torch.arange(len(members), device=y.device) % n_folds
    return fold


def cv_folds(n_samples: int) -> int:
    """Folds of the internal cross-validation: 5 below 1000 samples, where 3 folds'
    accuracies are too coarse to rank the candidates, else 3."""
    return 5 if n_samples < 1000 else 3


def lam_cv_scores(
    features: torch.Tensor,
    y: torch.Tensor,
    n_classes: int,
    fold: torch.Tensor,
    *,
    column_sets: tuple[torch.Tensor | None, ...] = (None,),
    grid: tuple[float, ...] | None = None,
    max_iter: int = 50,
) -> list[tuple[tuple[float, float, int, float], tuple[float, int]]]:
    r"""Cross-validated scores of the multinomial logistic regression :func:`fit_linear_head`
    on fixed ``features``, for every column set and ``lam`` of ``grid`` (default
    :func:`lam_cv_grid`).

    ``fold`` holds the fold index of every sample (:func:`stratified_folds`); ``column_sets``
    are boolean masks of the feature columns to use (``None``: all).  In each fold the grid
    is followed from the largest ``lam`` down, each fit (at most ``max_iter`` L-BFGS
    iterations) warm-started at the previous solution.

    Returns
    -------
    list of ``(key, (lam, index))``
        ``key = (-correct, cross_entropy, index, lam)``: minus the held-out correct
        predictions and the summed held-out cross-entropy over the folds, then the column set's
        position in ``column_sets`` and ``lam``, so the smallest key is the best accuracy,
        ties going to the lower loss, then to the earlier column set and the smaller ``lam``.
    """
    order = sorted(lam_cv_grid() if grid is None else grid, reverse=True)
    n_folds = int(fold.max()) + 1 if len(fold) else 0
    scores = []
    for s, columns in enumerate(column_sets):
        F_s = features if columns is None else features[:, columns]
        accuracy = torch.zeros(len(order), dtype=torch.float64)
        entropy = torch.zeros(len(order), dtype=torch.float64)
        head = nn.Linear(F_s.shape[1], n_classes, dtype=torch.float64, device=F_s.device)
        for f in range(n_folds):
            train, test = fold != f, fold == f
            if not bool(test.any()) or not bool(train.any()):
                continue
            torch.nn.init.zeros_(head.weight)
            torch.nn.init.zeros_(head.bias)
            for i, lam in enumerate(order):
                fit_linear_head(
                    head, F_s[train], y[train], lam=lam, max_iter=max_iter, warm_start=True
                )
                with torch.no_grad():
                    logits = head(F_s[test].to(torch.float64))
                    accuracy[i] += float((logits.argmax(1) == y[test]).sum())
                    entropy[i] += float(F.cross_entropy(logits, y[test], reduction="sum"))
        scores += [((-float(accuracy[i]), float(entropy[i]), s, lam), (lam, s))
                   for i, lam in enumerate(order)]  # fmt: skip
    return scores


CVEntry = tuple[tuple[float, float, int, float], tuple[float, int]]


def _first_within_one_se(keys: list[tuple[float, ...]], n_samples: int) -> int:
    """Index of the first :func:`lam_cv_scores` key (in order of preference) whose error
    rate ``e = 1 - correct / n`` is within one binomial standard error ``sqrt(e (1 - e) /
    n)`` of the lowest (:func:`~kernelkit.models._logistic_path.one_standard_error`)."""
    error = np.array([1.0 + key[0] / n_samples for key in keys])
    return one_standard_error(error, np.sqrt(error * (1.0 - error) / n_samples))


def parsimonious_choice(scores: list[CVEntry], n_samples: int) -> CVEntry:
    r"""The one-standard-error rule over :func:`lam_cv_scores` entries of ``n_samples``
    held-out predictions: the first column set (the most parsimonious, e.g. the fewest
    pyramid levels) whose best cross-validated accuracy is within one binomial standard
    error of the best over all sets, then that set's smallest key.

    Hastie, Tibshirani & Friedman, *The Elements of Statistical Learning*, 2nd ed., section
    7.10: the simplest model within one standard error of the lowest estimated error.
    """
    best: dict[int, CVEntry] = {}
    for entry in scores:
        s = entry[1][1]
        best[s] = min(best[s], entry) if s in best else entry
    sets = sorted(best)
    return best[sets[_first_within_one_se([best[s][0] for s in sets], n_samples)]]


def beats_by_one_se(new: tuple[float, ...], old: tuple[float, ...], n_samples: int) -> bool:
    """Whether the :func:`lam_cv_scores` key ``new`` replaces the earlier (preferred) ``old``:
    its error rate is lower by more than one standard error of the difference of two
    binomial proportions, ``sqrt((e_1 (1 - e_1) + e_2 (1 - e_2)) / n)`` (two estimates, each
    with the noise of its own fold draw and fits; :func:`parsimonious_choice`)."""
    e_new, e_old = (1.0 + key[0] / n_samples for key in (new, old))
    return e_old - e_new > math.sqrt((e_new * (1 - e_new) + e_old * (1 - e_old)) / n_samples)


def cross_validate_lam(
    features: torch.Tensor,
    y: torch.Tensor,
    n_classes: int,
    *,
    generator: torch.Generator,
    column_sets: tuple[torch.Tensor | None, ...] = (None,),
    n_folds: int | None = None,
    grid: tuple[float, ...] | None = None,
    max_iter: int = 50,
    parsimony: bool = False,
) -> tuple[float, int]:
    r"""The ``lam`` of ``grid`` (default :func:`lam_cv_grid`) and the column set of best
    ``n_folds``-fold cross-validated accuracy of the multinomial logistic regression
    :func:`fit_linear_head` on fixed ``features`` (:func:`lam_cv_scores`).

    ``column_sets`` are boolean masks of the feature columns to use (``None``: all), e.g.
    the levels of a pyramid of position bins kept.  Folds are stratified
    (:func:`stratified_folds`), ``n_folds`` of them (default :func:`cv_folds`); ties in mean
    accuracy go to the lower mean held-out cross-entropy, then to the earlier column set and
    the smaller ``lam``; with ``parsimony`` the column set is the one-standard-error rule's
    (:func:`parsimonious_choice`).  This is the internal cross-validation of the classifier's
    regularisation that the string kernels' table gets from its inner grid search over ``C``
    (``docs/strings.md``; ``C = 1 / (2 n lam)``), on the CKN features.

    Returns
    -------
    lam : float
        The chosen penalty.
    index : int
        The position of the chosen column set in ``column_sets``.
    """
    fold = stratified_folds(y, cv_folds(len(y)) if n_folds is None else n_folds, generator)
    scores = lam_cv_scores(
        features, y, n_classes, fold, column_sets=column_sets, grid=grid, max_iter=max_iter
    )
    return (parsimonious_choice(scores, len(y)) if parsimony else min(scores))[1]


def project_anchors_(network: nn.Module) -> None:
    """Rescale the stored anchors of every layer of ``network`` to unit rows (in place).

    The layers normalise anchors on use, so the map is unchanged; the projection keeps the
    parameters on the sphere, as the reference code's ``normalize_()`` after each step.
    """
    with torch.no_grad():
        for module in network.modules():
            anchors = getattr(module, "anchors", None)
            if callable(anchors) and isinstance(getattr(module, "weight", None), nn.Parameter):
                module.weight.copy_(anchors())


def train_alternating(
    network: nn.Module,
    head: nn.Linear,
    X: torch.Tensor,
    y: torch.Tensor,
    *,
    lam: float,
    n_epochs: int,
    lr: float,
    batch_size: int,
    generator: torch.Generator,
    validation: tuple[torch.Tensor, torch.Tensor] | None = None,
    n_iter_no_change: int | None = None,
    progress: Progress | None = None,
) -> ClassifierTraining:
    r"""Alternating minimisation of ``(1/n) sum_i CE(W psi_Z(x_i) + b, y_i) + lam ||W||^2``.

    Chen, Jacob & Mairal (Bioinformatics 2019, section 2.4; reference code CKN-seq /
    RKN ``sup_train(alternating=True)``), Mairal (2016, §4): each epoch

    1. one pass of minibatch Adam over the anchors ``Z`` with ``(W, b)`` fixed, every step
       followed by the projection of the anchors on unit rows (:func:`project_anchors_`);
    2. ``(W, b)`` set to the minimiser of the (strictly convex) problem on the features of
       all of ``X`` with the new anchors (:func:`fit_linear_head`, L-BFGS, warm start).

    The learning rate is halved when the monitored loss (held-out cross-entropy, else the
    training objective) has not decreased for 5 epochs, down to ``lr / 100``
    (``ReduceLROnPlateau(factor=0.5, patience=5)`` of the reference code).  With
    ``validation`` the parameters of the epoch of lowest held-out cross-entropy (epoch 0: the
    starting point, whose ``head`` should already solve step 2) are restored and training
    stops after ``n_iter_no_change`` epochs without a lower one.  The epochs run in
    :func:`kernelkit.solvers.train_loop`; ``progress`` receives one line per epoch (objective,
    held-out accuracy and cross-entropy, learning rate).

    Returns
    -------
    ClassifierTraining
    """
    if X.shape[0] != y.shape[0]:
        raise InputError(f"y: expected {X.shape[0]} labels, got {y.shape[0]}")
    anchors = [p for p in network.parameters() if p.requires_grad]
    opt = first_order_optimizer("adam", anchors, lr=lr)
    plateau = plateau_schedule(opt, factor=0.5, patience=5, min_lr=lr / 100)
    head.requires_grad_(False)
    if n_epochs > 0:
        project_anchors_(network)
    log = ClassifierTraining()
    n = X.shape[0]

    def epoch(it: int) -> Step:
        perm = torch.randperm(n, generator=generator).to(X.device)
        for start in range(0, n, batch_size):
            idx = perm[start : start + batch_size]
            descend(opt, F.cross_entropy(head(network(X[idx]).flatten(1)), y[idx]))
            project_anchors_(network)
        features = map_in_batches(lambda b: network(b).flatten(1), X, batch_size)
        head.requires_grad_(True)
        fit_linear_head(head, features, y, lam=lam, warm_start=True)
        head.requires_grad_(False)
        with torch.no_grad():
            objective = float(F.cross_entropy(head(features), y) + lam * (head.weight**2).sum())
        values = {"lr": opt.param_groups[0]["lr"]}
        monitored = objective
        if validation is not None:
            acc, monitored = held_out_scores(network, head, *validation, batch_size)
            log.validation.append((acc, monitored))
            values = {"accuracy": acc, "cross_entropy": monitored, **values}
        plateau.step(monitored)
        return Step(objective, key=monitored, values=values)

    _run_epochs(
        network,
        head,
        epoch,
        log,
        lambda acc, ce: ce,
        n_epochs=n_epochs,
        batch_size=batch_size,
        validation=validation,
        n_iter_no_change=n_iter_no_change,
        progress=progress,
    )
    head.requires_grad_(True)
    return log


__all__ = [
    "ClassifierTraining",
    "cross_validate_lam",
    "cv_folds",
    "fit_image_anchors",
    "fit_linear_head",
    "held_out_scores",
    "lam_cv_grid",
    "lam_cv_scores",
    "map_in_batches",
    "project_anchors_",
    "sample_rows",
    "stratified_folds",
    "train_alternating",
    "train_classifier",
    "validation_split",
]
