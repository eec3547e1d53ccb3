"""Fitting one kernel on one view of the data, for estimators with several kernels.

:class:`~kernelkit.estimators.SimpleMKL` (several kernels over the same inputs) and
:class:`~kernelkit.estimators.KernelCCA` (one kernel per view) resolve each kernel parameter
with :func:`~kernelkit.kernels._resolve.resolve_kernel` and prepare the data through it,
as :class:`~kernelkit.estimators._base.KernelEstimatorMixin` does for one kernel.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from sklearn.base import clone
from sklearn.utils.validation import check_array

from kernelkit.estimators._base import ARRAY_KINDS, _readonly_ok, _reraise
from kernelkit.kernels import Kernel, Linear, PrecomputedBatch
from kernelkit.kernels._base import Batch
from kernelkit.kernels._resolve import VectorKernelRecipe
from kernelkit.utils._errors import InputError
from kernelkit.utils._validation import owned


def fit_view(estimator: Any, spec: Kernel | VectorKernelRecipe, X: Any, *, reset: bool) -> tuple:
    """``(kernel, batch)``: the fitted kernel of ``spec`` and ``X`` prepared by it.

    ``X`` is validated by the estimator's ``_prepare`` (``reset`` sets ``n_features_in_``);
    a :class:`VectorKernelRecipe` is built on the validated training vectors.
    """
    if isinstance(spec, VectorKernelRecipe):
        batch = owned(estimator._prepare(Linear(), X, reset=reset), X)
        return spec.build(batch), batch
    kernel = clone(spec)
    return kernel, owned(estimator._prepare(kernel, X, reset=reset), X)


def second_view(
    kernel: Kernel | VectorKernelRecipe, Y: Any, n_features: int | None, *, reset: bool
) -> tuple:
    """``(kernel, batch, n_features)`` of a second view ``Y`` (1-D arrays are one feature).

    Array views are validated as scikit-learn input; ``n_features`` (from training) is
    checked when given; ``reset``: ``Y`` is the training view.
    """
    if Y is None:
        raise InputError("Y: expected the second view, got None")
    source = Y
    kind = "vector" if isinstance(kernel, VectorKernelRecipe) else kernel.input_kind
    if kind in ARRAY_KINDS and not isinstance(Y, PrecomputedBatch):
        if isinstance(Y, torch.Tensor):
            Y = Y[:, None] if Y.ndim == 1 else Y
        else:
            try:
                Y = check_array(Y, ensure_2d=False, dtype=(np.float64, np.float32), input_name="Y")
            except ValueError as exc:
                raise _reraise(exc, "Y") from exc
            Y = Y[:, None] if Y.ndim == 1 else Y
        if Y.ndim != 2:
            raise InputError(f"Y: expected a 1-D or 2-D array, got shape {tuple(Y.shape)}")
        if n_features is not None and Y.shape[1] != n_features:
            raise InputError(f"Y: expected {n_features} features (as in fit), got {Y.shape[1]}")
        n_features = int(Y.shape[1])
    if isinstance(kernel, VectorKernelRecipe):
        with _readonly_ok():
            base = Linear().prepare(Y)
        base = owned(base, source) if reset else base
        return kernel.build(base), base, n_features
    with _readonly_ok():
        batch: Batch = kernel.prepare(Y, reference=reset)
    return kernel, owned(batch, source) if reset else batch, n_features


__all__ = ["fit_view", "second_view"]
