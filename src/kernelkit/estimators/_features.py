r"""Explicit approximate feature maps as scikit-learn transformers.

:class:`NystromFeatures` (any kernel) and :class:`RandomFourierFeatures` (shift-invariant vector
kernels) return ``Z`` with ``Z Z^T ~ K``, so a linear model on ``Z`` approximates the kernel
method at ``O(n m)`` memory instead of ``O(n^2)`` (course part 3, section 5, "Large-scale
kernel learning").  The maps are :mod:`kernelkit.gram._nystrom` and
:mod:`kernelkit.gram._random_features`.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from kernelkit.estimators._base import (
    KERNEL_CONSTRAINTS,
    KERNEL_PARAMS_CONSTRAINT,
    RANDOM_STATE_CONSTRAINT,
    KernelEstimatorMixin,
    renamed_parameter,
    result_dtype,
)
from kernelkit.gram._distributed import is_dask_collection, map_row_blocks
from kernelkit.gram._nystrom import METHODS, choose_centres, nystrom_map, nystrom_map_on_centres
from kernelkit.gram._random_features import check_spectral_kernel, random_fourier_map
from kernelkit.kernels import Kernel
from kernelkit.utils._constraints import Interval, StrOptions
from kernelkit.utils._errors import InputError
from kernelkit.utils._validation import like_input

__all__ = ["NystromFeatures", "RandomFourierFeatures"]


class _FeatureMapMixin(ClassNamePrefixFeaturesOutMixin, TransformerMixin):
    """``transform`` through the fitted ``map_``, output in the container of ``X``."""

    map_: Any

    def transform(self, X: Any) -> Any:
        """Features of the rows of ``X``, shape ``(n_samples, n_components_)``.

        A Dask array or bag gives a Dask array with the row chunks of ``X``, computed on the
        workers that hold them (:mod:`kernelkit.gram._distributed`).
        """
        check_is_fitted(self, "map_")
        if is_dask_collection(X):
            return self._distributed_features(X)
        return like_input(self.map_.features(self._predict_X(X)), X)

    def _distributed_features(self, X: Any) -> Any:
        """The features of a Dask array or bag, or of its row blocks
        (:class:`~kernelkit.gram._distributed.RowBlocks`), as a lazy Dask array with its row
        chunks."""
        dtype = np.dtype(str(result_dtype(self.X_fit_)).replace("torch.", ""))
        return map_row_blocks(self._block_features, X, self.map_.dim, dtype)

    def _block_features(self, block: Any) -> np.ndarray:
        return self.map_.features(self._predict_X(block)).detach().cpu().numpy()

    @property
    def _n_features_out(self) -> int:
        return self.map_.dim

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


class NystromFeatures(_FeatureMapMixin, KernelEstimatorMixin, BaseEstimator):
    r"""Nyström features ``phi(x) = K_CC^{-1/2} k_C(x)`` on ``m`` centres of the training set.

    ``phi(x)^T phi(y) = k_C(x)^T K_CC^+ k_C(y)``, the Nyström approximation of ``k(x, y)``
    (course part 3, slide "Nyström"); with ``m = n`` centres it is the exact Gram on the
    training points.  Works with every kernel, strings, graphs, molecules and
    ``Precomputed()`` included (``transform`` then takes Gram rows against the training
    points).

    Parameters
    ----------
    kernel : Kernel, optional
        Any kernelkit kernel or kernel name (see :mod:`kernelkit.estimators`); ``None`` means
        the default kernel of the input kind (median-heuristic Gaussian for vectors).
    n_centers : int, default 100
        Number of centres ``m``; more than the training samples gives the exact feature map
        (every training point a centre) with a warning that says so.
    centers : {"uniform", "kmeans++", "greedy", "kpca"} or array of points, default "uniform"
        Uniform subset; k-means++ seeding in the kernel's feature space (kernel evaluations
        only); greedy largest residual (pivoted Cholesky, features ``L^{-1} k_C(x)``); KPCA
        Nyström of rank ``rank`` on a uniform subset (see :mod:`kernelkit.gram._nystrom`); or
        the centres themselves (points of the input kind, not necessarily training points;
        ``n_centers`` is then ignored).
    rank : int, optional
        ``centers="kpca"`` only: number ``p <= m`` of eigenpairs of ``K_CC`` kept.
    jitter : float, optional
        ``tau`` of the eigenvalue floor ``tau mean(diag K_CC)`` below which eigenpairs of
        ``K_CC`` are dropped; default: the library's one regularisation rule
        (:func:`kernelkit.solvers._nystrom_pcg.centre_jitter`).
    random_state : None, int, RandomState or Generator
        Seed of the centre draw (``greedy`` is deterministic).
    gamma, degree, coef0 : optional
        scikit-learn's kernel parameters, used only with its kernel names (as ``Nystroem``).
    kernel_params : dict, optional
        Keyword arguments of a callable ``kernel`` (``f(x, y, **kernel_params)``).
    n_components, method : optional
        Deprecated aliases of ``n_centers`` and ``centers`` (``FutureWarning``; removed in
        the next release).

    Attributes
    ----------
    map_ : kernelkit.gram.NystromMap
        Kernel, centres and basis.
    component_indices_ : ndarray of int
        Indices of the centres among the training samples (for ``greedy``: in pivot order;
        -1 for centres given as points).
    n_components_ : int
        Number of features (``<= m``: eigenpairs below the floor are dropped; ``greedy``
        stops at the kernel's numerical rank).
    kernel_, X_fit_ :
        Fitted kernel and training data.

    Notes
    -----
    Objective: no loss is fitted; ``phi(x)^T phi(x')`` is the kernel of the projections of
    ``k(x, .)`` and ``k(x', .)`` onto the span of the centres' features,

    .. math:: \Pi_C k(x, \cdot) = \operatorname*{arg\,min}_{g \in \mathrm{span}\{k(c_j, \cdot)\}}
              \|k(x, \cdot) - g\|_H, \qquad
              \phi(x)^T \phi(x') = k_C(x)^T K_{CC}^{+} k_C(x').
    """

    _sparse_input: ClassVar[bool] = True

    def __init__(
        self,
        kernel: Kernel | None = None,
        n_centers: int = 100,
        *,
        centers: str | Any = "uniform",
        rank: int | None = None,
        jitter: float | None = None,
        random_state: Any = None,
        gamma: float | None = None,
        degree: int | None = None,
        coef0: float | None = None,
        kernel_params: dict | None = None,
        n_components: int | None = None,
        method: str | None = None,
    ):
        self.kernel = kernel
        self.n_centers = n_centers
        self.centers = centers
        self.rank = rank
        self.jitter = jitter
        self.random_state = random_state
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.n_components = n_components
        self.method = method

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **KERNEL_CONSTRAINTS,
        **KERNEL_PARAMS_CONSTRAINT,
        "gamma": [Interval(Real, 0, None, closed="neither"), None],
        "degree": [Interval(Integral, 1, None, closed="left"), None],
        "coef0": [Interval(Real, 0, None, closed="left"), None],
        "n_centers": [Interval(Integral, 1, None, closed="left")],
        "centers": [StrOptions(set(METHODS)), "array-like"],
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "method": [StrOptions(set(METHODS)), None],
        "rank": [Interval(Integral, 1, None, closed="left"), None],
        "jitter": [Interval(Real, 0, None, closed="left"), None],
        "random_state": RANDOM_STATE_CONSTRAINT,
    }

    def fit(self, X: Any, y: Any = None) -> NystromFeatures:
        """Choose the centres among the rows of ``X`` and factor their Gram (``y`` ignored).

        ``X`` may be a Dask array or bag (``centers`` ``"uniform"``, ``"kpca"`` or points): the
        centres are drawn by row position
        (:meth:`~kernelkit.estimators._base.KernelEstimatorMixin._distributed_centres`, the
        Dask draw of every estimator), the rows the in-memory fit draws, and only the chunks
        holding them are read; a kernel whose hyperparameters come from the data (the median
        heuristic) is then built on them.
        """
        self._fit_map(X)
        return self

    def fit_transform(self, X: Any, y: Any = None) -> Any:
        """``fit(X).transform(X)``.

        On a Dask array or bag the chunks read for the centres stay on the workers for the
        features (a lazy Dask array with the row chunks of ``X``, which holds them until it
        is computed or dropped), so each chunk of ``X`` is read once in all.
        """
        if not is_dask_collection(X):
            return super().fit_transform(X, y)
        return self._distributed_features(self._fit_map(X))

    def _fit_map(self, X: Any) -> Any:
        """Fit ``map_``; for a Dask ``X`` return its row blocks, those read for the centres
        kept on the workers (``X`` itself for centres given as points)."""
        self._validate_params()
        m = renamed_parameter(self, "n_components", "n_centers")
        centers = renamed_parameter(self, "method", "centers")
        if is_dask_collection(X):
            return self._fit_distributed(X, m, centers)
        Xb = self._fit_X(X)
        if isinstance(centers, str):
            self.map_ = nystrom_map(
                self.kernel_,
                Xb,
                m,
                method=centers,
                rank=self.rank,
                jitter=self.jitter,
                random_state=self.random_state,
            )
        else:
            self._given_centres(choose_centres(self.kernel_, Xb, m, centers).centres)
        self.component_indices_ = self.map_.indices
        self.n_components_ = self.map_.dim
        return None

    def _given_centres(self, centres: Any) -> None:
        """The map of centres given as points (indices -1: not training points)."""
        index = np.full(len(centres), -1)
        self.map_ = nystrom_map_on_centres(self.kernel_, centres, index, jitter=self.jitter)

    def _fit_distributed(self, X: Any, m: int, centers: Any) -> Any:
        if isinstance(centers, str) and centers not in ("uniform", "kpca"):
            raise InputError(
                "centers: expected 'uniform', 'kpca' or an array of points for Dask input, got "
                f"{centers!r}"
            )
        index, centres, blocks = self._distributed_centres(X, m, centers=centers)
        if index is None:
            self._given_centres(centres)
        else:
            rank = self.rank if centers == "kpca" else None
            self.map_ = nystrom_map_on_centres(
                self.kernel_, centres, index, jitter=self.jitter, rank=rank
            )
        self.component_indices_ = self.map_.indices
        self.n_components_ = self.map_.dim
        return blocks


class RandomFourierFeatures(_FeatureMapMixin, KernelEstimatorMixin, BaseEstimator):
    r"""Random Fourier features ``z(x) = sqrt(2/p) cos(W x + b)`` (Rahimi and Recht 2007).

    ``E[z(x)^T z(y)] = k(x, y)`` for the shift-invariant kernels ``Gaussian``, ``Laplacian``
    (the Euclidean ``exp(-||x - y|| / sigma)``) and ``Matern``, with ``w_j`` drawn from the
    kernel's spectral density and ``b_j ~ U[0, 2 pi)`` (course part 3, slide "Random Fourier
    features", with the scale ``sqrt(2/p)``).  The error decreases as ``p^{-1/2}``
    (see :mod:`kernelkit.gram._random_features`).

    Parameters
    ----------
    kernel : Gaussian, Laplacian or Matern, optional
        ``None`` means a Gaussian with the median-heuristic width (as every estimator);
        any other kernel is refused.
    n_components : int, default 100
        Number of features ``p``.
    random_state : None, int, RandomState or Generator
        Seed of ``W`` and ``b``.

    Attributes
    ----------
    map_ : kernelkit.gram.RandomFourierMap
        ``W`` (``weights``, shape ``(p, n_features_in_)``) and ``b`` (``offsets``).
    n_components_ : int
        ``p``.
    random_weights_ : ndarray or tensor, shape (n_features_in_, p)
        ``W^T`` in the container and dtype of ``X`` (scikit-learn's ``RBFSampler`` name;
        ``z(x) = sqrt(2/p) cos(x^T W^T + b)``).
    random_offset_ : ndarray or tensor, shape (p,)
        ``b`` in the container and dtype of ``X``.

    Notes
    -----
    Objective: no loss is fitted; for a shift-invariant kernel with spectral measure
    ``p`` (Bochner), ``z(x)^T z(x')`` is the Monte-Carlo estimate with ``p`` draws

    .. math:: k(x, x') = \mathbb{E}_{w \sim p,\, b \sim U[0, 2\pi]}
              \big[2 \cos(w^T x + b) \cos(w^T x' + b)\big].
    """

    _sparse_input: ClassVar[bool] = True

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **KERNEL_CONSTRAINTS,
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "random_state": RANDOM_STATE_CONSTRAINT,
    }

    def __init__(
        self, kernel: Kernel | None = None, n_components: int = 100, *, random_state: Any = None
    ):
        self.kernel = kernel
        self.n_components = n_components
        self.random_state = random_state

    def fit(self, X: Any, y: Any = None) -> RandomFourierFeatures:
        """Draw the frequencies for the dimension of ``X`` (``y`` is ignored)."""
        self._validate_params()
        p = int(self.n_components)
        if isinstance(self.kernel, Kernel):
            check_spectral_kernel(self.kernel)
        Xb = self._fit_X(X)
        check_spectral_kernel(self.kernel_)
        self.map_ = random_fourier_map(
            self.kernel_,
            Xb.shape[1],
            p,
            random_state=self.random_state,
            dtype=result_dtype(Xb),
            device=Xb.device,
        )
        self.n_components_ = p
        self.random_weights_ = like_input(self.map_.weights.T.contiguous(), X)
        self.random_offset_ = like_input(self.map_.offsets, X)
        return self
