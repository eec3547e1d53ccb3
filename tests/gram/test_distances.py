"""Feature-space distances: the median heuristic of the K2AE's first layer against SciPy."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.spatial.distance import pdist

from kernelkit.gram._distances import feature_space_median
from kernelkit.kernels import Gaussian, Linear, Polynomial


@pytest.mark.parametrize("budget", [None, 2000])
def test_linear_kernel_median_is_euclidean_median(budget):
    """With ``Linear()`` the RKHS distance is the Euclidean one: SciPy's ``pdist`` median."""
    X = torch.as_tensor(np.random.default_rng(0).normal(size=(42, 3)))
    kern = Linear()
    got = feature_space_median(kern, kern.prepare(X), memory_budget=budget)
    want = np.median(pdist(X.numpy()))
    assert got == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("budget", [None, 3000])
def test_polynomial_kernel_median_from_explicit_features(budget):
    """Degree-2 homogeneous polynomial kernel: explicit features ``vec(x x^T)``."""
    X = np.random.default_rng(1).normal(size=(30, 2))
    kern = Polynomial(degree=2, scale=1.0, offset=0.0)
    feats = np.einsum("ni,nj->nij", X, X).reshape(len(X), -1)
    got = feature_space_median(kern, kern.prepare(torch.as_tensor(X)), memory_budget=budget)
    assert got == pytest.approx(np.median(pdist(feats)), rel=1e-10)


def test_equal_points_give_one():
    """All distances 0: the documented fallback 1.0."""
    kern = Gaussian(1.0)
    assert feature_space_median(kern, kern.prepare(torch.ones(5, 2))) == 1.0
