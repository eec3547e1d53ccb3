r"""Kernel regression with Huber's robust loss (:class:`KernelHuberRegressor`)."""

from __future__ import annotations

from numbers import Integral
from typing import Any, ClassVar

from kernelkit.estimators._erm import ERM_CONSTRAINTS, KernelERMRegressor
from kernelkit.kernels import Kernel
from kernelkit.models._losses import HuberLoss
from kernelkit.utils._constraints import Interval
from kernelkit.utils._progress import VerboseLike


class KernelHuberRegressor(KernelERMRegressor):
    r"""Kernel Huber regression, ``(1/n) sum loss + lam ||f||^2`` with an intercept.

    Solves, with Huber's loss at a fixed scale (Huber, "Robust estimation of a location
    parameter", Ann. Math. Statist. 35, 1964; in the form of scikit-learn's
    ``HuberRegressor``, ``H_epsilon``),

    .. math:: \min_{f \in H, b} \frac{1}{\sum_j w_j} \sum_{i=1}^n w_i\,
              H_\varepsilon(y_i - f(x_i) - b) + \lambda \|f\|_H^2, \qquad
              H_\varepsilon(r) = \begin{cases} r^2 & |r| \le \varepsilon \\
              2 \varepsilon |r| - \varepsilon^2 & |r| > \varepsilon, \end{cases}

    ``f(x) = sum_i alpha_i k(x_i, x)``: quadratic near the fit, linear for the outliers.
    ``epsilon`` is scikit-learn's, in the units of ``y``: ``HuberRegressor`` also estimates
    a scale ``sigma`` and minimises ``sum_i (sigma + H_epsilon(r_i / sigma) sigma) +
    alpha ||w||^2``; this estimator keeps ``sigma = 1`` (standardise ``y`` first, or scale
    ``epsilon`` by a robust spread of ``y``, to reproduce its scale invariance).

    The fit comes from the loss-generic back-end (:mod:`kernelkit.models._erm`): damped
    Newton steps with Armijo backtracking on the coefficients of the Nyström features of the
    centres (``solver="nystrom"``) or of ``K = Phi Phi^T`` itself (``"exact"``), stopped by
    the largest gradient entry; the coefficients are mapped back to ``alpha``.

    Parameters
    ----------
    kernel : Kernel, str or None, optional
        A kernelkit kernel, a kernel spec, a scikit-learn name (``"rbf"``, ``"precomputed"``
        ...) or ``None``: the default kernel of the input's kind (as
        :class:`~kernelkit.estimators.KernelRidge`; :mod:`kernelkit.kernels._resolve`).
    lam : float or "auto", default 1e-3
        Regularisation ``lam > 0`` of ``lam ||f||^2`` (``HuberRegressor``'s ``alpha``
        weights the sum of the losses, ``lam = alpha / n`` at ``sigma = 1`` for the linear
        kernel).  ``"auto"``: 5-fold cross-validation down the grid ``1e-1, 10^-1.5, ...,
        1e-9`` times ``mean k(x, x)`` (:func:`kernelkit.models._erm.select_lam`), recorded in
        ``lam_`` and ``cv_results_``.
    epsilon : float, default 1.35
        Threshold of the quadratic part, ``>= 0`` (``HuberRegressor``'s default).
    solver : {"auto", "exact", "nystrom"}, default "auto"
        ``"exact"``: Newton on the features of the ``n x n`` Gram (one eigendecomposition);
        ``"nystrom"``: on the features of ``n_centers`` centres; ``"auto"``: exact while
        KernelRidge's cost model keeps it (:func:`kernelkit.models._falkon.choose_solver`).
        A Dask array or bag is fitted by the Nyström solver, its features computed on the
        workers.
    n_centers : int, default 1000
        Nyström only: number of centres (more than ``n``: the exact solver, with a warning).
    centers : {"uniform", "kmeans++", "greedy"} or array of points, default "uniform"
        Nyström only: how the centres are chosen (drawn by weight among distinct points), or
        the centres themselves.
    random_state : None, int, RandomState or Generator
        Seed of the centre draw and of the folds of ``lam="auto"``.
    tol : float, default 1e-6
        Stop when the largest entry of the objective's gradient is at most ``tol``.
    max_iter : int, default 100
        Most Newton steps (``ConvergenceWarning`` when reached).
    gamma, degree, coef0 : optional
        scikit-learn's kernel parameters, used only with its kernel names.
    on_error : {"raise", "skip"}, default "raise"
        Training records that do not parse as the input kind: an error naming them, or
        ``"skip"``: left out with their targets and weights, named in a warning.
    verbose : int, bool or callable, default 0
        ``1``: progress on stderr (``[KernelHuberRegressor] iter k/max_iter objective=...``
        per Newton step); a callable receives ``(step, objective)``.

    Attributes
    ----------
    X_fit_ : torch.Tensor or batch
        The training points (``"exact"``) or the centres (``"nystrom"``).
    dual_coef_ : ndarray or torch.Tensor
        ``alpha`` on ``X_fit_``: ``f(x) = sum_j alpha_j k(x, c_j)``.
    intercept_ : float
        ``b``.
    n_iter_ : int
        Newton steps of the final fit.
    lam_ : float
        The ``lam`` fitted.
    solver_ : str
        ``"exact"`` or ``"nystrom"``.
    center_indices_ : ndarray of int
        Nyström only: the centres' rows among the training points (-1: given as points).
    cv_results_ : dict
        ``lam="auto"`` only: scikit-learn's layout (``params``, ``param_lam``,
        ``split{k}_test_score``, ``mean_test_score`` = minus the mean held-out loss,
        ``std_test_score``, ``rank_test_score``).

    Notes
    -----
    Objective: with sample weights ``w`` (all 1 by default),

    .. math:: \min_{f \in H, b} \frac{1}{\sum_j w_j} \sum_{i=1}^n w_i\,
              H_\varepsilon(y_i - f(x_i) - b) + \lambda \|f\|_H^2.
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **ERM_CONSTRAINTS,
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        kernel: Kernel | str | None = None,
        lam: float | str = 1e-3,
        *,
        epsilon: float = 1.35,
        solver: str = "auto",
        n_centers: int = 1000,
        centers: Any = "uniform",
        random_state: Any = None,
        tol: float = 1e-6,
        max_iter: int = 100,
        gamma: float | None = None,
        degree: int | None = None,
        coef0: float | None = None,
        on_error: str = "raise",
        verbose: VerboseLike = 0,
    ):
        self.kernel = kernel
        self.lam = lam
        self.epsilon = epsilon
        self.solver = solver
        self.n_centers = n_centers
        self.centers = centers
        self.random_state = random_state
        self.tol = tol
        self.max_iter = max_iter
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.on_error = on_error
        self.verbose = verbose

    def _loss(self) -> HuberLoss:
        return HuberLoss(float(self.epsilon))


__all__ = ["KernelHuberRegressor"]
