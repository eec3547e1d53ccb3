r"""Distances in a kernel's feature space, from its Gram blocks.

``d(x, y)^2 = ||phi(x) - phi(y)||^2 = k(x, x) + k(y, y) - 2 k(x, y)`` (the RKHS distance), for
any kernel and any input kind.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from kernelkit.gram._centres import take
from kernelkit.gram._engine import gram
from kernelkit.kernels import Kernel

__all__ = ["feature_space_median"]


def feature_space_median(kernel: Kernel, X: Any, *, memory_budget: int | None = None) -> float:
    r"""Median of the positive RKHS distances ``d(x_i, x_j)``, ``i < j``, of a batch ``X``.

    ``d^2 = k(x_i, x_i) + k(x_j, x_j) - 2 k(x_i, x_j)`` (clipped at 0); the median heuristic
    for a Gaussian kernel on the feature space of ``kernel`` (the first layer of a K2AE,
    :class:`~kernelkit.kernels.FeatureSpaceGaussian`).  Under ``memory_budget`` (bytes) the
    Gram is taken by row blocks (four float64 row blocks fit the budget: the Gram rows, ``d^2``
    and temporaries), so that only the ``n (n - 1) / 2`` distances and one block are held.
    Returns 1.0 when all distances are 0.

    Parameters
    ----------
    kernel : Kernel
        The kernel whose feature space is measured.
    X : Batch
        Prepared inputs of ``kernel`` (``kernel.prepare``).
    memory_budget : int, optional
        Bytes of scratch allowed, with the meaning of :func:`kernelkit.gram.gram`.
    """
    n = len(X)
    d = kernel.block_diag(X)
    rows = n
    if memory_budget is not None:
        rows = max(1, min(n, memory_budget // (4 * 8 * max(n, 1))))
    parts = []
    for r0 in range(0, n, rows):
        r1 = min(r0 + rows, n)
        block = X if rows == n else take(X, np.arange(r0, r1))
        other = None if rows == n else X
        K = gram(kernel, block, other, memory_budget=memory_budget, differentiable=True)
        K = K.to(d.dtype)
        d2 = (d[r0:r1, None] + d[None, :] - 2 * K).clamp_min(0)
        upper = torch.arange(n)[None, :] > torch.arange(r0, r1)[:, None]
        parts.append(d2[upper].sqrt())
    vals = torch.cat(parts)
    vals = vals[vals > 0]
    return float(vals.median()) if vals.numel() else 1.0
