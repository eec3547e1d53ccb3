"""Dual RRM (section 3, appendix D) on the semi-norm of a fitted ``InvariantEmbedding``."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from kernelkit.models._sip_dual import DualRRMResult, dual_rrm
from kernelkit.utils._errors import InputError


def fit_dual_rrm(
    embedding: Any,
    X: Any,
    y: Any,
    *,
    lam: float = 1e-3,
    loss: str = "logistic",
    max_iter: int = 50,
    tol: float = 1e-6,
) -> DualRRMResult:
    """Train ``f* = sum_j c_j G*_{x_j}`` on ``(X, y)`` with the semi-norm of ``embedding``.

    ``embedding`` is a fitted :class:`~kernelkit.InvariantEmbedding` with input invariances
    and ``aggregate="sum"`` or ``aggregate="max"`` with the ``"pairs"`` or ``"sum_of_max"``
    reading; its Nyström basis, representers and ``strength`` define ``||f||_B``.  See
    :func:`kernelkit.models._sip_dual.dual_rrm` (objective ``(1/n) sum loss + lam ||f||_B^2``,
    ``y`` in ``{-1, +1}`` for the classification losses).  Predict with
    ``embedding.nystrom_features(X_new) @ result.iota``.
    """
    norm = getattr(embedding, "seminorm_", None)
    if norm is None or norm.joint or norm.blocks:
        raise InputError(
            "embedding: expected a fitted InvariantEmbedding with input invariances and "
            "aggregate='sum' or the 'pairs' / 'sum_of_max' readings of aggregate='max'"
        )
    k_train = torch.as_tensor(np.asarray(embedding.nystrom_features(X)), dtype=norm.dense.dtype)
    m = norm.dense.shape[0]
    if norm.aggregate == "sum":
        groups, one_sided = torch.arange(m), torch.zeros(m, dtype=torch.bool)
    else:
        groups, one_sided = norm.groups, norm.one_sided
    target = torch.as_tensor(np.asarray(y), dtype=k_train.dtype)
    return dual_rrm(
        k_train,
        target,
        norm.dense,
        groups=groups,
        one_sided=one_sided,
        strength=float(embedding.strength_),
        lam=lam,
        loss=loss,
        max_iter=max_iter,
        tol=tol,
    )
