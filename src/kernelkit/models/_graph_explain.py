r"""The minimal connected subgraph that preserves a graph classifier's prediction.

Course part 3, section 9 ("Learning graph representations", the Mutagenicity interpretation
slide of Chen, Jacob & Mairal, ICML 2020, after GNNExplainer, Ying et al. 2019): for a
classifier ``f`` and a graph ``G = (V, E)`` with prediction ``c = argmax f(G)``, the
explanation is a smallest node set ``S`` such that the induced subgraph ``G[S]`` is connected
and ``argmax f(G[S]) = c``,

.. math:: S^\star \in \arg\min \{ |S| : S \subseteq V,\ G[S] \text{ connected},\
          \arg\max f(G[S]) = c \},

ties broken by the largest margin ``f_c(G[S]) - max_{c' != c} f_{c'}(G[S])``.  The search is
exact: connected node sets are grown one neighbour at a time, size after size, and the first
size holding a set that keeps ``c`` is the answer.  When a size holds more sets than the
option ``explain_max_subgraphs`` (the number of connected sets grows exponentially), the
search falls back to greedy pruning from the smallest exact size reached: repeatedly remove
the node whose removal keeps ``G[S]`` connected and the prediction ``c`` with the largest
margin, while one exists (a set minimal for single-node removal, not necessarily of least
size).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Any

import numpy as np

from kernelkit.utils._config import options
from kernelkit.utils._errors import InputError
from kernelkit.utils._optional import pyplot, require

Scores = Callable[[list[Any]], np.ndarray]
"""Class scores ``(n_graphs, n_classes)`` of a list of networkx graphs."""


def _margins(scores: np.ndarray, target: int) -> np.ndarray:
    """``f_c - max_{c' != c} f_{c'}`` of every row (the score itself for one column)."""
    if scores.shape[1] == 1:
        return scores[:, 0] if target == 1 else -scores[:, 0]
    others = np.delete(scores, target, axis=1).max(axis=1)
    return scores[:, target] - others


def grow_connected_sets(
    graph: Any, sets: Iterable[frozenset[Hashable]]
) -> list[frozenset[Hashable]]:
    """Every connected node set with one node more than a set of ``sets`` (sorted, no
    duplicates): each set extended by each of its outside neighbours (the empty set by
    every node)."""
    grown = {s | {v} for s in sets for u in s for v in graph.neighbors(u) if v not in s}
    grown |= {frozenset([v]) for s in sets if not s for v in graph.nodes}
    return sorted(grown, key=lambda s: sorted(map(repr, s)))


def _pick(
    graph: Any, sets: list[frozenset[Hashable]], scores: Scores, target: int
) -> frozenset[Hashable] | None:
    """The set of ``sets`` of largest margin among those predicted ``target`` (or None)."""
    margins = _margins(scores([graph.subgraph(s).copy() for s in sets]), target)
    best = int(np.argmax(margins))
    return sets[best] if margins[best] > 0 else None


def _prune(graph: Any, kept: frozenset[Hashable], scores: Scores, target: int) -> set[Any]:
    """Greedy pruning of ``kept`` (module docstring)."""
    nx = require("networkx", purpose="Explaining a graph prediction")
    while len(kept) > 1:
        smaller = [kept - {v} for v in kept]
        smaller = [s for s in smaller if nx.is_connected(graph.subgraph(s))]
        choice = _pick(graph, smaller, scores, target) if smaller else None
        if choice is None:
            break
        kept = choice
    return set(kept)


def minimal_explanation(graph: Any, scores: Scores, target: int) -> set[Any]:
    """The node set of the smallest connected subgraph of ``graph`` (a networkx graph) whose
    class scores (``scores``) have their maximum at ``target`` (module docstring).

    Parameters
    ----------
    graph : networkx.Graph
        A connected graph whose own prediction is ``target``.
    scores : callable
        Class scores of a list of graphs, shape ``(n_graphs, n_classes)`` (one column: the
        decision value of the positive class ``1``).
    target : int
        Column of the predicted class.

    Returns
    -------
    set
        The nodes of the explanation.
    """
    nx = require("networkx", purpose="Explaining a graph prediction")
    if graph.number_of_nodes() == 0 or not nx.is_connected(graph):
        raise InputError(
            f"graph: expected a non-empty connected graph, got {graph.number_of_nodes()} "
            "nodes in "
            f"{nx.number_connected_components(graph) if graph.number_of_nodes() else 0} "
            "components"
        )
    cap = int(options().explain_max_subgraphs)
    sets = grow_connected_sets(graph, [frozenset()])
    for _ in range(graph.number_of_nodes() - 1):
        choice = _pick(graph, sets, scores, target)
        if choice is not None:
            return set(choice)
        sets = grow_connected_sets(graph, sets)
        if len(sets) > cap:
            return _prune(graph, frozenset(graph.nodes), scores, target)
    return set(graph.nodes)


def draw_explanation(graph: Any, nodes: set[Any], title: str, label: str | None) -> Any:
    """A figure of ``graph`` with the explanation ``nodes`` and their edges highlighted,
    node labels (attribute ``label``) written on the nodes."""
    nx = require("networkx", purpose="Drawing a graph explanation")
    plt = pyplot("Drawing a graph explanation")
    figure, ax = plt.subplots(figsize=(5, 5))
    pos = (
        nx.kamada_kawai_layout(graph)
        if graph.number_of_nodes() > 1
        else {v: (0.0, 0.0) for v in graph.nodes}
    )
    inside = [u in nodes and v in nodes for u, v in graph.edges]
    nx.draw_networkx_edges(
        graph,
        pos,
        ax=ax,
        edge_color=["tab:red" if e else "0.7" for e in inside],
        width=[3.0 if e else 1.0 for e in inside],
    )
    nx.draw_networkx_nodes(
        graph,
        pos,
        ax=ax,
        node_color=["tab:red" if v in nodes else "0.85" for v in graph.nodes],
        edgecolors="k",
    )
    if label is not None:
        text = {v: str(d[label]) for v, d in graph.nodes(data=True) if label in d}
        nx.draw_networkx_labels(graph, pos, labels=text, ax=ax, font_size=8)
    ax.set_title(title)
    ax.set_axis_off()
    return figure


__all__ = ["draw_explanation", "grow_connected_sets", "minimal_explanation"]
