"""Molecule kernels (issue 3): Tanimoto / MinMax against RDKit's BulkTanimotoSimilarity and
brute-force sums; graph kernels on molecular graphs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from kernelkit.data._molecules import MoleculeBatch
from kernelkit.kernels._graphs import ShortestPath, WeisfeilerLehman
from kernelkit.kernels._molecules import MinMax, Tanimoto
from kernelkit.kernels._random_walk import RandomWalk
from kernelkit.testing import check_kernel
from kernelkit.utils._errors import InputError

Chem = pytest.importorskip("rdkit.Chem")
from rdkit import DataStructs  # noqa: E402
from rdkit.Chem import rdFingerprintGenerator  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
SMILES = [
    "CCO",
    "CCCO",
    "c1ccccc1O",
    "c1ccccc1N",
    "CC(=O)Oc1ccccc1C(=O)O",
    "CN1C=NC2=C1C(=O)N(C(=O)N2C)C",
    "OCC(O)CO",
    "C1CCCCC1",
    "CCN(CC)CC",
    "ClC(Cl)(Cl)Cl",
    "C#N",
    "O=C=O",
]


def _molecules():
    if (DATA / "esol" / "ESOL.csv").is_file():
        from kernelkit.data._molecule_datasets import load_esol

        return load_esol(DATA).smiles[:60]
    return SMILES


MOLS = _molecules()


@pytest.mark.parametrize(("radius", "n_bits"), [(2, 2048), (1, 256), (3, 1024)])
def test_tanimoto_bits_equals_rdkit(radius, n_bits):
    gen = rdFingerprintGenerator.GetMorganGenerator(radius=radius, fpSize=n_bits)
    fps = [gen.GetFingerprint(Chem.MolFromSmiles(s)) for s in MOLS]
    expected = np.array([DataStructs.BulkTanimotoSimilarity(f, fps) for f in fps])
    K = Tanimoto(radius, n_bits)(MOLS).numpy()
    np.testing.assert_allclose(K, expected, atol=1e-12)


def test_minmax_counts_equals_rdkit_count_tanimoto():
    """RDKit's Tanimoto on count vectors is sum(min) / sum(max), i.e. MinMax."""
    gen = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048)
    fps = [gen.GetCountFingerprint(Chem.MolFromSmiles(s)) for s in MOLS]
    expected = np.array([DataStructs.BulkTanimotoSimilarity(f, fps) for f in fps])
    np.testing.assert_allclose(MinMax()(MOLS).numpy(), expected, atol=1e-12)


def test_minmax_unfolded_equals_rdkit_sparse_counts():
    gen = rdFingerprintGenerator.GetMorganGenerator(radius=2)
    fps = [gen.GetSparseCountFingerprint(Chem.MolFromSmiles(s)) for s in MOLS[:20]]
    expected = np.array([DataStructs.BulkTanimotoSimilarity(f, fps) for f in fps])
    np.testing.assert_allclose(MinMax(2, None)(MOLS[:20]).numpy(), expected, atol=1e-12)


def test_tanimoto_counts_brute_force_and_minmax_on_bits():
    dense = MoleculeBatch.from_molecules(MOLS).fingerprint_matrix(
        radius=2, n_bits=1024, counts=True, dense=True
    )
    G = dense @ dense.T
    sq = np.diag(G)
    expected = G / (sq[:, None] + sq[None, :] - G)
    np.testing.assert_allclose(Tanimoto(2, 1024, counts=True)(MOLS).numpy(), expected, atol=1e-12)
    mins = np.minimum(dense[:, None, :], dense[None, :, :]).sum(-1)
    maxs = np.maximum(dense[:, None, :], dense[None, :, :]).sum(-1)
    np.testing.assert_allclose(MinMax(2, 1024)(MOLS).numpy(), mins / maxs, atol=1e-12)
    # on bits MinMax and Tanimoto coincide
    torch.testing.assert_close(MinMax(2, 1024, counts=False)(MOLS), Tanimoto(2, 1024)(MOLS))


def _rdkit_fragprints(radius, n_bits, smiles):
    """GAUCHE's fragprints written with RDKit's own functions: the Morgan bit vector, then
    each ``fr_`` descriptor of ``Descriptors.descList`` (oracle for ``"fragprints"``)."""
    from rdkit.Chem import Descriptors

    gen = rdFingerprintGenerator.GetMorganGenerator(radius=radius, fpSize=n_bits)
    frags = [f for name, f in Descriptors.descList if name.startswith("fr_")]
    rows = []
    for s in smiles:
        mol = Chem.MolFromSmiles(s)
        rows.append(np.concatenate([gen.GetFingerprintAsNumPy(mol), [f(mol) for f in frags]]))
    return np.asarray(rows, dtype=np.float64)


def test_fragprints_equal_rdkit_morgan_bits_and_fragment_descriptors():
    expected = _rdkit_fragprints(3, 2048, MOLS)
    batch = MoleculeBatch.from_molecules(MOLS)
    np.testing.assert_array_equal(
        batch.fingerprint_matrix(radius=3, kind="fragprints", dense=True), expected
    )
    np.testing.assert_array_equal(
        batch.fingerprint_matrix(kind="fragments", dense=True), expected[:, 2048:]
    )
    assert expected[:, 2048:].sum() > 0  # the set does have fragments to count
    G = expected @ expected.T
    sq = np.diag(G)
    K = Tanimoto(3, fingerprint="fragprints")(MOLS).numpy()
    np.testing.assert_allclose(K, G / (sq[:, None] + sq[None, :] - G), atol=1e-12)
    mins = np.minimum(expected[:, None, :], expected[None, :, :]).sum(-1)
    maxs = np.maximum(expected[:, None, :], expected[None, :, :]).sum(-1)
    np.testing.assert_allclose(
        MinMax(3, counts=False, fingerprint="fragprints")(MOLS).numpy(), mins / maxs, atol=1e-12
    )


