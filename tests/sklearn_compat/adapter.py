"""A pytest plugin that runs scikit-learn's own test modules against kernelkit.

It replaces scikit-learn's estimators by thin subclasses of kernelkit's that only rename
(the documented mapping, nothing else):

* ``KernelRidge(alpha, kernel="linear", ...)``: ``lam = alpha / n`` at fit (kernelkit's
  ``(1/n) sum loss + lam ||f||^2``), scikit-learn's default kernel ``"linear"``;
* ``KernelPCA(n_components=None, kernel="linear", ...)``: scikit-learn's defaults;
* ``SpectralClustering(affinity="rbf", gamma=1.0, ...)``: ``affinity -> kernel``,
  ``normalization="random_walk"`` (scikit-learn's embedding), ``gamma`` passed only to the
  kernels that read it (scikit-learn ignores its default 1.0 elsewhere);

Use: ``python -m pytest -p tests.sklearn_compat.adapter <sklearn test file>``.
"""

from __future__ import annotations

import numpy as np
import sklearn.cluster
import sklearn.decomposition
import sklearn.kernel_ridge

import kernelkit


class KernelRidge(kernelkit.KernelRidge):
    def __init__(
        self, alpha=1.0, *, kernel="linear", gamma=None, degree=None, coef0=None, kernel_params=None
    ):
        super().__init__(
            kernel=kernel, gamma=gamma, degree=degree, coef0=coef0, kernel_params=kernel_params
        )
        self.alpha = alpha

    def fit(self, X, y, sample_weight=None):
        self.lam = float(np.asarray(self.alpha)) / X.shape[0]
        return super().fit(X, y, sample_weight=sample_weight)


class KernelPCA(kernelkit.KernelPCA):
    def __init__(
        self,
        n_components=None,
        *,
        kernel="linear",
        gamma=None,
        degree=None,
        coef0=None,
        kernel_params=None,
        alpha=1.0,
        fit_inverse_transform=False,
        eigen_solver="auto",
        iterated_power="auto",
        random_state=None,
    ):
        super().__init__(
            kernel=kernel,
            n_components=n_components,
            eigen_solver=eigen_solver,
            fit_inverse_transform=fit_inverse_transform,
            random_state=random_state,
            gamma=gamma,
            degree=degree,
            coef0=coef0,
            kernel_params=kernel_params,
            iterated_power=iterated_power,
        )
        self.alpha = alpha

    def fit(self, X, y=None):
        self.inverse_lam = float(self.alpha) / X.shape[0]
        return super().fit(X)

    def fit_transform(self, X, y=None, **params):
        self.inverse_lam = float(self.alpha) / X.shape[0]
        return super().fit_transform(X)


class SpectralClustering(kernelkit.SpectralClustering):
    def __init__(
        self,
        n_clusters=8,
        *,
        eigen_solver=None,
        n_components=None,
        random_state=None,
        n_init=10,
        gamma=1.0,
        affinity="rbf",
        n_neighbors=10,
        assign_labels="kmeans",
        degree=None,
        coef0=None,
        kernel_params=None,
        verbose=False,
    ):
        super().__init__(
            n_clusters=n_clusters,
            kernel=affinity,
            random_state=random_state,
            normalization="random_walk",
            n_init=n_init,
            gamma=gamma,
            degree=degree,
            coef0=coef0,
            kernel_params=kernel_params,
            n_neighbors=n_neighbors,
            assign_labels=assign_labels,
            n_components=n_components,
            eigen_solver=eigen_solver,
            verbose=verbose,
        )
        self.affinity = affinity

    def _kernel_extras(self):
        # scikit-learn's gamma=1.0 default is read only by the kernels that use it
        extras = super()._kernel_extras()
        if self.affinity not in ("rbf", "laplacian", "poly", "polynomial"):
            extras["gamma"] = None
        return extras

    def fit(self, X, y=None):
        self.kernel = self.affinity
        return super().fit(X)


sklearn.kernel_ridge.KernelRidge = KernelRidge
sklearn.decomposition.KernelPCA = KernelPCA
sklearn.cluster.SpectralClustering = SpectralClustering
