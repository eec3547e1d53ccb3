r"""Graph convolutional kernel networks (GCKN) as scikit-learn estimators.

Course part 3, section 9, "Learning graph representations" (Chen, Jacob & Mairal, ICML 2020).
:class:`GraphCKNFeatures` returns the pooled node features of a GCKN whose anchors are
learned by spherical k-means on sampled path features (unsupervised); a linear model on them
is a kernel machine with the (Nyström-approximated) relaxed path kernel and its multilayer
versions (:mod:`kernelkit.models._gckn` holds the maths).  :class:`GraphCKNClassifier` adds a
multinomial logistic classifier, and optionally trains the anchors end to end through the
CKN training loop (:mod:`kernelkit.models._ckn_train`).

Input: a list of networkx graphs or a :class:`~kernelkit.data.GraphBatch`.  Node features
are the one-hot encoding of the discrete node label (attribute ``node_label``, vocabulary of
the training graphs; an unseen label is the zero vector) and/or the continuous node
attributes (attribute ``node_attribute``), concatenated; each is used when the training
graphs carry it, and graphs with neither get the constant feature 1.  As in the reference
implementation (claying/GCKN), continuous attributes are standardised with the training
mean and standard deviation, and every node feature vector is scaled to unit norm.  Numeric arrays
``(n, T, A)`` are read as path graphs (chains) of ``T`` nodes with the ``A``-vectors as node
attributes (the sequences of :mod:`kernelkit.estimators._ckn_seq` as graphs), and ``(n, d)``
rows as one-node graphs with the row as node attributes (the GCKN is then a dot-product
kernel network on vectors, as :class:`~kernelkit.estimators.CKNFeatures` on flat rows).
Edge labels are not used.
"""

from __future__ import annotations

import copy
import itertools
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
import torch
from sklearn.base import ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from kernelkit.data import GraphBatch, as_graph_batch
from kernelkit.estimators._ckn_base import (
    SUPERVISED_ATTRIBUTES_DOC,
    SUPERVISED_CONSTRAINTS,
    SUPERVISED_PARAMS_DOC,
    CKNClassifierMixin,
    CKNTransformerMixin,
    _CKNBase,
    float_tensor,
    store_params,
)
from kernelkit.estimators._gckn_inputs import (
    CLASSIFIER_DEFAULTS,
    FEATURE_DEFAULTS,
    GCKN_CONSTRAINTS,
    GCKN_PARAMS_DOC,
    chain_batch,
    check_filters,
    check_lengths,
    is_graph_input,
    length_candidates,
    sigma_candidates,
    top_sigma_candidates,
)
from kernelkit.models._ckn_head import cv_folds
from kernelkit.models._ckn_train import map_in_batches
from kernelkit.models._gckn import (
    GraphCKN,
    GraphPaths,
    fit_path_anchors,
    fit_standardization,
    fit_top_anchors,
    gckn_lam_grid,
    keep_layers,
    layer_prefixes,
)
from kernelkit.models._graph_explain import draw_explanation, minimal_explanation
from kernelkit.utils._config import options
from kernelkit.utils._constraints import Interval, StrOptions
from kernelkit.utils._errors import InputError
from kernelkit.utils._progress import VerboseLike

__all__ = ["GraphCKNClassifier", "GraphCKNFeatures"]


