"""Readers of data files for the command line, with record-precise errors.

Every reader returns a :class:`DataFile`: the records in the form kernelkit's kernels take
(vectors, SMILES strings, sequences, a :class:`~kernelkit.data.graphs.GraphBatch`, a Gram
matrix), an id per record, the other columns (for a ``--target``) and the line of each
record.  A problem in the file raises :class:`~kernelkit.utils.errors.DataFileError`, whose
text is the one line ``FILE:LINE: problem`` (``FILE: problem`` where no line applies, e.g. a
``.npy`` array or a GraphML graph, where the record is named instead).

Formats (``kind`` detected from the extension unless given):

* ``vectors``: CSV (``,``) or TSV (``.tsv``, tab); a header row when the first row is not all
  numbers; ``columns`` picks the feature columns (default: all but ``target``).
* ``molecules``: ``.smi`` / ``.smiles`` (one ``SMILES [name]`` per line, ``#`` comments), or
  a CSV column (``column``, default the column named ``smiles`` in any case).  Parsed with
  RDKit (the ``chem`` extra); an invalid SMILES is named with its line.
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

import csv
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kernelkit.data.graphs import GraphBatch
from kernelkit.data.molecules import _chem, _quiet_rdkit
from kernelkit.data.strings import ALPHABETS
from kernelkit.utils.errors import DataFileError, InputError
from kernelkit.utils.optional import require

__all__ = ["KINDS", "DataFile", "detect_kind", "is_number", "read_data", "read_labels"]

KINDS = ("vectors", "molecules", "sequences", "graphs", "gram")
"""Kinds of input the readers know."""

_EXTENSIONS = {
    ".csv": "vectors",
    ".tsv": "vectors",
    ".txt": "vectors",
    ".smi": "molecules",
    ".smiles": "molecules",
    ".fa": "sequences",
    ".fasta": "sequences",
    ".fna": "sequences",
    ".faa": "sequences",
    ".graphml": "graphs",
    ".gml": "graphs",
    ".npy": "gram",
}
_GRAPH_FILES = (".graphml", ".gml", ".edges")
_SNIFF_BYTES = 8192
_ID_COLUMNS = ("id", "name", "compound id")


@dataclass
class DataFile:
    """Records read from a file.

    Attributes
    ----------
    kind : str
        One of :data:`KINDS`.
    items : Any
        ``(n, d)`` float64 array (vectors, Gram rows), list of str (SMILES, sequences) or a
        :class:`GraphBatch`.
    ids : list of str
        An id per record (name column, FASTA id, file name, or the line number).
    path : Path
    lines : list of int or None
        Line of each record in the file (``None`` for binary or per-file records).
    columns : dict of str to list of str
        The other fields of each record (CSV columns, FASTA ``key=value``, graph attributes).
    alphabet : str or None
        The alphabet of sequences (``"dna"`` or ``"protein"``).
    feature_names : list of str
        Names of the vector columns.
    """

    kind: str
    items: Any
    ids: list[str]
    path: Path
    lines: list[int] | None = None
    columns: dict[str, list[str]] = field(default_factory=dict)
    alphabet: str | None = None
    feature_names: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.ids)

    def take(self, rows: np.ndarray) -> DataFile:
        """The records ``rows`` (vectors and lists of records; not graphs or Gram matrices)."""
        if self.kind in ("graphs", "gram"):
            raise InputError(f"take: selecting records of {self.kind} is not supported")
        items = (
            self.items[rows]
            if isinstance(self.items, np.ndarray)
            else [self.items[i] for i in rows]
        )
        return DataFile(
            self.kind,
            items,
            [self.ids[i] for i in rows],
            self.path,
            None if self.lines is None else [self.lines[i] for i in rows],
            {k: [v[i] for i in rows] for k, v in self.columns.items()},
            self.alphabet,
            self.feature_names,
        )

    def target(self, name: str) -> tuple[np.ndarray, list[str] | None]:
        """The column ``name`` as targets: floats, or class indices and the class names."""
        if name not in self.columns:
            raise DataFileError(
                self.path,
                f"no column {name!r} for the target; columns: {sorted(self.columns) or 'none'}",
            )
        return _as_targets(self.columns[name], self.path, self.lines)


def detect_kind(path: str | Path) -> str:
    """The input kind of ``path`` from its extension (a folder holds graphs)."""
    path = Path(path)
    if path.is_dir():
        return "graphs"
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    kind = _EXTENSIONS.get(suffixes[-1] if suffixes else "")
    if kind is None:
        raise InputError(
            f"--kind: cannot tell the kind of {str(path)!r} from its extension; pass --kind "
            f"(one of {', '.join(KINDS)}); known extensions: {', '.join(sorted(_EXTENSIONS))}"
        )
    return kind


def read_data(
    path: str | Path,
    *,
    kind: str | None = None,
    column: str | None = None,
    columns: list[str] | None = None,
    target: str | None = None,
    alphabet: str | None = None,
    node_label: str | None = "label",
) -> DataFile:
    """Read ``path`` as ``kind`` (detected from the extension when ``None``).

    Parameters
    ----------
    column : str, optional
        CSV column holding SMILES or sequences.
    columns : list of str, optional
        CSV feature columns of vectors (default: all but ``target``).
    target : str, optional
        Column kept apart from the features (vectors); checked to exist.
    alphabet : {"dna", "protein"} or None
        Alphabet of sequences (``None``: infer).
    node_label : str or None
        Node attribute holding graph labels.

    Raises
    ------
    DataFileError
        ``FILE:LINE: problem`` for anything wrong in the file.
    """
    path = Path(path)
    if not path.exists():
        raise DataFileError(path, "no such file or folder")
    kind = detect_kind(path) if kind is None else kind
    if kind not in KINDS:
        raise InputError(f"--kind: expected one of {', '.join(KINDS)}, got {kind!r}")
    holds = "graphs" if path.is_dir() else _EXTENSIONS.get(path.suffix.lower(), "vectors")
    if holds != kind and holds != "vectors":
        raise DataFileError(
            path, f"a {path.suffix or 'folder'} input holds {holds}, but {kind} are expected here"
        )
    if kind == "graphs":
        data = read_graphs(path, node_label=node_label)
    elif kind == "gram":
        data = read_gram(path)
    else:
        text = _read_text(path)
        suffix = path.suffix.lower()
        if kind == "molecules" and suffix in (".smi", ".smiles"):
            data = _read_smi(path, text)
        elif kind == "sequences" and suffix in (".fa", ".fasta", ".fna", ".faa"):
            data = _read_fasta(path, text, alphabet)
        else:
            data = _read_table(path, text, kind, column, columns, target, alphabet)
    if target is not None:
        data.target(target)
    return data


def read_labels(path: str | Path) -> tuple[np.ndarray, list[str] | None]:
    """One label per non-blank line: floats, or class indices and the class names."""
    path = Path(path)
    values, lines = [], []
    for number, line in _lines(path, _read_text(path)):
        if line.strip():
            values.append(line.strip())
            lines.append(number)
    if not values:
        raise DataFileError(path, "no labels (the file has no non-blank line)")
    return _as_targets(values, path, lines)


# ---------------------------------------------------------------------- text and tables
def _read_text(path: Path) -> str:
    """The file as UTF-8 text; empty, binary and non-UTF-8 files are refused."""
    if path.is_dir():
        raise DataFileError(path, "is a folder; expected a file")
    raw = path.read_bytes()
    if path.suffix.lower() == ".gz":
        import gzip

        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise DataFileError(path, f"not a valid gzip file ({exc})") from exc
    if not raw.strip():
        raise DataFileError(path, "empty file; expected at least one record")
    nul = raw.find(b"\x00", 0, _SNIFF_BYTES)
    if nul >= 0:
        raise DataFileError(
            path, f"binary file (NUL byte at offset {nul}); expected a text file", line=None
        )
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise DataFileError(
            path, f"not UTF-8 text (byte 0x{raw[exc.start]:02x}); expected a text file", line=line
        ) from exc


def _lines(path: Path, text: str) -> Iterator[tuple[int, str]]:
    yield from enumerate(text.splitlines(), start=1)


def is_number(value: str) -> bool:
    """Whether ``value`` parses as a float."""
    try:
        float(value)
    except ValueError:
        return False
    return True


def _read_table(
    path: Path,
    text: str,
    kind: str,
    column: str | None,
    columns: list[str] | None,
    target: str | None,
    alphabet: str | None,
) -> DataFile:
    """A CSV / TSV file: vectors, or a column of SMILES or sequences."""
    delimiter = "\t" if path.suffix.lower() == ".tsv" or "\t" in text.split("\n", 1)[0] else ","
    reader = csv.reader(text.splitlines(), delimiter=delimiter)
    rows: list[tuple[int, list[str]]] = []
    for fields in reader:
        if any(f.strip() for f in fields):
            rows.append((reader.line_num, [f.strip() for f in fields]))
    header_line, first = rows[0]
    header = not all(is_number(f) for f in first)
    if header:
        names = first
        rows = rows[1:]
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise DataFileError(path, f"repeated column names {dup} in the header", line=1)
    else:
        names = [str(j) for j in range(len(first))]
    if not rows:
        raise DataFileError(path, "a header row but no records", line=header_line)
    width = len(names)
    for number, fields in rows:
        if len(fields) != width:
            raise DataFileError(
                path,
                f"expected {width} fields (as in the {'header' if header else 'first row'}), "
                f"got {len(fields)}",
                line=number,
            )
    table = {name: [fields[j] for _, fields in rows] for j, name in enumerate(names)}
    lines = [number for number, _ in rows]
    id_column = next((n for n in names if n.lower() in _ID_COLUMNS and n != target), None)
    ids = table[id_column] if id_column else [str(number) for number in lines]
    if kind == "vectors":
        return _vectors(path, table, names, lines, ids, columns, target)
    if column is None and kind == "molecules":
        column = next((n for n in names if n.lower() == "smiles"), None)
    if column is None or column not in table:
        raise DataFileError(
            path,
            f"no column {column!r} holding {kind}; pass --column (one of {names})"
            if column is not None
            else f"which column holds the {kind}? pass --column (one of {names})",
        )
    values = table[column]
    if kind == "molecules":
        _check_smiles(path, values, lines)
        return DataFile("molecules", values, ids, path, lines, table)
    seqs, alpha = _check_sequences(path, [v.upper() for v in values], lines, alphabet)
    return DataFile("sequences", seqs, ids, path, lines, table, alphabet=alpha)


def _vectors(
    path: Path,
    table: dict[str, list[str]],
    names: list[str],
    lines: list[int],
    ids: list[str],
    columns: list[str] | None,
    target: str | None,
) -> DataFile:
    if columns is None:
        columns = [n for n in names if n != target and n.lower() not in _ID_COLUMNS]
    missing = [c for c in columns if c not in table]
    if missing:
        raise DataFileError(path, f"no column(s) {missing}; columns: {names}")
    if not columns:
        raise DataFileError(path, "no feature columns left (all columns are the target)")
    X = np.empty((len(lines), len(columns)))
    for j, name in enumerate(columns):
        for i, value in enumerate(table[name]):
            try:
                number = float(value)
            except ValueError:
                raise DataFileError(
                    path,
                    f"column {name!r}: expected a number, got {value!r}; pick the numeric "
                    "columns with --columns",
                    line=lines[i],
                ) from None
            if not math.isfinite(number):
                raise DataFileError(
                    path,
                    f"column {name!r}: expected a finite number, got {value!r}",
                    line=lines[i],
                )
            X[i, j] = number
    return DataFile("vectors", X, ids, path, lines, table, feature_names=list(columns))


def _as_targets(
    values: list[str], path: Path, lines: list[int] | None
) -> tuple[np.ndarray, list[str] | None]:
    """Floats when every value is a finite number, else class indices and sorted class names."""
    numbers = []
    for i, v in enumerate(values):
        if not is_number(v):
            break
        x = float(v)
        if not math.isfinite(x):
            raise DataFileError(
                path,
                f"target: expected a finite number, got {v!r}",
                line=None if lines is None else lines[i],
            )
        numbers.append(x)
    else:
        return np.asarray(numbers), None
    classes = sorted(set(values))
    index = {c: k for k, c in enumerate(classes)}
    return np.array([index[v] for v in values], dtype=np.int64), classes


# ---------------------------------------------------------------------- molecules
def _check_smiles(path: Path, smiles: list[str], lines: list[int]) -> None:
    """Parse every SMILES with RDKit; the first invalid one is reported with its line."""
    Chem = _chem()
    with _quiet_rdkit():
        for s, line in zip(smiles, lines, strict=False):
            mol = Chem.MolFromSmiles(s) if s else None
            if mol is None or mol.GetNumAtoms() == 0:
                raise DataFileError(path, f"invalid SMILES {s!r}", line=line)


def _read_smi(path: Path, text: str) -> DataFile:
    smiles, ids, lines = [], [], []
    for number, line in _lines(path, text):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        parts = stripped.split(maxsplit=1)
        smiles.append(parts[0])
        ids.append(parts[1] if len(parts) > 1 else str(number))
        lines.append(number)
    _check_smiles(path, smiles, lines)
    return DataFile("molecules", smiles, ids, path, lines)


# ---------------------------------------------------------------------- sequences
def _choose_alphabet(letters: set[str], alphabet: str | None) -> str:
    if alphabet is not None:
        if alphabet not in ALPHABETS:
            raise InputError(f"--alphabet: expected one of {sorted(ALPHABETS)}, got {alphabet!r}")
        return alphabet
    return "dna" if letters <= set(ALPHABETS["dna"]) else "protein"


def _check_sequences(
    path: Path, seqs: list[str], lines: list[int], alphabet: str | None, ids: Sequence[str] = ()
) -> tuple[list[str], str]:
    """Check every letter against the alphabet; the first unknown one is reported."""
    letters = set().union(*map(set, seqs))
    name = _choose_alphabet(letters, alphabet)
    allowed = set(ALPHABETS[name])
    for i, (seq, line) in enumerate(zip(seqs, lines, strict=False)):
        if not seq:
            raise DataFileError(path, "empty sequence", line=line)
        bad = set(seq) - allowed
        if bad:
            letter = next(c for c in seq if c in bad)
            record = f" in record {ids[i]!r}" if ids else ""
            raise DataFileError(
                path,
                f"unknown letter {letter!r}{record} (alphabet {name}: {ALPHABETS[name]})",
                line=line,
            )
    return seqs, name


def _read_fasta(path: Path, text: str, alphabet: str | None) -> DataFile:
    ids: list[str] = []
    header_lines: list[int] = []
    fields: list[dict[str, str]] = []
    chunks: list[list[tuple[int, str]]] = []
    for number, line in _lines(path, text):
        stripped = line.strip()
        if not stripped or stripped.startswith(";"):
            continue
        if stripped.startswith(">"):
            parts = stripped[1:].split()
            if not parts:
                raise DataFileError(path, "FASTA header without an id", line=number)
            ids.append(parts[0])
            header_lines.append(number)
            fields.append(dict(p.split("=", 1) for p in parts[1:] if "=" in p))
            chunks.append([])
        elif not chunks:
            raise DataFileError(
                path, "sequence before the first '>' header; expected FASTA", line=number
            )
        else:
            chunks[-1].append((number, stripped.upper()))
    if not ids:
        raise DataFileError(path, "no FASTA record (no line starts with '>')")
    for i, chunk in enumerate(chunks):
        if not chunk:
            raise DataFileError(path, f"record {ids[i]!r} has no sequence", line=header_lines[i])
    # check line by line so that an unknown letter is reported on its own line
    flat = [(number, part) for chunk in chunks for number, part in chunk]
    owner = [ids[i] for i, chunk in enumerate(chunks) for _ in chunk]
    _, name = _check_sequences(
        path, [p for _, p in flat], [n for n, _ in flat], alphabet, ids=owner
    )
    seqs = ["".join(part for _, part in chunk) for chunk in chunks]
    keys = sorted(set().union(*fields))
    columns = {k: [f.get(k, "") for f in fields] for k in keys}
    return DataFile("sequences", seqs, ids, path, header_lines, columns, alphabet=name)


# ---------------------------------------------------------------------- graphs
def _graph_from_file(path: Path) -> Any:
    nx = require("networkx", purpose="reading graph files")
    if path.suffix.lower() == ".edges":
        return _read_edge_list(path, nx)
    _read_text(path)  # empty / binary / non-UTF-8 files get the common messages
    reader = nx.read_graphml if path.suffix.lower() == ".graphml" else nx.read_gml
    try:
        graph = reader(path)
    except Exception as exc:  # networkx raises many types (XML, GML parse, key errors)
        raise DataFileError(path, f"not a readable {path.suffix[1:]} graph ({exc})") from exc
    if graph.is_directed() or graph.is_multigraph():
        graph = nx.Graph(graph)
    return graph


def _pairs(path: Path, expected: str) -> Iterator[tuple[str, str]]:
    """The two fields of every non-blank line (``#`` starts a comment)."""
    for number, line in _lines(path, _read_text(path)):
        parts = line.split("#", 1)[0].split()
        if not parts:
            continue
        if len(parts) != 2:
            raise DataFileError(path, f"expected {expected!r}, got {line.strip()!r}", line=number)
        yield parts[0], parts[1]


def _read_edge_list(path: Path, nx: Any) -> Any:
    graph = nx.Graph()
    for u, v in _pairs(path, "u v (two node ids)"):
        graph.add_edge(u, v)
    labels = path.with_suffix(".nodes")
    if labels.exists():
        for node, label in _pairs(labels, "node label"):
            graph.add_node(node, label=label)
    return graph


def read_graphs(path: Path, *, node_label: str | None = "label") -> DataFile:
    """A graph file, or a folder of graph files (sorted by name), as a :class:`GraphBatch`."""
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix.lower() in _GRAPH_FILES)
        if not files:
            raise DataFileError(
                path, f"no graph files in the folder (expected {', '.join(_GRAPH_FILES)})"
            )
    else:
        files = [path]
    graphs = [_graph_from_file(f) for f in files]
    columns: dict[str, list[str]] = {}
    for key in sorted({k for g in graphs for k in g.graph}):
        columns[key] = [str(g.graph.get(key, "")) for g in graphs]
    labelled = node_label is not None and any(
        node_label in data for g in graphs for _, data in g.nodes(data=True)
    )
    for f, g in zip(files, graphs, strict=False):
        if g.number_of_nodes() == 0:
            raise DataFileError(f, "graph has no nodes")
        if labelled:
            missing = next((v for v, data in g.nodes(data=True) if node_label not in data), None)
            if missing is not None:
                raise DataFileError(
                    f, f"node {missing!r} has no attribute {node_label!r} (other nodes have it)"
                )
    batch = GraphBatch.from_networkx(
        graphs, node_label=node_label if labelled else None, name=str(path)
    )
    ids = [f.stem for f in files]
    return DataFile("graphs", batch, ids, path, None, columns)


