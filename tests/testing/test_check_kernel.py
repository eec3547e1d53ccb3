"""check_kernel catches each broken property it claims to check (and passes good kernels)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from kernelkit.kernels import Gaussian, Kernel, Linear, Precomputed
from kernelkit.kernels._base import StationaryKernel
from kernelkit.testing import all_kernel_classes, check_kernel, kernel_examples
from kernelkit.testing._kernels import is_abstract, random_gram


@pytest.fixture
def X():
    return np.random.default_rng(0).standard_normal((9, 3))


class Asymmetric(Kernel):
    def __init__(self) -> None:
        super().__init__()

    def block(self, X, Y):
        return X @ Y.T + 0.5 * X[:, :1] - 0.2 * Y[:, :1].T

    def block_diag(self, X):
        return (X * X).sum(1) + 0.3 * X[:, 0]


class SquaredDistance(StationaryKernel):
    """||x - y||^2: symmetric but not p.d."""

    def __init__(self) -> None:
        super().__init__()

    def profile(self, d2):
        return d2


class WrongDiag(Gaussian):
    def block_diag(self, X):
        return 2.0 * super().block_diag(X)


class BatchDependent(Gaussian):
    """Divides by the batch size: tiles differ from the full Gram."""

    def block(self, X, Y):
        return super().block(X, Y) * (10.0 / len(X))

    def block_into(self, X, Y, out):
        return out.copy_(self.block(X, Y))

    def block_diag(self, X):
        return super().block_diag(X) * (10.0 / len(X))


class DtypeDependent(Gaussian):
    def block(self, X, Y):
        K = super().block(X, Y)
        return K * 0.9 if X.dtype == torch.float32 else K

    def block_into(self, X, Y, out):
        return out.copy_(self.block(X, Y))


class _WrongBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        return x.clone()

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        return 3.0 * grad


class WrongGradient(Linear):
    def block(self, X, Y):
        return _WrongBackward.apply(X) @ Y.T


class ModifiesParam(Gaussian):
    def __init__(self, sigma: float = 1.0):
        super().__init__(sigma)
        self.sigma = 2.0 * sigma  # breaks clone / get_params


@pytest.mark.parametrize(
    ("kernel", "prop"),
    [
        (Asymmetric(), "symmetry"),
        (SquaredDistance(), "psd"),
        (WrongDiag(1.0), "diag"),
        (BatchDependent(1.0), "tiled"),
        (DtypeDependent(1.0), "float32"),
        (WrongGradient(), "gradcheck"),
        (ModifiesParam(1.0), "params"),
    ],
)
def test_broken_kernels_fail_with_the_property_named(kernel, prop, X):
    with pytest.raises(AssertionError, match=f"{prop} failed"):
        check_kernel(kernel, X, X[:4] + 1.0)


def test_good_kernels_pass(X):
    check_kernel(Gaussian(0.8), X, X[:5] * 2)
    check_kernel(Gaussian(0.8) * Linear() + 1.0, torch.as_tensor(X))
    check_kernel(Precomputed(), random_gram(np.random.default_rng(1), 7))


def test_float32_input_uses_float32_tolerance(X):
    check_kernel(Gaussian(1.0), X.astype(np.float32))


def test_enrolment_hook_and_abstract_detection():
    class WithHook(Kernel):
        input_kind = "string"

        def __init__(self, scale: float):
            super().__init__()
            self.scale = scale

        def block(self, X, Y):
            return torch.tensor(
                [[self.scale * (a == b) for b in Y] for a in X], dtype=torch.float64
            )

        @classmethod
        def _check_example(cls):
            return cls(2.0), ["a", "b", "a"], None

    class NoHook(Kernel):
        input_kind = "graph"

        def block(self, X, Y):
            return torch.zeros(len(X), len(Y))

    (kernel, Xs, Ys), *_ = kernel_examples(WithHook)
    assert kernel.scale == 2.0 and Xs == ["a", "b", "a"] and Ys is None
    with pytest.raises(LookupError, match="_check_example"):
        kernel_examples(NoHook)
    assert is_abstract(Kernel) and is_abstract(StationaryKernel)
    assert not is_abstract(Gaussian) and not is_abstract(SquaredDistance)
    # kernels defined outside kernelkit (like these) are not enrolled by the common tests
    assert WithHook not in all_kernel_classes() and Gaussian in all_kernel_classes()
