r"""The exponential chi-squared kernel on non-negative vectors (histograms, counts).

.. math:: k(x, y) = \exp\Big(-\gamma \sum_k \frac{(x_k - y_k)^2}{x_k + y_k}\Big),

a term with ``x_k + y_k = 0`` being 0 (scikit-learn's ``chi2_kernel``; Zhang, Marszałek,
Lazebnik and Schmid, IJCV 2007, for bag-of-features histograms).  On non-negative vectors
the chi-squared distance ``d(x, y) = sum_k (x_k - y_k)^2 / (x_k + y_k)`` is conditionally
negative definite (Hein and Bousquet, AISTATS 2005, Table 1), so ``exp(-gamma d)`` is
positive definite for every ``gamma > 0`` (Schoenberg's theorem; Berg, Christensen and
Ressel 1984, Theorem 3.2.2).  A negative feature is outside that domain (the denominator can
vanish or change sign) and is refused with a named error.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import torch

from kernelkit.kernels._base import Kernel
from kernelkit.utils._errors import InputError
from kernelkit.utils._validation import check_positive

_BLOCK_ELEMENTS = 1 << 21
"""Entries of one ``(n, m, features)`` slab of the pairwise terms (16 MiB in float64)."""


def _non_negative(X: torch.Tensor, name: str = "X") -> torch.Tensor:
    """``X`` itself, after checking that no entry is negative (the kernel's domain)."""
    if X.numel() and float(X.min()) < 0:
        raise InputError(
            f"{name}: the chi-squared kernel needs non-negative features (histograms, counts); "
            f"got minimum {float(X.min()):.3g}"
        )
    return X


class Chi2(Kernel):
    r"""Exponential chi-squared kernel ``exp(-gamma sum_k (x_k - y_k)^2 / (x_k + y_k))``.

    Positive definite on non-negative vectors (see the module docstring); ``k(x, x) = 1``.
    The terms are summed over slabs of features, so memory stays ``O(n m)`` per tile.

    Parameters
    ----------
    gamma : float, default 1.0
        Scale ``gamma > 0`` of the chi-squared distance (scikit-learn's ``chi2_kernel``
        default).

    Raises
    ------
    InputError
        For a non-positive ``gamma``, or input with a negative entry (at ``prepare``).
    """

    differentiable: ClassVar[bool] = False

    def __init__(self, gamma: float = 1.0):
        super().__init__()
        self.gamma = check_positive(gamma, name="gamma")

    @classmethod
    def _check_example(cls) -> tuple[Kernel, Any, Any]:
        """Histograms: non-negative rows, some entries zero on both sides."""
        rng = np.random.default_rng(0)
        X, Y = rng.uniform(size=(7, 4)), rng.uniform(size=(5, 4))
        X[:, 0] = Y[:, 0] = 0.0
        return cls(gamma=0.7), X, Y

    def prepare(
        self, X: Any, *, dtype: torch.dtype | None = None, reference: bool = False
    ) -> torch.Tensor:
        return _non_negative(super().prepare(X, dtype=dtype, reference=reference))

    def block(self, X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
        X, Y = _non_negative(X), _non_negative(Y, "Y")
        n, m, d = X.shape[0], Y.shape[0], X.shape[1]
        dist = X.new_zeros((n, m))
        step = max(1, _BLOCK_ELEMENTS // max(n * m, 1))
        tiny = torch.finfo(X.dtype).tiny
        for start in range(0, d, step):
            a, b = X[:, None, start : start + step], Y[None, :, start : start + step]
            dist += ((a - b) ** 2 / (a + b).clamp_min(tiny)).sum(-1)
        return torch.exp(-self.gamma * dist)

    def block_diag(self, X: torch.Tensor) -> torch.Tensor:
        return X.new_ones(X.shape[0])


__all__ = ["Chi2"]
