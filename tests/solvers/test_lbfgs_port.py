"""kernelkit's L-BFGS against the oracle ``torch.optim.LBFGS``: the same iterates, bit for bit.

``lbfgs`` follows the same two-loop recursion and strong-Wolfe line search without
``torch.optim`` (whose ``Optimizer`` imports ``torch._dynamo``, seconds of start-up).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

import pytest
import torch

from kernelkit.solvers import lbfgs

_gen = torch.Generator().manual_seed(0)
_A = torch.randn(30, 30, generator=_gen, dtype=torch.float64)
_A = _A @ _A.T + 0.1 * torch.eye(30, dtype=torch.float64)
_b = torch.randn(30, generator=_gen, dtype=torch.float64)

OBJECTIVES = {
    "rosenbrock": lambda x: ((1 - x[:-1]) ** 2).sum() + 100 * ((x[1:] - x[:-1] ** 2) ** 2).sum(),
    "quadratic": lambda x: 0.5 * x @ _A.to(x.dtype) @ x - _b.to(x.dtype) @ x,
    "quartic": lambda x: torch.logsumexp(torch.stack([x.sum(), (x**2).sum()]), 0) + (x**4).sum(),
}
OPTIONS = [
    {"max_iter": 100, "history_size": 20, "tolerance_change": 1e-9},
    {"max_iter": 7, "max_eval": 9},
    {"max_iter": 50, "line_search": None, "lr": 0.01},
]


def _torch_lbfgs(f, p, line_search="strong_wolfe", **options):
    opt = torch.optim.LBFGS([p], line_search_fn=line_search, **options)

    def closure():
        opt.zero_grad()
        value = f(p)
        value.backward()
        return value

    opt.step(closure)
    return opt.state[p]["n_iter"], opt.state[p]["func_evals"]


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("name", sorted(OBJECTIVES))
@pytest.mark.parametrize("options", OPTIONS)
def test_same_iterates_as_torch(dtype, name, options):
    f = OBJECTIVES[name]
    x0 = torch.linspace(-1.5, 1.2, 30, dtype=dtype)
    p_torch, p_ours = x0.clone().requires_grad_(), x0.clone().requires_grad_()
    n_iter, n_eval = _torch_lbfgs(f, p_torch, **options)
    res = lbfgs(lambda: f(p_ours), [p_ours], **options)
    assert (res.n_iter, res.n_eval) == (n_iter, n_eval)
    assert torch.equal(p_ours, p_torch)


def test_several_parameters_and_converged_flag():
    a = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    b = torch.zeros(2, 2, dtype=torch.float64, requires_grad=True)
    res = lbfgs(lambda: ((a - 1) ** 2).sum() + ((b + 2) ** 2).sum(), [a, b], max_iter=50)
    assert res.converged and res.n_iter < 50
    assert torch.allclose(a, torch.ones(3, dtype=torch.float64))
    assert torch.allclose(b, torch.full((2, 2), -2.0, dtype=torch.float64))


def test_closed_form_gradient_gives_the_autograd_iterates():
    """``returns_gradient``: a multinomial logistic loss over two parameters (weights and
    bias, flattened in order) with its gradient written out takes the same steps as with
    autograd's gradient, up to rounding."""
    gen = torch.Generator().manual_seed(1)
    X = torch.randn(40, 5, generator=gen, dtype=torch.float64)
    y = torch.randint(0, 3, (40,), generator=gen)
    onehot = torch.nn.functional.one_hot(y, 3).to(torch.float64)

    def loss(W, b):
        return torch.nn.functional.cross_entropy(X @ W.T + b, y) + 0.01 * (W**2).sum()

    W_auto = torch.zeros(3, 5, dtype=torch.float64, requires_grad=True)
    b_auto = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    auto = lbfgs(lambda: loss(W_auto, b_auto), [W_auto, b_auto], max_iter=30)
    W, b = torch.zeros(3, 5, dtype=torch.float64), torch.zeros(3, dtype=torch.float64)

    def closed_form():
        residual = (torch.softmax(X @ W.T + b, 1) - onehot) / len(y)
        return loss(W, b), (residual.T @ X + 0.02 * W, residual.sum(0))

    ours = lbfgs(closed_form, [W, b], max_iter=30, returns_gradient=True)
    assert (ours.n_iter, ours.n_eval) == (auto.n_iter, auto.n_eval)
    torch.testing.assert_close(W, W_auto.detach(), rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(b, b_auto.detach(), rtol=1e-10, atol=1e-12)


def test_no_dynamo_import():
    code = (
        "import sys, torch\n"
        "from kernelkit.solvers import lbfgs\n"
        "x = torch.zeros(2, requires_grad=True)\n"
        "lbfgs(lambda: ((x - 1) ** 2).sum(), [x])\n"
        "print('torch._dynamo' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_train_module_step_test_is_in_the_parameters_units():
    """A small-scale, ill-conditioned quadratic (parameters ~1e-3, objective ~1e5, minimum 0
    at ``c``): the change test ``tol * |J_0|`` is in the objective's units; used as the step
    threshold too (``torch.optim.LBFGS``'s one tolerance) it stops L-BFGS after its first
    step, far from ``c``.  ``train_module`` scales the step test by the parameters' initial
    size and goes on to the change test near the minimum."""
    from kernelkit.solvers import train_module

    n, tol = 100, 1e-5
    w = torch.logspace(0, 4, n, dtype=torch.float64)
    c = 1e-3 * torch.linspace(1.0, 2.0, n, dtype=torch.float64)

    def problem() -> tuple[torch.nn.Module, Callable[[], torch.Tensor]]:
        module = torch.nn.Module()
        module.x = torch.nn.Parameter(0.5 * c.clone())
        return module, lambda: 1e6 * (w * (module.x - c) ** 2).sum()

    module, objective = problem()
    j0 = float(objective().detach())
    result = train_module(module, objective, max_iter=500, tol=tol)
    assert result.stopped == "converged" and result.n_iter > 1
    # the minimum is 0 at c: within 1e-3 of J_0 (the change test stops at tol * |J_0| steps)
    assert float(objective().detach()) < 1e-3 * j0
    # the one tolerance of torch.optim.LBFGS: stopped by the step test after one iteration
    module, objective = problem()
    one = lbfgs(objective, [module.x], max_iter=500, tolerance_grad=tol, tolerance_change=tol * j0)
    assert one.n_iter == 1
    assert float(objective().detach()) > 0.1 * j0
