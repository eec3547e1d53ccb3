"""Parameters and input checks of the GCKN estimators (:mod:`kernelkit.estimators._gckn`):
their constraints and docstring sections, graph or array input, the per-layer ``n_filters``
/ ``max_length``, the candidates of ``sigma`` and ``max_length`` that the classifier's
internal cross-validation compares, and numeric sequences as chain graphs."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
import scipy.sparse as sp
import torch

from kernelkit.data import GraphBatch
from kernelkit.estimators._ckn_base import COMMON_CONSTRAINTS
from kernelkit.models._gckn import AGGREGATIONS, GRAPH_POOLINGS
from kernelkit.utils._constraints import Interval, StrOptions
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


def _layer_ints(value: Any, name: str, minimum: int) -> tuple[int, ...]:
    """``value`` (an int, or one per layer) as a tuple of ints ``>= minimum``."""
    items = (value,) if isinstance(value, Integral) else tuple(value)
    if not items or not all(isinstance(v, Integral) and int(v) >= minimum for v in items):
        raise InputError(
            f"{name}: expected an integer >= {minimum} or a sequence of them (one per layer), "
            f"got {value!r}"
        )
    return tuple(int(v) for v in items)


def check_filters(value: Any) -> tuple[int, ...]:
    """``n_filters``: anchors per layer, each ``>= 1``."""
    return _layer_ints(value, "n_filters", 1)


def check_lengths(value: Any) -> tuple[int, ...]:
    """``max_length``: path lengths per layer, each ``>= 0``."""
    return _layer_ints(value, "max_length", 0)


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


def top_sigma_candidates(value: Any) -> tuple[float | None, ...]:
    """``top_sigma`` as a tuple of candidates (``None``: no graph-level layer)."""
    items = (value,) if value is None or isinstance(value, Real) else tuple(value)
    if not items or not all(v is None or (isinstance(v, Real) and v > 0) for v in items):
        raise InputError(
            f"top_sigma: expected None, a float > 0 or a sequence of them (candidates), got "
            f"{value!r}"
        )
    return tuple(None if v is None else float(v) for v in items)


def chain_batch(x: torch.Tensor) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR of ``n`` path graphs of ``T`` nodes (``x`` has shape ``(n, T, A)``)."""
    n, t = int(x.shape[0]), int(x.shape[1])
    node_ptr = np.arange(n + 1, dtype=np.int64) * t
    starts = (np.arange(n)[:, None] * t + np.arange(t - 1)[None, :]).ravel()
    batch = GraphBatch.from_arrays(np.full(n, t), starts, starts + 1)
    return node_ptr, batch.adj_ptr, batch.adj_idx


GCKN_CONSTRAINTS: dict[str, list[Any]] = {
    "n_filters": [Interval(Integral, 1, None, closed="left"), tuple, list],
    "max_length": [Interval(Integral, 0, None, closed="left"), tuple, list],
    "aggregation": [StrOptions(set(AGGREGATIONS))],
    "pooling": [StrOptions(set(GRAPH_POOLINGS))],
    "normalize": ["boolean"],
    "standardize": ["boolean"],
    "node_label": [str, None],
    "node_attribute": [str, None],
    "n_paths": [Interval(Integral, 1, None, closed="left")],
    **COMMON_CONSTRAINTS,
}

