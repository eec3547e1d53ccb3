"""Chemistry inputs as chemists keep them: invalid SMILES named or skipped, detection on the
whole input, SD files, .smi headers, encodings and delimiters of tables."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from kernelkit.data import load_esol
from kernelkit.data._detect import detect_input_kind, drop_invalid_records
from kernelkit.data._molecules import InvalidRecordsError, parse_molecules
from kernelkit.data.readers import read_data
from kernelkit.utils._errors import DataFileError
from kernelkit.utils._kinds import InputKind

pytest.importorskip("rdkit")


@pytest.fixture(scope="module")
def esol():
    data = load_esol()
    return list(data.smiles[:120]), np.asarray(data.target[:120])


def test_parse_names_every_invalid_record_with_a_count():
    with pytest.raises(InvalidRecordsError, match=r"^2 of 4 records of X") as info:
        parse_molecules(["CCO", "C1CC", "c1ccccc1", "xyz"])
    assert info.value.indices == [1, 3]
    assert "X[1]: invalid SMILES 'C1CC'" in str(info.value) and "X[3]" in str(info.value)


def test_detection_decides_on_the_whole_input_and_reports(esol):
    smiles, _ = esol
    assert detect_input_kind(smiles) is InputKind.MOLECULE
    bad = [*smiles[:50], "C1CC(", *smiles[50:]]
    with pytest.warns(UserWarning, match=r"detected as molecules \(120 of 121 .*X\[50\]"):
        assert detect_input_kind(bad) is InputKind.MOLECULE
    assert detect_input_kind(["ACGT", "GGCA", "TTTA"]) is InputKind.STRING


def test_one_bad_smiles_is_an_error_or_skipped_to_the_clean_fit(esol):
    from kernelkit import KernelRidge

    smiles, y = esol
    bad = [*smiles[:30], "C1CC(", *smiles[30:]]
    y_bad = np.concatenate([y[:30], [100.0], y[30:]])
    with (
        warnings.catch_warnings(),
        pytest.raises(InvalidRecordsError, match=r"1 of 121 records .*X\[30\]: invalid SMILES"),
    ):
        warnings.simplefilter("ignore")
        KernelRidge().fit(bad, y_bad)
    with pytest.warns(UserWarning, match=r"left out 1 of 121 records .*X\[30\] = 'C1CC\('"):
        skipped = KernelRidge(on_error="skip").fit(bad, y_bad)
    clean = KernelRidge().fit(smiles, y)
    test = ["CCO", "c1ccccc1O", "CC(C)CC(=O)O"]
    np.testing.assert_array_equal(skipped.predict(test), clean.predict(test))
    assert type(skipped.kernel_).__name__ == "Tanimoto"


def test_drop_invalid_keeps_targets_and_weights_aligned():
    X, y, w = drop_invalid_records(
        ["CCO", "nope", "CCN"], np.array([1.0, 2.0, 3.0]), [1, 2, 3], InputKind.MOLECULE, "skip"
    )
    assert X == ["CCO", "CCN"] and y.tolist() == [1.0, 3.0] and w == [1, 3]
    with pytest.raises(InvalidRecordsError, match="none of the 1 records"):
        drop_invalid_records(["nope"], [1.0], None, InputKind.MOLECULE, "skip")


def test_smi_reader_counts_invalid_records_and_skips_them(tmp_path):
    path = tmp_path / "m.smi"
    path.write_text("SMILES Name\nCCO ethanol\nC1CC broken\nc1ccccc1 benzene\nxx worse\n")
    with pytest.raises(
        DataFileError,
        match=r"m.smi: 2 of 4 records are not valid SMILES: "
        r"line 3: 'C1CC'; line 5: 'xx'; .*--skip-invalid",
    ):
        read_data(path)
    data = read_data(path, on_error="skip")
    assert data.items == ["CCO", "c1ccccc1"] and data.ids == ["ethanol", "benzene"]
    assert data.skipped == [3, 5] and data.lines == [2, 4]


def test_smi_without_header_keeps_the_first_molecule(tmp_path):
    path = tmp_path / "m.smi"
    path.write_text("CCO\nCCN amine\n")
    data = read_data(path)
    assert data.items == ["CCO", "CCN"] and data.ids == ["1", "amine"]


_MOLBLOCK = """{title}
  RDKit          2D

  3  2  0  0  0  0  0  0  0  0999 V2000
    0.0000    0.0000    0.0000 C   0  0
    1.2990    0.7500    0.0000 C   0  0
    2.5981   -0.0000    0.0000 {atom}   0  0
  1  2  1  0
  2  3  1  0
