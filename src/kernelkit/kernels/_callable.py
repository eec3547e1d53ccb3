r"""A user's Python function as a kernelkit kernel (scikit-learn's ``kernel=callable``).

scikit-learn's ``pairwise_kernels(X, Y, metric=f, **kernel_params)`` calls ``f(x, y,
**kernel_params)`` once per pair of rows, the rows given as 1-D NumPy arrays, and expects a
float.  :class:`CallableKernel` accepts that convention and a second, vectorised one,
``f(X, Y, **kernel_params)`` returning the ``(len(X), len(Y))`` block.  Which one a function
follows is *detected once*, on the first block computed, by calling it as scikit-learn
does, on the first two rows ``f(x_0, y_0)``:

* a number: the pairwise convention (the value is the block's first entry, so a pairwise
  function is never handed anything but rows, and is called exactly as often as
  scikit-learn calls it);
* an error or an array: the vectorised convention, checked on the block (an array of shape
  ``(len(X), len(Y))``, else a named error).

A vectorised function that also takes two rows and returns their number (``X @ Y.T``) is
therefore run pair by pair: correct, but a Python loop.  The result is cached on the kernel
(``mode_``; ``set_params`` and ``clone`` start afresh).  The kernel runs through the tiled
Gram engine like any other (:func:`kernelkit.gram.gram`); a pairwise function is called once
per entry of a cross block and once per entry on and above the diagonal of a symmetric one
(``k(y, x) = k(x, y)``), as in scikit-learn.  ``kernel_params`` are passed as given (not
copied), as scikit-learn does.  The function's positive definiteness is the user's
responsibility; check it with
:func:`kernelkit.testing.check_kernel`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
import torch

from kernelkit.kernels._base import Kernel
from kernelkit.utils._errors import InputError
from kernelkit.utils._kinds import InputKind


def _pairwise(
    f: Callable[..., Any],
    A: np.ndarray,
    B: np.ndarray,
    params: dict,
    *,
    symmetric: bool = False,
    first: float | None = None,
) -> np.ndarray:
    """``f(a_i, b_j, **params)`` for every pair of rows, as a float array; ``symmetric``
    (``B`` is ``A``): the pairs ``i <= j`` only, mirrored; ``first``: ``f(a_0, b_0)``
    already known."""
    out = np.empty((A.shape[0], B.shape[0]), dtype=np.float64)
    for i, a in enumerate(A):
        for j in range(i if symmetric else 0, B.shape[0]):
            if i == j == 0 and first is not None:
                out[0, 0] = first
                continue
            out[i, j] = float(f(a, B[j], **params))
            if symmetric:
                out[j, i] = out[i, j]
    return out


def _row_value(f: Callable[..., Any], a: Any, b: Any, params: dict) -> float | None:
    """``f(a, b)`` when it is a number (the pairwise convention), else None."""
    try:
        value = np.asarray(f(a, b, **params))
    except Exception:  # a function of blocks only
        return None
    if value.ndim != 0 or value.dtype.kind not in "biuf":
        return None
    return float(value)


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

    def _detect_convention(self, A: Any, B: Any, params: dict) -> float | None:
        """Set ``mode_`` on the first call from ``f(A[0], B[0])`` and return that value when
        it is the pairwise convention's number (None when detected before or "block")."""
        if self.mode_ is not None:
            return None
        first = _row_value(self.function, A[0], B[0], params)
        self.mode_ = "block" if first is None else "pairwise"
        return first

    def _values(self, A: Any, B: Any, symmetric: bool) -> np.ndarray:
        """The block ``f`` on items ``A`` x ``B``, detecting the convention on the first
        block (module docstring)."""
        params = self.kernel_params or {}
        first = self._detect_convention(A, B, params) if len(A) and len(B) else None
        if self.mode_ == "pairwise":
            return _pairwise(self.function, A, B, params, symmetric=symmetric, first=first)
        K = np.asarray(self.function(A, B, **params), dtype=np.float64)
        if K.shape != (len(A), len(B)):
            raise InputError(
                f"kernel: the callable {getattr(self.function, '__name__', self.function)!r} "
                f"returned shape {K.shape} on blocks of {len(A)} and {len(B)} items; expected "
                "f(x, y) -> float on two rows or f(X, Y) -> array of shape (len(X), len(Y))"
            )
        return K

    def block(self, X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
        A = X.detach().cpu().numpy()
        B = A if Y is X else Y.detach().cpu().numpy()
        try:
            K = self._values(A, B, symmetric=Y is X)
        except (TypeError, ValueError) as exc:
            if isinstance(exc, InputError):
                raise
            raise InputError(
                f"kernel: the callable {getattr(self.function, '__name__', self.function)!r} "
                f"failed on rows of X ({exc}); expected f(x, y) -> float on 1-D rows or "
                "f(X, Y) -> array of shape (len(X), len(Y))"
            ) from exc
        return torch.as_tensor(K, dtype=X.dtype, device=X.device)

    def block_diag(self, X: torch.Tensor) -> torch.Tensor:
        A = X.detach().cpu().numpy()
        return torch.as_tensor(self._diagonal(A), dtype=X.dtype, device=X.device)

    def _diagonal(self, A: Any) -> list[float]:
        """``f(x, x)`` of every item (one call each in either convention)."""
        params = self.kernel_params or {}
        if len(A):
            self._detect_convention(A, A, params)
        if self.mode_ == "block":
            return [
                float(np.asarray(self.function(A[i : i + 1], A[i : i + 1], **params))[0, 0])
                for i in range(len(A))
            ]
        return [float(self.function(a, a, **params)) for a in A]

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

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        """Both conventions on strings: letter counts of two strings, and of two lists."""
        X = ["AAB", "B", "ABAB", "", "BBBA", "AA", "BAB"]
        Y = ["A", "BB", "AB", "BBA", "AAAB"]
        return [(cls(_example_counts_of_strings), X, Y), (cls(_example_counts_of_lists), X, None)]

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
        return torch.as_tensor(self._values(X, Y, symmetric=Y is X), dtype=torch.float64)

    def block_diag(self, X: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(self._diagonal(X), dtype=torch.float64)


__all__ = ["CallableItemKernel", "CallableKernel"]


def _example_gaussian_of_rows(x: np.ndarray, y: np.ndarray) -> float:
    """``exp(-||x - y||^2)``, scikit-learn's convention (two rows in, a float out)."""
    return float(np.exp(-np.sum((x - y) ** 2)))


def _example_polynomial_of_blocks(X: np.ndarray, Y: np.ndarray, degree: int = 3) -> np.ndarray:
    """``(<x, y> + 1)^degree`` of two blocks at once."""
    return (X @ Y.T + 1.0) ** degree


def _example_counts_of_strings(s: str, t: str) -> float:
    """Inner product of the counts of "A" and "B" in two strings (a linear kernel)."""
    return float(s.count("A") * t.count("A") + s.count("B") * t.count("B"))


def _example_counts_of_lists(S: np.ndarray, T: np.ndarray) -> np.ndarray:
    """:func:`_example_counts_of_strings` of two lists of strings at once."""
    counts = [np.array([[s.count("A"), s.count("B")] for s in U], dtype=float) for U in (S, T)]
    return counts[0] @ counts[1].T
