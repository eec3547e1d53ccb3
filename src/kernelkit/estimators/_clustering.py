r"""Kernel k-means (course part 1, section 4.3, "k-means and kernel k-means")."""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils.validation import check_is_fitted

from kernelkit.estimators._base import (
    KERNEL_CONSTRAINTS,
    RANDOM_STATE_CONSTRAINT,
    VERBOSE_CONSTRAINT,
    KernelEstimatorMixin,
    progress_of,
)
from kernelkit.estimators._nystrom_unsupervised import nystrom_kmeans
from kernelkit.gram import gram
from kernelkit.gram._nystrom import CENTRE_METHODS, centre_count, choose_centres, too_many_centres
from kernelkit.kernels import Kernel, PrecomputedBatch
from kernelkit.solvers._kmeans import GramClusters, kmeanspp_seeds, lloyd, one_hot
from kernelkit.utils._constraints import Interval, StrOptions
from kernelkit.utils._errors import InputError
from kernelkit.utils._progress import Progress, VerboseLike
from kernelkit.utils._seeding import check_random_state
from kernelkit.utils._validation import like_input


@dataclass(frozen=True)
class KernelKMeansResult:
    """Result of :func:`kernel_kmeans`.

    Attributes
    ----------
    labels : np.ndarray
        Cluster of each point, shape (n,), values in ``0 .. k - 1``.
    inertia : float
        ``sum_i ||phi(x_i) - mu_{s_i}||^2``.
    iterations : int
        Lloyd iterations of the best run.
    centre_norms : np.ndarray
        ``||mu_l||_H^2 = (1/|C_l|^2) sum_{i, j in C_l} K_ij``, shape (k,).
    """

    labels: np.ndarray
    inertia: float
    iterations: int
    centre_norms: np.ndarray


CLUSTER_CONSTRAINTS: dict[str, list[Any]] = {
    "n_clusters": [Interval(Integral, 1, None, closed="left")],
    **KERNEL_CONSTRAINTS,
    "random_state": RANDOM_STATE_CONSTRAINT,
    "n_init": [Interval(Integral, 1, None, closed="left")],
    "gamma": [Interval(Real, 0, None, closed="neither"), None],
    "degree": [Interval(Integral, 1, None, closed="left"), None],
    "coef0": [Interval(Real, 0, None, closed="left"), None],
}
"""Parameters shared by the kernel clusterers."""


def check_n_clusters(k: int, n: int) -> None:
    """Raise :class:`InputError` when ``n_clusters`` exceeds the number of points."""
    if k > n:
        raise InputError(
            f"n_clusters: expected at most n_samples = {n} clusters, got n_clusters={k}; "
            "lower n_clusters or pass more points"
        )


def check_init(init: Any, k: int, n: int) -> np.ndarray:
    """``init`` as ``k`` indices of training points, or an :class:`InputError` naming it."""
    start = np.asarray(init, dtype=np.int64)
    if start.shape != (k,) or start.min() < 0 or start.max() >= n:
        raise InputError(
            f"init: expected {k} indices of training points in [0, {n}), got {start.tolist()}"
        )
    return start


def kmeans_plusplus(K: torch.Tensor, k: int, rng: np.random.Generator) -> np.ndarray:
    r"""Indices of ``k`` initial centres chosen by greedy k-means++ in the feature space.

    Arthur and Vassilvitskii (2007) with scikit-learn's greedy variant (the best of
    ``2 + floor(log k)`` D^2 draws per step): the library's one seeding,
    :func:`kernelkit.solvers._kmeans.kmeanspp_seeds`, on the columns of the Gram ``K``.
    """
    cols = torch.as_tensor(K)
    return kmeanspp_seeds(
        cols.diagonal(), lambda idx: cols[:, idx], k, rng, trials=2 + int(math.log(k))
    )


