"""Readers of data files for the command line, with record-precise errors.

One module per format (:mod:`.tables`, :mod:`.smiles`, :mod:`.fasta`, :mod:`.graphs`,
:mod:`.gram`); :func:`read_data` picks the reader from the kind and the extension.

Every reader returns a :class:`DataFile`: the records in the form kernelkit's kernels take
(vectors, SMILES strings, sequences, a :class:`~kernelkit.data.GraphBatch`, a Gram
matrix), an id per record, the other columns (for a ``--target``) and the line of each
record.  A problem in the file raises :class:`~kernelkit.utils.DataFileError`, whose
text is the one line ``FILE:LINE: problem`` (``FILE: problem`` where no line applies, e.g. a
``.npy`` array or a GraphML graph, where the record is named instead).

Formats (``kind``, an :class:`~kernelkit.utils._kinds.InputKind` or its plural name, detected
from the extension unless given):

* ``vectors``: CSV (``,``) or TSV (``.tsv``, tab); a header row when the first row is not all
  numbers; ``columns`` picks the feature columns (default: all but ``target``).
* ``molecules``: ``.smi`` / ``.smiles`` (one ``SMILES [name]`` per line, ``#`` comments, an
  optional ``SMILES ...`` header line), SD files ``.sdf`` / ``.sd`` (data items become
  columns, :mod:`.sdf`), or a CSV column (``column``, default the column named ``smiles`` in
  any case).  Parsed with RDKit (the ``chem`` extra); invalid SMILES are named with their
  lines (count and first five), or left out with ``on_error="skip"``.
* ``sequences``: FASTA (``.fa``, ``.fasta``, ``.fna``, ``.faa``; ``>id key=value ...``
  headers, the ``key=value`` pairs become columns), or a CSV column (``column``); letters are
  upper-cased and checked against the alphabet (``"dna"`` = ACGT, ``"protein"`` = the 20
  standard amino acids, ``None`` = DNA if only ACGT occur, else protein).
* ``graphs``: GraphML / GML (one graph per file; graph attributes become columns), or a
  folder of such files and of edge lists ``NAME.edges`` (``u v`` per line) with optional
  ``NAME.nodes`` (``node label`` per line).  Needs networkx (the ``graphs`` extra).
* ``gram``: ``.npy`` array of Gram values (no pickles), checked 2-D and finite.
"""

from __future__ import annotations

from pathlib import Path

from kernelkit.data._molecules import standardize_smiles
from kernelkit.data.readers._common import (  # noqa: F401 (tables: importable, not in __all__)
    MAX_INTEGER_CLASSES,
    TASKS,
    DataFile,
    Targets,
    as_targets,
    is_number,
    read_text,
    text_lines,
)
from kernelkit.data.readers._fasta import read_fasta
from kernelkit.data.readers._gram import read_gram
from kernelkit.data.readers._graphs import read_graphs
from kernelkit.data.readers._sdf import read_sdf
from kernelkit.data.readers._smiles import ON_ERROR, read_smi
from kernelkit.data.readers._tables import read_table
from kernelkit.utils._errors import DataFileError, InputError
from kernelkit.utils._kinds import InputKind

__all__ = [
    "DataFile",
    "read_data",
    "read_gram",
    "read_graphs",
    "read_labels",
]

KINDS = (InputKind.VECTOR, InputKind.MOLECULE, InputKind.STRING, InputKind.GRAPH, InputKind.GRAM)
"""Kinds of input the readers know (``--kind`` takes their plural names)."""

EXTENSIONS: dict[str, InputKind] = {
    ".csv": InputKind.VECTOR,
    ".tsv": InputKind.VECTOR,
    ".txt": InputKind.VECTOR,
    ".smi": InputKind.MOLECULE,
    ".smiles": InputKind.MOLECULE,
    ".sdf": InputKind.MOLECULE,
    ".sd": InputKind.MOLECULE,
    ".fa": InputKind.STRING,
    ".fasta": InputKind.STRING,
    ".fna": InputKind.STRING,
    ".faa": InputKind.STRING,
    ".graphml": InputKind.GRAPH,
    ".gml": InputKind.GRAPH,
    ".npy": InputKind.GRAM,
}
"""The kind of input each file extension holds (a table may hold any kind in a column)."""


def detect_kind(path: str | Path) -> InputKind:
    """The input kind of ``path`` from its extension (a folder holds graphs)."""
    path = Path(path)
    if path.is_dir():
        return InputKind.GRAPH
    kind = EXTENSIONS.get(_suffix(path))
    if kind is None:
        raise InputError(
            f"--kind: cannot tell the kind of {str(path)!r} from its extension; pass --kind "
            f"(one of {_kind_names()}); known extensions: {', '.join(sorted(EXTENSIONS))}"
        )
    return kind


