r"""Continuous kernel hyper-parameters as torch tensors, for gradient-based model selection.

kernelkit kernels keep their hyper-parameters as plain attributes and compute their blocks
with torch operations, so a copy of a kernel whose ``sigma`` (or ``scale``, ``value``,
``offset``, a decay ``lam`` ...) is a tensor requiring a gradient gives a Gram matrix inside
the autograd graph.  Criteria of model selection (the LOO / GCV error of
:mod:`kernelkit.models._ridge_path`, the Gaussian-process marginal likelihood of
:mod:`kernelkit.models._gp`) are then differentiated with respect to ``log theta`` for any input
kind whose kernel computes with tensors; a parameter whose block does not depend on it through
autograd (a kernel that converts it to a Python number) is reported by
:func:`differentiable_params` and left out.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from typing import Any

import torch

from kernelkit.kernels import Kernel
from kernelkit.kernels._base import Batch
from kernelkit.utils._errors import InputError

DISCRETE_NAMES = frozenset(
    {"nu", "s", "degree", "exponent", "k", "m", "order", "shift", "radius", "n_bits"}
)
"""Parameter names that select a member of a kernel family (not tuned by gradient)."""

PROBE_POINTS = 16
"""Rows of the training batch on which :func:`differentiable_params` probes the gradient."""

__all__ = [
    "continuous_params",
    "differentiable_params",
    "kernel_with",
    "positive_float_params",
]


def positive_float_params(kernel: Kernel) -> dict[str, float]:
    """Nested ``name__sub`` parameters of ``kernel`` that are finite positive floats."""
    out = {}
    for name, value in kernel.get_params(deep=True).items():
        leaf = name.rsplit("__", 1)[-1]
        if isinstance(value, bool) or not isinstance(value, float) or leaf in DISCRETE_NAMES:
            continue
        if math.isfinite(value) and value > 0:
            out[name] = value
    return out


def continuous_params(kernel: Kernel, names: str | Sequence[str]) -> list[str]:
    """The parameter names of ``kernel_params``: ``"auto"`` (every positive float parameter
    not in :data:`DISCRETE_NAMES`) or a list of nested names, each checked."""
    available = positive_float_params(kernel)
    if isinstance(names, str):
        if names != "auto":
            raise InputError(f"kernel_params: expected 'auto' or a list of names, got {names!r}")
        return list(available)
    chosen = list(names)
    for name in chosen:
        if name not in available:
            raise InputError(
                f"kernel_params: {name!r} is not a positive float parameter of "
                f"{kernel!r}; tunable: {sorted(available)}"
            )
    return chosen


def kernel_with(kernel: Kernel, values: dict[str, Any]) -> Kernel:
    """A deep copy of ``kernel`` with nested parameters replaced by ``values`` (tensors allowed,
    no validation: for evaluation inside autograd only)."""
    out = copy.deepcopy(kernel)
    for name, value in values.items():
        *path, leaf = name.split("__")
        owner = out
        for part in path:
            owner = getattr(owner, part)
        setattr(owner, leaf, value)
    return out


def differentiable_params(kernel: Kernel, X: Batch, names: Sequence[str]) -> list[str]:
    """The subset of ``names`` through which ``kernel.block`` carries a gradient on ``X``."""
    if not names:
        return []
    params = kernel.get_params(deep=True)
    probe = X[: min(len(X), PROBE_POINTS)]
    tensors = {
        n: torch.tensor(float(params[n]), dtype=torch.float64, requires_grad=True) for n in names
    }
    try:
        with torch.enable_grad():
            K = kernel_with(kernel, tensors).block(probe, probe)
            grads = (
                torch.autograd.grad(K.sum(), list(tensors.values()), allow_unused=True)
                if K.requires_grad
                else [None] * len(tensors)
            )
    except (TypeError, RuntimeError):
        return []
    return [n for n, g in zip(tensors, grads, strict=True) if g is not None]
