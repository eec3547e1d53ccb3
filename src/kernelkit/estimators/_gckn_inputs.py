"""Input checks of the GCKN estimators (:mod:`kernelkit.estimators._gckn`): graph or array
input, the per-layer ``n_filters`` / ``max_length``, the candidates of ``sigma`` and
``max_length`` that the classifier's internal cross-validation compares, and numeric
sequences as chain graphs."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
import scipy.sparse as sp
import torch

from kernelkit.data import GraphBatch
from kernelkit.utils._errors import InputError


def is_graph_input(X: Any) -> bool:
    """Whether ``X`` is a :class:`GraphBatch` or a list/tuple of networkx graphs."""
    if isinstance(X, GraphBatch):
        return True
    if isinstance(X, torch.Tensor | np.ndarray) or sp.issparse(X):
        return False
    if isinstance(X, list | tuple) and len(X) > 0:
        return type(X[0]).__module__.startswith("networkx")
    return False


def check_filters(value: Any) -> tuple[int, ...]:
    items = (value,) if isinstance(value, Integral) else tuple(value)
    if not items or not all(isinstance(v, Integral) and int(v) >= 1 for v in items):
        raise InputError(
            f"n_filters: expected an integer >= 1 or a sequence of them (one per layer), "
            f"got {value!r}"
        )
    return tuple(int(v) for v in items)


def check_lengths(value: Any) -> tuple[int, ...]:
    items = (value,) if isinstance(value, Integral) else tuple(value)
    if not items or not all(isinstance(v, Integral) and int(v) >= 0 for v in items):
        raise InputError(
            f"max_length: expected an integer >= 0 or a sequence of them (one per layer), "
            f"got {value!r}"
        )
    return tuple(int(v) for v in items)


def length_candidates(value: Any) -> tuple[Any, ...]:
    """``max_length`` as a tuple of candidates (a sequence of sequences: one per candidate)."""
    items = (value,) if isinstance(value, Integral) else tuple(value)
    if items and all(isinstance(v, list | tuple) for v in items):
        for v in items:
            check_lengths(v)
        return items
    check_lengths(value)
    return (value,)


def sigma_candidates(value: Any) -> tuple[float, ...]:
    """``sigma`` as a tuple of candidates."""
    items = (value,) if isinstance(value, Real) else tuple(value)
    if not items or not all(isinstance(v, Real) and v > 0 for v in items):
        raise InputError(
            f"sigma: expected a float > 0 or a sequence of them (candidates), got {value!r}"
        )
    return tuple(float(v) for v in items)


def chain_batch(x: torch.Tensor) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR of ``n`` path graphs of ``T`` nodes (``x`` has shape ``(n, T, A)``)."""
    n, t = int(x.shape[0]), int(x.shape[1])
    node_ptr = np.arange(n + 1, dtype=np.int64) * t
    starts = (np.arange(n)[:, None] * t + np.arange(t - 1)[None, :]).ravel()
    batch = GraphBatch.from_arrays(np.full(n, t), starts, starts + 1)
    return node_ptr, batch.adj_ptr, batch.adj_idx


__all__ = [
    "chain_batch",
    "check_filters",
    "check_lengths",
    "is_graph_input",
    "length_candidates",
    "sigma_candidates",
]
