"""Graphs: GraphML / GML files, or a folder of them and of edge lists (needs networkx)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kernelkit.data.graphs import GraphBatch
from kernelkit.data.readers.common import DataFile, read_text, text_lines
from kernelkit.utils.errors import DataFileError
from kernelkit.utils.kinds import InputKind
from kernelkit.utils.optional import require

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
    return DataFile(InputKind.GRAPH, batch, ids, path, None, columns)
