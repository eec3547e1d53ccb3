"""Box-constrained QP by coordinate descent against SciPy's bound-constrained L-BFGS-B."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.optimize import minimize

from kernelkit.solvers import box_qp
from kernelkit.solvers._boxqp import projected_gradient
from kernelkit.utils._errors import InputError


def _problem(seed, n=25):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n + 5))
    Q = A @ A.T / n + 0.1 * np.eye(n)
    c = rng.standard_normal(n)
    return Q, c


def _scipy(Q, c, upper):
    n = len(c)
    res = minimize(
        lambda x: (0.5 * x @ Q @ x - c @ x, Q @ x - c),
        np.zeros(n),
        jac=True,
        method="L-BFGS-B",
        bounds=[(0, None if np.isinf(u) else u) for u in np.broadcast_to(upper, (n,))],
        options={"ftol": 1e-16, "gtol": 1e-12, "maxiter": 10000},
    )
    return res.x


@pytest.mark.parametrize("upper", [0.3, np.inf])
def test_box_qp_matches_lbfgsb(upper):
    Q, c = _problem(0)
    res = box_qp(torch.as_tensor(Q), c, upper, tol=1e-12, max_iter=10000)
    assert res.converged and res.certificate <= 1e-12
    x = res.solution.numpy()
    assert x.min() >= 0 and x.max() <= upper
    np.testing.assert_allclose(x, _scipy(Q, c, upper), atol=1e-6)
    np.testing.assert_allclose(res.gradient.numpy(), Q @ x - c, atol=1e-12)
    # both bounds are active somewhere in the bounded problem
    if np.isfinite(upper):
        assert (x == 0).any() and (x == upper).any()


def test_certificate_callback_stops_the_sweeps():
    Q, c = _problem(1)
    calls = []

    def certificate(x, g):
        calls.append(projected_gradient(x, g, np.full(len(x), np.inf)))
        return calls[-1]

    res = box_qp(Q, c, np.inf, tol=1e-3, certificate=certificate)
    assert res.iterations == len(calls) and calls[-1] <= 1e-3 < max(calls[:-1] or [1.0])


def test_box_qp_rejects_bad_input():
    Q, c = _problem(2, n=4)
    with pytest.raises(InputError, match="upper: expected bounds > 0"):
        box_qp(Q, c, -1.0)
    Q[1, 1] = 0.0
    with pytest.raises(InputError, match="Q: expected a positive diagonal"):
        box_qp(Q, c, 1.0)
    with pytest.raises(InputError, match="Q: expected a square"):
        box_qp(np.ones((3, 4)), c, 1.0)
