"""Graphs: GraphML / GML files, or a folder of them and of edge lists (needs networkx).

Besides the discrete node labels (``node_label``), the readers load edge labels
(``edge_label``) and continuous node attribute vectors (``node_attribute``) when the graphs
carry them; all three attribute names are renamable.  Edge lists (``NAME.edges``: ``u v`` or
``u v edge-label`` per line) take node labels from ``NAME.nodes`` (``node label``) and
attribute vectors from ``NAME.attributes`` (``node x1 x2 ...``, blanks or commas).  In
GraphML, whose values are scalars, a vector is written as a string of numbers (``"0.5 1 0"``,
``"0.5,1,0"`` or ``"[0.5, 1, 0]"``); GML lists are read as they are.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from kernelkit.data._graphs import GraphBatch
from kernelkit.data.readers._common import DataFile, read_text, text_lines
from kernelkit.utils._errors import DataFileError
from kernelkit.utils._kinds import InputKind
from kernelkit.utils._optional import require

GRAPH_FILES = (".graphml", ".gml", ".edges")


def _graph_from_file(path: Path) -> Any:
    nx = require("networkx", purpose="reading graph files")
    if path.suffix.lower() == ".edges":
        return _read_edge_list(path, nx)
    read_text(path)  # empty / binary / non-UTF-8 files get the common messages
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
    for number, line in text_lines(read_text(path)):
        parts = line.split("#", 1)[0].split()
        if not parts:
            continue
        if len(parts) != 2:
            raise DataFileError(path, f"expected {expected!r}, got {line.strip()!r}", line=number)
        yield parts[0], parts[1]


def _fields(path: Path, counts: tuple[int, ...], expected: str) -> Iterator[list[str]]:
    """The fields of every non-blank line (``#`` starts a comment), ``len`` in ``counts``."""
    for number, line in text_lines(read_text(path)):
        parts = line.split("#", 1)[0].replace(",", " ").split()
        if not parts:
            continue
        if len(parts) not in counts:
            raise DataFileError(path, f"expected {expected!r}, got {line.strip()!r}", line=number)
        yield parts


def _read_edge_list(path: Path, nx: Any) -> Any:
    graph = nx.Graph()
    for parts in _fields(path, (2, 3), "u v [edge label]"):
        graph.add_edge(parts[0], parts[1], **({"label": parts[2]} if len(parts) == 3 else {}))
    labels = path.with_suffix(".nodes")
    if labels.exists():
        for node, label in _pairs(labels, "node label"):
            graph.add_node(node, label=label)
    attributes = path.with_suffix(".attributes")
    if attributes.exists():
        counts = tuple(range(2, 10_000))
        for parts in _fields(attributes, counts, "node x1 x2 ... (numbers)"):
            graph.add_node(parts[0], attributes=_vector(parts[1:], attributes))
    return graph


def _vector(value: Any, path: Path) -> np.ndarray:
    """A node attribute as a float vector: a number, a list, or a string of numbers."""
    if isinstance(value, str):
        value = value.strip().strip("[]()").replace(",", " ").split()
    try:
        out = np.atleast_1d(np.asarray(value, dtype=np.float64))
    except (TypeError, ValueError) as exc:
        raise DataFileError(path, f"node attribute vector {value!r} is not numeric") from exc
    if out.ndim != 1 or not np.isfinite(out).all():
        raise DataFileError(path, f"node attribute vector {value!r} is not a finite vector")
    return out


def _present(path: Path, items: list[tuple[Any, dict]], name: str | None, what: str) -> bool:
    """Whether attribute ``name`` is used: on every item when on one (else an error)."""
    if name is None or not any(name in data for _, data in items):
        return False
    missing = next((key for key, data in items if name not in data), None)
    if missing is not None:
        raise DataFileError(path, f"{what} {missing!r} has no attribute {name!r} (others have it)")
    return True


def read_graphs(
    path: Path,
    *,
    node_label: str | None = "label",
    edge_label: str | None = "label",
    node_attribute: str | None = "attributes",
) -> DataFile:
    """A graph file, or a folder of graph files (sorted by name), as a :class:`GraphBatch`.

    Parameters
    ----------
    path : Path
        A ``.graphml`` / ``.gml`` / ``.edges`` file or a folder of them.
    node_label, edge_label : str or None
        Node / edge attribute holding discrete labels, read when the graphs carry it (then on
        every node / edge); ``None`` ignores it.
    node_attribute : str or None
        Node attribute holding continuous attribute vectors (same length everywhere), read
        when present; ``None`` ignores it.
    """
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix.lower() in GRAPH_FILES)
        if not files:
            raise DataFileError(
                path, f"no graph files in the folder (expected {', '.join(GRAPH_FILES)})"
            )
    else:
        files = [path]
    graphs = [_graph_from_file(f) for f in files]
    columns: dict[str, list[str]] = {}
    for key in sorted({k for g in graphs for k in g.graph}):
        columns[key] = [str(g.graph.get(key, "")) for g in graphs]
    nodes = [[(v, data) for v, data in g.nodes(data=True)] for g in graphs]
    edges = [[((u, v), data) for u, v, data in g.edges(data=True)] for g in graphs]
    flat_nodes = [item for items in nodes for item in items]
    flat_edges = [item for items in edges for item in items]
    use_label = node_label is not None and any(node_label in d for _, d in flat_nodes)
    use_edge = edge_label is not None and any(edge_label in d for _, d in flat_edges)
    use_attr = node_attribute is not None and any(node_attribute in d for _, d in flat_nodes)
    for f, g, g_nodes, g_edges in zip(files, graphs, nodes, edges, strict=True):
        if g.number_of_nodes() == 0:
            raise DataFileError(f, "graph has no nodes")
        _present(f, g_nodes, node_label if use_label else None, "node")
        _present(f, g_edges, edge_label if use_edge else None, "edge")
        if _present(f, g_nodes, node_attribute if use_attr else None, "node"):
            for v, data in g_nodes:
                g.nodes[v][node_attribute] = _vector(data[node_attribute], f)
    widths = {len(d[node_attribute]) for _, d in flat_nodes} if use_attr else set()
    if len(widths) > 1:
        raise DataFileError(
            path, f"node attribute {node_attribute!r} has different lengths {sorted(widths)}"
        )
    batch = GraphBatch.from_networkx(
        graphs,
        node_label=node_label if use_label else None,
        edge_label=edge_label if use_edge else None,
        node_attribute=node_attribute if use_attr else None,
        name=str(path),
    )
    ids = [f.stem for f in files]
    return DataFile(InputKind.GRAPH, batch, ids, path, None, columns)
