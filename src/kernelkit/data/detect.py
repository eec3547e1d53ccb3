"""Which kind of input a data set holds, read from the Python objects themselves.

:func:`detect_input_kind` is the one rule the estimators (``kernel=None``) and the command
line use to tell vectors, sequences, molecules and graphs apart.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np
import torch

from kernelkit.data.graphs import GraphBatch
from kernelkit.data.molecules import MoleculeBatch, _is_mol, _quiet_rdkit
from kernelkit.data.strings import ALPHABETS, StringBatch
from kernelkit.utils.kinds import InputKind

SEQUENCE_CHARACTERS = frozenset("".join(ALPHABETS.values()))
"""Letters of the DNA and protein alphabets (:data:`kernelkit.data.strings.ALPHABETS`)."""


def _items(X: Any) -> list[Any] | None:
    """The items of a 1-D container of objects, or None for anything else."""
    if isinstance(X, (str, bytes)):
        return None
    if hasattr(X, "to_numpy") and not isinstance(X, np.ndarray):
        X = X.to_numpy()
    if isinstance(X, np.ndarray):
        return X.tolist() if X.ndim == 1 and X.dtype.kind in "OUS" else None
    if isinstance(X, (list, tuple)):
        return list(X)
    return None


def _all_smiles(items: list[str]) -> bool:
    """Whether RDKit (if installed) parses every string as a SMILES with at least one atom."""
    if importlib.util.find_spec("rdkit") is None:
        return False
    from rdkit import Chem

    with _quiet_rdkit():
        for text in items:
            mol = Chem.MolFromSmiles(text)
            if mol is None or mol.GetNumAtoms() == 0:
                return False
    return True


def detect_input_kind(X: Any) -> InputKind:
    """The kind of input ``X`` holds.

    Rules, in order:

    * a torch tensor, a numeric NumPy array, a ``scipy.sparse`` matrix or any other
      container of numbers: ``vector``;
    * kernelkit batches: their kind (``StringBatch``, ``GraphBatch``, ``MoleculeBatch``);
    * a list, tuple, 1-D object/str array or pandas Series whose items are

      - networkx graphs: ``graph``;
      - RDKit ``Mol`` objects: ``molecule``;
      - strings: ``molecule`` when some string has a character outside the sequence
        alphabets (:data:`SEQUENCE_CHARACTERS`: the DNA and protein letters) *and* RDKit
        parses every string as a SMILES; ``string`` (sequences) otherwise, so a list of DNA
        or protein sequences is never read as molecules, and SMILES are read as sequences
        when RDKit is not installed.

    Anything else is ``vector`` (the numeric validation of the estimator then names the
    problem).
    """
    if isinstance(X, StringBatch):
        return InputKind.STRING
    if isinstance(X, GraphBatch):
        return InputKind.GRAPH
    if isinstance(X, MoleculeBatch):
        return InputKind.MOLECULE
    if isinstance(X, torch.Tensor):
        return InputKind.VECTOR
    items = _items(X)
    if not items:
        return InputKind.VECTOR
    if all(type(x).__module__.startswith("networkx") for x in items):
        return InputKind.GRAPH
    if all(_is_mol(x) for x in items):
        return InputKind.MOLECULE
    if all(isinstance(x, str) for x in items):
        texts = [str(x) for x in items]
        outside = any(not SEQUENCE_CHARACTERS.issuperset(t) for t in texts)
        return InputKind.MOLECULE if outside and _all_smiles(texts) else InputKind.STRING
    return InputKind.VECTOR


__all__ = ["SEQUENCE_CHARACTERS", "detect_input_kind"]
