"""The physico-chemical auto-correlation kernel against a loop and the constant sequence."""

from __future__ import annotations

import numpy as np
import pytest

from kernelkit.kernels import PhysicoChemical
from kernelkit.kernels._physico_chemical import property_table
from kernelkit.testing import check_kernel
from kernelkit.utils._errors import InputError

LETTERS = "ACDEFGHIKLMNPQRSTVWY"
KD = {"A": 1.8, "R": -4.5, "N": -3.5, "D": -3.5, "C": 2.5, "Q": -3.5, "E": -3.5, "G": -0.4,
      "H": -3.2, "I": 4.5, "L": 3.8, "K": -3.9, "M": 1.9, "F": 2.8, "P": -1.6, "S": -0.8,
      "T": -0.7, "W": -0.9, "Y": -1.3, "V": 4.2}  # fmt: skip
SEQS = ["MKVLAAGIVW", "HEAGAWGHEE", "CLIVMMNRLM", "WWKKLLGGPA", "GLF"]


def _r(seq, h, lags):
    """``r_j = (1/(n-j)) sum_i h(x_i) h(x_{i+j})`` by a double loop (0 when n <= j)."""
    n = len(seq)
    return [
        sum(h[seq[i]] * h[seq[i + j]] for i in range(n - j)) / (n - j) if n > j else 0.0
        for j in range(1, lags + 1)
    ]


def test_autocorrelations_by_a_loop_and_the_linear_and_gaussian_kernels():
    values = np.array([KD[a] for a in LETTERS])
    z = dict(zip(LETTERS, (values - values.mean()) / values.std(), strict=True))
    kernel = PhysicoChemical(4, "hydrophobicity")
    F = np.array([_r(s, z, 4) for s in SEQS])
    np.testing.assert_allclose(kernel(SEQS).numpy(), F @ F.T, rtol=1e-12)
    gauss = PhysicoChemical(4, "hydrophobicity", sigma=1.5)
    d2 = ((F[:, None] - F[None]) ** 2).sum(-1)
    np.testing.assert_allclose(gauss(SEQS).numpy(), np.exp(-d2 / (2 * 1.5**2)), rtol=1e-10)
    assert gauss.features(gauss.prepare(SEQS)) is None  # not a linear kernel of features
    np.testing.assert_allclose(kernel([s.lower() for s in SEQS], SEQS).numpy(), F @ F.T)


def test_constant_sequence_gives_h_squared_and_unknown_residue_is_zero():
    kernel = PhysicoChemical(3, ["hydrophobicity", "polarity"])
    table = property_table(["hydrophobicity", "polarity"])
    F = kernel.autocorrelations(kernel.prepare(["LLLLLL"])).numpy().reshape(2, 3)
    h = table[:, LETTERS.index("L")]
    np.testing.assert_allclose(F, np.repeat(h[:, None] ** 2, 3, axis=1))
    G = kernel.autocorrelations(kernel.prepare(["LXL"])).numpy().reshape(2, 3)
    np.testing.assert_allclose(G[:, 0], 0.0, atol=1e-15)  # both lag-1 pairs hold X
    np.testing.assert_allclose(G[:, 1], h**2)


def test_check_kernel_and_bad_properties():
    check_kernel(PhysicoChemical(3), SEQS, SEQS[:2])
    check_kernel(PhysicoChemical(2, np.arange(40.0).reshape(2, 20), sigma=1.0), SEQS, SEQS[:2])
    with pytest.raises(InputError, match="properties: expected names"):
        PhysicoChemical(2, "charge")
    with pytest.raises(InputError, match=r"properties: expected a finite \(P, 20\) table"):
        PhysicoChemical(2, np.ones((2, 5)))
