r"""Fingerprint matrices and the sparse Tanimoto / MinMax formulas behind the molecule kernels.

A fingerprint matrix is any non-negative ``(n, d)`` array, dense NumPy, ``scipy.sparse`` or a
torch tensor: bit or count fingerprints from RDKit or another tool, or any set / count data
(rows = items, columns = features).  It is held as a CSR matrix, and both kernels are computed
from sparse products (Ralaivola, Swamidass, Saigo & Baldi, "Graph kernels for chemical
informatics", Neural Networks 18 (2005), section 2.3, eqs. 7 and 8):

* Tanimoto: :math:`\langle a, b\rangle / (\|a\|^2 + \|b\|^2 - \langle a, b\rangle)` with
  :math:`\langle a, b\rangle` the entries of :math:`A B^\top`;
* MinMax: :math:`\sum_k \min(a_k, b_k) / \sum_k \max(a_k, b_k)` with
  :math:`\sum \max = \|a\|_1 + \|b\|_1 - \sum \min` and :math:`\sum \min` one sparse product
  of level expansions (:func:`level_expansion`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
import torch

from kernelkit.kernels._features import SparseFeatures
from kernelkit.utils._errors import InputError

__all__ = [
    "FingerprintMatrix",
    "as_fingerprint_matrix",
    "is_fingerprint_matrix",
    "level_expansion",
    "minmax_csr",
    "sparse_pair",
    "tanimoto_csr",
]


@dataclass
class FingerprintMatrix:
    """A batch of fingerprint rows: a non-negative ``(n, n_features)`` matrix in CSR layout.

    Supports ``len`` and row indexing (``batch[i:j]``, index arrays or tensors), so the Gram
    engine tiles it without densifying.

    Parameters
    ----------
    indptr : np.ndarray
        Row pointers, shape ``(n + 1,)``.
    indices : np.ndarray
        Column of every non-zero, sorted within each row.
    values : np.ndarray
        float64 values of the non-zeros (all positive).
    n_features : int
        Number of columns.
    """

    indptr: np.ndarray
    indices: np.ndarray
    values: np.ndarray
    n_features: int

    @classmethod
    def from_csr(cls, csr: sp.csr_matrix) -> FingerprintMatrix:
        """Wrap a canonical CSR matrix (sorted indices, no explicit zeros)."""
        return cls(csr.indptr, csr.indices, csr.data, int(csr.shape[1]))

    @property
    def csr(self) -> sp.csr_matrix:
        """The rows as a SciPy CSR matrix (a view of the arrays)."""
        return sp.csr_matrix(
            (self.values, self.indices, self.indptr), shape=(len(self), self.n_features)
        )

    def __len__(self) -> int:
        return len(self.indptr) - 1

    def __getitem__(self, idx: Any) -> FingerprintMatrix:
        if isinstance(idx, torch.Tensor):
            idx = idx.cpu().numpy()
        if isinstance(idx, (int, np.integer)):
            idx = [idx]
        return FingerprintMatrix.from_csr(self.csr[idx])

    def nonzero_rows(self) -> np.ndarray:
        """``True`` for rows with at least one non-zero entry."""
        return np.diff(self.indptr) > 0


def is_fingerprint_matrix(X: Any) -> bool:
    """Whether ``X`` is a numeric matrix (``scipy.sparse``, a numeric NumPy array or a tensor)."""
    if isinstance(X, FingerprintMatrix) or sp.issparse(X) or isinstance(X, torch.Tensor):
        return True
    return isinstance(X, np.ndarray) and X.dtype.kind in "biuf"


def as_fingerprint_matrix(X: Any, *, name: str = "X") -> FingerprintMatrix:
    """Validate a fingerprint matrix: 2-D, at least one row, finite, non-negative.

    Raises
    ------
    InputError
        Naming ``name``, what was expected and what came in.
    """
    if isinstance(X, FingerprintMatrix):
        return X
    if sp.issparse(X):
        csr = sp.csr_matrix(X, dtype=np.float64, copy=True)  # canonicalised in place below
    else:
        if isinstance(X, torch.Tensor):
            X = X.detach().cpu().numpy()
        arr = np.asarray(X)
        if arr.dtype.kind not in "biuf":
            raise InputError(
                f"{name}: expected a numeric fingerprint matrix, got dtype {arr.dtype}"
            )
        if arr.ndim != 2:
            raise InputError(
                f"{name}: expected a 2-D fingerprint matrix (n_items, n_features), "
                f"got shape {arr.shape}"
            )
        csr = sp.csr_matrix(arr.astype(np.float64, copy=False))
    if csr.shape[0] == 0:
        raise InputError(f"{name}: expected at least one row, got shape {csr.shape}")
    values = csr.data
    if not np.isfinite(values).all():
        raise InputError(f"{name}: expected finite fingerprint values, got NaN or infinity")
    if (values < 0).any():
        raise InputError(
            f"{name}: expected non-negative fingerprint values (bits or counts), "
            f"got minimum {values.min():.6g}"
        )
    csr.eliminate_zeros()
    csr.sort_indices()
    return FingerprintMatrix.from_csr(csr)


def sparse_pair(X: Any, Y: Any) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """CSR matrices of two prepared fingerprint batches over one column space.

    Two :class:`~kernelkit.kernels._features.SparseFeatures` (molecules) are mapped to the union
    of their keys; two :class:`FingerprintMatrix` must have the same number of columns and are
    restricted to the columns either uses.  ``B`` is ``A`` itself when ``Y is X``.
    """
    if isinstance(X, SparseFeatures) and isinstance(Y, SparseFeatures):
        vocabulary = np.union1d(X.keys, Y.keys)
        A = X.to_csr(vocabulary)
        return A, (A if Y is X else Y.to_csr(vocabulary))
    if isinstance(X, FingerprintMatrix) and isinstance(Y, FingerprintMatrix):
        if X.n_features != Y.n_features:
            raise InputError(
                f"Y: expected {X.n_features} fingerprint columns (as X), got {Y.n_features}"
            )
        if Y is X:
            A = _used_columns(X, np.unique(X.indices))
            return A, A
        used = np.union1d(X.indices, Y.indices)
        return _used_columns(X, used), _used_columns(Y, used)
    raise InputError(
        "Y: expected the same input type as X (molecules, or a fingerprint matrix), got "
        f"{type(Y).__name__} for Y and {type(X).__name__} for X"
    )


def _used_columns(M: FingerprintMatrix, used: np.ndarray) -> sp.csr_matrix:
    """``M`` as CSR restricted to the sorted columns ``used`` (which hold all its non-zeros).

    The products then run over the columns in use only, not over ``n_features`` (which may be
    huge: hashed or unfolded fingerprints).
    """
    cols = np.searchsorted(used, M.indices)
    return sp.csr_matrix((M.values, cols, M.indptr), shape=(len(M), len(used)))


def _ratio(num: np.ndarray, den: np.ndarray) -> torch.Tensor:
    """``num / den`` where ``den > 0``, else 0 (items without features)."""
    out = np.zeros_like(num)
    np.divide(num, den, out=out, where=den > 0)
    return torch.as_tensor(out)


def tanimoto_csr(A: sp.csr_matrix, B: sp.csr_matrix) -> torch.Tensor:
    r"""``<a, b> / (|a|^2 + |b|^2 - <a, b>)`` for all row pairs of two CSR matrices.

    Rows without features get similarity 0 (also with themselves).  ``<a, b>`` is the sparse
    product :math:`A B^\top`; only the ``(n, m)`` result is dense.
    """
    G = np.asarray((A @ B.T).todense())
    na = np.asarray(A.multiply(A).sum(axis=1)).ravel()
    nb = na if B is A else np.asarray(B.multiply(B).sum(axis=1)).ravel()
    return _ratio(G, na[:, None] + nb[None, :] - G)


def level_expansion(C: sp.csr_matrix) -> tuple[sp.csr_matrix, np.ndarray]:
    r"""Binary level features of a non-negative matrix, and the weight of each level.

    For column :math:`k`, let :math:`0 = v_0 < v_1 < \dots < v_m` be the distinct values of
    the column; level :math:`j` is the feature :math:`[c_k \ge v_j]` with weight
    :math:`\delta_j = v_j - v_{j-1}`.  For any two rows whose values are among the
    :math:`v_j`, :math:`\min(a_k, b_k) = \sum_j \delta_j [a_k \ge v_j][b_k \ge v_j]`, so
    :math:`\sum_k \min(a_k, b_k) = U_a \,\mathrm{diag}(\delta)\, U_b^\top`.  On integer
    counts whose levels are :math:`1, \dots, \max` this is the unary expansion of Ralaivola
    et al. (2005, section 2.3).  The number of non-zeros is the sum over entries of their
    rank in their column.

    Returns
    -------
    U : scipy.sparse.csr_matrix
        ``(n, n_levels)`` binary matrix.
    delta : np.ndarray
        ``(n_levels,)`` level weights.
    """
    coo = C.tocoo()
    rows, cols, vals = coo.row, coo.col.astype(np.int64), coo.data
    order = np.lexsort((vals, cols))
    sc, sv = cols[order], vals[order]
    new_pair = np.ones(len(sc), dtype=bool)
    new_pair[1:] = (sc[1:] != sc[:-1]) | (sv[1:] != sv[:-1])
    pos = np.empty(len(sc), dtype=np.int64)
    pos[order] = np.cumsum(new_pair) - 1  # level index of every entry
    pair_cols, pair_vals = sc[new_pair], sv[new_pair]
    idx = np.arange(len(pair_cols))
    new_col = np.ones(len(pair_cols), dtype=bool)
    new_col[1:] = pair_cols[1:] != pair_cols[:-1]
    col_start = np.maximum.accumulate(np.where(new_col, idx, 0))
    delta = pair_vals - np.where(new_col, 0.0, np.roll(pair_vals, 1))
    start = col_start[pos]
    counts = pos - start + 1
    total = int(counts.sum())
    level_cols = np.repeat(start, counts) + (
        np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    )
    U = sp.csr_matrix(
        (np.ones(total), (np.repeat(rows, counts), level_cols)), shape=(C.shape[0], len(delta))
    )
    return U, delta


def minmax_csr(A: sp.csr_matrix, B: sp.csr_matrix) -> torch.Tensor:
    r"""``sum_k min(a_k, b_k) / sum_k max(a_k, b_k)`` for all row pairs of two CSR matrices.

    :math:`\sum \min` is the sparse product of the level expansions (:func:`level_expansion`,
    levels shared by ``A`` and ``B``); :math:`\sum \max = \|a\|_1 + \|b\|_1 - \sum \min`.
    Rows without features get similarity 0.
    """
    same = B is A
    U, delta = level_expansion(A if same else sp.vstack([A, B], format="csr"))
    UA = U[: A.shape[0]]
    UB = UA if same else U[A.shape[0] :]
    S = np.asarray((UA.multiply(delta[None, :]).tocsr() @ UB.T).todense())
    sa = np.asarray(A.sum(axis=1)).ravel()
    sb = sa if same else np.asarray(B.sum(axis=1)).ravel()
    return _ratio(S, sa[:, None] + sb[None, :] - S)
