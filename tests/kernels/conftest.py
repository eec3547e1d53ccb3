"""Shared graph inputs of the graph-kernel tests: molecular graphs from the shipped data."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"


@pytest.fixture(scope="session")
def molecular_graphs():
    """The first 200 molecules of ``solubility`` as networkx graphs (RDKit heavy-atom graphs:
    node ``label`` = atom-symbol code, edge ``label`` = bond-type code)."""
    pytest.importorskip("rdkit")
    pytest.importorskip("networkx")
    if not (DATA / "solubility" / "solubility.csv").is_file():
        pytest.skip(f"solubility data not found under {DATA}")
    from kernelkit.data._molecule_datasets import load_solubility
    from kernelkit.data._molecules import as_molecule_batch

    batch = as_molecule_batch(load_solubility(DATA).smiles[:200]).to_graphs()
    return [batch.to_networkx(i) for i in range(len(batch))]


def grakel_input(graphs, *, edge_labels: bool = True, attributes: str | None = None):
    """GraKeL's graph objects of networkx graphs (labels read from ``label``)."""
    grakel = pytest.importorskip("grakel")
    tag = attributes if attributes is not None else "label"
    return list(
        grakel.graph_from_networkx(
            graphs, node_labels_tag=tag, edge_labels_tag="label" if edge_labels else None
        )
    )


@pytest.fixture(scope="session")
def attributed_molecular_graphs():
    """The first 200 molecules of ``solubility`` with atom-feature vectors as the continuous
    node attribute ``attributes`` (atomic number / 10, degree, formal charge, aromaticity,
    attached hydrogens) besides the discrete ``label`` (atom symbol)."""
    Chem = pytest.importorskip("rdkit.Chem")
    nx = pytest.importorskip("networkx")
    if not (DATA / "solubility" / "solubility.csv").is_file():
        pytest.skip(f"solubility data not found under {DATA}")
    from kernelkit.data._molecule_datasets import load_solubility

    graphs = []
    for smiles in load_solubility(DATA).smiles[:200]:
        mol = Chem.MolFromSmiles(smiles)
        g = nx.Graph()
        for a in mol.GetAtoms():
            features = [
                a.GetAtomicNum() / 10,
                a.GetDegree(),
                a.GetFormalCharge(),
                float(a.GetIsAromatic()),
                a.GetTotalNumHs(),
            ]
            g.add_node(a.GetIdx(), label=a.GetSymbol(), attributes=features)
        for b in mol.GetBonds():
            g.add_edge(b.GetBeginAtomIdx(), b.GetEndAtomIdx(), label=str(b.GetBondType()))
        graphs.append(g)
    return graphs
