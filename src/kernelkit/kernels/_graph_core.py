r"""The core framework: a base graph kernel summed over the k-cores of both graphs.

Nikolentzos, Meladianos, Limnios & Vazirgiannis, "A degeneracy framework for graph
similarity", IJCAI 2018, section 3 (GraKeL's ``CoreFramework``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from kernelkit.data._graphs import GraphBatch
from kernelkit.kernels._base import Batch, Kernel
from kernelkit.kernels._features import SparseFeatures
from kernelkit.kernels._graphs import (
    ShortestPath,
    WeisfeilerLehman,
    _GraphKernel,
    example_graphs,
    tagged_features,
)
from kernelkit.utils._errors import InputError
from kernelkit.utils._validation import check_int

__all__ = ["CoreFramework", "core_numbers"]


def core_numbers(X: GraphBatch) -> np.ndarray:
    """Core number of every node of the batch (Batagelj & Zaversnik's peeling, vectorised).

    The :math:`k`-core of a graph is its largest subgraph of minimum degree :math:`k`; a node's
    core number is the largest :math:`k` whose core holds it.  Peeling: for
    :math:`k = 0, 1, \\dots`, remove every node of remaining degree :math:`\\le k` (core number
    :math:`k`) until none is left, updating the neighbours' degrees.  Self-loops are ignored.
    """
    n = int(X.node_ptr[-1])
    src = np.repeat(np.arange(n), np.diff(X.adj_ptr))
    proper = src != X.adj_idx
    src, dst = src[proper], X.adj_idx[proper]
    deg = np.bincount(src, minlength=n)
    core = np.zeros(n, dtype=np.int64)
    alive = np.ones(n, dtype=bool)
    k = 0
    while alive.any():
        peel = alive & (deg <= k)
        if not peel.any():
            k = int(deg[alive].min())
            continue
        while peel.any():
            core[peel] = k
            alive &= ~peel
            hit = peel[src] & alive[dst]
            deg -= np.bincount(dst[hit], minlength=n)
            peel = alive & (deg <= k)
    return core


class CoreFramework(_GraphKernel):
    r"""Core framework over a base graph kernel.

    Nikolentzos et al., IJCAI 2018, section 3, eq. (2): with :math:`C_i(G)` the :math:`i`-core
    of :math:`G` (the subgraph induced by the nodes of core number :math:`\ge i`),

    .. math:: k_{\mathrm{CF}}(G, G') = \sum_{i=0}^{\delta^*} k\big(C_i(G), C_i(G')\big),

    :math:`\delta^*` the largest core number of the two graphs, terms with an empty core
    being 0.  A sum of p.d. kernels, so p.d.  As in GraKeL 0.1.11 every level from the
    0-core (the whole graph) up is summed (GraKeL ignores its ``min_core`` argument); here
    ``min_core`` works: levels ``i > min_core`` are summed.  When the base kernel has
    explicit features, so has the framework: the per-level features with level-tagged keys.

    Parameters
    ----------
    base_graph_kernel : graph Kernel or None
        The base kernel (GraKeL's ``base_graph_kernel``; default
        :class:`~kernelkit.kernels.ShortestPath`, as GraKeL's); it must take graph
        input.  Its ``node_label`` / ``edge_label`` decide which labels are read.
    min_core : int
        Levels ``i > min_core`` are summed (``-1``: all, GraKeL's behaviour).
    """

    def __init__(self, base_graph_kernel: Kernel | None = None, *, min_core: int = -1):
        super().__init__()
        base = ShortestPath() if base_graph_kernel is None else base_graph_kernel
        if not isinstance(base, _GraphKernel):
            raise InputError(
                "base_graph_kernel: expected a kernelkit graph kernel (e.g. ShortestPath(), "
                f"WeisfeilerLehman(3)), got {type(base_graph_kernel).__name__}"
            )
        self.base_graph_kernel = base_graph_kernel
        self.base_ = base
        self.min_core = check_int(min_core, name="min_core", minimum=-1)

    @property
    def node_label(self) -> str | None:  # type: ignore[override]
        return self.base_.node_label

    @property
    def edge_label(self) -> str | None:  # type: ignore[override]
        return self.base_.edge_label

    def prepare(
        self, X: Any, *, dtype: torch.dtype | None = None, reference: bool = False
    ) -> GraphBatch:
        return self.base_.prepare(X, dtype=dtype, reference=reference)

    def _levels(self, X: GraphBatch) -> list[tuple[int, np.ndarray, GraphBatch]]:
        """``(i, graphs with a non-empty i-core, their i-cores)`` for every summed level."""
        core = core_numbers(X)
        top = int(core.max()) if len(core) else -1
        out = []
        for i in range(self.min_core + 1, top + 1):
            keep = core >= i
            present = np.flatnonzero(np.bincount(X.graph_index[keep], minlength=len(X)))
            out.append((i, present, X.induced(keep)[present]))
        return out

    def features(self, X: GraphBatch) -> SparseFeatures | None:
        """Level-tagged base features of every core, or ``None`` without base features."""
        parts = []
        for i, present, sub in self._levels(X):
            F = self.base_.features(sub)
            if F is None:
                return None
            parts.append((i, present, F))
        return tagged_features(parts, len(X))

    def block(self, X: Batch, Y: Batch) -> torch.Tensor:
        if self.base_.features(X[:1]) is not None:
            return super().block(X, Y)
        K = torch.zeros(len(X), len(Y), dtype=torch.float64)
        levels_y = {i: (p, s) for i, p, s in self._levels(Y)}
        for i, px, sx in self._levels(X):
            if i in levels_y:
                py, sy = levels_y[i]
                K[np.ix_(px, py)] += self.base_.block(sx, sx if Y is X else sy).to(K)
        return K

    def block_diag(self, X: Batch) -> torch.Tensor:
        d = torch.zeros(len(X), dtype=torch.float64)
        for _, present, sub in self._levels(X):
            d[present] += self.base_.block_diag(sub).to(d)
        return d

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        from kernelkit.kernels._graph_histograms import NeighborhoodHash

        X, Y = example_graphs()
        return [
            (cls(), X, Y),
            (cls(WeisfeilerLehman(2), min_core=0), X, Y),
            (cls(NeighborhoodHash(2)), X, Y),
        ]
