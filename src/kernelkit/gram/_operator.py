"""A lazy Gram matrix: products with ``K(X, Y)`` without ever holding more than one tile."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from kernelkit.gram._engine import gram, prepare_pair
from kernelkit.gram._tiling import (
    batch_itemsize,
    check_tiling_args,
    is_sliceable,
    kernel_features,
    n_workers,
    run_parallel,
    tile_size,
    tiles,
)
from kernelkit.kernels._base import Kernel
from kernelkit.kernels._features import SparseFeatures
from kernelkit.utils._errors import InputError
from kernelkit.utils._validation import resolve_dtype


class GramOperator:
    """The Gram matrix ``K(X, Y)`` as a lazy linear operator.

    Products ``K @ V`` are computed tile by tile: each ``b x b`` tile of ``K`` is evaluated in
    a reused scratch buffer by ``kernel.block_into``, multiplied into the result and dropped, so
    memory stays at one tile plus the result per worker thread whatever ``n`` (on CPU the tiles
    are split over ``torch.get_num_threads()`` workers running torch single-threaded, each with
    its own scratch tile and partial result, summed at the end in a fixed order).
    In the symmetric case (``Y`` None) only tiles on or below the diagonal are evaluated and
    each off-diagonal tile serves twice, ``R[I] += K_IJ V[J]`` and ``R[J] += K_IJ^T V[I]``,
    halving the kernel work.

    Parameters
    ----------
    kernel : Kernel
        Any kernelkit kernel.
    X, Y : array-like, tensor or batch
        Row and column points (``Y`` None: ``K(X, X)``).
    dtype : torch.dtype or str, optional
        Floating dtype (default: the input's, else float64).
    block_size : int, optional
        Tile size (rows and columns).  Exclusive with ``memory_budget``.
    memory_budget : int, optional
        Bytes allowed for the tile and its scratch plus the partial products; the tile size is
        derived from it (the inputs and the result are not counted).
    device : torch.device or str, optional
        Device of the computation.

    Examples
    --------
    >>> import torch
    >>> from kernelkit.kernels import Gaussian
    >>> op = GramOperator(Gaussian(1.0), torch.randn(50, 3, dtype=torch.float64))
    >>> v = torch.ones(50, dtype=torch.float64)
    >>> bool(torch.allclose(op @ v, op.to_dense() @ v))
    True
    """

    def __init__(
        self,
        kernel: Kernel,
        X: Any,
        Y: Any = None,
        *,
        dtype: Any = None,
        block_size: int | None = None,
        memory_budget: int | None = None,
        device: torch.device | str | None = None,
    ) -> None:
        check_tiling_args(block_size, memory_budget)
        self.kernel = kernel
        self.Xb, Yb = prepare_pair(kernel, X, Y, dtype=dtype, device=device)
        self.symmetric = Yb is None
        self.Yb = self.Xb if Yb is None else Yb
        self.dtype: torch.dtype = batch_itemsize(self.Xb, resolve_dtype(dtype))
        self.device = self.Xb.device if isinstance(self.Xb, torch.Tensor) else device
        self.block_size = block_size
        self.memory_budget = memory_budget
        self.shape: tuple[int, int] = (len(self.Xb), len(self.Yb))
        fx = kernel_features(kernel, self.Xb)
        self._sparse: tuple[Any, Any] | None = None
        if isinstance(fx, SparseFeatures):
            fy = fx if self.symmetric else kernel_features(kernel, self.Yb)
            vocabulary = np.union1d(fx.keys, fy.keys)
            A = fx.to_csr(vocabulary)
            self._sparse = (A, A if fy is fx else fy.to_csr(vocabulary))

    # ------------------------------------------------------------------ helpers
    def _itemsize(self) -> int:
        return torch.empty((), dtype=self.dtype).element_size()

    def tile(self, n_rhs: int = 1) -> int:
        """Tile size ``b`` used for products with ``n_rhs`` right-hand sides.

        The memory budget is shared by the worker threads: each holds a tile with its scratch
        and a partial result of ``max(n, m) x n_rhs``.
        """
        workers = max(1, torch.get_num_threads())
        budget = self.memory_budget
        if budget is not None:
            budget = budget // workers - max(self.shape) * max(n_rhs, 1) * self._itemsize()
            if budget <= 0:
                raise InputError(
                    f"memory_budget: expected more than {workers} partial results of "
                    f"{max(self.shape)} x {max(n_rhs, 1)} entries, got {self.memory_budget} bytes"
                )
        return tile_size(
            max(self.shape),
            self._itemsize(),
            block_size=self.block_size,
            memory_budget=budget,
            extra_bytes_per_row=2 * max(n_rhs, 1) * self._itemsize(),
        )

    def _check_rhs(self, V: Any, size: int, name: str = "V") -> tuple[torch.Tensor, bool]:
        V = torch.as_tensor(V)
        vector = V.ndim == 1
        if vector:
            V = V[:, None]
        if V.ndim != 2 or V.shape[0] != size:
            raise InputError(
                f"{name}: expected shape ({size},) or ({size}, r), got {tuple(V.shape)}"
            )
        return V.to(dtype=self.dtype, device=self.device), vector

    # ------------------------------------------------------------------ products
    def _apply(self, V: Any, transpose: bool) -> torch.Tensor:
        n, m = self.shape
        V, vector = self._check_rhs(V, n if transpose else m)
        if self._sparse is not None:
            A, B = self._sparse
            Vn = V.cpu().numpy().astype(np.float64)
            R = B @ (A.T @ Vn) if transpose else A @ (B.T @ Vn)
            R = torch.as_tensor(np.asarray(R), dtype=self.dtype, device=self.device)
            return R[:, 0] if vector else R
        if not (is_sliceable(self.Xb) and is_sliceable(self.Yb)):
            K = self.kernel.block(self.Xb, self.Yb).to(self.dtype)
            R = (K.T if transpose else K) @ V
            return R[:, 0] if vector else R
        b = self.tile(V.shape[1])
        plan = tiles(n, m, b, b, symmetric=self.symmetric)
        parallel = isinstance(self.Xb, torch.Tensor) and self.Xb.device.type == "cpu"
        workers = n_workers(len(plan)) if parallel else 1
        shape = (m if transpose else n, V.shape[1])
        partial = [torch.zeros(shape, dtype=self.dtype, device=self.device) for _ in range(workers)]

        def work(w: int) -> None:
            # static round-robin split: each worker owns its partial result, so the sum over
            # tiles is reproducible whatever the thread timing
            R = partial[w]
            scratch = torch.empty(b * b, dtype=self.dtype, device=self.device)
            for r0, r1, c0, c1 in plan[w::workers]:
                T = scratch[: (r1 - r0) * (c1 - c0)].view(r1 - r0, c1 - c0)
                Xi = self.Xb[r0:r1]
                if self.symmetric and r0 == c0:
                    self.kernel.block_into(Xi, Xi, T)
                    R[r0:r1].addmm_(T, V[r0:r1])
                    continue
                self.kernel.block_into(Xi, self.Yb[c0:c1], T)
                if self.symmetric:
                    R[r0:r1].addmm_(T, V[c0:c1])
                    R[c0:c1].addmm_(T.T, V[r0:r1])
                elif transpose:
                    R[c0:c1].addmm_(T.T, V[r0:r1])
                else:
                    R[r0:r1].addmm_(T, V[c0:c1])

        with torch.no_grad():
            run_parallel(work, list(range(workers)), parallel=parallel)
        R = partial[0]
        for other in partial[1:]:
            R += other
        return R[:, 0] if vector else R

    def matmat(self, V: Any) -> torch.Tensor:
        """``K @ V`` for ``V`` of shape ``(m, r)`` or ``(m,)``."""
        return self._apply(V, transpose=False)

    def rmatmat(self, V: Any) -> torch.Tensor:
        """``K^T @ V`` for ``V`` of shape ``(n, r)`` or ``(n,)`` (same tiles, transposed)."""
        return self._apply(V, transpose=True)

    matvec = matmat

    def __matmul__(self, V: Any) -> torch.Tensor:
        return self.matmat(V)

    @property
    def T(self) -> _TransposedGram:
        """The lazy transpose ``K(Y, X)``."""
        return _TransposedGram(self)

    # ------------------------------------------------------------------ entries
    def diag(self) -> torch.Tensor:
        """``K(x_i, y_i)`` for ``i < min(n, m)`` (``k(x_i, x_i)`` in the symmetric case)."""
        if self.symmetric:
            return self.kernel.block_diag(self.Xb).to(self.dtype)
        size = min(self.shape)
        b = self.tile()
        parts = [
            self.kernel.block(self.Xb[i : min(i + b, size)], self.Yb[i : min(i + b, size)])
            .diagonal()
            .to(self.dtype)
            for i in range(0, size, b)
        ]
        return torch.cat(parts) if parts else torch.empty(0, dtype=self.dtype)

    def rows(self, idx: Any) -> torch.Tensor:
        """The rows ``K[idx, :]`` as a dense ``(len(idx), m)`` tensor."""
        idx = torch.as_tensor(idx, dtype=torch.long).reshape(-1)
        if idx.numel() and (int(idx.min()) < -self.shape[0] or int(idx.max()) >= self.shape[0]):
            raise InputError(
                f"idx: expected row indices in [0, {self.shape[0]}), got min {int(idx.min())} "
                f"and max {int(idx.max())}"
            )
        Xi = self.Xb[idx]
        return gram(self.kernel, Xi, self.Yb, dtype=self.dtype, block_size=self.tile())

    def to_dense(self) -> torch.Tensor:
        """The full Gram matrix (allocates ``n x m``)."""
        Y = None if self.symmetric else self.Yb
        return gram(self.kernel, self.Xb, Y, dtype=self.dtype, block_size=self.tile())

    def as_linear_operator(self) -> Any:
        """A ``scipy.sparse.linalg.LinearOperator`` (NumPy in and out) for ARPACK, CG, ..."""
        from scipy.sparse.linalg import LinearOperator

        np_dtype = torch.empty((), dtype=self.dtype).numpy().dtype

        def mv(v: np.ndarray) -> np.ndarray:
            return self.matmat(torch.from_numpy(np.ascontiguousarray(v))).cpu().numpy()

        def rmv(v: np.ndarray) -> np.ndarray:
            return self.rmatmat(torch.from_numpy(np.ascontiguousarray(v))).cpu().numpy()

        return LinearOperator(
            self.shape, matvec=mv, rmatvec=rmv, matmat=mv, rmatmat=rmv, dtype=np_dtype
        )

    def __repr__(self) -> str:
        return f"GramOperator({self.kernel!r}, shape={self.shape}, dtype={self.dtype})"


class _TransposedGram:
    """``K^T`` of a :class:`GramOperator`, sharing its tiles."""

    def __init__(self, op: GramOperator) -> None:
        self.op = op
        self.shape = (op.shape[1], op.shape[0])
        self.dtype = op.dtype

    def matmat(self, V: Any) -> torch.Tensor:
        return self.op.rmatmat(V)

    def rmatmat(self, V: Any) -> torch.Tensor:
        return self.op.matmat(V)

    def __matmul__(self, V: Any) -> torch.Tensor:
        return self.matmat(V)

    @property
    def T(self) -> GramOperator:
        return self.op
