r"""Spectral clustering as the relaxation of kernel k-means (course part 1, section 4.4)."""

from __future__ import annotations

import sys
import warnings
from numbers import Integral
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
import torch
from scipy.sparse.csgraph import connected_components
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.cluster import KMeans
from sklearn.neighbors import kneighbors_graph
from sklearn.utils.validation import check_array, check_is_fitted

from kernelkit.estimators._base import KERNEL_PARAMS_CONSTRAINT, KernelEstimatorMixin
from kernelkit.estimators._clustering import CLUSTER_CONSTRAINTS, check_n_clusters
from kernelkit.estimators._spectral_labels import cluster_qr, discretize
from kernelkit.gram import gram
from kernelkit.kernels import Kernel, Linear
from kernelkit.kernels._precomputed import Precomputed, PrecomputedBatch, check_gram
from kernelkit.kernels._sparse import SparseRows
from kernelkit.solvers import top_eigenpairs
from kernelkit.solvers._eigen import METHODS
from kernelkit.utils._constraints import Interval, StrOptions
from kernelkit.utils._errors import InputError
from kernelkit.utils._progress import Progress
from kernelkit.utils._seeding import as_seed
from kernelkit.utils._validation import like_input

NORMALIZATIONS = ("none", "symmetric", "random_walk")

GRAPH_AFFINITIES = ("nearest_neighbors", "precomputed_nearest_neighbors")
"""scikit-learn's graph affinities, taken as ``kernel`` (see the class docstring)."""


