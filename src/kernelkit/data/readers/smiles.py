"""SMILES files (``.smi``: one ``SMILES [name]`` per line, ``#`` comments), checked by RDKit."""

from __future__ import annotations

from pathlib import Path

from kernelkit.data.molecules import _chem, _quiet_rdkit
from kernelkit.data.readers.common import DataFile, text_lines
from kernelkit.utils.errors import DataFileError
from kernelkit.utils.kinds import InputKind


def check_smiles(path: Path, smiles: list[str], lines: list[int]) -> None:
    """Parse every SMILES with RDKit; the first invalid one is reported with its line."""
    Chem = _chem()
    with _quiet_rdkit():
        for s, line in zip(smiles, lines, strict=False):
            mol = Chem.MolFromSmiles(s) if s else None
            if mol is None or mol.GetNumAtoms() == 0:
                raise DataFileError(path, f"invalid SMILES {s!r}", line=line)


def read_smi(path: Path, text: str) -> DataFile:
    smiles, ids, lines = [], [], []
    for number, line in text_lines(text):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        parts = stripped.split(maxsplit=1)
        smiles.append(parts[0])
        ids.append(parts[1] if len(parts) > 1 else str(number))
        lines.append(number)
    check_smiles(path, smiles, lines)
    return DataFile(InputKind.MOLECULE, smiles, ids, path, lines)