def test_unfolded_fragprints_keep_the_fragments_apart_from_morgan_keys():
    # unfolded Morgan keys are RDKit's 32-bit identifiers; the fragment counts sit above them,
    # so the kernel equals the one on the two parts written side by side
    batch = MoleculeBatch.from_molecules(MOLS[:15])
    indptr, keys, values = batch.fingerprints(radius=2, n_bits=None, kind="fragprints")
    morgan = batch.fingerprints(radius=2, n_bits=None)
    frag = batch.fingerprint_matrix(kind="fragments", dense=True)
    assert keys[values > 0].size == keys.size and np.all(np.diff(indptr) >= 0)
    for i in range(15):
        row = slice(indptr[i], indptr[i + 1])
        low = keys[row] < 2**32
        np.testing.assert_array_equal(keys[row][low], morgan[1][morgan[0][i] : morgan[0][i + 1]])
        np.testing.assert_array_equal(values[row][~low], frag[i][frag[i] > 0])


def test_tanimoto_takes_mol_objects_and_batches():
    mols = [Chem.MolFromSmiles(s) for s in SMILES]
    k = Tanimoto()
    torch.testing.assert_close(k(mols), k(SMILES))
    torch.testing.assert_close(k(MoleculeBatch.from_molecules(SMILES)[3:7]), k(SMILES[3:7]))
    torch.testing.assert_close(k(SMILES[:4], np.array(SMILES[4:])), k(SMILES)[:4, 4:])


@pytest.mark.parametrize(
    "kernel",
    [
        Tanimoto(),
        Tanimoto(counts=True),
        MinMax(),
        MinMax(3, None),
        Tanimoto(3, fingerprint="fragprints"),
    ],
    ids=repr,
)
def test_check_kernel(kernel):
    # works with the 60 ESOL molecules or the short built-in list when shared data is absent
    split = min(25, len(MOLS) * 2 // 3)
    check_kernel(kernel, MOLS[:split], MOLS[split : split + 7])


# ---------------------------------------------------------------------- graph kernels
def _mol_to_networkx(mol):
    import networkx as nx

    g = nx.Graph()
    for a in mol.GetAtoms():
        g.add_node(a.GetIdx(), label=a.GetSymbol())
    for b in mol.GetBonds():
        g.add_edge(b.GetBeginAtomIdx(), b.GetEndAtomIdx(), label=str(b.GetBondType()))
    return g


@pytest.mark.parametrize(
    "kernel",
    [
        WeisfeilerLehman(3),
        WeisfeilerLehman(2, edge_label="label"),
        ShortestPath(),
        RandomWalk(0.05),
    ],
    ids=repr,
)
def test_graph_kernels_on_smiles_equal_networkx_molecular_graphs(kernel):
    graphs = [_mol_to_networkx(Chem.MolFromSmiles(s)) for s in SMILES]
    torch.testing.assert_close(kernel(SMILES), kernel(graphs))


def test_wl_on_molecules_equals_grakel():
    grakel = pytest.importorskip("grakel")
    from grakel.kernels import VertexHistogram
    from grakel.kernels import WeisfeilerLehman as GWL

    graphs = [_mol_to_networkx(Chem.MolFromSmiles(s)) for s in MOLS]
    G = list(grakel.graph_from_networkx(graphs, node_labels_tag="label"))
    expected = GWL(n_iter=3, base_graph_kernel=VertexHistogram).fit_transform(G)
    np.testing.assert_allclose(WeisfeilerLehman(3)(MOLS).numpy(), expected, atol=1e-9)


# ---------------------------------------------------------------------- errors
@pytest.mark.parametrize("kernel", [Tanimoto(), MinMax(), WeisfeilerLehman(2)], ids=repr)
def test_invalid_smiles_named_with_index(kernel, capfd):
    with pytest.raises(InputError, match=r"X\[2\]: invalid SMILES 'C1CC\(' "):
        kernel(["CCO", "CCN", "C1CC(", "CC"])
    assert "SMILES Parse Error" not in capfd.readouterr().err  # RDKit's log is silenced


def test_empty_molecule_and_bad_items():
    with pytest.raises(InputError, match=r"X\[1\]: molecule '' has no atoms"):
        Tanimoto()(["CCO", ""])
    with pytest.raises(InputError, match=r"X\[1\]: expected a SMILES string or an RDKit Mol"):
        Tanimoto()(["CCO", 5])
    with pytest.raises(InputError, match="at least one molecule"):
        Tanimoto()([])
    with pytest.raises(InputError, match="radius"):
        Tanimoto(radius=-1)
    with pytest.raises(InputError, match="n_bits"):
        MinMax(n_bits=0)


# ---------------------------------------------------------------------- estimators
def test_kernel_svc_takes_smiles_in_grid_search():
    from sklearn.model_selection import GridSearchCV

    from kernelkit.estimators import KernelSVC

    if not (DATA / "solubility" / "solubility.csv").is_file():
        pytest.skip(f"solubility data not found under {DATA}")
    from kernelkit.data._molecule_datasets import load_solubility

    ds = load_solubility(DATA, split="train")
    X, y = ds.smiles[:240], ds.target[:240]
    search = GridSearchCV(
        KernelSVC(kernel=WeisfeilerLehman(1)), {"kernel__n_iter": [1, 2]}, cv=3
    ).fit(X, y)
    assert search.best_score_ > np.bincount(y).max() / len(y)  # beats the majority class
    svc = KernelSVC(kernel=Tanimoto()).fit(X, y)
    assert svc.predict(ds.smiles[240:250]).shape == (10,)