def kernel_kmeans(
    K: torch.Tensor,
    n_clusters: int,
    *,
    init: str | np.ndarray = "k-means++",
    n_init: int = 10,
    max_iter: int = 300,
    random_state: Any = None,
    progress: Progress | None = None,
) -> KernelKMeansResult:
    r"""Kernel k-means: Lloyd's algorithm in the feature space of ``K``.

    Minimises ``sum_i ||phi(x_i) - mu_{s_i}||_H^2`` (course part 1, section 4.3) by
    alternating the implicit centroid update ``mu_l = (1/|C_l|) sum_{j in C_l} phi(x_j)`` and
    the assignment

    .. math:: s_i \in \arg\min_l K_{ii} - \frac{2}{|C_l|} \sum_{j \in C_l} K_{ij}
              + \frac{1}{|C_l|^2} \sum_{j, m \in C_l} K_{jm},

    until no label changes (or ``max_iter``).  The inertia is
    ``sum_i K_ii - sum_l (1/|C_l|) sum_{i, j in C_l} K_ij``.  An empty cluster receives the
    point farthest from its centre.  The best of ``n_init`` runs (least inertia) is returned.

    Parameters
    ----------
    K : torch.Tensor, shape (n, n)
        Gram matrix.
    n_clusters : int
        ``k <= n``.
    init : "k-means++", "random" or array of ``k`` indices
        Initial centres ``phi(x_c)``: greedy k-means++ in the feature space
        (:func:`kmeans_plusplus`), ``k`` distinct points drawn uniformly, or given training
        points (then one run).
    n_init : int
        Runs from different random initial centres.
    max_iter : int
        Most Lloyd iterations per run.
    random_state : None, int, RandomState or Generator
        Seed of the initial centres.
    progress : Progress, optional
        Receives a stage line per run and, per Lloyd iteration, the number of points that
        changed cluster.
    """
    n = K.shape[0]
    check_n_clusters(n_clusters, n)
    rng = check_random_state(random_state)
    if not isinstance(init, str):
        starts = [check_init(init, n_clusters, n)]
    elif init == "random":
        starts = [rng.choice(n, size=n_clusters, replace=False) for _ in range(n_init)]
    else:
        starts = [kmeans_plusplus(K, n_clusters, rng) for _ in range(n_init)]
    runs = []
    for r, centres in enumerate(starts):
        if progress is not None and len(starts) > 1:
            progress.stage(f"run {r + 1}/{len(starts)}")
        clusters = GramClusters(K, n_clusters)
        labels, iterations, inertia = lloyd(clusters, centres, max_iter, progress)
        norms = clusters.centre_norms().cpu().numpy()
        runs.append(KernelKMeansResult(labels.cpu().numpy(), inertia, iterations, norms))
    return min(runs, key=lambda r: r.inertia)


