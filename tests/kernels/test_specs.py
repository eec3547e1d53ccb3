"""Kernel specs ``NAME:param=value`` and the default kernel of each input kind."""

import numpy as np
import pytest
import torch

from kernelkit.kernels import Gaussian, Precomputed, Spectrum, Tanimoto, WeisfeilerLehman
from kernelkit.kernels._specs import (
    KERNEL_SPECS,
    KernelSpecError,
    build_kernel,
    default_kernel,
    median_sigma,
    parse_kernel_spec,
    spec_kind,
)
from kernelkit.utils._kinds import InputKind


def test_parse_types_values_as_the_defaults():
    assert parse_kernel_spec("gaussian:sigma=2.5") == ("gaussian", {"sigma": 2.5})
    assert parse_kernel_spec(" Spectrum : k=4 ") == ("spectrum", {"k": 4})
    assert spec_kind("wl") is InputKind.GRAPH


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("rbf2", "kernel: unknown kernel 'rbf2'; expected one of gaussian"),
        ("gaussian:width=2", "unknown parameter 'width=2' of gaussian; valid parameters: sigma"),
        ("spectrum:k=two", "parameter 'k' of spectrum expects a int, got 'two'"),
    ],
)
def test_bad_specs_name_the_argument(spec, message):
    with pytest.raises(KernelSpecError, match=message):
        parse_kernel_spec(spec)


def test_build_checks_the_kind():
    with pytest.raises(KernelSpecError, match="tanimoto takes molecules, but the input holds"):
        build_kernel("tanimoto", "vectors", argument="kernel")
    k = build_kernel("spectrum:k=4", InputKind.STRING)
    assert isinstance(k, Spectrum) and k.k == 4


def test_median_sigma_equals_a_brute_force_median():
    X = np.random.default_rng(0).normal(size=(40, 3))
    d = [np.linalg.norm(X[i] - X[j]) for i in range(40) for j in range(i + 1, 40)]
    s = sorted(d)
    assert len(s) % 2 == 0  # an even count: np.median is the mean of the two middles
    middle = (s[len(s) // 2 - 1] + s[len(s) // 2]) / 2
    assert median_sigma(torch.as_tensor(X)) == pytest.approx(middle, rel=1e-12)
    with pytest.warns(UserWarning, match="all 5 rows are equal"):
        assert median_sigma(torch.ones(5, 2)) == 1.0


def test_default_kernels_per_kind():
    X = np.random.default_rng(1).normal(size=(30, 2))
    k = default_kernel("vectors", X)
    assert isinstance(k, Gaussian) and k.sigma == pytest.approx(median_sigma(torch.as_tensor(X)))
    assert isinstance(default_kernel(InputKind.MOLECULE), Tanimoto)
    assert isinstance(default_kernel("sequences"), Spectrum) and default_kernel("string").k == 3
    assert isinstance(default_kernel("graph"), WeisfeilerLehman)
    assert isinstance(default_kernel("gram"), Precomputed)
    with pytest.raises(KernelSpecError, match="no default kernel for nodes"):
        default_kernel("node")


def test_every_spec_builds_with_its_defaults():
    for name, (kind, cls) in KERNEL_SPECS.items():
        assert isinstance(build_kernel(name, kind), cls)


def test_weighted_median_sigma_is_the_median_of_the_repeated_rows():
    """Integer weights (zeros included) give np.median of the repeated rows' distances, on
    dense and sparse rows, below and above the 1000-point subset."""
    import scipy.sparse as sp

    from kernelkit.kernels._sparse import SparseRows
    from kernelkit.kernels._specs import weighted_median

    rng = np.random.default_rng(5)
    values, weights = rng.standard_normal(30), rng.integers(0, 4, 30)
    assert weighted_median(values, weights) == np.median(np.repeat(values, weights))
    for n, hi in ((25, 4), (400, 6)):
        X = rng.standard_normal((n, 3))
        w = rng.integers(0, hi, n)
        Xr = np.repeat(X, w, axis=0)
        sigma = median_sigma(torch.as_tensor(X), sample_weight=w)
        assert sigma == pytest.approx(median_sigma(torch.as_tensor(Xr)), rel=1e-12)
        sparse = SparseRows(sp.csr_array(X))
        assert median_sigma(sparse, sample_weight=w) == pytest.approx(sigma, rel=1e-12)
    unit = median_sigma(torch.as_tensor(X), sample_weight=np.ones(n))
    assert median_sigma(torch.as_tensor(X)) == pytest.approx(unit, rel=1e-12)
