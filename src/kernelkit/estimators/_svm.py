"""Support vector classification on any kernel (libsvm on a kernelkit Gram matrix)."""

from __future__ import annotations

import math
import warnings
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
import torch
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.svm import SVC
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d

from kernelkit.data._detect import detect_input_kind
from kernelkit.estimators._base import (
    KERNEL_CONSTRAINTS,
    KERNEL_PARAMS_CONSTRAINT,
    ON_ERROR_CONSTRAINT,
    VERBOSE_CONSTRAINT,
    KernelEstimatorMixin,
    progress_of,
    to_numpy,
)
from kernelkit.gram import gram
from kernelkit.gram._centres import take
from kernelkit.kernels import Kernel, Linear, Precomputed
from kernelkit.kernels._resolve import GAMMA_WHEN_NONE, SKLEARN_KERNELS
from kernelkit.kernels._sparse import SparseRows
from kernelkit.utils._constraints import Interval, StrOptions
from kernelkit.utils._errors import InputError, NotFittedError, SparseInputError
from kernelkit.utils._kinds import InputKind
from kernelkit.utils._progress import VerboseLike
from kernelkit.utils._seeding import RandomStateLike, as_seed
from kernelkit.utils._validation import like_input

PROBABILITY_DEPRECATION = "The `probability` parameter was deprecated"
"""The start of ``SVC``'s ``FutureWarning`` (scikit-learn 1.9) for its ``probability``."""


