"""StringBatch (encoding, ragged layout, indexing, validation) and the string dataset loaders.

Oracles: the encoding is checked against Python's own ``str.index`` / ``ord`` character by
character; the loaders against the files read back by pandas (as the data READMEs do).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from kernelkit.data._datasets import AMP_SETS, load_amp, load_promoter
from kernelkit.data._strings import ALPHABETS, StringBatch, as_string_batch, resolve_alphabet
from kernelkit.utils._errors import InputError

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
SEQS = ["GATTACA", "AC", "TTTTG", "C"]


def decode(batch: StringBatch, i: int) -> str:
    a, b = batch.offsets[i], batch.offsets[i + 1]
    return "".join(batch.alphabet[c] for c in batch.codes[a:b])


@pytest.mark.parametrize("alphabet", [None, "dna", "TGCA", "ACGTN"])
def test_encoding_round_trips(alphabet):
    batch = StringBatch.from_sequences(SEQS, alphabet)
    assert len(batch) == 4
    np.testing.assert_array_equal(batch.lengths, [len(s) for s in SEQS])
    assert batch.offsets.tolist() == [0, 7, 9, 14, 15]
    for i, s in enumerate(SEQS):
        assert decode(batch, i) == s
        np.testing.assert_array_equal(
            batch.codes[batch.offsets[i] : batch.offsets[i + 1]],
            [batch.alphabet.index(c) for c in s],
        )
    expected = {None: "ACGT", "dna": "ACGT", "TGCA": "TGCA", "ACGTN": "ACGTN"}[alphabet]
    assert batch.alphabet == expected
    np.testing.assert_array_equal(batch.code_points(), [ord(c) for c in "".join(SEQS)])


def test_named_alphabets():
    assert resolve_alphabet("dna") == "ACGT"
    assert resolve_alphabet("protein") == "ACDEFGHIKLMNPQRSTVWY" == ALPHABETS["protein"]
    assert resolve_alphabet(None) is None
    with pytest.raises(InputError, match="distinct"):
        resolve_alphabet("ACCA")
    with pytest.raises(InputError, match="non-empty"):
        resolve_alphabet("")
    with pytest.raises(InputError, match="alphabet"):
        resolve_alphabet(3)


def test_unicode_inferred_alphabet():
    batch = StringBatch.from_sequences(["héllo", "中文", "abc"])
    # ASCII a-z fold to upper case (the case rule); other characters are kept
    assert batch.alphabet == "".join(sorted(set("HéLLO中文ABC")))
    assert decode(batch, 1) == "中文"


@pytest.mark.parametrize(
    ("idx", "expected"),
    [
        (2, ["TTTTG"]),
        (-1, ["C"]),
        (np.int64(0), ["GATTACA"]),
        (slice(1, 3), ["AC", "TTTTG"]),
        (slice(None, None, -2), ["C", "AC"]),
        ([3, 0, 3], ["C", "GATTACA", "C"]),
        (np.array([1, 2]), ["AC", "TTTTG"]),
        (torch.tensor([2, 1]), ["TTTTG", "AC"]),
        (np.array([True, False, False, True]), ["GATTACA", "C"]),
    ],
)
def test_getitem_returns_a_batch(idx, expected):
    batch = StringBatch.from_sequences(SEQS, "dna")
    sub = batch[idx]
    assert isinstance(sub, StringBatch)
    assert list(sub.sequences) == expected
    assert [decode(sub, i) for i in range(len(sub))] == expected
    assert sub.alphabet == batch.alphabet


def test_getitem_out_of_range():
    with pytest.raises(IndexError, match="out of range"):
        StringBatch.from_sequences(SEQS)[4]


def test_padded_view():
    batch = StringBatch.from_sequences(SEQS, "dna")
    codes, lens = batch.padded(pad_value=-1)
    assert codes.shape == (4, 7) and codes.dtype == torch.int64
    assert lens.tolist() == [7, 2, 5, 1]
    for i, s in enumerate(SEQS):
        assert codes[i, : len(s)].tolist() == ["ACGT".index(c) for c in s]
        assert (codes[i, len(s) :] == -1).all()
    points, _ = batch.padded(pad_value=-5, code_points=True)
    assert points[1].tolist() == [ord("A"), ord("C"), -5, -5, -5, -5, -5]


@pytest.mark.parametrize(
    "container",
    [tuple, lambda s: np.array(s, dtype=object), np.array, pd.Series, lambda s: iter(s)],
)
def test_accepted_containers(container):
    batch = StringBatch.from_sequences(container(SEQS), "dna")
    assert list(batch.sequences) == SEQS


def test_reencoding_a_batch():
    batch = StringBatch.from_sequences(SEQS)
    assert as_string_batch(batch) is batch
    same = StringBatch.from_sequences(batch, "ACGT")
    assert same is batch  # inferred alphabet equals the requested one
    other = StringBatch.from_sequences(batch, "TGCA")
    assert other.alphabet == "TGCA" and decode(other, 0) == "GATTACA"
    with pytest.raises(InputError, match="character 'G' at position 0"):
        StringBatch.from_sequences(batch, "ACT")


def test_unknown_character_error_names_index_position_and_character():
    with pytest.raises(InputError) as err:
        StringBatch.from_sequences(["ACGT", "ACGT", "ACUGX"], "dna")
    msg = str(err.value)
    assert "sequence 2" in msg and "position 2" in msg and "'U'" in msg and "'ACGT'" in msg
    assert "2 unknown character(s)" in msg and "write unknown residues as 'N'" in msg
    with pytest.raises(InputError, match="sequence 0 has character 'c' at position 1"):
        StringBatch.from_sequences(["acgt"], "ACGTa")  # an alphabet with both cases keeps case


def test_bad_inputs():
    with pytest.raises(InputError, match="single str"):
        StringBatch.from_sequences("GATTACA")
    with pytest.raises(InputError, match="item 1 is bytes"):
        StringBatch.from_sequences(["AC", b"GT"])
    with pytest.raises(InputError, match="item 2 is NoneType"):
        StringBatch.from_sequences(["AC", "GT", None])
    with pytest.raises(InputError, match="string 1 is empty"):
        StringBatch.from_sequences(["AC", ""])
    with pytest.raises(InputError, match="at least 1 string"):
        StringBatch.from_sequences([])
    with pytest.raises(InputError, match="1-D"):
        StringBatch.from_sequences(np.array([["A", "C"]]))
    with pytest.raises(InputError, match="torch tensor"):
        StringBatch.from_sequences(torch.zeros(3))
    with pytest.raises(InputError, match="expected a list"):
        StringBatch.from_sequences(5)
    empty_ok = StringBatch.from_sequences(["", "AC"], allow_empty=True)
    assert empty_ok.lengths.tolist() == [0, 2]
    with pytest.raises(InputError, match="string 0 is empty"):
        StringBatch.from_sequences(empty_ok, "ACGT")


# ---------------------------------------------------------------------- loaders
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="shared data folder not found")


@needs_data
def test_load_promoter_matches_pandas():
    data = load_promoter(DATA)
    ref = pd.read_csv(DATA / "promoter" / "promotergene.csv")
    assert data.sequences == ref["sequence"].str.upper().tolist()
    np.testing.assert_array_equal(data.y, (ref["class"] == "+").astype(int).to_numpy())
    assert len(data) == 106 and data.y.sum() == 53
    assert {len(s) for s in data.sequences} == {57}
    StringBatch.from_sequences(data.sequences, "dna")  # validates
    assert load_promoter(DATA / "promoter").sequences == data.sequences


@needs_data
@pytest.mark.parametrize("name", AMP_SETS)
def test_load_amp_matches_pandas(name):
    data = load_amp(DATA, name)
    ref = pd.read_csv(
        DATA / "amp" / f"{name}.csv", skiprows=1, names=["sequence", "label"],
        skipinitialspace=True,
    )  # fmt: skip
    assert data.sequences == ref["sequence"].tolist()
    np.testing.assert_array_equal(data.y, ref["label"].to_numpy())
    assert data.y.mean() == 0.5
    StringBatch.from_sequences(data.sequences, "protein")  # only the 20 standard letters


def test_loader_errors(tmp_path):
    with pytest.raises(InputError, match=r"promotergene\.csv"):
        load_promoter(tmp_path)
    with pytest.raises(InputError, match="name: expected one of"):
        load_amp(tmp_path, "nope")
    (tmp_path / "AMPvsTMset.csv").write_text("3,1,TM,AMP\nKKLL,1\nGGAA,0\n")
    with pytest.raises(InputError, match="announces 3 samples, the file has 2"):
        load_amp(tmp_path)
    (tmp_path / "AMPvsTMset.csv").write_text("2,1,TM,AMP\nKKLL,1\nGGAA\n")
    with pytest.raises(InputError, match="line 3"):
        load_amp(tmp_path)