GCKN_PARAMS_DOC = """
    n_filters : int or sequence of int, default {n_filters}
        Anchors ``q`` per path length of each layer; a sequence gives one layer per entry
        (one layer: GCKN-path; more: GCKN-subtree).  A layer outputs ``(k + 1) q`` node
        features (path lengths ``0 .. k``).
    max_length : int or sequence of int{grid_type}, default {max_length}
        Longest path ``k`` (edges; a path of ``k`` edges has ``k + 1`` nodes), for every
        layer or one per layer.{length_grid}
    aggregation : {{"sum", "mean"}}, default "{aggregation}"
        Sum (the relaxed path kernel) or mean of the path maps at their start node.
    pooling : {{"sum", "mean"}}, default "{pooling}"
        Sum or mean of the node features over a graph's nodes.
    normalize : bool{auto}, default {normalize}
        Scale each layer's pooled features to unit norm (the normalised kernel of each
        layer).{normalize_auto}
    standardize : bool{auto}, default {standardize}
        Standardise every output feature by its mean and standard deviation over the training
        graphs (the ``StandardScaler`` of the reference implementation before its classifier;
        fixed after ``fit``, also during supervised training).
    node_label : str or None, default "label"
        Node attribute of the discrete label (one-hot encoded), used when the training
        graphs carry it; ``None`` ignores labels.
    node_attribute : str or None, default "attributes"
        Node attribute of the continuous features, used when the training graphs carry it.
    kappa : {{"exp", "inverse_polynomial", "polynomial", "vovk"}}, default "exp"
        Per-position dot-product kernel.
    sigma : float{sigma_type}, default {sigma}
        Bandwidth of the Gaussian on the sphere of the path features: ``kappa(u) =
        exp((u - 1) / ((l + 1) sigma^2))`` per position of a path of ``l`` edges, so that the
        path kernel is ``exp(-||a(p) - a(p')||^2 / (2 (l + 1) sigma^2))`` on unit node
        features (the reference implementation's convention).{sigma_grid}
    shift : float, default 0.01
        ``epsilon`` in ``(kappa_0(Z, Z)^{{1/2}} + epsilon I)^{{-1}}`` (course digest, errata 12);
        0 is the exact Nyström map.
    n_paths : int, default 10000
        Path features sampled (per layer and length) for the spherical k-means.
    kmeans_iter : int, default 10
        Lloyd iterations.
    batch_size : int, default 128
        Graphs per forward batch.
    random_state : None, int, RandomState or Generator
        Seed of the path sampling, the k-means seeds and the minibatches."""

FEATURE_DEFAULTS = {
    "n_filters": "(32, 32)",
    "max_length": "(2, 0)",
    "aggregation": "sum",
    "pooling": "sum",
    "normalize": "True",
    "normalize_auto": "",
    "standardize": "False",
    "auto": "",
    "sigma": "1.5",
    "sigma_type": "",
    "sigma_grid": "",
    "grid_type": "",
    "length_grid": "",
}

CLASSIFIER_DEFAULTS = {
    **FEATURE_DEFAULTS,
    "auto": ' or "auto"',
    "normalize_auto": """  ``"auto"`` (either parameter): chosen with ``lam`` and the number of
        layers by the internal cross-validation of ``lam="auto"`` on the training graphs
        (candidates in the order normalised / plain, then not standardised / standardised;
        ties go to the earlier one; four times the candidates of the fixed choice); with a
        fixed ``lam``, ``"auto"`` means normalised and not standardised.  The defaults are
        the normalised kernel of the graph-kernel protocol and no rescaling of the features
        (``docs/graphs.md``).""",
    "sigma": "(1.5, 1.0, 0.5)",
    "sigma_type": " or sequence of float",
    "sigma_grid": """  A sequence: candidates, one network each (anchors from the same
        seed), chosen with ``lam`` and the number of layers by the internal cross-validation
        of ``lam="auto"`` (Chen, Jacob & Mairal 2020 choose ``sigma`` and ``k`` by inner
        cross-validation; the default: the reference implementation's 1.5 and two sharper
        bandwidths, closer to exact path matching on one-hot labels); with a fixed ``lam``,
        the first.""",
    "grid_type": " or sequence of them",
    "length_grid": """  A sequence of such sequences, e.g. ``((2, 0), (3, 0))``: candidates
        crossed with those of ``sigma`` (``sigma`` outer) and chosen with them.""",
}


__all__ = [
    "CLASSIFIER_DEFAULTS",
    "FEATURE_DEFAULTS",
    "GCKN_CONSTRAINTS",
    "GCKN_PARAMS_DOC",
    "chain_batch",
    "check_filters",
    "check_lengths",
    "is_graph_input",
    "length_candidates",
    "sigma_candidates",
    "top_sigma_candidates",
]