def _suffix(path: Path) -> str:
    """The extension of ``path``, ``.gz`` left out (``a.sdf.gz`` is ``.sdf``)."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    return suffixes[-1] if suffixes else ""


def _kind_names() -> str:
    return ", ".join(k.plural for k in KINDS)


def _check_kind(kind: InputKind | str) -> InputKind:
    try:
        parsed = InputKind.parse(kind)
    except InputError:
        parsed = None
    if parsed not in KINDS:
        raise InputError(f"--kind: expected one of {_kind_names()}, got {str(kind)!r}")
    return parsed


def read_data(
    path: str | Path,
    *,
    kind: InputKind | str | None = None,
    column: str | None = None,
    columns: list[str] | None = None,
    target: str | None = None,
    alphabet: str | None = None,
    node_label: str | None = "label",
    edge_label: str | None = "label",
    node_attribute: str | None = "attributes",
    on_error: str = "raise",
    standardize: bool = False,
) -> DataFile:
    """Read ``path`` as ``kind`` (detected from the extension when ``None``).

    Parameters
    ----------
    kind : InputKind or str, optional
        A kind of :data:`KINDS`, or its plural name (``"sequences"``).
    column : str, optional
        CSV column holding SMILES or sequences.
    columns : list of str, optional
        CSV feature columns of vectors (default: all but ``target``).
    target : str, optional
        Column kept apart from the features (vectors); checked to exist.
    alphabet : {"dna", "rna", "protein"} or None
        Alphabet of sequences (``None``: detected on the upper-cased letters, ``N``
        aside; lower case is read as upper case, see
        :mod:`kernelkit.data.readers._fasta`).
    node_label : str or None
        Node attribute holding graph labels.
    edge_label, node_attribute : str or None
        Edge attribute holding edge labels and node attribute holding continuous attribute
        vectors of graphs, each read when present (:func:`read_graphs`).
    on_error : {"raise", "skip"}
        Molecules RDKit cannot read: an error naming them (count, first lines), or left out
        (their lines in :attr:`DataFile.skipped`).
    standardize : bool
        Molecules become the canonical SMILES of RDKit's standardisation (salts and
        solvents removed, charges neutralised;
        :func:`kernelkit.data._molecules.standardize_smiles`).

    Raises
    ------
    DataFileError
        ``FILE:LINE: problem`` for anything wrong in the file.
    InputError
        An unknown ``kind``, or ``column`` given for vectors.
    """
    path = Path(path)
    if on_error not in ON_ERROR:
        raise InputError(f"on_error: expected one of {ON_ERROR}, got {on_error!r}")
    if not path.exists():
        raise DataFileError(path, "no such file or folder")
    detected = kind is None
    kind = detect_kind(path) if detected else _check_kind(kind)
    if column is not None and kind is InputKind.VECTOR:
        raise InputError(
            f"--column {column!r}: names the column of SMILES or sequences; pass --kind "
            "molecules or --kind sequences with it (feature columns of vectors: --columns)"
        )
    holds = InputKind.GRAPH if path.is_dir() else EXTENSIONS.get(_suffix(path))
    if holds is not None and holds is not kind and holds is not InputKind.VECTOR:
        raise DataFileError(
            path,
            f"a {path.suffix or 'folder'} input holds {holds.plural}, but {kind.plural} are "
            "expected here",
        )
    if kind is InputKind.GRAPH:
        data = read_graphs(
            path, node_label=node_label, edge_label=edge_label, node_attribute=node_attribute
        )
    elif kind is InputKind.GRAM:
        data = read_gram(path)
    else:
        text = read_text(path)
        if holds is InputKind.MOLECULE and _suffix(path) in (".sdf", ".sd"):
            data = read_sdf(path, text, on_error)
        elif holds is InputKind.MOLECULE:
            data = read_smi(path, text, on_error)
        elif holds is InputKind.STRING:
            data = read_fasta(path, text, alphabet)
        else:
            data = read_table(
                path, text, kind, column, columns, target, alphabet, on_error, detected
            )
    if target is not None and target not in data.columns:
        data.target(target)
    if standardize and data.kind is InputKind.MOLECULE:
        data.items = standardize_smiles(data.items)
        data.standardized = True
    return data


def read_labels(path: str | Path, *, task: str | None = None) -> Targets:
    """One label per non-blank line, as :func:`~.common.as_targets` reads a column."""
    path = Path(path)
    values, lines = [], []
    for number, line in text_lines(read_text(path)):
        if line.strip():
            values.append(line.strip())
            lines.append(number)
    if not values:
        raise DataFileError(path, "no labels (the file has no non-blank line)")
    return as_targets(values, path, lines, task=task, name="labels")
