"""``inverse_sqrt`` against SciPy's ``sqrtm`` and finite differences (gradcheck)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import torch

from kernelkit.solvers._matfun import inverse_sqrt
from kernelkit.utils._errors import InputError


def _spd(m: int, seed: int = 0, rank: int | None = None) -> torch.Tensor:
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((m, rank or m + 2))
    return torch.as_tensor(B @ B.T / B.shape[1])


def test_inverse_sqrt_matches_scipy_sqrtm():
    A = _spd(7)
    expected = np.linalg.inv(scipy.linalg.sqrtm(A.numpy()).real)
    got = inverse_sqrt(A)
    np.testing.assert_allclose(got.numpy(), expected, rtol=0, atol=1e-10)
    # (A^{1/2} + shift I)^{-1} with a shift
    shifted = np.linalg.inv(scipy.linalg.sqrtm(A.numpy()).real + 0.3 * np.eye(7))
    np.testing.assert_allclose(inverse_sqrt(A, shift=0.3).numpy(), shifted, atol=1e-10)


def test_inverse_sqrt_of_singular_matrix_is_the_pseudo_inverse_root():
    A = _spd(6, rank=3)
    R = inverse_sqrt(A)
    np.testing.assert_allclose((R @ A @ R).numpy(), (R @ R @ A).numpy(), atol=1e-8)
    # R A R is the orthogonal projector on the range of A
    P = np.linalg.pinv(A.numpy()) @ A.numpy()
    np.testing.assert_allclose((R @ A @ R).numpy(), P, atol=1e-8)


@pytest.mark.parametrize("shift", [0.0, 0.1])
def test_inverse_sqrt_gradient_matches_finite_differences(shift):
    A = _spd(5, seed=1).requires_grad_(True)
    assert torch.autograd.gradcheck(
        lambda a: inverse_sqrt(a, shift=shift), (A,), eps=1e-6, atol=1e-6
    )


def test_inverse_sqrt_gradient_is_finite_for_repeated_eigenvalues():
    A = torch.eye(4, dtype=torch.float64, requires_grad=True)
    (inverse_sqrt(A, shift=0.01) ** 2).sum().backward()
    assert torch.isfinite(A.grad).all()
    # d/dt sum((1 / (sqrt(1 + t) + e))^2 I) at t = 0, along A = (1 + t) I, equals trace of grad
    e = 0.01
    expected = 4 * (-2) * (1 + e) ** -3 * 0.5
    np.testing.assert_allclose(float(A.grad.trace()), expected, rtol=1e-10)


def test_inverse_sqrt_rejects_bad_input():
    with pytest.raises(InputError, match="A: expected a square"):
        inverse_sqrt(torch.ones(2, 3))
    with pytest.raises(InputError, match="shift"):
        inverse_sqrt(torch.eye(2), shift=-1.0)
