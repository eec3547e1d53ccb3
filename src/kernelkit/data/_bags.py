"""Bags of points: one item is a finite set (with repeats) of vectors of one dimension.

A bag ``x = {x_1, ..., x_p}`` stands for the uniform probability measure
``mu_x = (1/p) sum_i delta_{x_i}`` (course part 1, "Example 2: semigroup kernels for finite
measures"; Cuturi, Fukumizu & Vert 2005): the kernels on measures
(:class:`~kernelkit.kernels.InverseGeneralizedVariance`) read a :class:`BagBatch`.  Users pass
a list (or tuple) of 2-D arrays, one ``(p_i, d)`` array per item, bags of different sizes
allowed; :func:`as_bag_batch` validates it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from kernelkit.utils._errors import InputError
from kernelkit.utils._validation import to_tensor

__all__ = ["BagBatch", "as_bag_batch", "is_bag_list"]


@dataclass(eq=False)
class BagBatch:
    """Bags of ``d``-dimensional points in a ragged layout (all points + row pointers).

    Parameters
    ----------
    points : torch.Tensor
        All points, bag after bag, shape ``(N, d)``, floating.
    offsets : np.ndarray
        int64 row pointers, shape ``(n + 1,)``; bag ``i`` is ``points[offsets[i]:offsets[i+1]]``.
    """

    points: torch.Tensor
    offsets: np.ndarray

    @property
    def dtype(self) -> torch.dtype:
        """Floating dtype of the points."""
        return self.points.dtype

    @property
    def n_features(self) -> int:
        """Dimension ``d`` of the points."""
        return int(self.points.shape[1])

    @property
    def sizes(self) -> np.ndarray:
        """Number of points of each bag."""
        return np.diff(self.offsets)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def bag(self, i: int) -> torch.Tensor:
        """The points of bag ``i``, shape ``(p_i, d)``."""
        return self.points[int(self.offsets[i]) : int(self.offsets[i + 1])]

    def __getitem__(self, idx: Any) -> BagBatch:
        if isinstance(idx, (int, np.integer)):
            idx = [int(idx)]
        if isinstance(idx, slice):
            idx = range(len(self))[idx]
        if isinstance(idx, torch.Tensor):
            idx = idx.detach().cpu().numpy()
        index = np.atleast_1d(np.asarray(list(idx) if isinstance(idx, range) else idx))
        if index.dtype == bool:
            index = np.flatnonzero(index)
        return _concat([self.bag(int(i)) for i in index], self.points)


def _concat(bags: list[torch.Tensor], like: torch.Tensor) -> BagBatch:
    sizes = [len(b) for b in bags]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    points = torch.cat(bags) if bags else like[:0]
    return BagBatch(points, offsets)


def is_bag_list(X: Any) -> bool:
    """Whether ``X`` is a non-empty list or tuple of 2-D numeric arrays or tensors (bags)."""
    if not isinstance(X, (list, tuple)) or not X:
        return False
    for item in X:
        if isinstance(item, torch.Tensor):
            if item.ndim != 2:
                return False
        elif isinstance(item, np.ndarray):
            if item.ndim != 2 or item.dtype.kind not in "biuf":
                return False
        else:
            return False
    return True


def as_bag_batch(
    X: Any, *, dtype: torch.dtype | None = None, name: str = "X", n_features: int | None = None
) -> BagBatch:
    """Validate bags and return a :class:`BagBatch`.

    Parameters
    ----------
    X : list or tuple of array-like (p_i, d), or BagBatch
        One 2-D array per item (a bag of ``p_i >= 1`` points of dimension ``d``).
    dtype : torch.dtype, optional
        Floating dtype (default: the first bag's if it is a float tensor, else float64).
    name : str
        Argument named in errors.
    n_features : int, optional
        Required dimension ``d`` (that of the training bags).

    Raises
    ------
    InputError
        For an empty list, a bag that is not 2-D, an empty bag, NaN/inf values or bags of
        different dimensions; the message names the bag.
    """
    if isinstance(X, BagBatch):
        batch = X if dtype is None else BagBatch(X.points.to(dtype), X.offsets)
    else:
        if isinstance(X, (np.ndarray, torch.Tensor)) and X.ndim == 3:
            X = list(X)
        if not isinstance(X, (list, tuple)):
            raise InputError(
                f"{name}: expected bags as a list of 2-D arrays (one (p_i, d) array per item), "
                f"got {type(X).__name__}"
            )
        if len(X) == 0:
            raise InputError(f"{name}: expected at least one bag, got 0")
        bags = []
        for i, item in enumerate(X):
            if not isinstance(item, torch.Tensor):
                try:
                    item = np.asarray(item, dtype=np.float64)
                except (TypeError, ValueError) as exc:
                    raise InputError(
                        f"{name}[{i}]: expected a 2-D numeric array (a bag), got "
                        f"{type(item).__name__}"
                    ) from exc
            if item.ndim != 2:
                raise InputError(
                    f"{name}[{i}]: expected a 2-D array of shape (points, features), got "
                    f"shape {tuple(item.shape)}"
                )
            if item.shape[0] == 0:
                raise InputError(f"{name}[{i}]: expected a bag of at least one point, got 0")
            target = dtype
            if target is None:
                first = X[0]
                is_float = isinstance(first, torch.Tensor) and first.is_floating_point()
                target = first.dtype if is_float else torch.float64
            bags.append(to_tensor(item, name=f"{name}[{i}]", dtype=target))
        widths = {int(b.shape[1]) for b in bags}
        if len(widths) > 1:
            first_bad = next(i for i, b in enumerate(bags) if b.shape[1] != bags[0].shape[1])
            raise InputError(
                f"{name}: expected bags of one dimension, got {bags[0].shape[1]} features in "
                f"{name}[0] and {bags[first_bad].shape[1]} in {name}[{first_bad}]"
            )
        batch = _concat(bags, bags[0])
    if n_features is not None and batch.n_features != n_features:
        raise InputError(
            f"{name}: expected bags of {n_features}-dimensional points (as the training bags), "
            f"got {batch.n_features}"
        )
    return batch
