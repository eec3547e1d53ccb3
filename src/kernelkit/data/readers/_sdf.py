"""SD files (``.sdf`` / ``.sd``): molecules as MDL mol blocks, their data items as columns.

Each record is a mol block followed by data items ``> <NAME>`` and their value lines, and
ends with a ``$$$$`` line (CTfile formats, BIOVIA 2020, chapter "SDF").  The molecule is read
by RDKit (``Chem.MolFromMolBlock``) and kept as its canonical SMILES; the record's id is its
title line (first line), else an ``id`` / ``name`` data item, else its position; every data
item becomes a column (``--target`` picks one).
"""

from __future__ import annotations

from pathlib import Path

from kernelkit.data._molecules import _chem, _quiet_rdkit
from kernelkit.data.readers._common import DataFile
from kernelkit.utils._errors import DataFileError
from kernelkit.utils._kinds import InputKind

_SHOWN = 5


def _records(text: str) -> list[tuple[int, list[str]]]:
    """``(first line number, lines)`` of each record (the ``$$$$`` line dropped)."""
    records: list[tuple[int, list[str]]] = []
    start, block = 1, []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip() == "$$$$":
            records.append((start, block))
            start, block = number + 1, []
        else:
            block.append(line)
    if any(line.strip() for line in block):
        records.append((start, block))  # a last record without its $$$$ line
    return records


def _data_items(lines: list[str]) -> dict[str, str]:
    """The ``> <NAME>`` items after ``M  END`` and their (joined) value lines."""
    items: dict[str, str] = {}
    name = None
    for line in lines:
        if line.startswith(">"):
            head = line[1:]
            name = head[head.find("<") + 1 : head.find(">")] if "<" in head else head.strip()
            items[name] = ""
        elif name is not None and line.strip():
            items[name] = (items[name] + " " + line.strip()).strip()
    return items


def read_sdf(path: Path, text: str, on_error: str = "raise") -> DataFile:
    """The molecules of an SD file (see the module docstring).

    Raises
    ------
    DataFileError
        No record, or records RDKit cannot read (their count and first lines; left out with
        ``on_error="skip"``, their lines in :attr:`DataFile.skipped`).
    """
    Chem = _chem()
    records = _records(text)
    if not records:
        raise DataFileError(path, "no molecule records (no '$$$$'-terminated blocks)")
    smiles, ids, lines, bad = [], [], [], []
    rows: list[dict[str, str]] = []
    with _quiet_rdkit():
        for k, (start, block) in enumerate(records):
            end = next((j for j, line in enumerate(block) if line.startswith("M  END")), None)
            mol = None
            if end is not None:
                mol = Chem.MolFromMolBlock("\n".join(block[: end + 1]))
            if mol is None or mol.GetNumAtoms() == 0:
                bad.append(start)
                continue
            items = _data_items(block[end + 1 :])
            lower = {key.lower(): value for key, value in items.items()}
            title = block[0].strip() if block else ""
            ids.append(title or lower.get("id") or lower.get("name") or str(k + 1))
            smiles.append(Chem.MolToSmiles(mol))
            lines.append(start)
            rows.append(items)
    if bad and (on_error != "skip" or not smiles):
        shown = ", ".join(str(b) for b in bad[:_SHOWN])
        raise DataFileError(
            path,
            f"{len(bad)} of {len(records)} records are not molecules RDKit can read (records "
            f"starting on line {shown}{', ...' if len(bad) > _SHOWN else ''}); fix them, or "
            "leave them out with --skip-invalid",
            line=bad[0] if len(bad) == 1 else None,
        )
    names = list(dict.fromkeys(key for row in rows for key in row))
    columns = {name: [row.get(name, "") for row in rows] for name in names}
    return DataFile(InputKind.MOLECULE, smiles, ids, path, lines, columns, skipped=bad)