class _GraphCKN(_CKNBase):
    """Graph input and the GCKN network of the GCKN estimators."""

    n_filters: Any
    max_length: int
    aggregation: str
    pooling: str
    normalize: bool
    node_label: str | None
    node_attribute: str | None
    n_paths: int

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = False
        return tags

    # ------------------------------------------------------------------ inputs
    def _graph_batch(self, X: Any, reset: bool) -> GraphBatch:
        if isinstance(X, GraphBatch):
            batch = as_graph_batch(X, node_label=None)
            if reset:
                self.use_labels_ = batch.node_labels is not None and self.node_label is not None
                self.use_attributes_ = (
                    batch.node_attributes is not None and self.node_attribute is not None
                )
            return batch
        graphs = list(X)
        if reset:
            first = next((d for g in graphs for _, d in g.nodes(data=True)), {})
            self.use_labels_ = self.node_label is not None and self.node_label in first
            self.use_attributes_ = self.node_attribute is not None and self.node_attribute in first
        return as_graph_batch(
            graphs,
            node_label=self.node_label if self.use_labels_ else None,
            node_attribute=self.node_attribute if self.use_attributes_ else None,
        )

    def _node_matrix(self, batch: GraphBatch, reset: bool) -> torch.Tensor:
        n = int(batch.node_ptr[-1])
        parts = []
        if reset:
            self.label_codes_, self.n_attributes_ = np.zeros(0, dtype=np.int64), 0
            self.n_channels_ = 0
        if self.use_labels_:
            if batch.node_labels is None:
                raise InputError(
                    "X: the model was fitted on labelled graphs, got graphs without node labels"
                )
            if reset:
                self.label_codes_ = np.unique(batch.node_labels)
            pos = np.searchsorted(self.label_codes_, batch.node_labels)
            pos = np.minimum(pos, len(self.label_codes_) - 1)
            known = self.label_codes_[pos] == batch.node_labels
            onehot = np.zeros((n, len(self.label_codes_)))
            onehot[np.flatnonzero(known), pos[known]] = 1.0
            parts.append(onehot)
        if self.use_attributes_:
            if batch.node_attributes is None:
                raise InputError(
                    "X: the model was fitted on graphs with node attributes, got "
                    "graphs without them"
                )
            attrs = np.asarray(batch.node_attributes, dtype=np.float64)
            if reset:
                self.n_attributes_ = int(attrs.shape[1])
                scale = attrs.std(0)
                self._attribute_shift = attrs.mean(0)
                self._attribute_scale = np.where(scale > 0, scale, 1.0)
            elif attrs.shape[1] != self.n_attributes_:
                raise InputError(
                    f"X: expected {self.n_attributes_} node attributes as in fit, "
                    f"got {attrs.shape[1]}"
                )
            parts.append((attrs - self._attribute_shift) / self._attribute_scale)
        if not parts:
            parts.append(np.ones((n, 1)))
        x = np.concatenate(parts, axis=1)
        norms = np.linalg.norm(x, axis=1, keepdims=True)
        x = x / np.where(norms > 0, norms, 1.0)
        if reset:
            self.n_channels_ = int(x.shape[1])
        return torch.from_numpy(x)

    def _inputs(self, X: Any, *, reset: bool) -> GraphPaths:
        graphs = is_graph_input(X)
        if not reset and graphs != (self.input_kind_ == "graphs"):
            raise InputError(
                f"X: the model was fitted on {self.input_kind_}, got "
                f"{'graphs' if graphs else 'a numeric array'}"
            )
        if graphs:
            batch = self._graph_batch(X, reset)
            x = self._node_matrix(batch, reset)
            ptrs = (batch.node_ptr, batch.adj_ptr, batch.adj_idx)
            if reset:
                self.input_kind_ = "graphs"
                if hasattr(self, "n_features_in_"):
                    del self.n_features_in_
        else:
            Xt = float_tensor(X, self, reset=reset, allow_nd=True)
            if Xt.ndim not in (2, 3):
                raise InputError(
                    f"X: expected graphs, an (n, d) or an (n, T, A) array, got "
                    f"shape {tuple(Xt.shape)}"
                )
            x3 = Xt[:, None, :] if Xt.ndim == 2 else Xt
            if reset:
                self.input_kind_, self.n_channels_ = "numeric arrays", int(x3.shape[2])
                self.use_labels_, self.use_attributes_ = False, True
                self.label_codes_ = np.zeros(0, dtype=np.int64)
                self.n_attributes_ = self.n_channels_
            elif x3.shape[2] != self.n_channels_:
                raise InputError(
                    f"X: expected {self.n_channels_} values per node as in fit, got {x3.shape[2]}"
                )
            ptrs = chain_batch(x3)
            x = x3.reshape(-1, x3.shape[2])
        if not reset:
            x = x.to(next(self.network_.parameters()))
        longest = max(max(check_lengths(v)) for v in length_candidates(self.max_length))
        return GraphPaths.from_csr(x, *ptrs, longest)

    # ------------------------------------------------------------------ network
    def _make_network(self, X: GraphPaths) -> GraphCKN:
        return self._network(X, self.sigma, self.max_length)

    def _network(
        self, X: GraphPaths, sigma: float, max_length: Any, top_sigma: float | None = None
    ) -> GraphCKN:
        lengths = check_lengths(max_length)
        return GraphCKN(
            int(X.x.shape[1]),
            check_filters(self.n_filters),
            lengths[0] if isinstance(max_length, Integral) else lengths,
            kappa=self.kappa,
            sigma=sigma,
            shift=self.shift,
            aggregation=self.aggregation,
            pooling=self.pooling,
            normalize=self.normalize is not False,
            top_filters=0 if top_sigma is None else min(self.top_filters, len(X)),
            top_sigma=1.0 if top_sigma is None else top_sigma,
            dtype=X.dtype,
        )

    def _fit_anchors(self, network: GraphCKN, X: GraphPaths, generator: torch.Generator) -> None:
        self._fit_path_anchors(network, X, generator)
        if self.standardize:
            fit_standardization(network, X, self.batch_size)

    def _fit_path_anchors(
        self, network: GraphCKN, X: GraphPaths, generator: torch.Generator
    ) -> None:
        fit_path_anchors(
            network,
            X,
            n_paths=self.n_paths,
            n_iter=self.kmeans_iter,
            generator=generator,
            batch_size=self.batch_size,
        )


