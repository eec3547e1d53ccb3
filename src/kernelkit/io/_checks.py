"""Structural checks of loaded objects whose arrays reach compiled code without bounds checks.

A model file can be well formed (valid JSON, matching checksums) and still hostile: a
``KernelSVC`` whose libsvm arrays disagree in size, or a graph batch whose adjacency indices
point past its nodes, would make libsvm or SciPy's compiled graph routines read out of
bounds and crash the interpreter at ``predict`` time (checked: an out-of-range
``SVC.support_`` segfaults).  NumPy and torch indexing is bounds-checked, so only the types
below need a check.  Each check returns ``None`` or the reason for refusing the file.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _array(value: Any, ndim: int, kinds: str = "iu") -> bool:
    return isinstance(value, np.ndarray) and value.ndim == ndim and value.dtype.kind in kinds


def _pointers(ptr: Any, end: int) -> bool:
    """``ptr`` is a row-pointer array: integer, 1-D, from 0, non-decreasing, ending at ``end``."""
    return (
        _array(ptr, 1)
        and len(ptr) >= 1
        and ptr[0] == 0
        and ptr[-1] == end
        and bool((np.diff(ptr) >= 0).all())
    )


def _indices(idx: Any, bound: int) -> bool:
    return _array(idx, 1) and (len(idx) == 0 or (int(idx.min()) >= 0 and int(idx.max()) < bound))


def _labels(labels: Any, n: int) -> bool:
    return labels is None or (_array(labels, 1) and len(labels) == n)


def check_svc(svc: Any) -> str | None:
    """scikit-learn ``SVC``: the libsvm model arrays agree in size and index the training set."""
    try:
        n_class = len(svc.classes_)
        n_pairs = n_class * (n_class - 1) // 2
        n_train, n_features = (int(v) for v in svc.shape_fit_)
        n_sv = len(svc.support_)
    except (AttributeError, TypeError, ValueError):
        return None if not hasattr(svc, "support_") else "SVC: malformed fitted attributes"
    precomputed = svc.kernel == "precomputed"
    sv_shape = (0, 0) if precomputed else (n_sv, n_features)
    ok = (
        _indices(svc.support_, n_train)
        and _array(svc._n_support, 1)
        and svc._n_support.shape == (n_class,)
        and bool((svc._n_support >= 0).all())
        and int(svc._n_support.sum()) == n_sv
        and _array(svc._dual_coef_, 2, "f")
        and svc._dual_coef_.shape == (max(n_class - 1, 1), n_sv)
        and _array(svc._intercept_, 1, "f")
        and svc._intercept_.shape == (n_pairs,)
        and all(_array(p, 1, "f") and len(p) in (0, n_pairs) for p in (svc._probA, svc._probB))
        and _array(svc.support_vectors_, 2, "f")
        and svc.support_vectors_.shape[0] in (0, n_sv)
        and (svc.support_vectors_.shape == sv_shape or precomputed)
        and _array(svc.class_weight_, 1, "f")
        and svc.class_weight_.shape == (n_class,)
    )
    return None if ok else "SVC: the libsvm arrays do not agree in size or index past the data"


def check_graph_batch(batch: Any) -> str | None:
    """``GraphBatch``: CSR pointers and indices consistent, edges within their graphs."""
    n_nodes = int(batch.node_ptr[-1]) if _array(batch.node_ptr, 1) and len(batch.node_ptr) else -1
    ok = (
        _pointers(batch.node_ptr, n_nodes)
        and _array(batch.adj_idx, 1)
        and _pointers(batch.adj_ptr, len(batch.adj_idx))
        and len(batch.adj_ptr) == n_nodes + 1
        and _indices(batch.adj_idx, n_nodes)
        and _labels(batch.node_labels, n_nodes)
        and _labels(batch.edge_labels, len(batch.adj_idx))
    )
    if ok and len(batch.adj_idx):  # an edge must stay inside its own graph
        graph_of_node = np.repeat(np.arange(len(batch)), np.diff(batch.node_ptr))
        source = np.repeat(np.arange(n_nodes), np.diff(batch.adj_ptr))
        ok = bool((graph_of_node[source] == graph_of_node[batch.adj_idx]).all())
    return None if ok else "GraphBatch: inconsistent node / adjacency arrays"


def check_string_batch(batch: Any) -> str | None:
    """``StringBatch``: offsets cover the codes, codes index the alphabet (or are its
    unknown-residue code ``len(alphabet)``), one string each."""
    from kernelkit.data._strings import unknown_letter

    unknown = unknown_letter(batch.alphabet) is not None
    ok = (
        _array(batch.codes, 1)
        and _pointers(batch.offsets, len(batch.codes))
        and _indices(batch.codes, len(batch.alphabet) + unknown)
        and len(batch.sequences) == len(batch.offsets) - 1
    )
    return None if ok else "StringBatch: inconsistent codes / offsets / alphabet"


def check_sparse_features(features: Any) -> str | None:
    """``SparseFeatures``: row pointers cover the keys, one value per key."""
    ok = (
        _array(features.keys, 1)
        and _array(features.values, 1, "iuf")
        and len(features.keys) == len(features.values)
        and _pointers(features.indptr, len(features.keys))
    )
    return None if ok else "SparseFeatures: inconsistent indptr / keys / values"


def check_fingerprint_matrix(matrix: Any) -> str | None:
    """``FingerprintMatrix``: row pointers cover the entries, columns inside ``n_features``."""
    n_features = matrix.n_features
    indices = matrix.indices
    ok = (
        type(n_features) is int
        and n_features >= 0
        and _array(indices, 1)
        and _array(matrix.values, 1, "f")
        and len(indices) == len(matrix.values)
        and _pointers(matrix.indptr, len(indices))
        and (len(indices) == 0 or (indices.min() >= 0 and indices.max() < n_features))
    )
    return None if ok else "FingerprintMatrix: inconsistent indptr / indices / values / n_features"
