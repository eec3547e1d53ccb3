r"""A vector kernel evaluated on inputs shifted by a fixed centre.

.. math:: k_c(x, y) = k(x - c, y - c),

p.d. whenever ``k`` is (the Gram of :math:`k_c` on ``x_1..x_n`` is the Gram of ``k`` on
``x_1 - c, ..., x_n - c``; course part 1, section 1).  A stationary kernel does not change;
a dot-product kernel does: with ``k = <x, y>^p`` the feature map of :math:`k_c` is the
tensor power :math:`(x - c)^{\otimes p}`, so the mean embedding of a sample under
:math:`k_c` is its ``p``-th moment tensor about ``c``, and the MMD, the RKHS distance of
the mean embeddings (Gretton, Borgwardt, Rasch, Schölkopf & Smola 2012, "A Kernel
Two-Sample Test", JMLR 13, section 2.2), compares those moments.  Used by
:func:`kernelkit.stats.width_and_moment_grid` with ``c`` the pooled mean of two samples.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from kernelkit.kernels._base import Batch, Kernel, _check_kernel, _Composite
from kernelkit.kernels._vector import Polynomial
from kernelkit.utils._errors import InputError
from kernelkit.utils._kinds import InputKind


class CenteredKernel(_Composite):
    r"""``k_c(x, y) = k(x - c, y - c)`` for a vector kernel ``k`` and a fixed centre ``c``.

    Parameters
    ----------
    kernel : Kernel
        A kernel on vectors.
    center : array-like of shape (d,)
        The centre ``c``, finite; inputs must have ``d`` features.  Stored as given (a tuple
        of floats reads best in ``repr``).

    Examples
    --------
    ``CenteredKernel(Polynomial(degree=2, offset=0.0), center=m)`` is
    ``<x - m, y - m>^2``, whose MMD between two samples is the squared Frobenius distance
    of their second-moment matrices about ``m`` (module docstring).
    """

    def __init__(self, kernel: Kernel, center: Any):
        super().__init__()
        self.kernel = _check_kernel(kernel, "kernel")
        if kernel.input_kind is not InputKind.VECTOR:
            raise InputError(
                f"kernel: expected a kernel on vectors, got {type(kernel).__name__} "
                f"(takes {kernel.input_kind.value} input)"
            )
        try:
            c = np.asarray(center, dtype=float)
        except (TypeError, ValueError):
            c = None
        if c is None or c.ndim != 1 or c.size == 0 or not np.isfinite(c).all():
            raise InputError(
                f"center: expected a non-empty 1-D array of finite numbers, got {center!r}"
            )
        self.center = center
        self._c = torch.as_tensor(c, dtype=torch.float64)

    def prepare(
        self, X: Any, *, dtype: torch.dtype | None = None, reference: bool = False
    ) -> Batch:
        Xb = self.kernel.prepare(X, dtype=dtype, reference=reference)
        if Xb.shape[1] != self._c.numel():
            raise InputError(
                f"X: expected {self._c.numel()} features (the length of center), got "
                f"{Xb.shape[1]} (shape {tuple(Xb.shape)})"
            )
        return Xb

    def _shift(self, X: torch.Tensor) -> torch.Tensor:
        return X - self._c.to(dtype=X.dtype, device=X.device)

    def block(self, X: Batch, Y: Batch) -> torch.Tensor:
        Xc = self._shift(X)
        return self.kernel.block(Xc, Xc if Y is X else self._shift(Y))

    def block_diag(self, X: Batch) -> torch.Tensor:
        return self.kernel.block_diag(self._shift(X))

    @classmethod
    def _check_example(cls) -> tuple[Kernel, Any, Any]:
        rng = np.random.default_rng(0)
        kernel = cls(Polynomial(degree=2, offset=0.5), center=(0.3, -0.5, 1.0))
        return kernel, rng.normal(size=(9, 3)), rng.normal(size=(5, 3))


__all__ = ["CenteredKernel"]
