r"""The course's bias-free SVMs (hinge and squared hinge) solved in the dual by coordinate ascent.

Course part 1, sections 3.4-3.6 ("Large-margin classifiers", "Support vector machines").
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Real
from typing import Any, ClassVar

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.validation import check_is_fitted

from kernelkit.estimators._base import ON_ERROR_CONSTRAINT, progress_of, warn_max_iter
from kernelkit.estimators._classes import (
    MARGIN_CONSTRAINTS,
    MarginClassifierMixin,
    squeeze_binary,
)
from kernelkit.estimators._lam_auto import kfold_lam
from kernelkit.gram import gram
from kernelkit.gram._centres import take
from kernelkit.kernels import Kernel, Precomputed
from kernelkit.solvers import box_qp
from kernelkit.utils._constraints import Interval, StrOptions
from kernelkit.utils._progress import Progress, VerboseLike
from kernelkit.utils._validation import check_signs, like_input

LOSSES = ("hinge", "squared_hinge")


@dataclass(frozen=True)
class SVMDualResult:
    """Result of :func:`bias_free_svm`.

    Attributes
    ----------
    coef : torch.Tensor
        ``alpha``, shape (n,): ``f = sum_i alpha_i k(x_i, .)``, ``y_i alpha_i >= 0``.
    converged : bool
        Whether the duality gap reached ``tol``.
    iterations : int
        Sweeps of coordinate ascent.
    gap : float
        Duality gap ``P(alpha) - D(alpha)`` at the returned ``alpha``: ``P(alpha)`` exceeds
        the optimal primal value by at most ``gap``.
    """

    coef: torch.Tensor
    converged: bool
    iterations: int
    gap: float


def svm_primal_dual(
    beta: np.ndarray, g: np.ndarray, *, lam: float, loss: str
) -> tuple[float, float]:
    r"""Primal and dual values of the bias-free SVM at ``alpha = y * beta``.

    ``beta`` are the box-QP variables ``beta_i = y_i alpha_i`` and ``g = Q beta - 1`` their
    gradient (:func:`bias_free_svm`), so that ``alpha^T K alpha = beta . (g + 1)`` (hinge)
    and the margins are ``y_i f(x_i) = g_i + 1`` (hinge) or ``g_i + 1 - n lam beta_i``
    (squared hinge).  Primal: ``(1/n) sum phi(y_i f(x_i)) + lam alpha^T K alpha``; dual
    (course part 1, section 3.6): ``lam (2 alpha^T y - alpha^T K alpha)`` (hinge),
    ``lam (2 alpha^T y - alpha^T (K + n lam I) alpha)`` (squared hinge).
    """
    n = len(beta)
    quad_q = float(beta @ (g + 1.0))  # beta^T Q beta
    if loss == "hinge":
        margins, quad_k = g + 1.0, quad_q
        data = float(np.maximum(1.0 - margins, 0.0).mean())
    else:
        margins = g + 1.0 - n * lam * beta
        quad_k = quad_q - n * lam * float(beta @ beta)
        data = float((np.maximum(1.0 - margins, 0.0) ** 2).mean())
    return data + lam * quad_k, lam * (2.0 * float(beta.sum()) - quad_q)


def bias_free_svm(
    K: torch.Tensor,
    y: torch.Tensor,
    *,
    lam: float,
    loss: str = "hinge",
    tol: float = 1e-6,
    max_iter: int = 1000,
    progress: Progress | None = None,
) -> SVMDualResult:
    r"""The bias-free SVM of the course, solved in the dual with a duality-gap certificate.

    Primal (course part 1, section 3.6, no intercept): for ``y_i in {-1, +1}``

    .. math:: \min_{f \in H} \frac1n \sum_i \varphi(y_i f(x_i)) + \lambda \|f\|_H^2,

    ``phi(u) = max(1 - u, 0)`` (``"hinge"``) or ``max(1 - u, 0)^2`` (``"squared_hinge"``, the
    2-SVM).  Dual in ``alpha``: ``max 2 alpha^T y - alpha^T K alpha`` s.t.
    ``0 <= y_i alpha_i <= C = 1 / (2 n lam)`` (hinge), and
    ``max 2 alpha^T y - alpha^T (K + n lam I) alpha`` s.t. ``y_i alpha_i >= 0`` (2-SVM: the
    hinge SVM on ``K + n lam I`` with ``C = inf``).  With ``beta_i = y_i alpha_i`` both are the
    box QP ``min 1/2 beta^T Q beta - 1^T beta``, ``Q = diag(y) K diag(y)`` (plus ``n lam I``
    for the 2-SVM), solved by exact coordinate ascent (:func:`kernelkit.solvers.box_qp`).
    The sweeps stop when the duality gap ``P(alpha) - lam (2 alpha^T y - ...)``
    (:func:`svm_primal_dual`; course part 1, section 3.5) is at most ``tol``: the primal value
    of the returned ``f`` is then within ``tol`` of the optimum.  ``progress`` receives the
    duality gap after every sweep.

    Raises
    ------
    InputError
        If ``y`` holds values other than -1 and +1.
    """
    K = K.to(torch.float64)
    y = check_signs(y).to(K.device)
    n = K.shape[0]
    Q = y[:, None] * K * y[None, :]
    if loss == "hinge":
        upper = 1.0 / (2.0 * n * lam)
    else:
        Q.diagonal().add_(n * lam)
        upper = float("inf")

    sweeps = 0

    def gap(beta: np.ndarray, g: np.ndarray) -> float:
        nonlocal sweeps
        primal, dual = svm_primal_dual(beta, g, lam=lam, loss=loss)
        sweeps += 1
        if progress is not None:
            progress.update(sweeps, duality_gap=primal - dual)
        return primal - dual

    res = box_qp(Q, 1.0, upper, tol=tol, max_iter=max_iter, certificate=gap)
    return SVMDualResult(
        y * res.solution.to(K.device), res.converged, res.iterations, res.certificate
    )


class BiasFreeSVC(MarginClassifierMixin, ClassifierMixin, BaseEstimator):
    r"""Support vector classification without intercept, as in the course (hinge or squared hinge).

    Solves (course part 1, sections 3.4-3.6)

    .. math:: \min_{f \in H} \frac1n \sum_{i=1}^n \varphi(y_i f(x_i)) + \lambda \|f\|_H^2,
              \qquad f(x) = \sum_i \alpha_i k(x_i, x),

    with ``phi`` the hinge ``max(1 - u, 0)`` or the squared hinge ``max(1 - u, 0)^2``, in the
    dual by coordinate ascent, stopped by the duality gap (:func:`bias_free_svm`).  ``C``-SVM
    users: ``C = 1 / (2 n lam)`` (course slide "C-SVM"), i.e. ``lam = 1 / (2 n C)``.  Without
    the intercept there is no equality constraint ``sum_i y_i alpha_i = 0`` in the dual, so
    this is *not* scikit-learn's ``SVC`` (which has ``b``): :class:`~kernelkit.KernelSVC`
    (libsvm, with intercept) stays the default SVM of kernelkit.  The hinge solution is
    sparse: prediction uses the kernel between new points and the support vectors only.

    More than two classes: one-vs-rest, the largest ``f_c(x)`` wins.

    Parameters
    ----------
    kernel : Kernel, str or None, optional
        A kernelkit kernel, a kernel spec, a scikit-learn name or ``None`` (the default kernel
        of the input's kind; see :mod:`kernelkit.kernels._resolve`).
    lam : float or "auto", default 1e-3
        Regularisation ``lam > 0`` of ``lam ||f||^2``; ``C = 1 / (2 n lam)``.  ``"auto"``:
        the best 5-fold cross-validated accuracy over the one grid of the estimators without
        a closed-form leave-one-out (:mod:`kernelkit.estimators._lam_auto`), on the Gram
        computed once.
    loss : {"hinge", "squared_hinge"}, default "hinge"
        ``phi``: the hinge ``max(0, 1 - u)`` or the squared hinge ``max(0, 1 - u)^2``.
    tol : float, default 1e-6
        Stop when the duality gap (an absolute bound on the primal suboptimality) is at most
        ``tol``.
    max_iter : int, default 1000
        Most sweeps of coordinate ascent per binary problem (``ConvergenceWarning``).
    gamma, degree, coef0 : optional
        scikit-learn's kernel parameters, used only with its kernel names.
    verbose : int, bool or callable, default 0
        ``0``: silent; ``1``: progress on stderr (:mod:`kernelkit.utils._progress`: a bar on a
        terminal, else ``[BiasFreeSVC] iter k/max_iter duality_gap=...`` lines per sweep and a
        final ``done after ...`` line); a callable receives ``(sweep, duality_gap)``.
    on_error : {"raise", "skip"}, default "raise"
        Training records that do not parse as the input kind (SMILES RDKit rejects): an
        :class:`~kernelkit.data._molecules.InvalidRecordsError` naming them, or ``"skip"``:
        left out of the fit with their targets, named in a warning (the shared route of
        every supervised estimator, :func:`kernelkit.data._detect.drop_invalid_records`).

    Attributes
    ----------
    classes_ : ndarray
        Class labels.
    dual_coef_ : ndarray or torch.Tensor
        ``alpha``, shape (n_samples,) for two classes, (n_samples, n_classes) one-vs-rest.
    support_ : ndarray
        Indices of the training points with a nonzero ``alpha`` (in any binary problem).
    duality_gap_ : ndarray
        The certificate of each binary problem.
    n_iter_ : int
        Coordinate-ascent sweeps, the most of any binary problem.
    lam_ : float
        The ``lam`` of the fit (``lam``, or the one ``"auto"`` chose).
    cv_results_ : dict
        ``lam="auto"`` only: scikit-learn's ``GridSearchCV.cv_results_`` of the grid.

    Notes
    -----
    Objective: with ``phi`` the hinge or the squared hinge (one problem per class against
    the rest with more than two classes),

    .. math:: \min_{f \in H} \frac{1}{n} \sum_{i=1}^n \varphi(y_i f(x_i)) + \lambda \|f\|_H^2.
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **MARGIN_CONSTRAINTS,
        "lam": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "loss": [StrOptions(set(LOSSES))],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "on_error": ON_ERROR_CONSTRAINT,
    }

    def __init__(
        self,
        kernel: Kernel | str | None = None,
        lam: float | str = 1e-3,
        *,
        loss: str = "hinge",
        tol: float = 1e-6,
        max_iter: int = 1000,
        gamma: float | None = None,
        degree: int | None = None,
        coef0: float | None = None,
        verbose: VerboseLike = 0,
        on_error: str = "raise",
    ):
        self.kernel = kernel
        self.lam = lam
        self.loss = loss
        self.tol = tol
        self.max_iter = max_iter
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.verbose = verbose
        self.on_error = on_error

    def fit(self, X: Any, y: Any) -> BiasFreeSVC:
        """Fit one bias-free SVM (two classes) or one per class (one-vs-rest)."""
        X, y, _ = self._drop_invalid(X, y, None)
        Xb, Y = self._fit_targets(X, y)
        K = gram(self.kernel_, Xb).to(torch.float64)
        self._select_lam(K, y)
        progress = progress_of(self, self.max_iter)
        results = []
        for j in range(Y.shape[1]):
            if Y.shape[1] > 1:
                progress.stage(f"class {j + 1}/{Y.shape[1]} against the rest")
            results.append(
                bias_free_svm(
                    K,
                    Y[:, j].to(K.device),
                    lam=self.lam_,
                    loss=self.loss,
                    tol=self.tol,
                    max_iter=self.max_iter,
                    progress=progress,
                )
            )
        del K
        coef = torch.stack([res.coef for res in results], dim=1)
        self.support_ = torch.nonzero((coef != 0).any(1)).flatten().cpu().numpy()
        self.dual_coef_ = like_input(squeeze_binary(coef), X)
        gaps = torch.tensor([res.gap for res in results], dtype=torch.float64)
        self.duality_gap_ = like_input(gaps, X)
        self.n_iter_ = max(int(res.iterations) for res in results)
        converged = all(res.converged for res in results)
        progress.done(self.n_iter_, "converged" if converged else "max_iter")
        if not converged:
            warn_max_iter(self, f"duality gap {float(gaps.max()):.3g}")
        return self

    def _select_lam(self, K: torch.Tensor, y: Any) -> None:
        """``lam_`` (and ``cv_results_`` of ``lam="auto"``: :func:`kfold_lam` on ``K``)."""
        self.__dict__.pop("cv_results_", None)
        if self.lam != "auto":
            self.lam_ = float(self.lam)
            return
        on_gram = clone(self).set_params(kernel=Precomputed(), verbose=0, on_error="raise")
        self.lam_, self.cv_results_ = kfold_lam(
            on_gram, [K.cpu().numpy()], y, diagonal=K.diagonal(), classifier=True
        )

    def _scores(self, X: Any) -> torch.Tensor:
        check_is_fitted(self, "dual_coef_")
        Xb = self._predict_X(X)
        coef = torch.as_tensor(self.dual_coef_).to(torch.float64)
        if not len(self.support_):
            return torch.zeros((len(Xb), *coef.shape[1:]), dtype=torch.float64)
        Kt = gram(self.kernel_, Xb, take(self.X_fit_, self.support_)).to(torch.float64)
        return Kt @ coef[torch.as_tensor(self.support_)].to(Kt.device)


__all__ = ["BiasFreeSVC", "SVMDualResult", "bias_free_svm", "svm_primal_dual"]
