"""Weighted-degree kernels against brute-force sums over positions, k-mer lengths and shifts."""

from __future__ import annotations

import numpy as np
import pytest

from kernelkit.kernels import Spectrum, UnequalLengthError, WeightedDegree
from kernelkit.kernels._weighted_degree import degree_weights, shift_matrix
from kernelkit.testing import check_kernel
from kernelkit.utils._errors import InputError


def brute_wd(x: str, y: str, d: int, shift: int) -> float:
    """Rätsch et al. 2005, eq. 2, written as nested loops (uniform position weights)."""
    L = len(x)
    total = 0.0
    for k in range(1, d + 1):
        beta = 2.0 * (d - k + 1) / (d * (d + 1))
        for p in range(L - k + 1):
            for s in range(shift + 1):
                if p + s > L - k:
                    break
                delta = 1.0 / (2.0 * (s + 1))
                shifted_x = x[p + s : p + s + k] == y[p : p + k]
                shifted_y = x[p : p + k] == y[p + s : p + s + k]
                hits = shifted_x + shifted_y
                total += beta * delta * hits
    return total


def random_equal(rng, n, L, alphabet="ACGT"):
    letters = np.array(list(alphabet))
    return ["".join(rng.choice(letters, size=L)) for _ in range(n)]


@pytest.mark.parametrize(
    ("degree", "shift", "alphabet"),
    [(1, 0, None), (3, 0, "dna"), (5, 0, None), (3, 2, "dna"), (6, 4, None), (4, 25, "dna")],
)
def test_equals_brute_force_sum(degree, shift, alphabet):
    rng = np.random.default_rng(degree * 10 + shift)
    X = random_equal(rng, 7, 20, "AC")  # a two-letter alphabet: many long matches
    Y = random_equal(rng, 5, 20, "AC")
    alpha = "AC" if alphabet == "dna" else alphabet
    k = WeightedDegree(degree, shift=shift, alphabet=alpha)
    ref = np.array([[brute_wd(x, y, degree, shift) for y in Y] for x in X])
    np.testing.assert_allclose(k(X, Y).numpy(), ref, rtol=0, atol=1e-12)
    ref_xx = np.array([[brute_wd(x, z, degree, shift) for z in X] for x in X])
    np.testing.assert_allclose(k(X).numpy(), ref_xx, rtol=0, atol=1e-12)


def test_protein_hashed_and_exact_keys_agree():
    rng = np.random.default_rng(1)
    X = random_equal(rng, 6, 15, "ACDEFGHIKLMNPQRSTVWY")
    exact = WeightedDegree(4, shift=1, alphabet="protein")(X)
    hashed = WeightedDegree(4, shift=1)(X)
    long = WeightedDegree(14, shift=1, alphabet="protein")  # 20^14 keys: hashed
    np.testing.assert_allclose(exact.numpy(), hashed.numpy(), atol=1e-12)
    ref = np.array([[brute_wd(x, y, 14, 1) for y in X] for x in X])
    np.testing.assert_allclose(long(X).numpy(), ref, atol=1e-12)


def test_degree_one_is_hamming_similarity_and_weights_sum_to_one():
    assert degree_weights(5).sum() == pytest.approx(1.0)
    X = ["ACGT", "ACGA", "TTTT"]
    K = WeightedDegree(1)(X).numpy()
    assert K[0, 1] == 3.0 and K[0, 2] == 1.0 and K[0, 0] == 4.0


def test_shift_matrix_positive_definite_and_kernel_conformance():
    for P in (1, 5, 60):
        for S in (1, 3, 30):
            assert np.linalg.eigvalsh(shift_matrix(P, S)).min() > 0.4
    for kernel, X, Y in WeightedDegree._check_example():
        check_kernel(kernel, X, Y)


def test_named_errors():
    with pytest.raises(UnequalLengthError, match="sequence 1 has length 3"):
        WeightedDegree(2)(["ACGT", "ACG"])
    with pytest.raises(UnequalLengthError, match="training length 4, got length 5"):
        WeightedDegree(2)(["ACGT", "ACGA"], ["ACGTA"])
    assert issubclass(UnequalLengthError, InputError) and issubclass(UnequalLengthError, ValueError)
    with pytest.raises(InputError, match="degree"):
        WeightedDegree(0)
    with pytest.raises(InputError, match="shift"):
        WeightedDegree(2, shift=-1)
    with pytest.raises(InputError, match="not in the alphabet"):
        WeightedDegree(2, alphabet="dna")(["ACGU"])


def test_differs_from_spectrum_where_position_matters():
    """ACGTA and CGTAC share the 4-mer CGTA one position apart: the spectrum sees it, WD
    only with a shift."""
    X = ["ACGTA", "CGTAC"]
    assert Spectrum(4)(X)[0, 1] == 1.0
    assert WeightedDegree(4)(X)[0, 1] == 0.0
    assert WeightedDegree(4, shift=1)(X)[0, 1] > 0.0


def test_kernel_specs_name_the_new_kernels():
    from kernelkit.kernels import ArcCosine, ReLUNTK
    from kernelkit.kernels._specs import build_kernel

    spec = build_kernel("weighted-degree:degree=4,shift=1", "sequences")
    assert isinstance(spec, WeightedDegree) and (spec.degree, spec.shift) == (4, 1)
    assert build_kernel("arccos:order=2", "vectors").order == 2
    assert isinstance(build_kernel("relu-ntk", "vectors"), ReLUNTK)
    assert isinstance(build_kernel("arccos", "vectors"), ArcCosine)


def test_shifted_kernel_on_hand_computed_examples():
    """Values worked out by hand from eq. 2 of Rätsch, Sonnenburg & Schölkopf (2005).

    ``AC`` / ``CA``, d = 1, S = 1: no base matches in place; at shift 1 ``x[1] = y[0] = C``
    and ``x[0] = y[1] = A`` each add ``delta_1 = 1/4``: K = 1/2.
    ``ACG`` / ``TAC``, d = 2 (``beta = (2/3, 1/3)``), S = 1: 1-mers ``A`` and ``C`` match at
    shift 1 (2 x 1/4), the 2-mer ``AC`` at shift 1 (1/4): K = 2/3 * 1/2 + 1/3 * 1/4 = 5/12.
    With S = 0 both are 0; ``AC`` with itself at S = 1 is 2 + 0 (no self-match at shift 1).
    """
    assert float(WeightedDegree(1, shift=1)(["AC"], ["CA"])) == pytest.approx(0.5, abs=1e-15)
    assert float(WeightedDegree(2, shift=1, alphabet="dna")(["ACG"], ["TAC"])) == pytest.approx(
        5.0 / 12.0, abs=1e-15
    )
    assert float(WeightedDegree(2, shift=0)(["ACG"], ["TAC"])) == 0.0
    assert float(WeightedDegree(1, shift=1)(["AC"])) == pytest.approx(2.0, abs=1e-15)
