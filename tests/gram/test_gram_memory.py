"""Measured peak memory of the Gram engine under ``memory_budget``.

The peaks are the resident-set high-water marks of a child process (fixture ``measure_peaks``
of ``tests/conftest.py``), taken around each call after a warm-up call on a small input; the
sizes below make the Gram blocks tens of MB, far above the budget of 1 MiB.  ``SLACK`` is the
stated baseline of the measurement: the kernel updates its RSS counters in batches of 64 page
faults per thread, and Python objects come and go.
"""

from __future__ import annotations

import pytest

MIB = 2**20
SLACK = MIB
BUDGET = MIB

SCRIPT = """
import torch
from kernelkit.gram import GramOperator, gram
from kernelkit.kernels import Gaussian, Polynomial

torch.manual_seed(0)
budget = 1 << 20
out = {}

# gram(): a kernel without a fused block_into (Polynomial: block, then a copy into the tile)
X = torch.randn(3000, 5, dtype=torch.float64)
k = Polynomial(degree=3)
gram(k, X[:300]); gram(k, X[:300], memory_budget=budget)  # warm-up
out["gram_none"], K0 = peak_growth(lambda: gram(k, X))
out["gram_budget"], K1 = peak_growth(lambda: gram(k, X, memory_budget=budget))
out["gram_bytes"] = K0.numel() * 8
out["gram_error"] = float((K0 - K1).abs().max() / K0.abs().max())
del K0, K1

# GramOperator: products without the n x n matrix
V = torch.randn(3000, 3, dtype=torch.float64)
GramOperator(Gaussian(2.0), X[:300], memory_budget=budget) @ V[:300]  # warm-up
op = GramOperator(Gaussian(2.0), X, memory_budget=budget)
out["operator"], R = peak_growth(lambda: op @ V)
ref = Gaussian(2.0)(X) @ V
out["operator_error"] = float((R - ref).abs().max() / ref.abs().max())
del ref

# differentiable mode: forward and backward of <K(Z, Z), W>
n = 1500
Z = torch.randn(n, 3, dtype=torch.float64)
W = torch.randn(n, n, dtype=torch.float64)


def gradient(budget, m=n):
    Zg = Z[:m].clone().requires_grad_(True)
    K = gram(Gaussian(1.5), Zg, memory_budget=budget, differentiable=True)
    loss = (K * W[:m, :m]).sum()
    del K
    loss.backward()
    return Zg.grad


gradient(None, 300); gradient(4 * budget, 300)  # warm-up
out["grad_none"], g0 = peak_growth(lambda: gradient(None))
out["grad_budget"], g1 = peak_growth(lambda: gradient(4 * budget))
out["grad_block_bytes"] = n * n * 8
out["grad_error"] = float((g0 - g1).abs().max() / g0.abs().max())
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def peaks(measure_peaks):
    return measure_peaks(SCRIPT)


def test_gram_scratch_measured_within_budget(peaks):
    # 3000 x 3000 float64 output = 72 MB; measured scratch ~0.3 MiB (budget) vs ~11 MiB
    # (default 4 MiB tiles with the kernel's temporaries)
    scratch = peaks["gram_budget"] - peaks["gram_bytes"]
    assert scratch <= BUDGET + SLACK
    assert peaks["gram_none"] - peaks["gram_bytes"] > scratch + 4 * MIB
    assert peaks["gram_error"] < 1e-14


def test_operator_product_never_holds_the_gram(peaks):
    # K is 72 MB; the product holds one tile and the 3000 x 3 result
    assert peaks["operator"] <= BUDGET + 3000 * 3 * 8 + SLACK
    assert peaks["operator_error"] < 1e-12


def test_differentiable_gram_backward_measured_within_budget(peaks):
    # whole block under autograd: K, the clipped and unclipped distances and the diagonal mask
    # are kept (measured ~5 blocks with the product K * W); checkpointed: K and K * W only
    block = peaks["grad_block_bytes"]
    assert peaks["grad_budget"] <= 2 * block + 4 * BUDGET + SLACK
    assert peaks["grad_none"] >= 4 * block
    assert peaks["grad_error"] < 1e-12
