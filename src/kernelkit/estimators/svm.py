"""Support vector classification on any kernel (libsvm on a kernelkit Gram matrix)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.svm import SVC
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d

from kernelkit.estimators._base import KernelEstimatorMixin, to_numpy
from kernelkit.gram import gram
from kernelkit.gram.nystrom import take
from kernelkit.kernels import Kernel
from kernelkit.utils.errors import InputError
from kernelkit.utils.validation import check_int, check_positive, like_input


class KernelSVC(KernelEstimatorMixin, ClassifierMixin, BaseEstimator):
    r"""C-support vector classification with any kernelkit kernel (libsvm via scikit-learn).

    The Gram matrix is computed by kernelkit (any kernel, any input kind) and handed to
    ``sklearn.svm.SVC(kernel="precomputed")``, i.e. libsvm's C-SVM

    .. math:: \min_{f, b} \frac12 \|f\|_H^2 + C \sum_i \max(0, 1 - y_i (f(x_i) + b)),

    solved in the dual by SMO; several classes are handled one-vs-one as in ``SVC``.  Unlike
    the course's bias-free SVM (course part 1, slides "Support vector machines (SVM)":
    ``min (1/n) sum hinge + lam ||f||^2`` without ``b``), libsvm has an intercept ``b`` and the
    equality constraint ``sum_i y_i alpha_i = 0`` in its dual.  Without the intercept the two
    forms coincide for ``C = 1 / (2 n lam)`` (course slide "Remark: C-SVM").  With
    ``Gaussian(sigma)`` the decisions equal ``SVC(kernel="rbf", gamma=1 / (2 sigma^2), C=C)``.

    Prediction needs the kernel only between new points and the support vectors.

    Parameters
    ----------
    kernel : Kernel, optional
        Any kernelkit kernel; ``None`` means ``Gaussian(sigma=1.0)``.
    C : float, default 1.0
        Penalty of the hinge losses, ``C > 0``.
    class_weight : dict, "balanced" or None
        Per-class multipliers of ``C`` (as ``SVC``).
    tol : float, default 1e-3
        Stopping tolerance of libsvm.
    max_iter : int, default -1
        Iteration limit of libsvm; ``-1`` means none.

    Attributes
    ----------
    classes_ : ndarray
        Class labels.
    support_ : ndarray
        Indices of the support vectors in the training data.
    n_support_ : ndarray
        Number of support vectors per class.
    dual_coef_ : ndarray, shape (n_classes - 1, n_SV)
        ``y_i alpha_i`` of the support vectors (scikit-learn's layout).
    intercept_ : ndarray, shape (n_classes * (n_classes - 1) / 2,)
        The intercepts ``b`` of the one-vs-one problems.
    n_iter_ : ndarray
        libsvm iterations of each one-vs-one problem.
    svc_ : sklearn.svm.SVC
        The fitted libsvm model on the precomputed Gram.
    """

    def __init__(
        self,
        kernel: Kernel | None = None,
        C: float = 1.0,
        *,
        class_weight: Any = None,
        tol: float = 1e-3,
        max_iter: int = -1,
    ):
        self.kernel = kernel
        self.C = C
        self.class_weight = class_weight
        self.tol = tol
        self.max_iter = max_iter

    def fit(self, X: Any, y: Any) -> KernelSVC:
        """Fit the C-SVM on training data ``X`` and class labels ``y``."""
        C = check_positive(self.C, name="C")
        tol = check_positive(self.tol, name="tol")
        max_iter = check_int(self.max_iter, name="max_iter", minimum=-1)
        Xb = self._fit_X(X)
        if y is None:
            self._check_y_length(y, len(Xb))
        labels = to_numpy(y)
        self._check_y_length(labels, len(Xb))
        try:
            labels = column_or_1d(labels, warn=True)
            check_classification_targets(labels)
        except ValueError as exc:
            raise InputError(f"y: {exc}") from exc
        K = to_numpy(gram(self.kernel_, Xb)).astype(np.float64, copy=False)
        self.svc_ = SVC(
            kernel="precomputed", C=C, class_weight=self.class_weight, tol=tol, max_iter=max_iter
        )
        self.svc_.fit(K, labels)
        del K
        self.classes_ = self.svc_.classes_
        self.support_ = self.svc_.support_
        self.n_support_ = self.svc_.n_support_
        self.dual_coef_ = self.svc_.dual_coef_
        self.intercept_ = self.svc_.intercept_
        self.n_iter_ = self.svc_.n_iter_
        return self

    def _test_gram(self, X: Any) -> np.ndarray:
        """Rows ``k(x, x_j)`` of new points against all training points, filled only at the
        support vectors (libsvm reads no other column)."""
        check_is_fitted(self, "svc_")
        Xb = self._predict_X(X)
        n_train = len(self.X_fit_)
        Kt = np.zeros((len(Xb), n_train), dtype=np.float64)
        if len(self.support_):
            Ksv = gram(self.kernel_, Xb, take(self.X_fit_, self.support_))
            Kt[:, self.support_] = to_numpy(Ksv)
        return Kt

    def decision_function(self, X: Any) -> Any:
        """Decision values (binary: ``f(x) + b``, shape (m,); else one-vs-rest shape)."""
        Kt = self._test_gram(X)
        dec = self.svc_.decision_function(Kt)
        return like_input(torch.as_tensor(dec), X)

    def predict(self, X: Any) -> Any:
        """Predicted class labels (torch tensors for torch input when labels are numeric)."""
        Kt = self._test_gram(X)
        labels = self.svc_.predict(Kt)
        if isinstance(X, torch.Tensor) and labels.dtype.kind in "biuf":
            return torch.as_tensor(labels, device=X.device)
        return labels
