"""Conjugate gradients against torch.linalg.solve and SciPy's cg (issue 2)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse.linalg
import torch

from kernelkit.gram import GramOperator
from kernelkit.kernels import Gaussian
from kernelkit.solvers import conjugate_gradient
from kernelkit.solvers._cg import CGResult
from kernelkit.utils._errors import InputError

RNG = np.random.default_rng(4)
X = torch.as_tensor(RNG.normal(size=(120, 3)))
K = Gaussian(1.0)(X)
Y = torch.as_tensor(RNG.normal(size=(120, 3)))
SHIFT = 120 * 1e-3
REF = torch.linalg.solve(K + SHIFT * torch.eye(120, dtype=torch.float64), Y)


def test_tensor_matches_torch_solve():
    res = conjugate_gradient(K, Y, shift=SHIFT, tol=1e-12)
    assert isinstance(res, CGResult) and res.converged and res.residual <= 1e-12
    torch.testing.assert_close(res.solution, REF, rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("warm", [False, True])
def test_on_step_carries_the_image_of_the_iterate(warm):
    """``on_step`` gets the step lengths: ``G x`` summed from the ``G p_k`` of the products
    equals ``G`` applied to the solution (from zero and from a warm start)."""
    G = torch.as_tensor(RNG.normal(size=(7, 120)))
    x0 = 0.3 * REF if warm else None
    latest, carried = [], [None if x0 is None else G @ x0]

    def product(P):
        latest[:] = [G @ P]
        return K @ P

    def on_step(step):
        inc = latest[0] * step
        carried[0] = inc if carried[0] is None else carried[0] + inc

    res = conjugate_gradient(product, Y, shift=SHIFT, tol=1e-10, x0=x0, on_step=on_step)
    torch.testing.assert_close(carried[0], G @ res.solution, rtol=1e-10, atol=1e-10)


def test_gram_operator_and_callable():
    op = GramOperator(Gaussian(1.0), X, block_size=32)
    res = conjugate_gradient(op, Y, shift=SHIFT, tol=1e-12)
    torch.testing.assert_close(res.solution, REF, rtol=1e-8, atol=1e-8)
    res2 = conjugate_gradient(lambda V: K @ V, Y[:, 0], shift=SHIFT, tol=1e-12)
    assert res2.solution.shape == (120,)
    torch.testing.assert_close(res2.solution, REF[:, 0], rtol=1e-8, atol=1e-8)


def test_matches_scipy_cg_iterates():
    A = (K + SHIFT * torch.eye(120, dtype=torch.float64)).numpy()
    b = Y[:, 1].numpy()
    for iters in (3, 10):
        ref, _ = scipy.sparse.linalg.cg(A, b, rtol=1e-300, atol=0.0, maxiter=iters)
        res = conjugate_gradient(K, Y[:, 1], shift=SHIFT, tol=1e-300, max_iter=iters)
        assert res.iterations == iters and not res.converged
        np.testing.assert_allclose(res.solution.numpy(), ref, rtol=1e-8, atol=1e-10)


def test_jacobi_preconditioner_and_x0():
    A = K + SHIFT * torch.eye(120, dtype=torch.float64)
    d = A.diagonal()
    plain = conjugate_gradient(K, Y, shift=SHIFT, tol=1e-10)
    pre = conjugate_gradient(K, Y, shift=SHIFT, tol=1e-10, preconditioner=lambda R: R / d[:, None])
    torch.testing.assert_close(pre.solution, REF, rtol=1e-6, atol=1e-6)
    # an exact preconditioner converges in one step
    Ainv = torch.linalg.inv(A)
    exact = conjugate_gradient(K, Y, shift=SHIFT, tol=1e-10, preconditioner=lambda R: Ainv @ R)
    assert exact.iterations == 1 and plain.iterations > 1
    warm = conjugate_gradient(K, Y, shift=SHIFT, tol=1e-10, x0=REF)
    assert warm.iterations == 0 and warm.converged


def test_bad_inputs():
    with pytest.raises(InputError, match="A: expected a square"):
        conjugate_gradient(torch.ones(3, 4), torch.ones(3))
    with pytest.raises(InputError, match="B: expected shape"):
        conjugate_gradient(K, torch.ones(5))
    with pytest.raises(InputError, match="A: expected a tensor"):
        conjugate_gradient("matrix", torch.ones(5))
    with pytest.raises(InputError, match="tol"):
        conjugate_gradient(K, Y, tol=0.0)