def positive_part(sample_weight: Any) -> Any:
    """Weights with the non-positive ones set to 0 (libsvm leaves those samples out).

    Raises
    ------
    InputError
        When no weight is positive (scikit-learn's message).
    """
    if sample_weight is None:
        return None
    try:
        w = np.asarray(to_numpy(sample_weight), dtype=np.float64)
    except (TypeError, ValueError):
        return sample_weight  # check_sample_weight names the problem
    if w.size == 0 or np.isnan(w).any():
        return sample_weight
    if not (w > 0).any():
        raise InputError(
            "sample_weight: Invalid input - all samples have zero or negative weights "
            f"(max {w.max():.3g}); libsvm leaves out the samples "
            "of weight <= 0"
        )
    return np.maximum(w, 0.0)


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

    ``fit(X, y, sample_weight=w)`` multiplies the penalty of sample ``i`` by ``w_i`` (its box
    constraint becomes ``0 <= alpha_i <= C w_i``), as ``SVC.fit(..., sample_weight=w)``:

    .. math:: \min_{f, b} \frac12 \|f\|_H^2 + C \sum_i w_i \max(0, 1 - y_i (f(x_i) + b)),

    so integer weights are repeated rows (the sum form has no normaliser to count) and
    samples of weight ``w_i <= 0`` are left out, as libsvm does (a negative penalty would make
    the problem unbounded); an error says so when no sample, or only one class, is left; the
    data-dependent defaults (median-heuristic width,
    ``gamma="scale"``) count row ``i`` ``w_i`` times.  The two fits agree to libsvm's ``tol``.

    Parameters
    ----------
    kernel : Kernel, str or None, optional
        A kernelkit kernel, a kernel spec, a scikit-learn name (``"rbf"``, ``"poly"``,
        ``"precomputed"``...) or ``None``: on vectors ``"rbf"`` with ``gamma="scale"``
        (``SVC()``'s default, so ``KernelSVC()`` equals ``SVC()``), on other inputs the
        default kernel of their kind (see :class:`~kernelkit.estimators.KernelRidge` and
        :mod:`kernelkit.kernels._resolve`).
    C : float, default 1.0
        Penalty of the hinge losses, ``0 < C <= inf`` (``inf``: the hard margin, as ``SVC``).
    class_weight : dict, "balanced" or None
        Per-class multipliers of ``C`` (as ``SVC``).
    tol : float, default 1e-3
        Stopping tolerance of libsvm.
    max_iter : int, default -1
        Most iterations of the optimiser (libsvm's SMO steps); ``-1`` means no limit.
        Stopping there warns with scikit-learn's ``ConvergenceWarning``.
    gamma, degree, coef0 : optional
        scikit-learn's kernel parameters, used only with its kernel names (``gamma``:
        ``"scale"`` ``1 / (n_features X.var())``, the default as in ``SVC``, ``"auto"``
        ``1 / n_features``, or a positive float; ``degree=None``: 3; ``coef0=None``: 0, as
        ``SVC``).
    kernel_params : dict, optional
        Keyword arguments of a callable ``kernel`` (``f(x, y, **kernel_params)``).
    decision_function_shape : {"ovr", "ovo"}, default "ovr"
        Shape of ``decision_function`` with more than two classes, as ``SVC``: one column per
        class (``"ovr"``, votes plus scaled confidences) or per pair of classes (``"ovo"``).
    break_ties : bool, default False
        ``predict`` breaks ties of the one-vs-one votes by the ``"ovr"`` decision values
        (``decision_function_shape="ovr"`` and more than two classes only), as ``SVC``.
    probability : bool, deprecated
        Also fit libsvm's probability model (``SVC(probability=True)``: Platt scaling of each
        one-vs-one decision value, ``P(y = 1 | f) = 1 / (1 + exp(A f + B))`` with ``A``, ``B``
        fitted on 5-fold cross-validated decision values (Platt 2000; Lin, Lin and Weng 2007),
        coupled across pairs of classes by Wu, Lin and Weng (2004)) for ``predict_proba`` and
        ``predict_log_proba``.  The cross-validation makes ``fit`` about 5 times slower and
        draws from ``random_state``; the argmax of ``predict_proba`` may differ from
        ``predict``.  Deprecated as ``SVC``'s is (scikit-learn 1.9; removed in 1.11, and this
        pass-through of it with it): any value given, ``True`` or ``False``, warns with a
        ``FutureWarning`` at ``fit``; left unset (the sentinel ``"deprecated"``, as ``SVC``'s)
        it is off.  ``CalibratedClassifierCV(KernelSVC(...), ensemble=False)`` is the lasting
        route (Platt's sigmoid on cross-validated decision values, one-vs-rest).  ``probA_`` /
        ``probB_`` pass scikit-learn's ``FutureWarning`` on.
    random_state : int, RandomState, Generator or None
        Seed of the cross-validation folds of ``probability=True`` (unused otherwise); ``None``
        draws fresh entropy (:mod:`kernelkit.utils._seeding`).
    verbose : int, bool or callable, default 0
        ``0``: silent; ``1``: progress on stderr (:mod:`kernelkit.utils._progress`: a
        ``[KernelSVC] libsvm ...`` stage line and a final ``done after iter N ...`` line with
        the most libsvm iterations of a one-vs-one problem); a callable receives ``(N, n_SV)``
        once.  libsvm's own console output stays off.
    on_error : {"raise", "skip"}, default "raise"
        Training records that do not parse as the input kind (SMILES RDKit rejects): an
        :class:`~kernelkit.data._molecules.InvalidRecordsError` naming them, or ``"skip"``:
        left out of the fit with their targets, named in a warning (the shared route of
        every supervised estimator, :func:`kernelkit.data._detect.drop_invalid_records`).

    Attributes
    ----------
    classes_ : ndarray
        Class labels.
    support_ : ndarray
        Indices of the support vectors in the training data.
    support_vectors_ : ndarray, sparse matrix, tensor or batch
        The support vectors (rows of the training input in its container; the prepared
        items for structured input; an empty ``(0, 0)`` array for a precomputed Gram).
    coef_ : ndarray or tensor, shape (n_classes (n_classes - 1) / 2, n_features)
        Primal weights, linear kernel only (see the property).
    n_support_ : ndarray
        Number of support vectors per class.
    dual_coef_ : ndarray, shape (n_classes - 1, n_SV)
        ``y_i alpha_i`` of the support vectors (scikit-learn's layout).
    intercept_ : ndarray, shape (n_classes * (n_classes - 1) / 2,)
        The intercepts ``b`` of the one-vs-one problems.
    n_iter_ : int
        libsvm iterations, the most of any one-vs-one problem (``svc_.n_iter_`` has each).
    probA_, probB_ : ndarray or tensor, shape (n_classes * (n_classes - 1) / 2,)
        Platt's ``A``, ``B`` (``probability=True``; empty otherwise).
    svc_ : sklearn.svm.SVC
        The fitted libsvm model on the precomputed Gram.

    Notes
    -----
    Objective: libsvm's C-SVM with intercept and sample weights ``w`` (all 1 when not
    given; one problem per pair of classes), in the sum form ``C = 1 / (2 n lam)`` maps to the
    README's ``(1/n) sum loss + lam ||f||^2``:

    .. math:: \min_{f \in H, b} \frac12 \|f\|_H^2 + C \sum_{i=1}^n w_i
              \max(0, 1 - y_i (f(x_i) + b)).
    """

    _sparse_input: ClassVar[bool] = True

    def __init__(
        self,
        kernel: Kernel | str | None = None,
        C: float = 1.0,
        *,
        class_weight: Any = None,
        tol: float = 1e-3,
        max_iter: int = -1,
        gamma: float | None = None,
        degree: int | None = None,
        coef0: float | None = None,
        kernel_params: dict | None = None,
        decision_function_shape: str = "ovr",
        break_ties: bool = False,
        probability: bool | str = "deprecated",
        random_state: RandomStateLike = None,
        verbose: VerboseLike = 0,
        on_error: str = "raise",
    ):
        self.kernel = kernel
        self.C = C
        self.class_weight = class_weight
        self.tol = tol
        self.max_iter = max_iter
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.decision_function_shape = decision_function_shape
        self.break_ties = break_ties
        self.probability = probability
        self.random_state = random_state
        self.verbose = verbose
        self.on_error = on_error

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **KERNEL_CONSTRAINTS,
        **KERNEL_PARAMS_CONSTRAINT,
        "C": [Interval(Real, 0, math.inf, closed="right")],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, -1, None, closed="left")],
        "gamma": [Interval(Real, 0, None, closed="neither"), StrOptions({"scale", "auto"}), None],
        "degree": [Interval(Integral, 1, None, closed="left"), None],
        "coef0": [Interval(Real, 0, None, closed="left"), None],
        "decision_function_shape": [StrOptions({"ovr", "ovo"})],
        "break_ties": ["boolean"],
        "probability": ["boolean", StrOptions({"deprecated"})],
        "random_state": ["random_state", np.random.Generator],
        "verbose": VERBOSE_CONSTRAINT,
        "on_error": ON_ERROR_CONSTRAINT,
    }

    def _default_kernel(self, X: Any) -> Any:
        """Vectors: scikit-learn's ``"rbf"`` with ``gamma="scale"``, ``SVC()``'s default (what
        users compare with; ``docs/estimators.md``, "Default kernels"); other kinds: theirs."""
        return "rbf" if detect_input_kind(X) is InputKind.VECTOR else None

    def _kernel_extras(self, spec: Any = None) -> dict[str, Any]:
        """``SVC``'s defaults for the names that read them: ``gamma="scale"``, ``coef0=0``
        (``spec``: the kernel being resolved, ``kernel`` or the default)."""
        extras = super()._kernel_extras(spec)
        spec = self.kernel if spec is None else spec
        key = spec.strip().lower() if isinstance(spec, str) else None
        reads = SKLEARN_KERNELS.get(key, ())
        own_gamma = key in GAMMA_WHEN_NONE  # the name's own gamma=None, not "scale"
        for param, default in (("gamma", "scale"), ("coef0", 0.0)):
            if extras[param] is None and param in reads and not (param == "gamma" and own_gamma):
                extras[param] = default
        return extras

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> KernelSVC:
        """Fit the C-SVM on training data ``X`` and class labels ``y`` (per-sample weights of
        ``C`` in ``sample_weight``)."""
        self._validate_params()
        wants_probability = self._probability_given()
        if sp.issparse(X) and self._precomputed():
            raise SparseInputError(
                "X: Sparse precomputed kernels are not supported (libsvm reads a dense Gram "
                f"matrix); got a {type(X).__name__}, pass X.toarray()"
            )
        X, Xb, y, w = self._fit_samples(X, y, positive_part(sample_weight))
        if y is None:
            self._check_y_length(y, len(Xb))
        labels = to_numpy(y)
        self._check_y_length(labels, len(Xb))
        try:
            labels = column_or_1d(labels, warn=True)
            check_classification_targets(labels)
        except ValueError as exc:
            raise InputError(f"y: {exc}") from exc
        if w is not None and len(np.unique(labels[w > 0])) < min(2, len(np.unique(labels))):
            raise InputError(
                "sample_weight: Invalid input - all samples with positive weights belong to the "
                f"same class ({labels[w > 0][0]!r}); samples of weight <= 0 are left out"
            )
        K = to_numpy(gram(self.kernel_, Xb)).astype(np.float64, copy=False)
        probability = {"probability": True, "random_state": as_seed(self.random_state)}
        self.svc_ = SVC(
            kernel="precomputed",
            C=self.C,
            class_weight=self.class_weight,
            tol=self.tol,
            max_iter=self.max_iter,
            decision_function_shape=self.decision_function_shape,
            break_ties=self.break_ties,
            **(probability if wants_probability else {}),
        )
        # libsvm drops zero-weight rows, after which the row numbers of a precomputed Gram no
        # longer match its columns: those rows are removed here, and svc_ sees the rest
        self._fit_rows = np.arange(len(Xb)) if w is None else np.flatnonzero(w > 0)
        if w is not None and len(self._fit_rows) < len(Xb):
            K = K[np.ix_(self._fit_rows, self._fit_rows)]
            labels, w = labels[self._fit_rows], w[self._fit_rows]
        progress = progress_of(self, None if self.max_iter < 0 else self.max_iter)
        progress.stage(f"libsvm on the {len(K)} x {len(K)} Gram")
        with warnings.catch_warnings():  # SVC's own, naming SVC: KernelSVC's is given above
            warnings.filterwarnings("ignore", PROBABILITY_DEPRECATION, FutureWarning)
            self.svc_.fit(K, labels, sample_weight=w)
        self._fit_probability = wants_probability
        del K
        self.classes_ = self.svc_.classes_
        self.support_ = self._fit_rows[self.svc_.support_]
        self.n_support_ = self.svc_.n_support_
        self.dual_coef_ = like_input(torch.as_tensor(self.svc_.dual_coef_), X)
        self.intercept_ = like_input(torch.as_tensor(self.svc_.intercept_), X)
        self.n_iter_ = int(np.max(self.svc_.n_iter_))
        self.support_vectors_ = self._support_vectors(X)
        progress.update(self.n_iter_, support_vectors=len(self.support_))
        limit = 0 <= self.max_iter <= self.n_iter_
        progress.done(self.n_iter_, "max_iter" if limit else "converged")
        return self

    def _support_vectors(self, X: Any) -> Any:
        """Training rows at ``support_``: rows of ``X`` (NumPy, sparse or torch, as given) for
        vector input, the prepared batch's items otherwise (an empty ``(0, 0)`` array for a
        precomputed Gram, as ``SVC``)."""
        if self.kernel_.input_kind == "gram":
            return np.empty((0, 0))
        rows = take(self.X_fit_, self.support_)
        if isinstance(rows, SparseRows):
            return rows.matrix
        if isinstance(rows, torch.Tensor):
            return like_input(rows, X)
        return rows

    @property
    def coef_(self) -> Any:
        r"""Primal weights ``w`` of the linear kernel, shape ``(n_classes (n_classes - 1) / 2,
        n_features)``: ``decision = X w^T + intercept_`` (one row per one-vs-one problem).

        With libsvm's layout (Chang and Lin, LIBSVM, section 7), the problem of classes
        ``i < j`` uses the support vectors of class ``i`` with coefficients in row ``j - 1``
        of ``dual_coef_`` and those of class ``j`` in row ``i``, so
        ``w_ij = sum_{s in SV_i} dual_coef_[j-1, s] x_s + sum_{s in SV_j} dual_coef_[i, s] x_s``.

        A read-only array (as ``SVC``'s): it is computed on each access.

        Raises
        ------
        AttributeError
            For any kernel but ``Linear`` (as ``SVC``: ``coef_`` exists only for a linear
            kernel).
        """
        check_is_fitted(self, "svc_")
        if type(self.kernel_) is not Linear:
            raise AttributeError("coef_ is only available when using a linear kernel")
        sv = self.support_vectors_
        dense = sv.toarray() if sp.issparse(sv) else to_numpy(sv)
        starts = np.concatenate([[0], np.cumsum(self.n_support_)])
        coefs = []
        n_classes = len(self.classes_)
        for i in range(n_classes):
            for j in range(i + 1, n_classes):
                si, sj = slice(starts[i], starts[i + 1]), slice(starts[j], starts[j + 1])
                coefs.append(
                    self.dual_coef_[j - 1, si] @ dense[si] + self.dual_coef_[i, sj] @ dense[sj]
                )
        out = like_input(torch.as_tensor(np.stack(coefs)), sv)
        if isinstance(out, np.ndarray):  # computed on each access: writing to it would be lost
            out.setflags(write=False)
        return out

    def _test_gram(self, X: Any) -> np.ndarray:
        """Rows ``k(x, x_j)`` of new points against the training points libsvm was given,
        filled only at the support vectors (libsvm reads no other column)."""
        check_is_fitted(self, "svc_")
        Xb = self._predict_X(X)
        Kt = np.zeros((len(Xb), len(self._fit_rows)), dtype=np.float64)
        if len(self.support_):
            Ksv = gram(self.kernel_, Xb, take(self.X_fit_, self.support_))
            Kt[:, self.svc_.support_] = to_numpy(Ksv)
        return Kt

    def decision_function(self, X: Any) -> Any:
        """Decision values (binary: ``f(x) + b``, shape (m,); else one-vs-rest shape)."""
        Kt = self._test_gram(X)
        dec = self.svc_.decision_function(Kt)
        return like_input(torch.as_tensor(dec), X)

    def _precomputed(self) -> bool:
        name = self.kernel.strip().lower() if isinstance(self.kernel, str) else None
        return name == "precomputed" or isinstance(self.kernel, Precomputed)

    def _probability_given(self) -> bool:
        """Whether ``probability=True``; any value given (not the ``"deprecated"`` sentinel)
        warns, as ``SVC``'s ``probability`` does since scikit-learn 1.9."""
        if isinstance(self.probability, str) and self.probability == "deprecated":
            return False
        warnings.warn(
            "KernelSVC: the `probability` parameter is deprecated, as SVC's is (scikit-learn "
            "1.9; removed in 1.11), whose libsvm probability model it passes through, and "
            "will be removed with it. Use CalibratedClassifierCV(KernelSVC(...), "
            "ensemble=False) instead of KernelSVC(probability=True), and leave `probability` "
            "unset instead of probability=False",
            FutureWarning,
            stacklevel=3,
        )
        return bool(self.probability)

    def _check_proba(self) -> bool:
        if isinstance(self.probability, str) or not self.probability:
            raise AttributeError("predict_proba is not available when probability=False")
        return True

    @available_if(_check_proba)
    def predict_proba(self, X: Any) -> Any:
        """Class probabilities of libsvm's probability model (``probability=True``), shape
        ``(n_samples, n_classes)``, columns in the order of ``classes_``.

        Raises
        ------
        NotFittedError
            When ``fit`` ran with ``probability=False`` or unset.
        """
        Kt = self._test_gram(X)
        if not self._fit_probability:
            raise NotFittedError(
                "predict_proba is not available when fitted with probability=False (or unset); "
                "refit with probability=True"
            )
        return like_input(torch.as_tensor(self.svc_.predict_proba(Kt)), X)

    @available_if(_check_proba)
    def predict_log_proba(self, X: Any) -> Any:
        """Logarithm of :meth:`predict_proba`."""
        proba = self.predict_proba(X)
        return proba.log() if isinstance(proba, torch.Tensor) else np.log(proba)

    @property
    def probA_(self) -> Any:
        """Platt's ``A`` of each one-vs-one problem (empty without ``probability=True``);
        scikit-learn's ``SVC.probA_`` of ``svc_``, with its deprecation warning."""
        check_is_fitted(self, "svc_")
        return like_input(torch.as_tensor(self.svc_.probA_), self.dual_coef_)

    @property
    def probB_(self) -> Any:
        """Platt's ``B`` of each one-vs-one problem (see :attr:`probA_`)."""
        check_is_fitted(self, "svc_")
        return like_input(torch.as_tensor(self.svc_.probB_), self.dual_coef_)

    def predict(self, X: Any) -> Any:
        """Predicted class labels (torch tensors for torch input when labels are numeric)."""
        if self.break_ties and self.decision_function_shape == "ovo":
            raise InputError(
                "break_ties: break_ties must be False when decision_function_shape is 'ovo' "
                "(ties are broken by the one-vs-rest decision values)"
            )
        Kt = self._test_gram(X)
        labels = self.svc_.predict(Kt)
        if isinstance(X, torch.Tensor) and labels.dtype.kind in "biuf":
            return torch.as_tensor(labels, device=X.device)
        return labels