# ---------------------------------------------------------------------- Gram matrices
def read_gram(path: Path) -> DataFile:
    """A ``.npy`` array of Gram values: 2-D, numeric, finite; never unpickled."""
    if path.is_dir():
        raise DataFileError(path, "is a folder; expected a .npy file")
    if path.stat().st_size == 0:
        raise DataFileError(path, "empty file; expected a .npy array")
    try:
        K = np.load(path, allow_pickle=False, mmap_mode=None)
    except ValueError as exc:
        raise DataFileError(
            path, f"not a plain .npy array ({exc}); object arrays are refused"
        ) from exc
    except (OSError, EOFError) as exc:
        raise DataFileError(path, f"not a readable .npy file ({exc})") from exc
    if not isinstance(K, np.ndarray):
        raise DataFileError(path, f"expected one .npy array, got {type(K).__name__}")
    if K.ndim != 2 or K.dtype.kind not in "biuf":
        raise DataFileError(
            path, f"expected a 2-D numeric Gram matrix, got shape {K.shape} dtype {K.dtype}"
        )
    K = K.astype(np.float64)
    bad = np.argwhere(~np.isfinite(K))
    if len(bad):
        i, j = (int(v) for v in bad[0])
        raise DataFileError(path, f"entry ({i}, {j}) is {K[i, j]}; expected finite values")
    ids = [str(i) for i in range(K.shape[0])]
    return DataFile("gram", K, ids, path)
