r"""Spectral clustering as the relaxation of kernel k-means (course part 1, section 4.4)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.cluster import KMeans
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import check_is_fitted

from kernelkit.estimators._base import KERNEL_PARAMS_CONSTRAINT, KernelEstimatorMixin
from kernelkit.estimators.clustering import CLUSTER_CONSTRAINTS, check_n_clusters
from kernelkit.gram import gram
from kernelkit.kernels import Kernel
from kernelkit.solvers import top_eigenpairs
from kernelkit.utils.errors import InputError
from kernelkit.utils.seeding import as_seed
from kernelkit.utils.validation import like_input

NORMALIZATIONS = ("none", "symmetric", "random_walk")


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
        ``"precomputed"``, or ``None`` (the default kernel of the input's kind).
    random_state : None, int, RandomState or Generator
        Seed of the k-means rounding.
    normalization : {"none", "symmetric", "random_walk"}, default "symmetric"
        See the table.
    n_init : int, default 10
        k-means runs of the rounding.
    gamma, degree, coef0 : optional
        scikit-learn's kernel parameters, used only with its kernel names.
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
    embedding_ : ndarray, shape (n_samples, n_clusters)
        The rows clustered by k-means.
    cluster_centers_ : ndarray, shape (n_clusters, n_clusters)
        The k-means centres in the embedding.
    """

    _sparse_input: ClassVar[bool] = True

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **CLUSTER_CONSTRAINTS,
        **KERNEL_PARAMS_CONSTRAINT,
        "normalization": [StrOptions(set(NORMALIZATIONS))],
    }

    def __init__(
        self,
        n_clusters: int = 8,
        kernel: Kernel | str | None = None,
        random_state: Any = None,
        *,
        normalization: str = "symmetric",
        n_init: int = 10,
        gamma: float | None = None,
        degree: int | None = None,
        coef0: float | None = None,
        kernel_params: dict | None = None,
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

    def fit(self, X: Any, y: Any = None) -> SpectralClustering:
        """Embed the training points by the top eigenvectors and round by k-means (``y`` is
        ignored)."""
        self._validate_params()
        Xb = self._fit_X(X)
        k = self.n_clusters
        check_n_clusters(k, len(Xb))
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
        eig = top_eigenpairs(K, k, seed=0)
        del K
        values = eig.values
        if not bool((values > values[0] * 1e-10).all()):
            raise InputError(
                f"n_clusters: the kernel matrix has fewer than n_clusters={k} positive "
                f"eigenvalues (top {k}: {values.tolist()}); lower n_clusters or use another "
                "kernel"
            )
        self.eigenvalues_ = like_input(values, X)
        self.eigenvectors_ = like_input(eig.vectors, X)
        self.degrees_ = None if degrees is None else like_input(degrees, X)
        self.embedding_ = self._embed(eig.vectors, degrees)
        rounding = KMeans(k, n_init=self.n_init, random_state=as_seed(self.random_state))
        self.labels_ = rounding.fit_predict(self.embedding_)
        self.cluster_centers_ = rounding.cluster_centers_
        return self

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
        centres = torch.as_tensor(self.cluster_centers_, dtype=Z.dtype)
        dist = (Z[:, None, :] - centres[None, :, :]).pow(2).sum(-1)
        return like_input(dist.argmin(1), X)


__all__ = ["NORMALIZATIONS", "SpectralClustering"]
