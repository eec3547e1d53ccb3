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
  anchors and the classifier fitted on their fixed features
  (:func:`~kernelkit.models._ckn_head.fit_linear_head`), the
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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from kernelkit.models._ckn import CKN, extract_patches
from kernelkit.models._ckn_head import fit_linear_head
from kernelkit.models._spherical_kmeans import spherical_kmeans
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
    fn: Callable[[torch.Tensor], torch.Tensor],
    X: torch.Tensor,
    batch_size: int,
    lengths: torch.Tensor | None = None,
) -> torch.Tensor:
    """``fn`` applied to consecutive batches of ``X`` (no gradient), concatenated.

    With ``lengths`` (sequences ``(n, A, T)`` padded with zero columns at the end, ``fn``
    blind to that padding): rows in order of length, each batch cut after its longest
    row, results in the order of ``X``, so a batch of short sequences does not pay for
    the longest one.
    """
    with torch.no_grad():
        if lengths is None:
            return torch.cat([fn(X[i : i + batch_size]) for i in range(0, len(X), batch_size)])
        order = torch.argsort(lengths.cpu(), stable=True)
        parts = []
        for i in range(0, len(X), batch_size):
            rows = order[i : i + batch_size].to(X.device)
            parts.append(fn(X[rows, :, : max(int(lengths[rows].max()), 1)]))
        out = torch.cat(parts)
        return torch.empty_like(out).index_copy_(0, order.to(out.device), out)


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
    "fit_image_anchors",
    "held_out_scores",
    "map_in_batches",
    "project_anchors_",
    "sample_rows",
    "train_alternating",
    "train_classifier",
    "validation_split",
]
