"""Linear-path fingerprints (issue 50, item 5): RDKit's own path fingerprint, a brute-force
enumeration of linear paths with networkx, and the linear-path Tanimoto / MinMax kernels."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from kernelkit.data._molecules import MoleculeBatch
from kernelkit.kernels._molecules import MinMax, Tanimoto
from kernelkit.testing import check_kernel
from kernelkit.utils._errors import InputError

Chem = pytest.importorskip("rdkit.Chem")
nx = pytest.importorskip("networkx")
from rdkit import DataStructs  # noqa: E402

SMILES = [
    "CCO",
    "CC(=O)O",
    "c1ccccc1O",
    "CC(=O)Oc1ccccc1C(=O)O",
    "CCN(CC)CC",
    "ClC(Cl)(Cl)Cl",
    "C#N",
    "OCC(O)CO",
]


def _rdkit_path_bits(smiles: list[str], max_path: int, n_bits: int) -> np.ndarray:
    """RDKit's ``RDKFingerprint`` restricted to linear paths, one bit per path (oracle)."""
    out = np.zeros((len(smiles), n_bits))
    for i, s in enumerate(smiles):
        fp = Chem.RDKFingerprint(
            Chem.MolFromSmiles(s),
            minPath=1,
            maxPath=max_path,
            fpSize=n_bits,
            nBitsPerHash=1,
            branchedPaths=False,
        )
        out[i, list(fp.GetOnBits())] = 1.0
    return out


@pytest.mark.parametrize(("max_path", "n_bits"), [(7, 2048), (3, 1024), (5, 4096)])
def test_path_bits_equal_rdkit_rdkfingerprint(max_path, n_bits):
    got = MoleculeBatch.from_molecules(SMILES).fingerprint_matrix(
        n_bits=n_bits, kind="paths", max_path=max_path, dense=True
    )
    np.testing.assert_array_equal(got, _rdkit_path_bits(SMILES, max_path, n_bits))


def test_path_tanimoto_equals_rdkit_bulk_tanimoto():
    fps = [
        Chem.RDKFingerprint(
            Chem.MolFromSmiles(s),
            minPath=1,
            maxPath=6,
            fpSize=2048,
            nBitsPerHash=1,
            branchedPaths=False,
        )
        for s in SMILES
    ]
    expected = np.array([DataStructs.BulkTanimotoSimilarity(f, fps) for f in fps])
    K = Tanimoto(fingerprint="paths", max_path=6)(SMILES).numpy()
    np.testing.assert_allclose(K, expected, atol=1e-12)


def _linear_paths(smiles: str, max_path: int) -> dict[str, int]:
    """Brute force: every simple path of 1..max_path bonds in the heavy-atom graph, written as
    its atom / bond label string read in the smaller of its two directions, with its count."""
    mol = Chem.MolFromSmiles(smiles)
    G = nx.Graph()
    for a in mol.GetAtoms():
        G.add_node(a.GetIdx(), label=a.GetSymbol() + ("ar" if a.GetIsAromatic() else ""))
    for b in mol.GetBonds():
        G.add_edge(b.GetBeginAtomIdx(), b.GetEndAtomIdx(), label=str(b.GetBondType()))
    found: set[tuple[int, ...]] = set()
    for u in G:
        for v in G:
            if u < v:
                for p in nx.all_simple_paths(G, u, v, cutoff=max_path):
                    found.add(tuple(p))
    counts: dict[str, int] = {}
    for p in found:
        forward = [G.nodes[p[0]]["label"]]
        for a, b in itertools.pairwise(p):
            forward += [G.edges[a, b]["label"], G.nodes[b]["label"]]
        text = min("-".join(forward), "-".join(reversed(forward)))
        counts[text] = counts.get(text, 0) + 1
    return counts


@pytest.mark.parametrize(
    ("smiles", "max_path"), [("CCO", 2), ("CC(=O)OC", 3), ("C=CC#N", 3), ("OCC(N)CO", 4)]
)
def test_path_counts_equal_brute_force_enumeration(smiles, max_path):
    _indptr, keys, values = MoleculeBatch.from_molecules([smiles]).fingerprints(
        n_bits=None, counts=True, kind="paths", max_path=max_path
    )
    expected = _linear_paths(smiles, max_path)
    # unfolded 32-bit keys: one key per distinct labelled path, its count the occurrences
    assert len(keys) == len(expected)
    assert sorted(values.tolist()) == sorted(expected.values())


def test_longer_paths_only_add_features():
    batch = MoleculeBatch.from_molecules(SMILES)
    short = batch.fingerprint_matrix(n_bits=4096, kind="paths", max_path=2, dense=True)
    long = batch.fingerprint_matrix(n_bits=4096, kind="paths", max_path=5, dense=True)
    assert np.all(long >= short) and long.sum() > short.sum()


def test_minmax_on_path_counts_equals_brute_force():
    K = MinMax(n_bits=None, fingerprint="paths", max_path=4)(SMILES[:4]).numpy()
    paths = [_linear_paths(s, 4) for s in SMILES[:4]]
    for i, a in enumerate(paths):
        for j, b in enumerate(paths):
            keys = set(a) | set(b)
            mins = sum(min(a.get(k, 0), b.get(k, 0)) for k in keys)
            maxs = sum(max(a.get(k, 0), b.get(k, 0)) for k in keys)
            assert K[i, j] == pytest.approx(mins / maxs, abs=1e-12)


@pytest.mark.parametrize(
    "kernel",
    [
        Tanimoto(fingerprint="paths"),
        Tanimoto(fingerprint="paths", max_path=3, counts=True),
        MinMax(fingerprint="paths", n_bits=None),
    ],
)
def test_check_kernel_paths(kernel):
    check_kernel(kernel, SMILES[:5], SMILES[5:])


def test_max_path_must_be_positive():
    with pytest.raises(InputError, match="max_path"):
        Tanimoto(fingerprint="paths", max_path=0)
