"""Molecule batches and loaders (issue 3): graphs and fingerprints against RDKit, dataset
loaders against the CSV files read by pandas."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kernelkit.data._molecules import MoleculeBatch, is_molecule_input, parse_molecules
from kernelkit.utils._errors import InputError

Chem = pytest.importorskip("rdkit.Chem")
from rdkit.Chem import rdFingerprintGenerator  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
SMILES = ["CCO", "c1ccccc1C=O", "C#N", "OC(=O)CCl", "[Na+].[Cl-]"]


def test_graphs_of_molecules():
    batch = MoleculeBatch.from_molecules(SMILES).to_graphs()
    for i, s in enumerate(SMILES):
        mol = Chem.MolFromSmiles(s)
        A = Chem.GetAdjacencyMatrix(mol)
        np.testing.assert_array_equal(batch.adjacency(i).toarray(), A)
    from kernelkit.data._graphs import label_codes

    benz = MoleculeBatch.from_molecules(["c1ccccc1C=O"]).to_graphs()
    np.testing.assert_array_equal(benz.node_labels, label_codes(list("CCCCCCCO")))
    assert set(benz.edge_labels) == set(label_codes(["AROMATIC", "SINGLE", "DOUBLE"]))


@pytest.mark.parametrize("counts", [False, True])
def test_fingerprints_equal_rdkit(counts):
    gen = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=512)
    dense = MoleculeBatch.from_molecules(SMILES).fingerprint_matrix(
        radius=2, n_bits=512, counts=counts, dense=True
    )
    for i, s in enumerate(SMILES):
        mol = Chem.MolFromSmiles(s)
        ref = gen.GetCountFingerprintAsNumPy(mol) if counts else gen.GetFingerprintAsNumPy(mol)
        np.testing.assert_array_equal(dense[i], ref)


def test_batch_indexing_and_detection():
    batch = MoleculeBatch.from_molecules(SMILES)
    assert len(batch[1:4]) == 3 and len(batch[np.array([0, 0])]) == 2 and len(batch[2]) == 1
    assert is_molecule_input(SMILES) and is_molecule_input(batch)
    assert is_molecule_input([Chem.MolFromSmiles("C")])
    assert not is_molecule_input([[0, 1]]) and not is_molecule_input("CCO")


def test_invalid_smiles_error(capfd):
    with pytest.raises(InputError, match=r"X\[1\]: invalid SMILES 'C\(C' "):
        parse_molecules(["C", "C(C"])
    assert capfd.readouterr().err == ""
    with pytest.raises(InputError, match="expected a list of SMILES"):
        parse_molecules("CCO")


@pytest.mark.skipif(not (DATA / "solubility").is_dir(), reason="shared data not found")
def test_loaders_equal_pandas():
    pd = pytest.importorskip("pandas")
    from kernelkit.data._molecule_datasets import load_esol, load_solubility

    ds = load_solubility(DATA)
    df = pd.read_csv(DATA / "solubility" / "solubility.csv")
    assert ds.smiles == df.smiles.tolist() and len(ds) == 1282
    assert ds.classes == ["(A) low", "(B) medium", "(C) high"]
    np.testing.assert_array_equal(np.asarray(ds.classes)[ds.target], df.SOL_classification)
    np.testing.assert_array_equal(
        load_solubility(DATA / "solubility", target="SOL", split="test").target,
        df[df.split == "test"].SOL,
    )
    esol = load_esol(DATA)
    # the column holds 17-digit decimals, which pandas < 3's default C parser rounds
    # differently from Python's correctly rounded float(): pandas splits, float() parses
    col = "measured log solubility in mols per litre"
    de = pd.read_csv(DATA / "esol" / "ESOL.csv", dtype={col: str})
    np.testing.assert_array_equal(esol.target, de[col].map(float))
    with pytest.raises(InputError, match="data_dir"):
        load_esol(DATA / "nowhere")
