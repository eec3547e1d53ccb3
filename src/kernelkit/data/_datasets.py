"""Loaders for the real string datasets: E. coli promoters (DNA) and antimicrobial peptides.

The files are not shipped with kernelkit; pass the folder that holds them (the ``data``
folder with ``promoter/`` and ``amp/`` subfolders, or the dataset's own folder).

* ``promoter``: 106 sequences of 57 nt, 53 promoters (label 1) and 53 non-promoters
  (label 0); UCI "Molecular Biology (Promoter Gene Sequences)", Towell, Shavlik & Noordewier
  (AAAI-90), as distributed by kernlab.  The file stores lower-case ``acgt``;
  :func:`load_promoter` upper-cases them so they validate against ``alphabet="dna"``.
* ``amp``: the four peptide sets of modlAMP (Müller, Gabernet & Schneider), one-letter code,
  only the 20 standard amino acids.  First line ``n_samples,n_features,class0,class1``, then
  ``sequence,label`` lines (label 1 = the active class: AMP or ACP).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kernelkit.utils._errors import InputError

AMP_SETS = ("AMPvsTMset", "AMPvsUniProt", "ACP_CancPPD_vs_TM", "ACP_CancPPD_vs_Random")
"""Names of the antimicrobial / anticancer peptide sets accepted by :func:`load_amp`."""


@dataclass(frozen=True)
class SequenceDataset:
    """Sequences with binary labels.

    Attributes
    ----------
    sequences : list of str
    y : np.ndarray
        int64 labels in {0, 1}.
    class_names : tuple of str
        Names of class 0 and class 1.
    name : str
    """

    sequences: list[str]
    y: np.ndarray
    class_names: tuple[str, str]
    name: str

    def __len__(self) -> int:
        return len(self.sequences)


def _find(data_dir: str | Path, folder: str, filename: str) -> Path:
    if data_dir is None:
        raise InputError(
            "data_dir: expected the folder holding the datasets (e.g. '../shared/data'), got None"
        )
    root = Path(data_dir)
    for candidate in (root / folder / filename, root / filename):
        if candidate.is_file():
            return candidate
    raise InputError(
        f"data_dir: expected {filename!r} in {str(root / folder)!r} or {str(root)!r}, "
        "found neither; pass the data folder that contains the dataset"
    )


def load_promoter(data_dir: str | Path) -> SequenceDataset:
    """The E. coli promoter gene sequences (106 x 57 nt), upper-cased, ``y = 1`` for promoters.

    Parameters
    ----------
    data_dir : str or Path
        The data folder (containing ``promoter/promotergene.csv``) or the promoter folder.
    """
    path = _find(data_dir, "promoter", "promotergene.csv")
    seqs, labels = [], []
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        missing = {"sequence", "class"} - set(reader.fieldnames or ())
        if missing:
            raise InputError(f"{path}: expected columns 'sequence' and 'class', missing {missing}")
        for line, row in enumerate(reader, start=2):
            if row["class"] not in ("+", "-"):
                raise InputError(
                    f"{path}: line {line}: expected class '+' or '-', got {row['class']!r}"
                )
            seqs.append(row["sequence"].strip().upper())
            labels.append(1 if row["class"] == "+" else 0)
    return SequenceDataset(seqs, np.asarray(labels, dtype=np.int64), ("-", "+"), "promoter")


def load_amp(data_dir: str | Path, name: str = "AMPvsTMset") -> SequenceDataset:
    """One of the modlAMP peptide sets (see :data:`AMP_SETS`), ``y = 1`` for the active class.

    Parameters
    ----------
    data_dir : str or Path
        The data folder (containing ``amp/<name>.csv``) or the amp folder.
    name : str
        ``"AMPvsTMset"`` (412 peptides, 8-56 aa), ``"AMPvsUniProt"`` (5200, 7-174 aa; has 536
        duplicate rows, kept as in the source), ``"ACP_CancPPD_vs_TM"`` or
        ``"ACP_CancPPD_vs_Random"`` (826 each, 8-30 aa).
    """
    if name not in AMP_SETS:
        raise InputError(f"name: expected one of {AMP_SETS}, got {name!r}")
    path = _find(data_dir, "amp", f"{name}.csv")
    with path.open(newline="") as fh:
        rows = [r for r in csv.reader(fh, skipinitialspace=True) if r]
    header = rows[0]
    if len(header) != 4:
        raise InputError(
            f"{path}: line 1: expected 'n_samples,n_features,class0,class1', got {header}"
        )
    seqs, labels = [], []
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != 2 or row[1].strip() not in ("0", "1"):
            raise InputError(f"{path}: line {line}: expected 'sequence,label', got {row}")
        seqs.append(row[0].strip())
        labels.append(int(row[1]))
    if int(header[0]) != len(seqs):
        raise InputError(f"{path}: line 1 announces {header[0]} samples, the file has {len(seqs)}")
    return SequenceDataset(
        seqs, np.asarray(labels, dtype=np.int64), (header[2].strip(), header[3].strip()), name
    )