class GraphCKNFeatures(CKNTransformerMixin, _GraphCKN):
    __doc__ = (
        r"""Unsupervised graph convolutional kernel network features (GCKN).

    ``<Phi(G), Phi(G')>`` approximates the (multilayer) relaxed path kernel
    ``sum_l sum_{p in P_l(G)} sum_{p' in P_l(G')} kappa_0(a(p), a(p'))`` of course part 3,
    section 9 (Chen, Jacob & Mairal 2020; see :mod:`kernelkit.models._gckn`), each layer's
    pooled block concatenated.

    Parameters
    ----------"""
        + GCKN_PARAMS_DOC.format(**FEATURE_DEFAULTS)
        + r"""

    Attributes
    ----------
    network_ : kernelkit.models._gckn.GraphCKN
        The network with its anchors.
    input_kind_ : str
        ``"graphs"`` or ``"numeric arrays"``.
    use_labels_, use_attributes_ : bool
        Whether node labels / continuous attributes are node features.
    label_codes_ : ndarray
        Codes of the training node labels (:func:`kernelkit.data._graphs.label_codes`), one
        one-hot column each (empty without labels).
    n_attributes_ : int
        Number of continuous node attributes used (0: none).
    n_channels_ : int
        Dimension ``d`` of the input node features (one-hot columns, then attributes).

    Notes
    -----
    Objective: no loss is fitted; for each layer and path length the anchors ``z_1, ..., z_q``
    (unit rows per path position) maximise the spherical k-means criterion over the sampled
    path features ``a(p)`` (products of unit spheres),

    .. math:: \max_{z_j \in (S^{d-1})^{l+1}} \sum_{p} \max_{j} \langle a(p), z_j \rangle,

    and ``Phi`` is the Nyström map on them (course part 3, section 9).
    """
    )

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = GCKN_CONSTRAINTS

    def __init__(
        self,
        n_filters: int | tuple[int, ...] = (32, 32),
        max_length: int | tuple[int, ...] = (2, 0),
        *,
        aggregation: str = "sum",
        pooling: str = "sum",
        normalize: bool = True,
        standardize: bool = False,
        node_label: str | None = "label",
        node_attribute: str | None = "attributes",
        kappa: str = "exp",
        sigma: float = 1.5,
        shift: float = 0.01,
        n_paths: int = 10000,
        kmeans_iter: int = 10,
        batch_size: int = 128,
        random_state: Any = None,
    ):
        store_params(self, locals())

    @property
    def n_components_(self) -> int:
        """Number of output features (``sum_layers (k + 1) q``)."""
        check_is_fitted(self, "network_")
        return self.network_.n_features


