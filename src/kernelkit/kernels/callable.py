r"""A user's Python function as a kernelkit kernel (scikit-learn's ``kernel=callable``).

scikit-learn's ``pairwise_kernels(X, Y, metric=f, **kernel_params)`` calls ``f(x, y,
**kernel_params)`` once per pair of rows, the rows given as 1-D NumPy arrays, and expects a
float.  :class:`CallableKernel` accepts that convention and a second, vectorised one,
``f(X, Y, **kernel_params)`` returning the ``(len(X), len(Y))`` block.  Which one a function
follows is *detected once*, on the first block computed (at most 3 x 3 rows):

* the function is called on the two row blocks; when that returns an array of shape
  ``(p, q)`` that equals ``f(x_i, y_j)`` evaluated pair by pair (or when the pairwise calls
  fail), the function is vectorised;
* otherwise (the block call fails, has another shape, or disagrees with the pairwise values,
  e.g. ``np.dot`` whose 2-D meaning is not a Gram) it is evaluated pair by pair.

The result is cached on the kernel (``mode_``; ``set_params`` and ``clone`` start afresh).
The kernel runs through the tiled Gram engine like any other (:func:`kernelkit.gram.gram`), so a
pairwise function is called ``n m`` times, once per entry, as in scikit-learn.  The
function's positive definiteness is the user's responsibility; check it with
:func:`kernelkit.testing.check_kernel`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
import torch

from kernelkit.kernels.base import Kernel
from kernelkit.utils.errors import InputError
from kernelkit.utils.kinds import InputKind

_PROBE_ROWS = 3
"""Rows of each side used to detect the convention of a function."""


def _pairwise(f: Callable[..., Any], A: np.ndarray, B: np.ndarray, params: dict) -> np.ndarray:
    """``f(a_i, b_j, **params)`` for every pair of rows, as a float array."""
    out = np.empty((A.shape[0], B.shape[0]), dtype=np.float64)
    for i, a in enumerate(A):
        for j, b in enumerate(B):
            out[i, j] = float(f(a, b, **params))
    return out


class CallableKernel(Kernel):
    """Kernel ``k(x, y) = function(x, y, **kernel_params)`` (see the module docstring).

    Parameters
    ----------
    function : callable
        ``f(x, y, **kernel_params) -> float`` on 1-D rows, or
        ``f(X, Y, **kernel_params) -> array`` of shape ``(len(X), len(Y))`` on 2-D blocks.
    kernel_params : dict, optional
        Extra keyword arguments of ``function`` (scikit-learn's ``kernel_params``).

    Attributes
    ----------
    mode_ : {"pairwise", "block"} or None
        The detected convention (None until the first block).
    """

    differentiable: ClassVar[bool] = False

    def __init__(self, function: Callable[..., Any], kernel_params: dict | None = None):
        super().__init__()
        if not callable(function) or isinstance(function, Kernel):
            raise InputError(
                f"function: expected a Python callable f(x, y) -> float, got "
                f"{type(function).__name__}"
            )
        if kernel_params is not None and not isinstance(kernel_params, dict):
            raise InputError(
                f"kernel_params: expected a dict of keyword arguments or None, got "
                f"{type(kernel_params).__name__}"
            )
        self.function = function
        self.kernel_params = kernel_params
        self.mode_: str | None = None

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        """Both conventions for the common kernel checks: a Gaussian of two rows and a
        polynomial of two blocks (with ``kernel_params``)."""
        rng = np.random.default_rng(0)
        X, Y = rng.normal(size=(7, 3)), rng.normal(size=(5, 3))
        return [
            (cls(_example_gaussian_of_rows), X, Y),
            (cls(_example_polynomial_of_blocks, kernel_params={"degree": 2}), X, None),
        ]

    def _detect(self, A: np.ndarray, B: np.ndarray, params: dict) -> str:
        A, B = A[:_PROBE_ROWS], B[:_PROBE_ROWS]
        try:
            whole = np.asarray(self.function(A, B, **params), dtype=np.float64)
        except Exception:  # the function only takes rows: its block call is meaningless
            return "pairwise"
        if whole.shape != (A.shape[0], B.shape[0]):
            return "pairwise"
        try:
            pairs = _pairwise(self.function, A, B, params)
        except Exception:  # the function only takes blocks
            return "block"
        return "block" if np.allclose(whole, pairs, rtol=1e-12, atol=0.0) else "pairwise"

    def block(self, X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
        A = X.detach().cpu().numpy()
        B = A if Y is X else Y.detach().cpu().numpy()
        params = self.kernel_params or {}
        if self.mode_ is None:
            self.mode_ = self._detect(A, B, params)
        try:
            if self.mode_ == "block":
                K = np.asarray(self.function(A, B, **params), dtype=np.float64)
            else:
                K = _pairwise(self.function, A, B, params)
        except (TypeError, ValueError) as exc:
            raise InputError(
                f"kernel: the callable {getattr(self.function, '__name__', self.function)!r} "
                f"failed on rows of X ({exc}); expected f(x, y) -> float on 1-D rows or "
                "f(X, Y) -> array of shape (len(X), len(Y))"
            ) from exc
        return torch.as_tensor(K, dtype=X.dtype, device=X.device)

    def block_diag(self, X: torch.Tensor) -> torch.Tensor:
        A = X.detach().cpu().numpy()
        params = self.kernel_params or {}
        if self.mode_ is None:
            self.mode_ = self._detect(A, A, params)
        if self.mode_ == "block":
            d = [float(self.function(a[None], a[None], **params)[0, 0]) for a in A]
        else:
            d = [float(self.function(a, a, **params)) for a in A]
        return torch.as_tensor(d, dtype=X.dtype, device=X.device)

    def __repr__(self) -> str:
        name = getattr(self.function, "__name__", repr(self.function))
        return f"CallableKernel(function={name}, kernel_params={self.kernel_params!r})"


class CallableItemKernel(CallableKernel):
    """A user's function on items that are not numeric vectors (strings, graphs, objects).

    scikit-learn hands a callable kernel its input unvalidated, so a function of two strings
    (or two lists of strings) works on a list of strings.  This kernel takes any sequence of
    items as a 1-D NumPy object array (no conversion of the items) and calls the function on
    items or on object arrays of items, with the conventions and the detection of
    :class:`CallableKernel`.  The estimators use it for a callable ``kernel`` whose training
    input is not numeric (:func:`kernelkit.data.detect_input_kind` other than vectors).
    """

    input_kind: ClassVar[InputKind] = InputKind.ANY

    def prepare(
        self, X: Any, *, dtype: torch.dtype | None = None, reference: bool = False
    ) -> np.ndarray:
        if isinstance(X, np.ndarray) and X.ndim == 1 and X.dtype == object:
            return X
        try:
            items = list(X)
        except TypeError as exc:
            raise InputError(
                f"X: expected a sequence of items for the callable kernel, got {type(X).__name__}"
            ) from exc
        batch = np.empty(len(items), dtype=object)
        batch[:] = items
        return batch

    def block(self, X: np.ndarray, Y: np.ndarray) -> torch.Tensor:
        params = self.kernel_params or {}
        if self.mode_ is None:
            self.mode_ = self._detect(X, Y, params)
        if self.mode_ == "block":
            K = np.asarray(self.function(X, Y, **params), dtype=np.float64)
        else:
            K = _pairwise(self.function, X, Y, params)
        return torch.as_tensor(K, dtype=torch.float64)

    def block_diag(self, X: np.ndarray) -> torch.Tensor:
        params = self.kernel_params or {}
        if self.mode_ is None:
            self.mode_ = self._detect(X, X, params)
        if self.mode_ == "block":
            d = [
                float(np.asarray(self.function(X[i : i + 1], X[i : i + 1], **params))[0, 0])
                for i in range(len(X))
            ]
        else:
            d = [float(self.function(x, x, **params)) for x in X]
        return torch.as_tensor(d, dtype=torch.float64)


__all__ = ["CallableItemKernel", "CallableKernel"]


def _example_gaussian_of_rows(x: np.ndarray, y: np.ndarray) -> float:
    """``exp(-||x - y||^2)``, scikit-learn's convention (two rows in, a float out)."""
    return float(np.exp(-np.sum((x - y) ** 2)))


def _example_polynomial_of_blocks(X: np.ndarray, Y: np.ndarray, degree: int = 3) -> np.ndarray:
    """``(<x, y> + 1)^degree`` of two blocks at once."""
    return (X @ Y.T + 1.0) ** degree
