r"""The minibatch fit of :class:`~kernelkit.estimators._autoencoder.KernelAutoencoder`.

``KernelAutoencoder(landmarks=m, optimizer="adam", batch_size=b)`` trains the landmark KAE /
K2AE by :func:`kernelkit.models._autoencoder_minibatch.train_minibatch` (Adam on the inner
layers over shuffled minibatches, the last layer in closed form after every epoch), reading
the first-layer Gram rows and the output coordinates of each minibatch from the Gram engine
against the fixed landmarks: nothing ``n x m`` is held, an epoch costs ``O(n m (p + r))``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from kernelkit.estimators._autoencoder_setup import FitSetup
from kernelkit.estimators._base import progress_of, result_dtype
from kernelkit.gram._centres import take
from kernelkit.gram._nystrom import cholesky_basis
from kernelkit.models import build_autoencoder
from kernelkit.models._autoencoder import AutoencoderData
from kernelkit.models._autoencoder_minibatch import (
    MinibatchResult,
    StreamingData,
    train_minibatch,
)
from kernelkit.utils._errors import InputError
from kernelkit.utils._seeding import as_seed

__all__ = ["check_minibatch", "fit_minibatch"]


def check_minibatch(est: Any) -> None:
    """Named errors for settings the minibatch fit does not support."""
    if est.optimizer != "adam":
        raise InputError(
            f"batch_size: minibatch training runs Adam; expected optimizer='adam' with "
            f"batch_size={est.batch_size}, got optimizer={est.optimizer!r}"
        )
    if est.algorithm != "joint":
        raise InputError(
            f"batch_size: minibatch training alternates Adam epochs and closed-form last "
            f"layers by itself; expected algorithm='joint', got {est.algorithm!r}"
        )
    if not est.closed_form:
        raise InputError("batch_size: minibatch training needs closed_form=True, got False")


def fit_minibatch(est: Any, setup: FitSetup) -> tuple[Any, MinibatchResult]:
    """Build the landmark autoencoder on the landmarks' Grams and train it by minibatches.

    The initialisation is that of the full-batch landmark fit (:func:`build_autoencoder`
    on the landmark Grams), except that ``init="random"`` scales the coefficients to
    unit-RMS codes of the landmarks instead of all points.  Sets ``est.ref_basis_``.
    """
    check_minibatch(est)
    Xb, ref, first = setup.Xb, setup.ref, setup.first
    dims, kerns, lams, random_state = setup.dims, setup.kerns, setup.lams, setup.random_state
    if est.landmark_indices_ is None:
        raise InputError(
            f"batch_size: minibatch training needs n_centers <= n_samples ({len(Xb)}), got "
            f"n_centers={est.n_centers if est.landmarks is None else est.landmarks}"
        )
    dtype = result_dtype(Xb)
    base = est.input_kernel_
    with torch.no_grad():
        K1_support = est._gram(first, ref, None, dtype)
        if base is None:
            est.ref_basis_ = None
            trace = float((Xb.to(torch.float64) ** 2).sum())
            B_support = ref.to(dtype)
        else:
            est.ref_basis_ = cholesky_basis(est._gram(base, ref, None, dtype))
            trace = float(base.block_diag(Xb).to(torch.float64).sum())
            B_support = est.ref_basis_.factor

    def rows(index: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        block = take(Xb, index)
        K1 = est._gram(first, block, ref, dtype)
        if base is None:
            return K1, block.to(dtype)
        return K1, est.ref_basis_.features(est._gram(base, block, ref, dtype))

    model = build_autoencoder(
        AutoencoderData(K1_support, B_support, trace, K1_support),
        dims,
        [None, *kerns[1:]],
        lams,
        operators=est.operators,
        init=est.init,
        random_state=as_seed(random_state),
        memory_budget=est.memory_budget,
    )
    res = train_minibatch(
        model,
        StreamingData(K1_support, rows, len(Xb), trace),
        batch_size=est.batch_size,
        max_iter=est.max_iter,
        lr=est.lr,
        tol=est.tol,
        n_iter_no_change=est.n_iter_no_change,
        random_state=as_seed(random_state),
        tile=est._tile_rows(len(ref)),
        progress=progress_of(est, est.max_iter, unit="epoch"),
    )
    return model, res
