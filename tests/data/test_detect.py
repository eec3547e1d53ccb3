"""detect_input_kind: one rule for vectors, sequences, molecules and graphs."""

from __future__ import annotations

from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import torch
from rdkit import Chem

from kernelkit.data import detect_input_kind, load_promoter
from kernelkit.data._detect import SEQUENCE_CHARACTERS
from kernelkit.kernels import Spectrum
from kernelkit.utils._kinds import InputKind


@pytest.mark.parametrize(
    ("X", "kind"),
    [
        (np.zeros((3, 2)), InputKind.VECTOR),
        ([[1.0, 2.0], [3.0, 4.0]], InputKind.VECTOR),
        (torch.zeros(3, 2), InputKind.VECTOR),
        (sp.random(4, 3, density=0.5, format="csr"), InputKind.VECTOR),
        (pd.DataFrame({"a": [1.0, 2.0]}), InputKind.VECTOR),
        (["CCO", "c1ccccc1", "CC(=O)O"], InputKind.MOLECULE),
        (np.array(["CCO", "CCN", "CCC"]), InputKind.MOLECULE),  # O is in no sequence alphabet
        (pd.Series(["OCCO", "CN"]), InputKind.MOLECULE),
        ([Chem.MolFromSmiles("CCO")], InputKind.MOLECULE),
        (["ACGTACGT", "TTGACCA"], InputKind.STRING),
        (["MKVLAAGIVE", "PEPTIDEWQ"], InputKind.STRING),  # letters only: never a SMILES
        (["CCC", "CCN"], InputKind.STRING),  # only sequence letters: read as sequences
        (["hello world", "C1CC"], InputKind.STRING),  # not all SMILES
        (Spectrum(k=2).prepare(["ACGT", "GGA"]), InputKind.STRING),
        ([nx.path_graph(3), nx.cycle_graph(4)], InputKind.GRAPH),
    ],
)
def test_kinds(X, kind):
    assert detect_input_kind(X) is kind


DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"


@pytest.mark.skipif(not DATA.is_dir(), reason="shared data folder not found")
def test_real_dna_is_sequences():
    data = load_promoter(DATA)
    assert detect_input_kind(list(data.sequences)) is InputKind.STRING
    assert all(SEQUENCE_CHARACTERS.issuperset(s) for s in data.sequences)
