r"""Sparse vector input: ``scipy.sparse`` matrices and sparse torch tensors as kernel batches.

Vector kernels whose formula needs only inner products and row norms take sparse rows as
they are (``Kernel.accepts_sparse``): dot-product kernels ``h(<x, y>)`` and stationary kernels
``profile(||x - y||^2)`` with ``||x - y||^2 = ||x||^2 + ||y||^2 - 2 <x, y>``.  A Gram tile
``K(X_I, Y_J)`` is then one sparse product ``X_I Y_J^T`` written into the dense tile (cost
proportional to the non-zeros of the two row sets), so ``X`` itself is never densified, only
the tiles of the output are dense.

:class:`SparseRows` is the batch: a CSR matrix (rows = items) with the torch dtype of the
Gram, sliceable by ranges and index arrays like a tensor, with its squared row norms cached.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
import torch

from kernelkit.utils._errors import InputError


def is_sparse_input(X: Any) -> bool:
    """Whether ``X`` is a ``scipy.sparse`` matrix/array or a sparse torch tensor."""
    return sp.issparse(X) or (isinstance(X, torch.Tensor) and X.layout != torch.strided)


def _as_csr(X: Any, dtype: np.dtype) -> sp.csr_matrix:
    """``X`` as a canonical CSR matrix of ``dtype`` (torch sparse tensors through COO)."""
    if isinstance(X, torch.Tensor):
        coo = X.detach().to_sparse_coo().coalesce().cpu()
        if coo.ndim != 2:
            raise InputError(f"X: expected a 2-D sparse tensor, got shape {tuple(coo.shape)}")
        rows, cols = coo.indices().numpy()
        X = sp.coo_matrix((coo.values().numpy(), (rows, cols)), shape=tuple(coo.shape))
    if X.ndim != 2:
        raise InputError(f"X: expected a 2-D sparse matrix, got shape {X.shape}")
    if X.dtype.kind == "c":
        raise InputError(f"X: expected real numbers, got complex dtype {X.dtype}")
    csr = sp.csr_matrix(X, dtype=dtype)
    csr.sum_duplicates()
    return csr


class SparseRows:
    """A batch of sparse vectors: the rows of a CSR matrix, with the Gram's torch dtype.

    Parameters
    ----------
    matrix : scipy.sparse matrix or array
        The rows (any sparse format; stored as CSR).
    dtype : torch.dtype
        float32 or float64, the dtype of the Gram tiles.
    """

    requires_grad = False
    device = torch.device("cpu")

    def __init__(self, matrix: Any, dtype: torch.dtype = torch.float64):
        np_dtype = np.float32 if dtype == torch.float32 else np.float64
        self.dtype = torch.float32 if dtype == torch.float32 else torch.float64
        self.matrix = _as_csr(matrix, np_dtype)
        self._sq_norms: torch.Tensor | None = None

    @classmethod
    def from_input(cls, X: Any, dtype: torch.dtype | None = None) -> SparseRows:
        """Validated sparse rows: 2-D, real, finite, at least one row and one column.

        Raises
        ------
        InputError
            For another shape, complex, NaN or infinite stored values, or an empty matrix.
        """
        if isinstance(X, SparseRows):
            return X if dtype in (None, X.dtype) else cls(X.matrix, dtype)
        if dtype is None:
            single = X.dtype in (torch.float32, np.float32)
            dtype = torch.float32 if single else torch.float64
        rows = cls(X, dtype)
        n, d = rows.matrix.shape
        if n == 0 or d == 0:
            raise InputError(f"X: expected at least 1 sample and 1 feature, got shape {(n, d)}")
        data = rows.matrix.data
        if data.size and not np.isfinite(data).all():
            bad = data[~np.isfinite(data)][0]
            raise InputError(
                f"X: expected finite values, found {bad} among the stored entries; remove or "
                "impute NaN/inf before fitting"
            )
        return rows

    @property
    def shape(self) -> tuple[int, int]:
        return self.matrix.shape

    def __len__(self) -> int:
        return self.matrix.shape[0]

    def __getitem__(self, key: Any) -> SparseRows:
        if isinstance(key, torch.Tensor):
            key = key.cpu().numpy()
        out = SparseRows.__new__(SparseRows)
        out.dtype = self.dtype
        out.matrix = self.matrix[key]
        out._sq_norms = None
        return out

    def sq_norms(self) -> torch.Tensor:
        """``||x_i||^2`` for every row (cached)."""
        if self._sq_norms is None:
            m = self.matrix
            sq = np.asarray(m.multiply(m).sum(axis=1)).ravel()
            self._sq_norms = torch.from_numpy(sq.astype(m.dtype, copy=False))
        return self._sq_norms

    def toarray(self) -> np.ndarray:
        """The rows as a dense array (for small row sets only)."""
        return self.matrix.toarray()

    def __repr__(self) -> str:
        n, d = self.shape
        return f"SparseRows({n} x {d}, nnz={self.matrix.nnz}, dtype={self.dtype})"


def inner(X: Any, Y: Any, out: torch.Tensor | None = None) -> torch.Tensor:
    """``X Y^T`` for vector batches, sparse or dense (a dense tensor of shape ``(n, m)``)."""
    if not isinstance(X, SparseRows) and not isinstance(Y, SparseRows):
        return torch.mm(X, Y.T) if out is None else torch.mm(X, Y.T, out=out)
    if isinstance(X, SparseRows) and isinstance(Y, SparseRows):
        G = (X.matrix @ Y.matrix.T).toarray()
    elif isinstance(X, SparseRows):
        G = np.asarray(X.matrix @ Y.detach().cpu().numpy().T)
    else:
        G = np.asarray(Y.matrix @ X.detach().cpu().numpy().T).T
    G = torch.from_numpy(np.ascontiguousarray(G))
    return G if out is None else out.copy_(G)


def row_sq_norms(X: Any) -> torch.Tensor:
    """``||x_i||^2`` of a sparse or dense vector batch."""
    return X.sq_norms() if isinstance(X, SparseRows) else (X * X).sum(1)


def _mix(z: np.ndarray) -> np.ndarray:
    """The splitmix64 finaliser (Steele, Lea and Flood, OOPSLA 2014), elementwise on uint64."""
    z = z ^ (z >> np.uint64(30))
    z = z * np.uint64(0xBF58476D1CE4E5B9)
    z = z ^ (z >> np.uint64(27))
    z = z * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _float32_bits(values: np.ndarray) -> np.ndarray:
    """The bits of ``values`` rounded to float32 (``-0.0`` as ``0.0``), widened to uint64."""
    return (values.astype(np.float32) + np.float32(0.0)).view(np.uint32).astype(np.uint64)


def row_keys(X: torch.Tensor | SparseRows) -> np.ndarray:
    """A 64-bit content key of each row of a dense tensor or of sparse rows.

    ``key_i = sum_{j: x_ij != 0} mix(j, bits(x_ij))`` (wrapping uint64 sum of the splitmix64
    finaliser of the column and the bits of the value rounded to float32), so equal rows get
    equal keys whatever their container, dtype (a float32 copy of float64 data keys as the
    original) or position, and rows that differ in float32 differ but with probability about
    ``2^-64``.  Keys identify copies of a row (the median heuristic, the Nyström centre
    draw) and order rows by content alone.
    """
    with np.errstate(over="ignore"):
        if isinstance(X, SparseRows):
            csr = X.matrix.astype(np.float64).tocsr(copy=True)
            csr.sum_duplicates()
            csr.eliminate_zeros()
            bits = _float32_bits(csr.data)
            entry = _mix(_mix(csr.indices.astype(np.uint64)) ^ bits)
            keys = np.zeros(csr.shape[0], dtype=np.uint64)
            np.add.at(keys, np.repeat(np.arange(csr.shape[0]), np.diff(csr.indptr)), entry)
            return keys
        dense = X.detach().to("cpu", torch.float64).numpy()
        keys = np.zeros(dense.shape[0], dtype=np.uint64)
        for j in range(dense.shape[1]):
            col = dense[:, j]
            entry = _mix(_mix(np.full(len(col), j, dtype=np.uint64)) ^ _float32_bits(col))
            keys += np.where(col != 0, entry, np.uint64(0))
        return keys


__all__ = ["SparseRows", "inner", "is_sparse_input", "row_keys", "row_sq_norms"]
