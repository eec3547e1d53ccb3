r"""Graph convolutional kernel networks (GCKN; Chen, Jacob & Mairal, ICML 2020).

Course part 3, section 9 ("Learning graph representations"; seed
``kernel_methods_course.txt``, GCKN slides).  A graph is ``(V, E, a)`` with node features
``a: V -> R^d`` (one-hot labels and/or continuous attributes).  ``P_l(G, u)`` is the set of
*simple* paths with ``l`` edges (``l + 1`` distinct nodes) starting at ``u`` (the path-length
convention of errata 10 of the course digest: a path of length ``l`` has ``l + 1`` nodes, so a
path feature lies in ``R^{(l + 1) d}``); ``P_0(G, u) = {(u)}``.

Base kernel on two paths of the same length (product over positions of a homogeneous
dot-product kernel, :mod:`kernelkit.kernels._dot_product`):

.. math:: \kappa_0(a(p), a(p')) = \prod_{j=0}^{l} \|a(p_j)\| \|a(p'_j)\|\,
          \kappa\big(\langle \hat a(p_j), \hat a(p'_j) \rangle\big),

with ``kappa(u) = exp((u - 1) / ((l + 1) sigma^2))`` for ``kappa="exp"`` (the reference
implementation's convention, claying/GCKN ``PathLayer``: ``kappa`` of the *mean* of the
positions' cosines, so that ``sigma`` means the same for every path length).  For unit node
features this is the Gaussian on the sphere of the normalised concatenation
``u(p) = a(p) / sqrt(l + 1)``, ``exp((<u(p), u(p')> - 1) / sigma^2)
= exp(-||a(p) - a(p')||^2 / (2 (l + 1) sigma^2))``: the **relaxed path kernel** of the
course (one-layer GCKN),

.. math:: K(G, G') = \sum_{l=0}^{k} \sum_{u \in V} \sum_{u' \in V'}
          \sum_{p \in P_l(G, u)} \sum_{p' \in P_l(G', u')} \kappa_0(a(p), a(p')).

Layer map (Nyström on anchors ``Z_l = (z_1, ..., z_q)`` of unit rows per position):
``psi_l(p) = kappa_0(Z_l, Z_l)^{-1/2} kappa_0(Z_l, a(p))`` and the new node feature
``phi(u) = (sum_{p in P_l(G, u)} psi_l(p))_{l = 0..k}`` (or the mean over the paths,
``aggregation="mean"``); the result is a new graph ``(V, E, phi)`` and layers stack
(one layer: GCKN-path, more: GCKN-subtree).  The graph representation is the global pooling
(sum or mean over nodes) of the node features of every layer, concatenated (the sum of the
layers' kernels).  With every distinct path feature as an anchor and no shift, the one-layer
features reproduce ``K`` exactly (tested by brute force).

Anchors: spherical k-means on sampled path features (errata 11), on the product of the
``l + 1`` unit spheres (:func:`~kernelkit.models._spherical_kmeans.spherical_kmeans` with
``blocks = l + 1``, as the k-mers of :mod:`kernelkit.models._ckn_seq`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from torch import nn

from kernelkit.kernels._dot_product import kappa_function, unit_rows
from kernelkit.kernels._graph_paths import csr_ranges as _ranges
from kernelkit.kernels._graph_paths import enumerate_paths
from kernelkit.models._ckn import layer_kappa
from kernelkit.models._ckn_train import map_in_batches, sample_rows
from kernelkit.models._ridge_path import lam_grid
from kernelkit.models._spherical_kmeans import spherical_kmeans
from kernelkit.solvers._matfun import inverse_sqrt
from kernelkit.utils._errors import InputError

AGGREGATIONS = ("sum", "mean")
"""Aggregation of the path maps into their start node."""

GRAPH_POOLINGS = ("sum", "mean")
"""Global pooling of the node features."""


class GraphPaths:
    """A batch of graphs ready for a GCKN: node features and the enumerated paths.

    Indexing with an int array, a tensor of indices or a slice selects graphs (the training
    loops of :mod:`kernelkit.models._ckn_train` index their inputs this way); ``shape[0]`` is
    the number of graphs.

    Parameters
    ----------
    x : torch.Tensor, shape (N, d)
        Node features, graph after graph.
    node_ptr : np.ndarray, shape (n + 1,)
        Graph ``g`` owns nodes ``node_ptr[g]:node_ptr[g + 1]``.
    paths : list of torch.Tensor
        ``paths[l]``: ``(P_l, l + 1)`` global node ids
        (:func:`kernelkit.kernels._graph_paths.enumerate_paths`), sorted by
        start node.
    """

    def __init__(self, x: torch.Tensor, node_ptr: np.ndarray, paths: list[torch.Tensor]):
        self.x = x
        self.node_ptr = np.asarray(node_ptr, dtype=np.int64)
        self.paths = paths
        self.path_ptr = [np.searchsorted(p[:, 0].cpu().numpy(), self.node_ptr) for p in paths]

    @classmethod
    def from_csr(
        cls,
        x: torch.Tensor,
        node_ptr: np.ndarray,
        adj_ptr: np.ndarray,
        adj_idx: np.ndarray,
        max_length: int,
    ) -> GraphPaths:
        """Enumerate the paths of ``0 .. max_length`` edges of a block-diagonal CSR graph."""
        found, _ = enumerate_paths(adj_ptr, adj_idx, x.shape[0], max_length)
        return cls(x, node_ptr, [torch.as_tensor(p, device=x.device) for p in found])

    def __len__(self) -> int:
        return len(self.node_ptr) - 1

    @property
    def shape(self) -> tuple[int]:
        """``(n_graphs,)``."""
        return (len(self),)

    @property
    def device(self) -> torch.device:
        """Device of the node features."""
        return self.x.device

    @property
    def dtype(self) -> torch.dtype:
        """Dtype of the node features."""
        return self.x.dtype

    @property
    def graph_index(self) -> torch.Tensor:
        """Graph of every node, shape ``(N,)``."""
        counts = torch.as_tensor(np.diff(self.node_ptr), device=self.device)
        return torch.repeat_interleave(torch.arange(len(self), device=self.device), counts)

    def with_features(self, x: torch.Tensor) -> GraphPaths:
        """The same graphs and paths with node features ``x`` (no copy of the paths)."""
        out = object.__new__(GraphPaths)
        out.x, out.node_ptr, out.paths, out.path_ptr = x, self.node_ptr, self.paths, self.path_ptr
        return out

    def to(self, dtype: torch.dtype) -> GraphPaths:
        """The batch with node features cast to ``dtype``."""
        return self if dtype == self.x.dtype else self.with_features(self.x.to(dtype))

    def __getitem__(self, idx: Any) -> GraphPaths:
        if isinstance(idx, torch.Tensor):
            idx = idx.cpu().numpy()
        rows = np.atleast_1d(np.arange(len(self))[idx])
        counts = np.diff(self.node_ptr)[rows]
        new_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        shift = new_ptr[:-1] - self.node_ptr[rows]
        nodes = torch.as_tensor(_ranges(self.node_ptr[rows], counts), device=self.device)
        paths = []
        for p, ptr in zip(self.paths, self.path_ptr, strict=True):
            n_paths = ptr[rows + 1] - ptr[rows]
            sel = torch.as_tensor(_ranges(ptr[rows], n_paths), device=self.device)
            moved = torch.as_tensor(np.repeat(shift, n_paths), device=self.device)
            paths.append(p[sel] + moved[:, None])
        return GraphPaths(self.x[nodes], new_ptr, paths)


class PathAnchors(nn.Module):
    r"""Anchors of the paths of one length and their Gram ``kappa_0(Z, Z)``.

    Parameters
    ----------
    in_features : int
        Dimension ``d`` of a node feature.
    n_filters : int
        Number ``q`` of anchors.
    n_nodes : int
        Nodes ``l + 1`` of a path.
    kappa, sigma : str, float
        Per-position dot-product kernel (``exp((u - 1) / ((l + 1) sigma^2))`` for ``"exp"``,
        ``l + 1 = n_nodes``; the other kappas are parameter-free).
    dtype : torch.dtype
        Dtype of the anchors.

    Attributes
    ----------
    weight : nn.Parameter, shape (q, l + 1, d)
        Unnormalised anchors; each position's row is normalised on use.
    """

    def __init__(
        self,
        in_features: int,
        n_filters: int,
        n_nodes: int,
        *,
        kappa: str = "exp",
        sigma: float = 0.5,
        dtype: torch.dtype = torch.float64,
    ):
        super().__init__()
        kappa_function(kappa)
        self.kappa_name, self.sigma = kappa, float(sigma) * math.sqrt(n_nodes)
        self.weight = nn.Parameter(torch.randn(n_filters, n_nodes, in_features, dtype=dtype))

    def kappa(self, u: torch.Tensor) -> torch.Tensor:
        """Per-position ``kappa``."""
        return layer_kappa(self.kappa_name, self.sigma)(u)

    def anchors(self) -> torch.Tensor:
        """Anchors with unit rows per position, shape ``(q, l + 1, d)``."""
        norms = torch.linalg.vector_norm(self.weight, dim=2, keepdim=True)
        return self.weight / torch.where(norms > 0, norms, torch.ones_like(norms))

    def set_anchors(self, Z: torch.Tensor) -> None:
        """Replace the anchors by ``Z`` (shape ``(q, (l + 1) d)`` or ``(q, l + 1, d)``)."""
        with torch.no_grad():
            self.weight.copy_(Z.reshape(self.weight.shape).to(self.weight))

    def anchor_gram(self) -> torch.Tensor:
        """``kappa_0(Z, Z) = prod_j kappa(Z_j Z_j^T)``, shape ``(q, q)``."""
        Z = self.anchors()
        cos = torch.einsum("pjd,qjd->jpq", Z, Z).clamp(-1.0, 1.0)
        return self.kappa(cos).prod(0)

    def path_map(self, xu: torch.Tensor, norms: torch.Tensor, paths: torch.Tensor) -> torch.Tensor:
        """``kappa_0(Z, a(p))`` of every path, shape ``(P, q)`` (unit features ``xu``)."""
        b = self.kappa(torch.einsum("qjd,nd->jnq", self.anchors(), xu).clamp(-1.0, 1.0))
        b = b * norms[None, :, None]
        h = b[0][paths[:, 0]]
        for j in range(1, paths.shape[1]):
            h = h * b[j][paths[:, j]]
        return h


class PathLayer(nn.Module):
    r"""One GCKN layer: node features ``phi(u) = (agg_{p in P_l(G, u)} psi_l(p))_{l=0..k}``.

    Parameters
    ----------
    in_features : int
        Dimension ``d`` of the input node features.
    n_filters : int
        Anchors ``q`` per path length (output ``(k + 1) q`` features per node).
    max_length : int
        Longest path ``k`` (edges).
    kappa, sigma : str, float
        Per-position kernel (:class:`PathAnchors`).
    shift : float
        ``epsilon`` of ``(kappa_0(Z, Z)^{1/2} + epsilon I)^{-1}``; 0 is the exact Nyström map.
    aggregation : {"sum", "mean"}
        Sum (the kernel of the module docstring) or mean of the path maps at their start node.
    dtype : torch.dtype
        Dtype of the anchors.
    """

    def __init__(
        self,
        in_features: int,
        n_filters: int,
        max_length: int,
        *,
        kappa: str = "exp",
        sigma: float = 0.5,
        shift: float = 0.0,
        aggregation: str = "sum",
        dtype: torch.dtype = torch.float64,
    ):
        super().__init__()
        if aggregation not in AGGREGATIONS:
            raise InputError(f"aggregation: expected one of {AGGREGATIONS}, got {aggregation!r}")
        self.in_features, self.n_filters = int(in_features), int(n_filters)
        self.max_length, self.shift, self.aggregation = int(max_length), float(shift), aggregation
        self.maps = nn.ModuleList(
            PathAnchors(in_features, n_filters, length + 1, kappa=kappa, sigma=sigma, dtype=dtype)
            for length in range(self.max_length + 1)
        )

    @property
    def out_features(self) -> int:
        """``(k + 1) q``."""
        return (self.max_length + 1) * self.n_filters

    def forward(self, batch: GraphPaths) -> torch.Tensor:
        """New node features, shape ``(N, (k + 1) q)`` (length ``l`` in block ``l``)."""
        xu, norms = unit_rows(batch.x)
        n = batch.x.shape[0]
        blocks = []
        for anchors, paths in zip(self.maps, batch.paths, strict=False):
            h = anchors.path_map(xu, norms, paths)
            agg = h.new_zeros((n, self.n_filters)).index_add_(0, paths[:, 0], h)
            if self.aggregation == "mean":
                count = torch.bincount(paths[:, 0], minlength=n).clamp_min(1).to(h.dtype)
                agg = agg / count[:, None]
            blocks.append(agg @ inverse_sqrt(anchors.anchor_gram(), shift=self.shift))
        return torch.cat(blocks, dim=1)


class GraphCKN(nn.Module):
    r"""A stack of :class:`PathLayer` with global pooling (module docstring).

    Parameters
    ----------
    in_features : int
        Dimension of the input node features.
    n_filters : sequence of int
        Anchors per path length of each layer.
    max_length : int or sequence of int
        Longest path (edges): one for every layer, or one per layer.
    kappa, sigma, shift, aggregation, dtype :
        As in :class:`PathLayer`, shared by all layers.
    pooling : {"sum", "mean"}
        Sum or mean of the node features over the nodes of a graph.
    normalize : bool
        Scale each layer's pooled block to unit norm (the normalised kernel of each layer).
    top_filters : int
        Anchors ``m`` of the graph-level kernel layer (0: none, the representation is the
        pooled blocks).
    top_sigma : float
        ``sigma`` of that layer's ``kappa`` (:class:`PathAnchors` of one node).

    Attributes
    ----------
    standardize : bool
        Whether the output is standardised by ``feature_mean`` / ``feature_scale``
        (buffers set by :func:`fit_standardization`; off at construction).
    """

    def __init__(
        self,
        in_features: int,
        n_filters: tuple[int, ...],
        max_length: int | tuple[int, ...],
        *,
        kappa: str = "exp",
        sigma: float = 0.5,
        shift: float = 0.0,
        aggregation: str = "sum",
        pooling: str = "sum",
        normalize: bool = False,
        top_filters: int = 0,
        top_sigma: float = 1.0,
        dtype: torch.dtype = torch.float64,
    ):
        super().__init__()
        if pooling not in GRAPH_POOLINGS:
            raise InputError(f"pooling: expected one of {GRAPH_POOLINGS}, got {pooling!r}")
        lengths = (max_length,) * len(n_filters) if isinstance(max_length, int) else max_length
        if len(lengths) != len(n_filters):
            raise InputError(
                f"max_length: expected one value or one per layer ({len(n_filters)}), got "
                f"{max_length!r}"
            )
        dims = [int(in_features)]
        layers = []
        for q, length in zip(n_filters, lengths, strict=True):
            layers.append(
                PathLayer(
                    dims[-1],
                    q,
                    int(length),
                    kappa=kappa,
                    sigma=sigma,
                    shift=shift,
                    aggregation=aggregation,
                    dtype=dtype,
                )
            )
            dims.append(layers[-1].out_features)
        self.layers = nn.ModuleList(layers)
        self.pooling, self.normalize = pooling, bool(normalize)
        self.standardize = False
        width = sum(layer.out_features for layer in layers)
        self.register_buffer("feature_mean", torch.zeros(width, dtype=dtype))
        self.register_buffer("feature_scale", torch.ones(width, dtype=dtype))
        self.top = (
            PathLayer(width, top_filters, 0, kappa=kappa, sigma=top_sigma, shift=shift, dtype=dtype)
            if top_filters > 0
            else None
        )

    @property
    def n_features(self) -> int:
        """Length of the graph representation (the graph-level layer's anchors, or the
        layers' blocks concatenated)."""
        if self.top is not None:
            return self.top.out_features
        return sum(layer.out_features for layer in self.layers)

    def node_features(self, batch: GraphPaths, depth: int) -> torch.Tensor:
        """Node features after the first ``depth`` layers, shape ``(N, d_depth)``."""
        x = batch.x
        for layer in self.layers[:depth]:
            x = layer(batch.with_features(x))
        return x

    def forward(self, batch: GraphPaths) -> torch.Tensor:
        r"""Graph representations, shape ``(n_graphs, n_features)``.

        With a graph-level layer, the Nyström map of the dot-product kernel
        ``||Phi|| ||Phi'|| kappa(<Phi, Phi'> / (||Phi|| ||Phi'||))`` on the pooled
        representations ``Phi(G)`` (:meth:`pooled`): the layer of a one-node graph per graph,
        so that a linear model on it is a kernel machine with a Gaussian kernel on the
        normalised GCKN embeddings (for normalised blocks, ``exp(-||Phi - Phi'||^2 /
        (2 L sigma^2))`` with ``L`` layers), the kernel on kernel mean embeddings of
        Christmann & Steinwart (NeurIPS 2010) and Muandet et al. (NeurIPS 2012).
        """
        out = self.pooled(batch)
        return out if self.top is None else self.graph_level(out)

    def graph_level(self, pooled: torch.Tensor) -> torch.Tensor:
        """The graph-level layer on pooled representations (one one-node graph each)."""
        n = pooled.shape[0]
        graphs = torch.arange(n, device=pooled.device)[:, None]
        return self.top(GraphPaths(pooled, np.arange(n + 1, dtype=np.int64), [graphs]))

    def pooled(self, batch: GraphPaths) -> torch.Tensor:
        """The pooled node features of every layer, concatenated (and standardised when
        ``standardize``), shape ``(n_graphs, sum_layers (k + 1) q)``."""
        index = batch.graph_index
        n = len(batch)
        x, blocks = batch.x, []
        for layer in self.layers:
            x = layer(batch.with_features(x))
            pooled = x.new_zeros((n, x.shape[1])).index_add_(0, index, x)
            if self.pooling == "mean":
                sizes = torch.as_tensor(np.diff(batch.node_ptr), device=x.device)
                pooled = pooled / sizes.clamp_min(1).to(x.dtype)[:, None]
            if self.normalize:
                norms = torch.linalg.vector_norm(pooled, dim=1, keepdim=True)
                pooled = pooled / torch.where(norms > 0, norms, torch.ones_like(norms))
            blocks.append(pooled)
        out = torch.cat(blocks, dim=1)
        if self.standardize:
            out = (out - self.feature_mean) / self.feature_scale
        return out


def gckn_lam_grid() -> tuple[float, ...]:
    """Ridge penalties of the GCKN classifier's internal cross-validation: the decades of the
    one ``lam`` lattice (:func:`~kernelkit.models._ridge_path.lam_grid`) from its low end up
    to 1, wider than the other CKNs' window (:func:`~kernelkit.models._ckn_head.lam_cv_grid`)
    on both sides: the normalised GCKN features want the smallest penalties, the standardised
    ones penalties up to the order of 1 (``docs/graphs.md``)."""
    return tuple(float(v) for v in lam_grid(high=1.0, per_decade=1))


def layer_prefixes(network: GraphCKN) -> tuple[torch.Tensor, ...]:
    """Boolean masks of the feature columns of the first ``1, 2, ..., L`` layers."""
    widths = [layer.out_features for layer in network.layers]
    if network.top is not None:  # the graph-level kernel reads every layer
        return (torch.ones(network.n_features, dtype=torch.bool),)
    return tuple(
        torch.cat([torch.full((w,), i <= j, dtype=torch.bool) for i, w in enumerate(widths)])
        for j in range(len(widths))
    )


def keep_layers(network: GraphCKN, n_layers: int) -> None:
    """Keep the first ``n_layers`` layers of ``network`` (and their standardisation)."""
    network.layers = nn.ModuleList(list(network.layers)[:n_layers])
    width = network.n_features
    network.feature_mean = network.feature_mean[:width].clone()
    network.feature_scale = network.feature_scale[:width].clone()


def fit_standardization(network: GraphCKN, batch: GraphPaths, batch_size: int = 256) -> None:
    """Standardise every feature of ``network`` by its mean and standard deviation over the
    graphs of ``batch`` (a constant feature is only centred), as the ``StandardScaler`` the
    reference implementation puts before its classifier (claying/GCKN,
    ``experiments/gckn_unsup.py``)."""
    network.standardize = False
    features = map_in_batches(network.pooled, batch, batch_size)
    std = features.std(0, unbiased=False)
    with torch.no_grad():
        network.feature_mean.copy_(features.mean(0))
        network.feature_scale.copy_(torch.where(std > 0, std, torch.ones_like(std)))
    network.standardize = True


def fit_path_anchors(
    network: GraphCKN,
    batch: GraphPaths,
    *,
    n_paths: int,
    n_iter: int,
    generator: torch.Generator,
    batch_size: int = 256,
) -> None:
    """Unsupervised anchors: spherical k-means on sampled path features, layer by layer.

    For layer ``j`` and path length ``l``: the node features after the layers already fitted
    are computed on a random subset of graphs (about ``2 n_paths`` paths of length ``l``), at
    most ``n_paths`` of their path features ``a(p)`` in ``R^{(l + 1) d}`` whose nodes all have
    non-zero features are drawn (random anchors where there are none),
    and their spherical k-means centroids on the product of ``l + 1`` spheres are the anchors.
    """
    n = len(batch)
    for depth, layer in enumerate(network.layers):
        for length, anchors in enumerate(layer.maps):
            total = int(batch.paths[length].shape[0])
            n_graphs = n if total == 0 else min(n, max(1, math.ceil(2 * n_paths * n / total)))
            idx = torch.randperm(n, generator=generator)[:n_graphs]
            sub = batch[idx.sort().values]
            x = (
                map_in_batches(lambda b, d=depth: network.node_features(b, d), sub, batch_size)
                if depth
                else sub.x
            )
            paths = sub.paths[length]
            full = (torch.linalg.vector_norm(x, dim=1) > 0)[paths].all(1)
            paths = paths[full]  # paths through a zero node feature carry no direction
            rows = x[paths].reshape(paths.shape[0], (length + 1) * x.shape[1])
            rows = sample_rows(rows, n_paths, generator)
            anchors.set_anchors(
                spherical_kmeans(
                    rows, layer.n_filters, n_iter=n_iter, generator=generator, blocks=length + 1
                )
            )


def fit_top_anchors(
    network: GraphCKN,
    batch: GraphPaths,
    *,
    n_iter: int,
    generator: torch.Generator,
    batch_size: int = 256,
) -> None:
    """Anchors of the graph-level layer: spherical k-means on the pooled representations of
    the graphs of ``batch`` (every graph an anchor when there are at most ``top_filters``
    of them: the exact kernel on those graphs)."""
    top = network.top
    rows = sample_rows(map_in_batches(network.pooled, batch, batch_size), len(batch), generator)
    centres = spherical_kmeans(rows, top.n_filters, n_iter=n_iter, generator=generator)
    top.maps[0].set_anchors(centres)


__all__ = [
    "AGGREGATIONS",
    "GRAPH_POOLINGS",
    "GraphCKN",
    "GraphPaths",
    "PathAnchors",
    "PathLayer",
    "enumerate_paths",
    "fit_path_anchors",
    "fit_standardization",
    "fit_top_anchors",
    "gckn_lam_grid",
    "keep_layers",
    "layer_prefixes",
]
