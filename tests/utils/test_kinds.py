"""The input-kind vocabulary: values, plurals, parsing and the kernels that declare a kind."""

import pytest

from kernelkit.kernels import (
    CommuteTime,
    Gaussian,
    Precomputed,
    Spectrum,
    Tanimoto,
    WeisfeilerLehman,
)
from kernelkit.utils._errors import InputError
from kernelkit.utils._kinds import InputKind


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("vector", InputKind.VECTOR),
        ("vectors", InputKind.VECTOR),
        ("Sequences", InputKind.STRING),
        ("string", InputKind.STRING),
        ("graphs", InputKind.GRAPH),
        ("molecules", InputKind.MOLECULE),
        ("gram", InputKind.GRAM),
        (InputKind.NODE, InputKind.NODE),
    ],
)
def test_parse_values_and_plurals(text, kind):
    assert InputKind.parse(text) is kind


def test_kind_is_a_string_that_prints_its_value():
    assert InputKind.VECTOR == "vector"
    assert f"{InputKind.STRING}" == "string"
    assert repr(InputKind.GRAPH) == "'graph'"
    assert InputKind.STRING.plural == "sequences"


def test_unknown_kind_names_the_valid_ones():
    with pytest.raises(InputError, match=r"vector/vectors.*got 'images'"):
        InputKind.parse("images")


@pytest.mark.parametrize(
    ("kernel", "kind"),
    [
        (Gaussian(), InputKind.VECTOR),
        (Spectrum(k=2), InputKind.STRING),
        (WeisfeilerLehman(), InputKind.GRAPH),
        (Tanimoto(), InputKind.MOLECULE),
        (Precomputed(), InputKind.GRAM),
        (CommuteTime(graph=[(0, 1), (1, 2)]), InputKind.NODE),
        ((Gaussian() + Gaussian(2.0)).normalized(), InputKind.VECTOR),
    ],
)
def test_kernels_declare_an_input_kind(kernel, kind):
    assert kernel.input_kind is kind
