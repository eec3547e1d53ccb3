"""Sparse explicit features keyed by 64-bit integers, and their Gram ``Phi(X) Phi(Y)^T``.

Structured kernels with explicit feature maps (spectrum k-mers, Weisfeiler-Lehman subtree
patterns, fingerprints, ...) describe each item by a sparse vector over an open-ended
vocabulary.  Items are featurised *independently* (no fitted vocabulary, no hidden state):
every feature gets a deterministic 64-bit integer key (an exact encoding when it fits, e.g. a
k-mer in base |alphabet|, otherwise a stable hash such as BLAKE2b, never Python's salted
``hash``).  Two batches are then compared by mapping the union of their keys to columns, so
``Phi(X) Phi(Y)^T`` is computed by one sparse product.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
import torch


@dataclass
class SparseFeatures:
    """Rows of sparse features in CSR layout with int64 keys instead of column indices.

    Parameters
    ----------
    indptr : np.ndarray
        Row pointers, shape ``(n + 1,)``.
    keys : np.ndarray
        int64 feature keys of the non-zeros, sorted within each row, no duplicates in a row.
    values : np.ndarray
        float64 values of the non-zeros.
    """

    indptr: np.ndarray
    keys: np.ndarray
    values: np.ndarray

    def __len__(self) -> int:
        return len(self.indptr) - 1

    @classmethod
    def from_rows(cls, rows: list[tuple[np.ndarray, np.ndarray]]) -> SparseFeatures:
        """Build from one ``(keys, values)`` pair per item; duplicate keys in a row are summed."""
        indptr = [0]
        all_keys, all_vals = [], []
        for keys, vals in rows:
            keys = np.asarray(keys, dtype=np.int64)
            vals = np.asarray(vals, dtype=np.float64)
            uniq, inverse = np.unique(keys, return_inverse=True)
            summed = np.zeros(len(uniq))
            np.add.at(summed, inverse, vals)
            all_keys.append(uniq)
            all_vals.append(summed)
            indptr.append(indptr[-1] + len(uniq))
        return cls(
            np.asarray(indptr, dtype=np.int64),
            np.concatenate(all_keys) if all_keys else np.zeros(0, np.int64),
            np.concatenate(all_vals) if all_vals else np.zeros(0),
        )

    def __getitem__(self, idx: Any) -> SparseFeatures:
        """The rows ``idx`` (an int, slice or index array), gathered without a Python loop."""
        rows = np.atleast_1d(np.arange(len(self))[idx])
        starts = self.indptr[rows]
        lengths = self.indptr[rows + 1] - starts
        indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        take = np.repeat(starts - indptr[:-1], lengths) + np.arange(indptr[-1])
        return SparseFeatures(indptr, self.keys[take], self.values[take])

    def to_csr(self, vocabulary: np.ndarray) -> sp.csr_matrix:
        """CSR matrix whose column ``j`` is key ``vocabulary[j]`` (sorted; holds every key)."""
        cols = np.searchsorted(vocabulary, self.keys)
        return sp.csr_matrix((self.values, cols, self.indptr), shape=(len(self), len(vocabulary)))


def sparse_feature_gram(
    FX: SparseFeatures, FY: SparseFeatures, *, dtype: torch.dtype = torch.float64
) -> torch.Tensor:
    """``Phi(X) Phi(Y)^T`` as a dense tensor, by a sparse product over the joint vocabulary."""
    vocabulary = np.union1d(FX.keys, FY.keys)
    A = FX.to_csr(vocabulary)
    B = A if FY is FX else FY.to_csr(vocabulary)
    return torch.as_tensor((A @ B.T).toarray(), dtype=dtype)