class GraphCKNClassifier(ClassifierMixin, CKNClassifierMixin, _GraphCKN):
    __doc__ = (
        r"""GCKN graph classifier: GCKN features and a multinomial logistic regression.

    Spherical k-means anchors (as :class:`GraphCKNFeatures`) and the logistic regression on
    their features, or on a graph-level Gaussian kernel layer over them (``top_sigma``;
    ``lam``, the layer and the number of path layers kept chosen by internal
    cross-validation by default); with ``max_iter > 0`` the anchors and the classifier are
    then trained end to end (supervised GCKN, course part 3, section 9) by the CKN training loop of
    :class:`~kernelkit.estimators.SequenceCKNClassifier`.

    Parameters
    ----------"""
        + GCKN_PARAMS_DOC.format(**CLASSIFIER_DEFAULTS)
        + """
    lam : float or "auto", default "auto"
        Ridge penalty of the classifier; ``"auto"``: chosen among the decades ``1e-9 .. 1``
        (:func:`~kernelkit.models._gckn.gckn_lam_grid`, wider than the other CKNs' window)
        together with the number of layers kept (``1 .. len(n_filters)``) and the ``sigma``
        / ``max_length`` / ``top_sigma`` candidates by stratified cross-validated accuracy
        on the training features: 5-fold repeated on ``graph_ckn_cv_repeats`` independent
        fold draws below 1000 graphs (an option, default 2; their scores summed), one 3-fold
        draw from 1000 (:func:`~kernelkit.models._ckn_head.cross_validate_lam`;
        ``max_iter="auto"``: the one draw of the search of the training epochs).
    top_sigma : float, None or sequence of them, default (None, 1.0, 0.5, 0.25)
        ``sigma`` of a graph-level kernel layer on the pooled representation ``Phi(G)``:
        the Nyström map of ``||Phi|| ||Phi'|| exp((cos(Phi, Phi') - 1) / top_sigma^2)`` (a
        Gaussian kernel on the normalised GCKN embeddings, the kernel on kernel mean
        embeddings of Christmann & Steinwart, NeurIPS 2010, and Muandet et al., NeurIPS
        2012), so that the classifier is a kernel machine on graph embeddings instead of a
        linear model; ``None``: no such layer.  A sequence: candidates chosen with ``lam``
        by the internal cross-validation (the networks of one ``sigma`` and ``max_length``
        share their path layers); with the layer every path layer is kept.
    top_filters : int, default 512
        Anchors of that layer: spherical k-means centroids of the training graphs'
        representations, every training graph when there are at most ``top_filters`` (the
        exact kernel on them).
    max_iter : int or "auto", default 0
        Training epochs of the anchors (0: the unsupervised GCKN)."""
        + SUPERVISED_PARAMS_DOC
        + """

    Attributes
    ----------
    network_, input_kind_, use_labels_, use_attributes_, label_codes_, n_attributes_, n_channels_ :
        As in :class:`GraphCKNFeatures`.
    head_ : torch.nn.Linear
        The linear classifier."""
        + SUPERVISED_ATTRIBUTES_DOC
        + r"""

    Notes
    -----
    Objective: over the classifier ``(W, b)`` (and the anchors ``Z`` when ``max_iter > 0``):

    .. math:: \min_{Z, W, b} \frac{1}{n} \sum_{i=1}^n \mathrm{CE}(W \Phi_Z(G_i) + b, y_i)
              + \lambda \|W\|_F^2.
    """
    )

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **GCKN_CONSTRAINTS,
        **SUPERVISED_CONSTRAINTS,
        "normalize": ["boolean", StrOptions({"auto"})],
        "standardize": ["boolean", StrOptions({"auto"})],
        "sigma": [Interval(Real, 0, None, closed="neither"), tuple, list],
        "top_sigma": [None, Interval(Real, 0, None, closed="neither"), tuple, list],
        "top_filters": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        n_filters: int | tuple[int, ...] = (32, 32),
        max_length: int | tuple[int, ...] = (2, 0),
        *,
        aggregation: str = "sum",
        pooling: str = "sum",
        normalize: bool | str = True,
        standardize: bool | str = False,
        node_label: str | None = "label",
        node_attribute: str | None = "attributes",
        kappa: str = "exp",
        sigma: float | tuple[float, ...] = (1.5, 1.0, 0.5),
        top_sigma: float | tuple[float | None, ...] | None = (None, 1.0, 0.5, 0.25),
        top_filters: int = 512,
        shift: float = 0.01,
        n_paths: int = 10000,
        kmeans_iter: int = 10,
        lam: float | str = "auto",
        max_iter: int | str = 0,
        lr: float = 0.01,
        training: str = "alternating",
        head_init: str = "linear",
        validation_fraction: float = 0.1,
        n_iter_no_change: int = 5,
        batch_size: int = 128,
        verbose: VerboseLike = 0,
        random_state: Any = None,
        on_error: str = "raise",
    ):
        store_params(self, locals())

    def fit(self, X: Any, y: Any) -> GraphCKNClassifier:
        """Spherical k-means anchors, the classifier, then (``max_iter > 0``) end-to-end
        training."""
        return self._fit_classifier(X, y)

    def explain(self, graph: Any) -> tuple[set[Any], Any]:
        r"""The minimal connected subgraph of ``graph`` that keeps its prediction.

        Course part 3, section 9 (the Mutagenicity interpretation of Chen, Jacob & Mairal,
        ICML 2020): with ``c`` the class predicted for ``G``, a smallest node set ``S`` with
        ``G[S]`` connected and ``c`` predicted for ``G[S]``,
        ``S* in argmin {|S| : G[S] connected, argmax f(G[S]) = c}``, ties broken by the
        largest margin of ``c`` (exact search size after size, greedy pruning beyond the
        option ``explain_max_subgraphs`` subgraphs of one size:
        :mod:`kernelkit.models._graph_explain`).

        Parameters
        ----------
        graph : networkx.Graph
            One connected graph with the node attributes of the training graphs.

        Returns
        -------
        nodes : set
            The nodes of the explanation.
        figure : matplotlib.figure.Figure
            ``graph`` with the explanation highlighted (needs matplotlib, the ``plot``
            extra).
        """
        check_is_fitted(self, "head_")
        if self.input_kind_ != "graphs" or not is_graph_input([graph]):
            raise InputError(
                f"graph: expected one networkx graph (the model was fitted on "
                f"{self.input_kind_}), got {type(graph).__name__}"
            )

        def scores(graphs: list[Any]) -> np.ndarray:
            return self._logits(graphs).detach().cpu().numpy()

        target = int(scores([graph]).argmax(1)[0])
        nodes = minimal_explanation(graph, scores, target)
        title = (
            f"prediction {self.classes_[target]!r}: kept by {len(nodes)} of "
            f"{graph.number_of_nodes()} nodes"
        )
        label = self.node_label if self.use_labels_ else None
        return nodes, draw_explanation(graph, nodes, title, label)

    # ------------------------------- sigma, max_length, normalize, standardize candidates
    def _configs(self) -> tuple[tuple[float, Any, float | None], ...]:
        """The (sigma, max_length, top_sigma) networks: the product of the candidates, sigma
        outer."""
        return tuple(
            itertools.product(
                sigma_candidates(self.sigma),
                length_candidates(self.max_length),
                top_sigma_candidates(self.top_sigma),
            )
        )

    def _make_network(self, X: GraphPaths) -> GraphCKN:
        return self._network(X, *self._configs()[0])

    def _lam_grid(self) -> tuple[float, ...]:
        return gckn_lam_grid()

    def _lam_cv_repeats(self, n_samples: int) -> int:
        """``graph_ckn_cv_repeats`` draws in the 5-fold regime of
        :func:`~kernelkit.models._ckn_head.cv_folds` (below 1000 training graphs), one in its
        3-fold regime."""
        return options().graph_ckn_cv_repeats if cv_folds(n_samples) == 5 else 1

    def _variants(self) -> tuple[tuple[int, bool, bool], ...]:
        """The (network, normalize, standardize) triples the internal cross-validation
        compares (network: position in :meth:`_configs`)."""
        if self.lam != "auto":
            return ((0, self.normalize is not False, self.standardize is True),)
        norms = (True, False) if self.normalize == "auto" else (bool(self.normalize),)
        stds = (False, True) if self.standardize == "auto" else (bool(self.standardize),)
        nets = range(len(self._configs()))
        return tuple((i, n, s) for i in nets for n in norms for s in stds)

    def _set_variant(self, variant: tuple[int, bool, bool]) -> None:
        index, norm, std = variant
        network = self._networks[index]
        network.normalize, network.standardize = norm, std
        if std:
            mean, scale = self._standardizations[index, norm]
            with torch.no_grad():
                network.feature_mean.copy_(mean)
                network.feature_scale.copy_(scale)
        self.network_ = network

    def _fit_anchors(self, network: GraphCKN, X: GraphPaths, generator: torch.Generator) -> None:
        """Anchors of every candidate network, each from the same generator state (each
        network is then the one fitted with its configuration fixed), the generator left as
        after the first; the standardisations the variants need."""
        variants = self._variants()
        configs = self._configs()
        self._networks = {0: network}
        for i in sorted({v[0] for v in variants} - {0}):
            self._networks[i] = self._network(X, *configs[i]).to(X.device)
        self._standardizations: dict[tuple[int, bool], tuple[torch.Tensor, torch.Tensor]] = {}
        start, after_first = generator.get_state(), None
        fitted: dict[tuple[float, Any], tuple[GraphCKN, torch.Tensor]] = {}
        for i, net in self._networks.items():
            path_config = configs[i][:2]
            if path_config in fitted:  # the same path layers: the same k-means
                source, state = fitted[path_config]
                net.layers = copy.deepcopy(source.layers)
                generator.set_state(state)
            else:
                generator.set_state(start)
                self._fit_path_anchors(net, X, generator)
                fitted[path_config] = (net, generator.get_state())
            after_first = generator.get_state() if after_first is None else after_first
            for norm in sorted({n for j, n, s in variants if s and j == i}):
                net.normalize = norm
                fit_standardization(net, X, self.batch_size)
                self._standardizations[i, norm] = (
                    net.feature_mean.clone(),
                    net.feature_scale.clone(),
                )
            if net.top is not None:
                fit_top_anchors(
                    net, X, n_iter=self.kmeans_iter, generator=generator,
                    batch_size=self.batch_size,
                )  # fmt: skip
        generator.set_state(after_first)
        self._set_variant(variants[0])
        self._open_variants = variants if len(variants) > 1 else ()
        if not self._open_variants:
            del self._networks

    def _features(self, X: torch.Tensor) -> torch.Tensor:
        if not getattr(self, "_open_variants", ()):
            return super()._features(X)
        configs, pooled, blocks = self._configs(), {}, []
        for variant in self._open_variants:  # the networks of one path configuration share
            self._set_variant(variant)  # their path layers: pooled once, then each top
            key = (configs[variant[0]][:2], *variant[1:])
            if key not in pooled:
                pooled[key] = map_in_batches(self.network_.pooled, X, self.batch_size)
            if self.network_.top is None:
                blocks.append(pooled[key])
            else:
                top = self.network_.graph_level
                blocks.append(map_in_batches(top, pooled[key], self.batch_size))
        self._set_variant(self._open_variants[0])
        return torch.cat(blocks, dim=1)

    def _candidate_columns(self) -> tuple[torch.Tensor | None, ...]:
        variants = getattr(self, "_open_variants", ())
        if not variants:
            masks = layer_prefixes(self.network_)
            return (None,) if len(masks) == 1 else masks
        widths = [self._networks[i].n_features for i, _, _ in variants]
        offsets = np.concatenate([[0], np.cumsum(widths)])
        out = []
        for v, (i, _, _) in enumerate(variants):
            for mask in layer_prefixes(self._networks[i]):
                full = torch.zeros(int(offsets[-1]), dtype=torch.bool)
                full[int(offsets[v]) : int(offsets[v + 1])] = mask
                out.append(full)
        return tuple(out)

    def _keep_candidate(self, index: int) -> None:
        variants = getattr(self, "_open_variants", ())
        if variants:
            counts = np.cumsum([len(layer_prefixes(self._networks[i])) for i, _, _ in variants])
            v = int(np.searchsorted(counts, index, side="right"))
            index -= int(counts[v - 1]) if v else 0
            self._set_variant(variants[v])
            self._open_variants = ()
            del self._networks
        if self.network_.top is None:
            keep_layers(self.network_, index + 1)