class SpectralClustering(KernelEstimatorMixin, ClusterMixin, BaseEstimator):
    r"""Spectral clustering of any kernel, with an out-of-sample extension by the Nyström formula.

    Kernel k-means maximises ``trace(D^{1/2} A^T K A D^{1/2})`` over assignment matrices
    ``A`` (``D = diag(1/|C_l|)``); relaxing ``Z = A D^{1/2}`` to any ``Z`` with
    ``Z^T Z = I`` gives the ``k`` top eigenvectors of ``K`` (course part 1, section 4.4), which
    are rounded to clusters by k-means on the rows of ``Z``.  ``normalization`` chooses the
    matrix and the embedding (``d = K 1``, the degrees):

    ================  ====================================  =================================
    normalization     eigenvectors ``U`` of                 rows clustered by k-means
    ================  ====================================  =================================
    ``"none"``        ``K`` (the course's relaxation)       rows of ``U`` scaled to norm 1
                                                            (the course's "answer 2")
    ``"symmetric"``   ``D^{-1/2} K D^{-1/2}``               rows of ``U`` scaled to norm 1
                      (Ng, Jordan and Weiss, NIPS 2001)
    ``"random_walk"`` ``D^{-1/2} K D^{-1/2}``               rows of ``D^{-1/2} U``, the
                                                            eigenvectors of ``D^{-1} K``
                                                            (Shi and Malik 2000; scikit-learn's
                                                            ``SpectralClustering`` embedding)
    ================  ====================================  =================================

    The normalised variants need positive degrees (a nonnegative kernel such as the
    Gaussian).  Rounding is scikit-learn's ``KMeans`` (``n_init`` runs) on the embedding.

    **Out-of-sample** (``predict``): the Nyström formula extends each eigenvector to a new
    point, ``u_j(x) = (1 / lambda_j) sum_i k~(x, x_i) u_ij`` with ``k~ = k`` (``"none"``) or
    ``k~(x, x_i) = k(x, x_i) / sqrt(d(x) d_i)``, ``d(x) = sum_i k(x, x_i)`` (normalised
    variants), which reproduces ``U`` on the training points; the new row is embedded as the
    training rows and assigned to the nearest k-means centre.  No refit: the cost is the
    kernel between the new and the training points.

    Parameters
    ----------
    n_clusters : int, default 8
        Number of clusters (and of eigenvectors), at most the number of training points.
    kernel : Kernel, str or None, optional
        A kernelkit kernel (the affinity), a kernel spec, a scikit-learn name or
        ``"precomputed"``, or ``None`` (the default kernel of the input's kind); or, as
        scikit-learn's ``affinity``, ``"nearest_neighbors"`` (the symmetrised k-nearest-
        neighbour connectivity graph of ``X``, ``A = (C + C^T) / 2`` with ``C`` from
        ``sklearn.neighbors.kneighbors_graph(X, n_neighbors, include_self=True)``) or
        ``"precomputed_nearest_neighbors"`` (``X`` is a sparse neighbour graph; its stored
        entries are the edges).  The graph affinities have no out-of-sample extension.
    random_state : None, int, RandomState or Generator
        Seed of the k-means rounding.
    normalization : {"none", "symmetric", "random_walk"}, default "symmetric"
        See the table.
    n_init : int, default 10
        k-means runs of the rounding.
    gamma, degree, coef0 : optional
        scikit-learn's kernel parameters, used only with its kernel names.
    n_neighbors : int, default 10
        Neighbours of each point in the ``"nearest_neighbors"`` graph.
    assign_labels : {"kmeans", "discretize", "cluster_qr"}, default "kmeans"
        Rounding of the embedding: k-means (``n_init`` runs), Yu and Shi's discretisation or
        Damle et al.'s column-pivoted QR (:mod:`kernelkit.estimators._spectral_labels`).
        ``predict`` needs ``"kmeans"`` (its centres place new points).
    n_components : int, optional
        Eigenvectors in the embedding (default ``n_clusters``).
    eigen_solver : str, optional
        Method of :func:`kernelkit.solvers.top_eigenpairs` (``None``: ``"auto"``;
        ``"dense"`` is ``"full"``).
    verbose : bool or int, default False
        ``0``: silent; ``1``: one ``[SpectralClustering] ...`` line per stage of the fit
        (affinity, embedding, label assignment; :mod:`kernelkit.utils._progress`) and k-means'
        own progress, on stdout as scikit-learn's ``SpectralClustering`` (the one estimator
        whose ``verbose`` does not write to stderr: it is a drop-in).
    kernel_params : dict, optional
        Keyword arguments of a callable ``kernel`` (``f(x, y, **kernel_params)``).

    Attributes
    ----------
    labels_ : ndarray, shape (n_samples,)
        Cluster of each training point.
    eigenvalues_ : ndarray or torch.Tensor, shape (n_clusters,)
        Top eigenvalues of the (normalised) kernel matrix (in the container of the input).
    eigenvectors_ : ndarray or torch.Tensor, shape (n_samples, n_clusters)
        The corresponding eigenvectors ``U``.
    degrees_ : ndarray, torch.Tensor or None
        ``d = K 1`` (normalised variants), else None.
    embedding_ : ndarray, shape (n_samples, n_components)
        The rows clustered by k-means.
    cluster_centers_ : ndarray, shape (n_clusters, n_components) or None
        The k-means centres in the embedding (None for the other ``assign_labels``).

    Notes
    -----
    Objective: the relaxation of kernel k-means (with ``normalization``, of the
    normalised cut): the embedding ``U`` solves, for the matrix ``M`` of the table above,

    .. math:: \max_{U \in \mathbb{R}^{n \times k},\ U^T U = I} \operatorname{tr}(U^T M U),

    its rows (scaled as in the table) rounded to clusters by k-means.
    """

    _sparse_input: ClassVar[bool] = True

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **CLUSTER_CONSTRAINTS,
        **KERNEL_PARAMS_CONSTRAINT,
        "normalization": [StrOptions(set(NORMALIZATIONS))],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "assign_labels": [StrOptions({"kmeans", "discretize", "cluster_qr"})],
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "eigen_solver": [StrOptions({*METHODS, "dense"}), None],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        n_clusters: int = 8,
        kernel: Kernel | str | None = None,
        *,
        random_state: Any = None,
        normalization: str = "symmetric",
        n_init: int = 10,
        gamma: float | None = None,
        degree: int | None = None,
        coef0: float | None = None,
        kernel_params: dict | None = None,
        n_neighbors: int = 10,
        assign_labels: str = "kmeans",
        n_components: int | None = None,
        eigen_solver: str | None = None,
        verbose: bool | int = False,
    ):
        self.n_clusters = n_clusters
        self.kernel = kernel
        self.random_state = random_state
        self.normalization = normalization
        self.n_init = n_init
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.n_neighbors = n_neighbors
        self.assign_labels = assign_labels
        self.n_components = n_components
        self.eigen_solver = eigen_solver
        self.verbose = verbose

    def fit(self, X: Any, y: Any = None) -> SpectralClustering:
        """Embed the training points by the top eigenvectors and round by k-means (``y`` is
        ignored)."""
        self._validate_params()
        k = self.n_clusters
        if self.kernel in GRAPH_AFFINITIES:
            K = self._neighbour_graph(X)
        elif isinstance(self.kernel, str) and self.kernel == "precomputed":
            K = self._precomputed_affinity(X)
        else:
            Xb = self._fit_X(X)
            check_n_clusters(k, len(Xb))
            self._say(f"affinity: the Gram of {self.kernel_!r} on {len(Xb)} points")
            K = gram(self.kernel_, Xb).to(torch.float64)
        degrees = None
        if self.normalization != "none":
            degrees = K.sum(1)
            if not bool((degrees > 0).all()):
                raise InputError(
                    f"kernel: normalization={self.normalization!r} needs positive degrees "
                    f"d = K 1, got min d = {float(degrees.min()):.3g}; use a nonnegative "
                    "kernel (e.g. Gaussian) or normalization='none'"
                )
            root = degrees.rsqrt()
            K = K.mul_(root[:, None]).mul_(root[None, :])
        p = k if self.n_components is None else int(self.n_components)
        if p > K.shape[0]:
            raise InputError(
                f"n_components: expected at most n_samples = {K.shape[0]} eigenvectors, got {p}"
            )
        method = {None: "auto", "dense": "full"}.get(self.eigen_solver, self.eigen_solver)
        self._say(f"embedding: top {p} eigenvectors ({method})")
        eig = top_eigenpairs(K, p, method=method, seed=0)
        del K
        values = eig.values
        if not bool((values > values[0] * 1e-10).all()):
            raise InputError(
                f"n_clusters: the kernel matrix has fewer than {p} positive eigenvalues "
                f"(n_components, default n_clusters={k}; top {p}: {values.tolist()}); lower "
                "n_clusters/n_components or use another kernel"
            )
        self.eigenvalues_ = like_input(values, X)
        self.eigenvectors_ = like_input(eig.vectors, X)
        self.degrees_ = None if degrees is None else like_input(degrees, X)
        embedding = self._embed(eig.vectors, degrees)
        self.embedding_ = like_input(torch.as_tensor(embedding), X)
        self._say(f"Computing label assignment using {self.assign_labels}")
        self.cluster_centers_ = None
        if self.assign_labels == "cluster_qr":
            self.labels_ = cluster_qr(embedding)
        elif self.assign_labels == "discretize":
            rng = np.random.default_rng(as_seed(self.random_state))
            self.labels_ = discretize(embedding, rng)
        else:
            rounding = KMeans(
                k,
                n_init=self.n_init,
                random_state=as_seed(self.random_state),
                verbose=int(self.verbose),
            )
            self.labels_ = rounding.fit_predict(embedding)
            self.cluster_centers_ = like_input(torch.as_tensor(rounding.cluster_centers_), X)
        return self

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        if self.kernel in GRAPH_AFFINITIES:
            tags.input_tags.pairwise = self.kernel == "precomputed_nearest_neighbors"
            tags.input_tags.sparse = True
        return tags

    def _say(self, message: str) -> None:
        """A stage line of ``verbose`` (:mod:`kernelkit.utils._progress`), on stdout as
        scikit-learn's ``SpectralClustering`` writes it (a drop-in; its test suite reads it)."""
        Progress(type(self).__name__, verbose=self.verbose, stream=sys.stdout).stage(message)

    def _neighbour_graph(self, X: Any) -> torch.Tensor:
        """The symmetrised neighbour graph ``(C + C^T) / 2`` of a graph affinity, dense
        (the ``n x n`` affinity, not ``X``)."""
        if self.kernel == "precomputed_nearest_neighbors":
            try:
                C = check_array(X, accept_sparse="csr", input_name="X")
            except ValueError as exc:
                raise InputError(f"X: {exc}") from exc
            if C.ndim != 2 or C.shape[0] != C.shape[1]:
                raise InputError(
                    f"X: expected a square sparse neighbour graph (n x n), got shape {C.shape}"
                )
            C = sp.csr_matrix(C)
            C = sp.csr_matrix((np.ones_like(C.data), C.indices, C.indptr), shape=C.shape)
            self.n_features_in_ = C.shape[1]
        else:
            Xb = self._prepare(Linear(), X, reset=True)
            rows = Xb.matrix if isinstance(Xb, SparseRows) else Xb.cpu().numpy()
            if self.n_neighbors >= len(Xb):
                raise InputError(
                    f"n_neighbors: expected fewer than n_samples = {len(Xb)} neighbours, got "
                    f"{self.n_neighbors}"
                )
            C = kneighbors_graph(rows, self.n_neighbors, include_self=True)
        check_n_clusters(self.n_clusters, C.shape[0])
        _warn_if_disconnected(C)
        self._say(f"affinity: {self.kernel} graph of {C.shape[0]} points, {C.nnz} edges")
        self.kernel_ = self.kernel
        return torch.as_tensor(((C + C.T) * 0.5).toarray(), dtype=torch.float64)

    def _precomputed_affinity(self, X: Any) -> torch.Tensor:
        """A precomputed affinity (dense or sparse): square and symmetric, like a Gram, but
        not necessarily PSD (the embedding needs only its top eigenvectors, as scikit-learn's
        ``affinity="precomputed"``); ``kernel_`` and ``X_fit_`` as a precomputed Gram's, so
        ``predict`` takes affinity rows against the training points."""
        try:
            A = check_array(X, accept_sparse="csr", dtype=(np.float64, np.float32), input_name="X")
        except ValueError as exc:
            raise InputError(f"X: {exc}") from exc
        K = torch.as_tensor(A.toarray() if sp.issparse(A) else A).to(torch.float64)
        K = check_gram(K, check_psd=False)
        check_n_clusters(self.n_clusters, K.shape[0])
        if sp.issparse(A):
            _warn_if_disconnected(A)
        self.kernel_ = Precomputed()
        self.X_fit_ = PrecomputedBatch(K, K.diagonal().clone(), torch.arange(K.shape[0]))
        self.n_features_in_ = K.shape[0]
        self._say(f"affinity: precomputed, {K.shape[0]} points")
        return K.clone()

    def _embed(self, U: torch.Tensor, degrees: torch.Tensor | None) -> np.ndarray:
        """Rows clustered by k-means: ``D^{-1/2} U`` (random walk), else ``U`` with rows of
        norm 1 (zero rows stay zero)."""
        if self.normalization == "random_walk":
            return (U * degrees.rsqrt()[:, None]).cpu().numpy()
        norms = U.norm(dim=1, keepdim=True)
        return (U / torch.where(norms > 0, norms, 1.0)).cpu().numpy()

    def predict(self, X: Any) -> Any:
        """Clusters of new points by the Nyström extension of the eigenvectors (no refit)."""
        check_is_fitted(self, "labels_")
        if self.kernel in GRAPH_AFFINITIES or self.cluster_centers_ is None:
            raise InputError(
                f"predict: needs a kernel affinity and assign_labels='kmeans' (the Nyström "
                f"extension and the k-means centres), got kernel={self.kernel!r}, "
                f"assign_labels={self.assign_labels!r}; use fit_predict"
            )
        Kt = gram(self.kernel_, self._predict_X(X), self.X_fit_).to(torch.float64)
        U = torch.as_tensor(self.eigenvectors_, device=Kt.device)
        degrees = None
        if self.degrees_ is not None:
            train = torch.as_tensor(self.degrees_, device=Kt.device)
            degrees = Kt.sum(1)
            if not bool((degrees > 0).all()):
                raise InputError(
                    "X: a new point has kernel sum d(x) = sum_i k(x, x_i) <= 0 against the "
                    f"training points (min {float(degrees.min()):.3g}); it cannot be placed "
                    "by the normalised Nyström formula"
                )
            Kt = Kt * degrees.rsqrt()[:, None] * train.rsqrt()[None, :]
        values = torch.as_tensor(self.eigenvalues_, device=Kt.device)
        Z = torch.as_tensor(self._embed(Kt @ U / values, degrees))
        centres = torch.as_tensor(self.cluster_centers_, dtype=Z.dtype, device=Z.device)
        dist = (Z[:, None, :] - centres[None, :, :]).pow(2).sum(-1)
        return like_input(dist.argmin(1), X)


def _warn_if_disconnected(graph: sp.spmatrix) -> None:
    """Warn, as scikit-learn does, when a sparse affinity graph has several connected
    components: then each component has its own zero-Laplacian eigenvector and the top
    eigenvectors may describe components rather than clusters."""
    n_parts, _ = connected_components(graph, directed=False)
    if n_parts > 1:
        warnings.warn(
            f"Graph is not fully connected ({n_parts} components), spectral embedding may not "
            "work as expected",
            UserWarning,
            stacklevel=3,
        )


__all__ = ["SpectralClustering"]
