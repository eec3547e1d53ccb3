"""Reader of the TU graph-classification benchmarks (TUDataset text format).

Morris et al. (2020), "TUDataset: A collection of benchmark datasets for learning with
graphs"; the format of ``NAME/original/`` (or of a folder holding the TU files themselves):

* ``NAME_A.txt``: one ``row, col`` line per directed edge (1-based global node ids; an
  undirected edge appears in both directions);
* ``NAME_graph_indicator.txt``: the (1-based) graph of every node;
* ``NAME_graph_labels.txt``: the class of every graph;
* optional ``NAME_node_labels.txt`` (one integer per node), ``NAME_edge_labels.txt`` (one
  per line of ``NAME_A.txt``), ``NAME_node_attributes.txt`` (comma-separated floats per
  node).

The graphs become networkx graphs with node attributes ``label`` (int) and ``attributes``
(float64 vector), and edge attribute ``label`` (int), the names the graph kernels and
:class:`~kernelkit.estimators.GraphCKNClassifier` read by default.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kernelkit.utils._errors import InputError
from kernelkit.utils._optional import require

TU_SETS = ("MUTAG", "PTC_MR", "PROTEINS", "ENZYMES")
"""The TU sets of ``../shared/data/tu_graphs`` (any other TU set in the same format reads too)."""


@dataclass(frozen=True)
class GraphDataset:
    """Labelled graphs of a TU benchmark.

    Attributes
    ----------
    graphs : list of networkx.Graph
        Nodes ``0 .. n_i - 1`` with ``label`` / ``attributes``; edges with ``label``.
    y : np.ndarray
        int64 class of every graph, as given in the files.
    name : str
    """

    graphs: list[Any]
    y: np.ndarray
    name: str

    def __len__(self) -> int:
        return len(self.graphs)


def _folder(data_dir: str | Path, name: str) -> Path:
    root = Path(data_dir)
    for candidate in (
        root / "tu_graphs" / name / "original",
        root / name / "original",
        root / "original",
        root,
    ):
        if (candidate / f"{name}_A.txt").is_file():
            return candidate
    raise InputError(
        f"data_dir: expected {name}_A.txt in {str(root / 'tu_graphs' / name / 'original')!r} "
        f"or a folder below {str(root)!r}, found none; pass the data folder (e.g. "
        "'../shared/data')"
    )


def _numbers(path: Path, dtype: type, *, width: int | None = None) -> np.ndarray:
    try:
        out = np.loadtxt(path, delimiter=",", dtype=dtype, ndmin=2)
    except ValueError as exc:
        raise InputError(f"{path}: expected comma-separated numbers ({exc})") from exc
    if width is not None and out.shape[1] != width:
        raise InputError(f"{path}: expected {width} value(s) per line, got {out.shape[1]}")
    return out


def load_tu(data_dir: str | Path, name: str) -> GraphDataset:
    """One TU benchmark read from its original text files into networkx graphs.

    Parameters
    ----------
    data_dir : str or Path
        The data folder (holding ``tu_graphs/NAME/original/``), or the dataset's folder.
    name : str
        Dataset name, e.g. ``"MUTAG"``, ``"PTC_MR"``, ``"PROTEINS"``, ``"ENZYMES"``
        (:data:`TU_SETS`).

    Returns
    -------
    GraphDataset
    """
    if not isinstance(name, str) or not name:
        raise InputError(f"name: expected a TU dataset name such as 'MUTAG', got {name!r}")
    nx = require("networkx", purpose="reading TU graph datasets")
    folder = _folder(data_dir, name)
    edges = _numbers(folder / f"{name}_A.txt", np.int64, width=2) - 1
    owner = _numbers(folder / f"{name}_graph_indicator.txt", np.int64, width=1)[:, 0] - 1
    y = _numbers(folder / f"{name}_graph_labels.txt", np.int64, width=1)[:, 0]
    n_graphs, n_nodes = len(y), len(owner)
    if owner.min() < 0 or owner.max() >= n_graphs or np.any(np.diff(owner) < 0):
        raise InputError(f"{folder}: graph indicators must be sorted in 1..{n_graphs}")
    if edges.min() < 0 or edges.max() >= n_nodes:
        raise InputError(f"{folder}: {name}_A.txt names nodes outside 1..{n_nodes}")
    optional = {
        "node_labels": (np.int64, n_nodes),
        "edge_labels": (np.int64, len(edges)),
        "node_attributes": (np.float64, n_nodes),
    }
    extra: dict[str, np.ndarray] = {}
    for key, (dtype, rows) in optional.items():
        path = folder / f"{name}_{key}.txt"
        if path.is_file():
            values = _numbers(path, dtype)
            if len(values) != rows:
                raise InputError(f"{path}: expected {rows} lines, got {len(values)}")
            extra[key] = values
    if bool(np.any(owner[edges[:, 0]] != owner[edges[:, 1]])):
        raise InputError(f"{folder}: {name}_A.txt joins nodes of different graphs")
    start = np.searchsorted(owner, np.arange(n_graphs))
    graphs = [nx.Graph() for _ in range(n_graphs)]
    for v in range(n_nodes):
        g = int(owner[v])
        attrs: dict[str, Any] = {}
        if "node_labels" in extra:
            attrs["label"] = int(extra["node_labels"][v, 0])
        if "node_attributes" in extra:
            attrs["attributes"] = extra["node_attributes"][v].copy()
        graphs[g].add_node(v - int(start[g]), **attrs)
    for e, (a, b) in enumerate(edges):
        g = int(owner[a])
        attrs = {"label": int(extra["edge_labels"][e, 0])} if "edge_labels" in extra else {}
        graphs[g].add_edge(int(a - start[g]), int(b - start[g]), **attrs)
    return GraphDataset(graphs, y.astype(np.int64), name)


__all__ = ["TU_SETS", "GraphDataset", "load_tu"]
