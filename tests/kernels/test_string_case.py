"""The case rule and the unknown residue in every string kernel (kernelkit.data._strings).

Every string kernel enrolled in the conformance registry
(:func:`kernelkit.testing._kernels.iter_all_examples`) is checked, so a new string kernel is
covered without an edit here: lower case is the same letter (``k(s, s.lower()) = k(s, s)``)
on DNA and on protein strings, and ``N`` / ``X`` match nothing.
"""

from __future__ import annotations

import importlib.util

import pytest
import torch

from kernelkit.data._strings import StringBatch, case_folds, fold_case, unknown_letter
from kernelkit.kernels import Kernel
from kernelkit.kernels._alignment import LocalAlignment
from kernelkit.kernels._fisher import HMMFisher
from kernelkit.kernels._strings import Mismatch, Spectrum, Subsequence
from kernelkit.kernels._weighted_degree import WeightedDegree
from kernelkit.testing._kernels import iter_all_examples
from kernelkit.utils._errors import InputError

DNA = ["GATTACAGAT", "ACGTTAACGT", "GGGCCCAAAT", "TTAGGCTTAG", "CATCATCATC"]
PROTEIN = ["MKVLAAGIVW", "HEAGAWGHEE", "CLIVMMNRLM", "WWKKLLGGPA", "GLFDIVKKVV"]


def _string_examples() -> list[tuple[str, Kernel]]:
    return [(name, ex[0]) for name, ex in iter_all_examples() if ex[0].input_kind == "string"]


STRING_EXAMPLES = _string_examples()
NEEDS_HMMLEARN = importlib.util.find_spec("hmmlearn") is None


def test_the_registry_holds_every_string_kernel():
    names = {name.split("-")[0] for name, _ in STRING_EXAMPLES}
    expected = {"Spectrum", "Mismatch", "Subsequence", "WeightedDegree", "LocalAlignment"}
    assert expected | {"HMMFisher", "HMMMarginalized", "FeatureNormalizedKernel"} <= names


@pytest.mark.parametrize("name,kernel", STRING_EXAMPLES, ids=[n for n, _ in STRING_EXAMPLES])
def test_lower_case_is_the_same_letter_on_dna_and_protein(name, kernel):
    if name.startswith("HMM") and NEEDS_HMMLEARN:
        pytest.skip("hmmlearn is not installed")
    ran = []
    for data in (DNA, PROTEIN):
        try:
            K = kernel(data)
        except InputError:  # the kernel's alphabet does not hold these letters
            continue
        lower = [s.lower() for s in data]
        torch.testing.assert_close(kernel(lower), K, rtol=1e-12, atol=0)
        torch.testing.assert_close(kernel(data, lower), K, rtol=1e-12, atol=0)
        mixed = [s[:4].lower() + s[4:] for s in data]
        torch.testing.assert_close(kernel(mixed, data), K, rtol=1e-12, atol=0)
        ran.append(data is DNA)
    assert ran, f"{name}: took neither the DNA nor the protein strings"
    if getattr(kernel, "alphabet", "dna") is None:  # any letters: both data sets
        assert ran == [True, False], f"{name}: ran on {ran}"


@pytest.mark.parametrize(
    "kernel",
    [Spectrum(3), Subsequence(2), WeightedDegree(3)],
    ids=["Spectrum", "Subsequence", "WeightedDegree"],
)
def test_kernels_without_an_alphabet_take_dna_and_protein(kernel):
    for data in (DNA, PROTEIN):
        torch.testing.assert_close(kernel([s.lower() for s in data]), kernel(data))


def test_the_rule():
    assert case_folds(None) and case_folds("ACGT") and not case_folds("aAcC")
    assert fold_case("acgtNnß", "ACGT") == "ACGTNNß"  # ASCII only: the length is kept
    assert fold_case("acgt", "aAcCgGtT") == "acgt"
    assert unknown_letter("ACGT") == "N" and unknown_letter("ACGU") == "N"
    assert unknown_letter("ACDEFGHIKLMNPQRSTVWY") == "X" and unknown_letter(None) is None
    batch = StringBatch.from_sequences(["acgN", "ACGT"], "dna")
    assert batch.known.tolist() == [True, True, True, False, True, True, True, True]
    assert batch.code_points()[3] == -1


# ---------------------------------------------------------------------- unknown residues
def test_an_unknown_residue_matches_nothing_in_the_feature_kernels():
    # the 3-mers of ACGNACGT without N: ACG, ACG, CGT
    spectrum = Spectrum(3, alphabet="dna")
    assert float(spectrum(["ACGNACGT"])[0, 0]) == 2**2 + 1
    assert float(spectrum(["NNN"], ["NNN"])[0, 0]) == 0.0
    mismatch = Mismatch(3, 1, alphabet="dna")
    torch.testing.assert_close(mismatch(["ACGNACG"]), 4 * mismatch(["ACG"]))  # ACG twice
    wd = WeightedDegree(1, alphabet="dna")
    # degree 1: the positions where both letters are equal and known
    assert float(wd(["ACNT"], ["ACNT"])[0, 0]) == 3.0
    assert float(wd(["ACNT"], ["ACGT"])[0, 0]) == 3.0


def test_an_unknown_residue_matches_nothing_in_the_dynamic_programmes():
    sub = Subsequence(2, lam=0.5, alphabet="dna")
    torch.testing.assert_close(sub(["ACN"]), sub(["AC"]))  # N adds no subsequence
    la = LocalAlignment()
    la_n = float(la(["MKXV"], ["MKXV"])[0, 0])
    assert la_n < float(la(["MKAV"], ["MKAV"])[0, 0])
    # X aligned with X scores nothing: K_LA(X, X) is the empty alignment's 1
    assert float(la(["X"], ["X"])[0, 0]) == 1.0


@pytest.mark.skipif(NEEDS_HMMLEARN, reason="hmmlearn is not installed")
def test_the_hmm_kernels_refuse_an_unknown_residue_by_name():
    kernel = HMMFisher([1.0], [[1.0]], [[0.25] * 4])
    with pytest.raises(InputError, match="sequence 1 has the unknown-residue letter at position 2"):
        kernel(["ACGT", "ACNT"])
