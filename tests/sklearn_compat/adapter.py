"""A pytest plugin that runs scikit-learn's own test modules against kernelkit.

It replaces scikit-learn's estimators by thin subclasses of kernelkit's that only rename
(the documented mapping, nothing else):

* ``KernelRidge(alpha, kernel="linear", ...)``: ``lam = alpha / n`` at fit, ``alpha / sum(w)``
  with sample weights (kernelkit's ``(1/sum w) sum w_i loss_i + lam ||f||^2``), scikit-learn's
  default kernel ``"linear"``;
* ``KernelPCA(n_components=None, kernel="linear", ...)``: scikit-learn's defaults;
* ``SpectralClustering(affinity="rbf", gamma=1.0, ...)``: ``affinity -> kernel``,
  ``normalization="random_walk"`` (scikit-learn's embedding), ``gamma`` passed only to the
  kernels that read it (scikit-learn ignores its default 1.0 elsewhere);
* ``SVC(C, kernel="rbf", gamma="scale", ...)`` -> ``KernelSVC``: scikit-learn's defaults;
  its defaults ``gamma="scale"``, ``degree=3``, ``coef0=0`` passed only to the kernels that
  read them; libsvm's ``shrinking``, ``cache_size`` and ``verbose`` are kept as parameters
  and not passed (kernelkit has none of them);
* ``Nystroem(kernel="rbf", ...)`` -> ``NystromFeatures`` (``n_jobs`` kept, not passed);
* ``RBFSampler(gamma=1.0, ...)`` -> ``RandomFourierFeatures(Gaussian(sigma))`` with
  ``sigma = 1 / sqrt(2 gamma)`` (``"scale"``: ``gamma = 1 / (n_features X.var())``).

Use: ``python -m pytest -p tests.sklearn_compat.adapter <sklearn test file>``.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
import sklearn.cluster
import sklearn.decomposition
import sklearn.kernel_approximation
import sklearn.kernel_ridge
import sklearn.svm
from sklearn.utils.validation import _num_samples

import kernelkit
from kernelkit.kernels import Gaussian
from kernelkit.kernels._resolve import SKLEARN_KERNELS


class KernelRidge(kernelkit.KernelRidge):
    def __init__(
        self, alpha=1.0, *, kernel="linear", gamma=None, degree=None, coef0=None, kernel_params=None
    ):
        super().__init__(
            kernel=kernel, gamma=gamma, degree=degree, coef0=coef0, kernel_params=kernel_params
        )
        self.alpha = alpha

    def fit(self, X, y, sample_weight=None):
        n = _num_samples(X)
        total = n if sample_weight is None else float(np.broadcast_to(sample_weight, (n,)).sum())
        self.lam = float(np.asarray(self.alpha)) / total
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
        remove_zero_eig=False,
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
            remove_zero_eig=remove_zero_eig,
        )
        self.alpha = alpha

    def fit(self, X, y=None):
        self.inverse_lam = float(self.alpha) / _num_samples(X)
        return super().fit(X)

    def fit_transform(self, X, y=None, **params):
        self.inverse_lam = float(self.alpha) / _num_samples(X)
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

    def _kernel_extras(self, spec=None):
        # scikit-learn's gamma=1.0 default is read only by the kernels that use it
        extras = super()._kernel_extras(spec)
        if self.affinity not in ("rbf", "laplacian", "poly", "polynomial"):
            extras["gamma"] = None
        return extras

    def fit(self, X, y=None):
        self.kernel = self.affinity
        return super().fit(X)


class SVC(kernelkit.KernelSVC):
    def __init__(
        self,
        *,
        C=1.0,
        kernel="rbf",
        degree=3,
        gamma="scale",
        coef0=0.0,
        shrinking=True,
        probability="deprecated",
        tol=1e-3,
        cache_size=200,
        class_weight=None,
        verbose=False,
        max_iter=-1,
        decision_function_shape="ovr",
        break_ties=False,
        random_state=None,
    ):
        super().__init__(
            kernel=kernel,
            C=C,
            class_weight=class_weight,
            tol=tol,
            max_iter=max_iter,
            gamma=gamma,
            degree=degree,
            coef0=coef0,
            decision_function_shape=decision_function_shape,
            break_ties=break_ties,
            probability=probability,
            random_state=random_state,
        )
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.verbose = verbose

    def _kernel_extras(self, spec=None):
        # scikit-learn's defaults gamma="scale", degree=3, coef0=0 are ignored by the kernels
        # that do not read them; any other value is passed on (and refused there, as
        # kernelkit does)
        extras = super()._kernel_extras(spec)
        name = self.kernel if isinstance(self.kernel, str) else None
        reads = SKLEARN_KERNELS.get(name, ())
        for param, default in (("gamma", "scale"), ("degree", 3), ("coef0", 0.0)):
            value = extras[param]
            if param not in reads and isinstance(value, (str, int, float)) and value == default:
                extras[param] = None
        return extras


class Nystroem(kernelkit.NystromFeatures):
    def __init__(
        self,
        kernel="rbf",
        *,
        gamma=None,
        coef0=None,
        degree=None,
        kernel_params=None,
        n_components=100,
        random_state=None,
        n_jobs=None,
    ):
        super().__init__(
            kernel=kernel,
            n_components=n_components,
            random_state=random_state,
            gamma=gamma,
            degree=degree,
            coef0=coef0,
            kernel_params=kernel_params,
        )
        self.n_jobs = n_jobs


class RBFSampler(kernelkit.RandomFourierFeatures):
    def __init__(self, *, gamma=1.0, n_components=100, random_state=None):
        super().__init__(n_components=n_components, random_state=random_state)
        self.gamma = gamma

    def _kernel_extras(self, spec=None):
        # gamma is read here, into the Gaussian's sigma
        return {**super()._kernel_extras(spec), "gamma": None}

    def fit(self, X, y=None):
        gamma = self.gamma
        if isinstance(gamma, str) and gamma == "scale":
            Z = X if sp.issparse(X) else np.asarray(X, dtype=float)
            var = Z.multiply(Z).mean() - Z.mean() ** 2 if sp.issparse(Z) else Z.var()
            gamma = 1.0 / (Z.shape[1] * var) if var != 0 else 1.0
        self.kernel = Gaussian(sigma=1.0 / math.sqrt(2.0 * gamma))
        self._gamma = gamma  # scikit-learn's private name of the gamma in use
        return super().fit(X)


sklearn.kernel_ridge.KernelRidge = KernelRidge
sklearn.decomposition.KernelPCA = KernelPCA
sklearn.cluster.SpectralClustering = SpectralClustering
sklearn.svm.SVC = SVC
sklearn.kernel_approximation.Nystroem = Nystroem
sklearn.kernel_approximation.RBFSampler = RBFSampler
