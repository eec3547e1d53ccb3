r"""Parameter checks and the full-batch fit of
:class:`~kernelkit.estimators.autoencoder.KernelAutoencoder` (exact or landmark mode:
every Gram block of the training data held, L-BFGS / Adam on the whole objective or the
paper's Algorithm 1)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from kernelkit.estimators._base import result_dtype
from kernelkit.gram.nystrom import cholesky_basis
from kernelkit.kernels import Kernel, Linear
from kernelkit.kernels.base import Batch
from kernelkit.models import AutoencoderData, build_autoencoder, train, train_alternating
from kernelkit.utils.errors import InputError
from kernelkit.utils.seeding import RandomStateLike, as_seed
from kernelkit.utils.validation import check_int, check_positive

__all__ = ["FitSetup", "check_params", "fit_full_batch"]


def check_params(
    est: Any, lam: float | Sequence[float]
) -> tuple[list[int], list[float], list[Kernel | None]]:
    """``(dims, lam per layer, kernel per layer)`` of ``est`` with ``lam``; named errors."""
    dims = est.dims
    if isinstance(dims, (int, np.integer)):
        dims = (dims,)
    if not isinstance(dims, Sequence) or len(dims) == 0:
        raise InputError(f"dims: expected a non-empty sequence of positive ints, got {dims!r}")
    dims = [check_int(d, name="dims", minimum=1) for d in dims]
    L = len(dims) + 1
    lams = [lam] * L if not isinstance(lam, Sequence) else list(lam)
    if len(lams) != L:
        raise InputError(f"lam: expected a float or {L} values (one per layer), got {lam!r}")
    lams = [check_positive(v, name="lam", strict=False) for v in lams]
    kernels = est.kernels
    if kernels is None or isinstance(kernels, Kernel):
        kerns: list[Kernel | None] = [kernels] * L
    else:
        kerns = list(kernels)
        if len(kerns) != L:
            raise InputError(
                f"kernels: expected a Kernel, None or {L} entries (one per layer), got {len(kerns)}"
            )
    for k in kerns:
        if k is not None and not isinstance(k, Kernel):
            raise InputError(f"kernels: expected kernelkit Kernels or None, got {k!r}")
    last = kerns[-1]
    if est.closed_form and lams[-1] == 0 and not isinstance(last, Linear):
        raise InputError(
            "lam: the last layer's lam must be > 0 with a closed-form last layer and a "
            f"non-linear kernel ({type(last).__name__ if last else 'default Gaussian'}); "
            "lam = 0 is allowed with a Linear() last kernel (ridgeless projection)"
        )
    if est.code_layer is not None:
        if est.code_layer >= len(dims):
            raise InputError(
                f"code_layer: expected an index in dims (< {len(dims)}), got {est.code_layer}"
            )
    return dims, lams, kerns


@dataclass
class FitSetup:
    """What both fits (full batch, minibatch) start from.

    Attributes
    ----------
    Xb, ref : Batch
        Prepared training data and the supports (all of it, or the landmarks).
    first : Kernel
        The first layer's kernel on the input.
    dims, kerns, lams : lists
        Layer widths, kernels (``None``: median heuristic) and ``lam`` per layer.
    random_state : int, generator or None
        Seed of the initialisation.
    """

    Xb: Batch
    ref: Batch
    first: Kernel
    dims: list[int]
    kerns: list[Kernel | None]
    lams: list[float]
    random_state: RandomStateLike


def fit_full_batch(est: Any, setup: FitSetup) -> tuple[Any, Any, AutoencoderData]:
    """Model, training result and data of the full-batch fit (exact or landmark mode)."""
    Xb, ref, first = setup.Xb, setup.ref, setup.first
    dims, kerns, lams, random_state = setup.dims, setup.kerns, setup.lams, setup.random_state
    dtype = result_dtype(Xb)
    idx = est.landmark_indices_
    with torch.no_grad():
        K1 = est._gram(first, Xb, None if idx is None else ref, dtype)
        K1_support = None if idx is None else est._gram(first, ref, None, dtype)
        targets = None
        if est.input_kernel_ is None:
            targets = Xb.to(dtype)
            B, trace = targets, float((targets * targets).sum())
            est.ref_basis_ = None
        else:
            base = est.input_kernel_
            trace = float(base.block_diag(Xb).sum())
            est.ref_basis_ = cholesky_basis(est._gram(base, ref, None, dtype))
            if idx is None:
                B = est.ref_basis_.factor
            else:
                B = est.ref_basis_.features(est._gram(base, Xb, ref, dtype))
    data = AutoencoderData(K1, B, trace, K1_support, targets)
    model = build_autoencoder(
        data,
        dims,
        [None, *kerns[1:]],
        lams,
        operators=est.operators,
        init=est.init,
        closed_form=est.closed_form,
        random_state=as_seed(random_state),
        memory_budget=est.memory_budget,
    )
    options = {"max_iter": est.max_iter, "lr": est.lr, "tol": est.tol}
    if est.algorithm == "alternating":
        res = train_alternating(model, data, progress=est._reporter(), **options)
    else:
        res = train(model, data, optimizer=est.optimizer, progress=est._reporter(), **options)
    return model, res, data
