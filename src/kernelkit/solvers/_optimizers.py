"""First-order optimisers of the stochastic training loops (Adam, SGD, cosine schedule).

The one home of ``torch.optim`` in kernelkit: the minibatch autoencoder, the alternating
autoencoder steps, the CKN's supervised training and the MMD generative model build their
optimisers and learning-rate schedules here and step them in
:func:`kernelkit.solvers._training.descend` (full-batch training uses
:func:`kernelkit.solvers.lbfgs`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import torch

from kernelkit.utils._errors import InputError


def first_order_optimizer(
    kind: str, params: Iterable[Any], *, lr: float, betas: tuple[float, float] = (0.9, 0.999)
) -> torch.optim.Optimizer:
    """``torch.optim.Adam(params, lr, betas)`` (``kind="adam"``, Kingma and Ba 2015) or plain
    ``torch.optim.SGD(params, lr)`` (``kind="sgd"``)."""
    if kind == "adam":
        return torch.optim.Adam(params, lr=lr, betas=betas)
    if kind == "sgd":
        return torch.optim.SGD(params, lr=lr)
    raise InputError(f"optimizer: expected 'adam' or 'sgd', got {kind!r}")


def cosine_schedule(optimizer: torch.optim.Optimizer, steps: int) -> Any:
    """Learning rate ``lr * (1 + cos(pi min(t, steps) / steps)) / 2`` at step ``t`` (cosine
    annealing to 0 over ``steps`` steps, Loshchilov and Hutter 2017)."""
    return torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda t: 0.5 * (1.0 + math.cos(math.pi * min(t, steps) / max(steps, 1)))
    )


def plateau_schedule(
    optimizer: torch.optim.Optimizer, *, factor: float, patience: int, min_lr: float
) -> Any:
    """Multiply the learning rate by ``factor`` when the monitored loss passed to
    ``step(loss)`` has not decreased for ``patience`` steps, down to ``min_lr``
    (``torch.optim.lr_scheduler.ReduceLROnPlateau``)."""
    return torch.optim.lr_scheduler.ReduceLROnPlateau(
        optimizer, factor=factor, patience=patience, min_lr=min_lr
    )


__all__ = ["cosine_schedule", "first_order_optimizer", "plateau_schedule"]