M  END
"""


def _sdf(records):
    blocks = []
    for title, atom, props in records:
        items = "".join(f"> <{k}>\n{v}\n\n" for k, v in props.items())
        blocks.append(_MOLBLOCK.format(title=title, atom=atom) + items + "$$$$\n")
    return "".join(blocks)


def test_sdf_records_properties_as_columns_and_titles_as_ids(tmp_path):
    from rdkit import Chem

    path = tmp_path / "m.sdf"
    path.write_text(
        _sdf([("mol-A", "O", {"logS": "-0.5", "source": "x"}), ("mol-B", "N", {"logS": "1.5"})])
    )
    data = read_data(path, target="logS")
    assert data.kind is InputKind.MOLECULE and data.ids == ["mol-A", "mol-B"]
    assert data.items == [Chem.MolToSmiles(Chem.MolFromSmiles(s)) for s in ("CCO", "CCN")]
    assert data.columns == {"logS": ["-0.5", "1.5"], "source": ["x", ""]}
    assert data.target("logS").values.tolist() == [-0.5, 1.5]


def test_sdf_bad_record_named_or_skipped(tmp_path):
    path = tmp_path / "m.sdf"
    text = _sdf([("a", "O", {})]) + "b\n  not a mol block\n$$$$\n" + _sdf([("c", "N", {})])
    path.write_text(text)
    with pytest.raises(DataFileError, match=r"1 of 3 records are not molecules RDKit can read"):
        read_data(path)
    data = read_data(path, on_error="skip")
    assert data.ids == ["a", "c"] and data.skipped == [text.splitlines().index("b") + 1]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8-sig", "utf-16-le"])
def test_tables_in_unicode_encodings(tmp_path, encoding):
    path = tmp_path / "v.csv"
    path.write_text("a,b,y\n1,2,3\n4,5,6\n", encoding=encoding)
    data = read_data(path, target="y")
    np.testing.assert_array_equal(data.items, [[1, 2], [4, 5]])
    assert data.feature_names == ["a", "b"]


def test_semicolon_table_and_named_latin1(tmp_path):
    path = tmp_path / "v.csv"
    path.write_text("a;b;y\n1;2;3\n4;5;6\n")
    data = read_data(path, target="y")
    assert data.feature_names == ["a", "b"]
    path.write_bytes("name,x\ncaf\xe9,1\n".encode("latin-1"))
    with pytest.raises(DataFileError, match=r"v.csv:2: not UTF-8 text \(byte 0xe9\); save"):
        read_data(path)


def test_a_huge_cell_is_a_named_error(tmp_path):
    path = tmp_path / "v.csv"
    path.write_text("a,b\n" + "1" * 200_000 + ",2\n3,4\n")
    with pytest.raises(
        DataFileError,
        match=r"v.csv:2: column 'a': expected a finite number, "
        r"got '1111.*\(200000 characters\)",
    ):
        read_data(path)


# ---------------------------------------------------------------------- fingerprints
_MOLS = ["CCO", "c1ccccc1O", "CC(=O)Oc1ccccc1C(=O)O", "CN1C=NC2=C1C(=O)N(C(=O)N2C)C", "CCCCN"]


@pytest.mark.parametrize("kind", ["atom-pair", "torsion", "maccs", "morgan"])
def test_tanimoto_on_rdkit_fingerprints_matches_rdkit(kind):
    """Bit Tanimoto against RDKit's BulkTanimotoSimilarity of the same fingerprints."""
    from rdkit import Chem, DataStructs
    from rdkit.Chem import MACCSkeys, rdFingerprintGenerator

    from kernelkit.gram import gram
    from kernelkit.kernels import Tanimoto

    mols = [Chem.MolFromSmiles(s) for s in _MOLS]
    if kind == "maccs":
        fps = [MACCSkeys.GenMACCSKeys(m) for m in mols]
    else:
        make = {
            "atom-pair": lambda: rdFingerprintGenerator.GetAtomPairGenerator(
                fpSize=1024, countSimulation=False
            ),
            "torsion": lambda: rdFingerprintGenerator.GetTopologicalTorsionGenerator(
                fpSize=1024, countSimulation=False
            ),
            "morgan": lambda: rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=1024),
        }[kind]()
        fps = [make.GetFingerprint(m) for m in mols]
    expected = np.array([DataStructs.BulkTanimotoSimilarity(fp, fps) for fp in fps])
    K = np.asarray(gram(Tanimoto(n_bits=1024, fingerprint=kind), _MOLS))
    np.testing.assert_allclose(K, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", ["atom-pair", "torsion"])
def test_minmax_on_count_fingerprints_matches_rdkit(kind):
    """MinMax on unfolded counts equals RDKit's Tanimoto of sparse count fingerprints."""
    from rdkit import Chem, DataStructs
    from rdkit.Chem import rdFingerprintGenerator

    from kernelkit.gram import gram
    from kernelkit.kernels import MinMax

    gen = (
        rdFingerprintGenerator.GetAtomPairGenerator()
        if kind == "atom-pair"
        else rdFingerprintGenerator.GetTopologicalTorsionGenerator()
    )
    fps = [gen.GetSparseCountFingerprint(Chem.MolFromSmiles(s)) for s in _MOLS]
    expected = np.array([DataStructs.BulkTanimotoSimilarity(fp, fps) for fp in fps])
    K = np.asarray(gram(MinMax(n_bits=None, fingerprint=kind), _MOLS))
    np.testing.assert_allclose(K, expected, rtol=1e-12, atol=1e-12)


def test_fingerprint_parameter_is_checked():
    from kernelkit.kernels import Tanimoto

    with pytest.raises(ValueError, match="fingerprint: expected one of"):
        Tanimoto(fingerprint="ecfp")
    with pytest.raises(ValueError, match="MACCS keys are bits"):
        Tanimoto(fingerprint="maccs", counts=True)


def test_standardisation_strips_salts_and_neutralises(tmp_path):
    from rdkit import Chem

    from kernelkit.data._molecules import standardize_smiles

    canon = [Chem.MolToSmiles(Chem.MolFromSmiles(s)) for s in ("CC(=O)O", "CN", "c1ccccc1O")]
    assert standardize_smiles(["CC(=O)[O-].[Na+]", "C[NH3+].[Cl-]", "Oc1ccccc1", "C1CC("]) == [
        *canon,
        "C1CC(",
    ]
    path = tmp_path / "m.smi"
    path.write_text("CC(=O)[O-].[Na+] acetate\nOc1ccccc1 phenol\n")
    data = read_data(path, standardize=True)
    assert data.items == [canon[0], canon[2]] and data.standardized
    assert not read_data(path).standardized


@pytest.mark.parametrize(
    "make",
    [
        lambda **kw: __import__("kernelkit").KernelSVC(**kw),
        lambda **kw: __import__("kernelkit").KernelLogisticRegression(lam=1e-3, **kw),
        lambda **kw: __import__("kernelkit").BiasFreeSVC(**kw),
        lambda **kw: __import__("kernelkit").GaussianProcessRegressor(random_state=0, **kw),
    ],
    ids=["KernelSVC", "KernelLogisticRegression", "BiasFreeSVC", "GaussianProcessRegressor"],
)
def test_every_supervised_estimator_skips_bad_smiles_to_the_clean_fit(make, esol):
    """``on_error`` is one route for every supervised estimator: ``"raise"`` names the bad
    record, ``"skip"`` fits what the clean records fit."""
    smiles, y = esol
    y = np.asarray(y) if "GaussianProcess" in type(make()).__name__ else (y > np.median(y))
    bad = [*smiles[:30], "C1CC(", *smiles[30:]]
    y_bad = np.concatenate([y[:30], y[:1], y[30:]])
    with warnings.catch_warnings(), pytest.raises(InvalidRecordsError, match=r"X\[30\]"):
        warnings.simplefilter("ignore")
        make().fit(bad, y_bad)
    with pytest.warns(UserWarning, match=r"left out 1 of 121 records .*X\[30\] = 'C1CC\('"):
        skipped = make(on_error="skip").fit(bad, y_bad)
    clean = make().fit(smiles, y)
    test = ["CCO", "c1ccccc1O", "CC(C)CC(=O)O"]
    np.testing.assert_allclose(skipped.predict(test), clean.predict(test), rtol=1e-10)