class KernelKMeans(KernelEstimatorMixin, ClusterMixin, BaseEstimator):
    r"""Kernel k-means on any kernel or a precomputed Gram matrix.

    Minimises the within-cluster sum of squared feature-space distances
    ``sum_i ||phi(x_i) - mu_{s_i}||_H^2`` (course part 1, section 4.3) by Lloyd's algorithm
    in the feature space (:func:`kernel_kmeans`), from greedy k-means++ centres drawn in the
    feature space, best of ``n_init`` runs.  With ``kernel="linear"`` and the same initial
    centres it is scikit-learn's ``KMeans`` (same labels and inertia).

    ``predict`` assigns new points to the nearest centre ``mu_l``: it needs the kernel
    between the new points and the training points,
    ``argmin_l -(2/|C_l|) sum_{j in C_l} k(x, x_j) + ||mu_l||^2``.

    Parameters
    ----------
    n_clusters : int, default 8
        Number of clusters ``k`` (at most the number of training points).
    kernel : Kernel, str or None, optional
        A kernelkit kernel, a kernel spec, a scikit-learn name (``"linear"``, ``"rbf"``,
        ``"precomputed"``...) or ``None`` (the default kernel of the input's kind; see
        :mod:`kernelkit.kernels._resolve`).
    random_state : None, int, RandomState or Generator
        Seed of the initial centres.
    init : {"k-means++", "random"} or array of n_clusters training indices, default "k-means++"
        Initial centres (an array: those training points, one run).
    n_init : int, default 10
        Runs from different initial centres; the one with the least inertia is kept.
    max_iter : int, default 300
        Most Lloyd iterations per run.
    gamma, degree, coef0 : optional
        scikit-learn's kernel parameters, used only with its kernel names.
    verbose : int, bool or callable, default 0
        ``0``: silent; ``1``: progress on stderr (:mod:`kernelkit.utils._progress`: a bar on a
        terminal, else a ``[KernelKMeans] run r/n_init`` line per run, ``[KernelKMeans] iter
        k/max_iter changed=c`` lines (points that changed cluster) and a final ``done after
        ...`` line); a callable receives ``(iteration, changed)``.
    solver : {"exact", "nystrom"}, default "exact"
        ``"exact"``: Lloyd on the ``n x n`` Gram above.  ``"nystrom"``: Lloyd on the
        Nyström features of ``n_centers`` centres, in the codes of their top ``r``
        principal directions (all of them when they fit in 32 MiB, else as many as make the
        result a ``(1 + 1e-3)``-approximation of the full features' objective), seeded by the
        same greedy k-means++, the centres and ``inertia_`` those of the full features
        (:mod:`kernelkit.estimators._nystrom_unsupervised`); three streamed passes over the
        data, ``predict`` streamed in row tiles; ``init`` must be ``"k-means++"`` or indices.
    n_centers : int, default 1000
        ``"nystrom"`` only: number ``m`` of Nyström centres; more than the training samples
        fits the exact solver, with a warning that says so.
    centers : {"uniform", "kmeans++", "greedy"} or array of points, default "uniform"
        ``"nystrom"`` only: how the Nyström centres are chosen
        (:func:`kernelkit.gram._nystrom.choose_centres`), or the centres themselves.

    Attributes
    ----------
    labels_ : ndarray, shape (n_samples,)
        Cluster of each training point.
    inertia_ : float
        Sum of squared feature-space distances to the assigned centres.
    n_iter_ : int
        Lloyd iterations of the kept run.
    centre_norms_ : ndarray, shape (n_clusters,)
        ``||mu_l||_H^2``.
    solver_ : str
        The solver that fitted (``"exact"`` or ``"nystrom"``).
    feature_rank_ : int
        ``solver="nystrom"`` only: the principal directions ``r`` Lloyd ran in.

    Notes
    -----
    Objective: over the assignments ``s_i`` of the points to ``n_clusters`` clusters with
    feature-space means ``mu_l`` (a local minimum by Lloyd's algorithm, best of ``n_init``),

    .. math:: \min_{s} \sum_{i=1}^n \|\varphi(x_i) - \mu_{s_i}\|_H^2, \qquad
              \mu_l = \frac{1}{|C_l|} \sum_{j \in C_l} \varphi(x_j).
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **CLUSTER_CONSTRAINTS,
        "init": [StrOptions({"k-means++", "random"}), "array-like"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "verbose": VERBOSE_CONSTRAINT,
        "solver": [StrOptions({"exact", "nystrom"})],
        "n_centers": [Interval(Integral, 1, None, closed="left")],
        "centers": [StrOptions(set(CENTRE_METHODS)), "array-like"],
    }

    def __init__(
        self,
        n_clusters: int = 8,
        kernel: Kernel | str | None = None,
        *,
        random_state: Any = None,
        init: str | Any = "k-means++",
        n_init: int = 10,
        max_iter: int = 300,
        gamma: float | None = None,
        degree: int | None = None,
        coef0: float | None = None,
        verbose: VerboseLike = 0,
        solver: str = "exact",
        n_centers: int = 1000,
        centers: str | Any = "uniform",
    ):
        self.n_clusters = n_clusters
        self.kernel = kernel
        self.random_state = random_state
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.verbose = verbose
        self.solver = solver
        self.n_centers = n_centers
        self.centers = centers

    def fit(self, X: Any, y: Any = None) -> KernelKMeans:
        """Cluster the training data (``y`` is ignored)."""
        self._validate_params()
        Xb = self._fit_X(X)
        check_n_clusters(self.n_clusters, len(Xb))
        for stale in ("_nystrom", "feature_rank_"):
            self.__dict__.pop(stale, None)
        self.solver_ = "exact"
        if self.solver == "nystrom" and not too_many_centres(
            centre_count(self.n_centers, self.centers), len(Xb), exact="the exact solver"
        ):
            self.solver_ = "nystrom"
            return self._fit_nystrom(Xb, X)
        K = gram(self.kernel_, Xb).to(torch.float64)
        init = self.init if isinstance(self.init, str) else np.asarray(self.init)
        progress = progress_of(self, self.max_iter)
        res = kernel_kmeans(
            K,
            self.n_clusters,
            init=init,
            n_init=self.n_init,
            max_iter=self.max_iter,
            random_state=self.random_state,
            progress=progress,
        )
        progress.done(res.iterations, f"kept run, inertia {res.inertia:.6g}")
        self.labels_ = res.labels
        self.inertia_ = res.inertia
        self.n_iter_ = res.iterations
        self.centre_norms_ = like_input(torch.as_tensor(res.centre_norms), X)
        return self

    def _fit_nystrom(self, Xb: Any, X: Any) -> KernelKMeans:
        """``solver="nystrom"``: Lloyd on the Nyström features."""
        given = not isinstance(self.init, str)
        if isinstance(Xb, PrecomputedBatch) or (not given and self.init == "random"):
            raise InputError(
                "solver: 'nystrom' evaluates the kernel against its centres and seeds by "
                "k-means++ or given indices; expected a kernel on the inputs and init "
                f"'k-means++' or indices, got {type(Xb).__name__} input and init={self.init!r}"
            )
        init = check_init(self.init, self.n_clusters, len(Xb)) if given else None
        rng = check_random_state(self.random_state)
        choice = choose_centres(self.kernel_, Xb, self.n_centers, self.centers, random_state=rng)
        res = nystrom_kmeans(
            self.kernel_,
            Xb,
            choice,
            self.n_clusters,
            n_init=self.n_init,
            max_iter=self.max_iter,
            random_state=rng,
            init=init,
        )
        self._nystrom = res.scores
        self.labels_ = res.labels
        self.inertia_ = res.inertia
        self.n_iter_ = res.iterations
        self.centre_norms_ = like_input(res.centre_norms, X)
        self.feature_rank_ = res.rank
        return self

    def predict(self, X: Any) -> Any:
        """Index of the nearest feature-space centre for each new point."""
        check_is_fitted(self, "labels_")
        if hasattr(self, "_nystrom"):
            return like_input(self._nystrom(self._predict_X(X)).argmin(1), X)
        Kt = gram(self.kernel_, self._predict_X(X), self.X_fit_).to(torch.float64)
        labels = torch.as_tensor(self.labels_, device=Kt.device)
        A = one_hot(labels, self.n_clusters, Kt.dtype)
        sizes = A.sum(0).clamp_min(1)
        norms = torch.as_tensor(self.centre_norms_, dtype=Kt.dtype, device=Kt.device)
        return like_input((-2 * (Kt @ A) / sizes + norms).argmin(1), X)


__all__ = [
    "KernelKMeans",
    "KernelKMeansResult",
    "check_n_clusters",
    "kernel_kmeans",
]
