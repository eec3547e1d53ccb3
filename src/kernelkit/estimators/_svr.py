r"""Epsilon-insensitive support vector regression on any kernel (:class:`KernelSVR`)."""

from __future__ import annotations

from numbers import Integral
from typing import Any, ClassVar

from kernelkit.estimators._erm import ERM_CONSTRAINTS, KernelERMRegressor
from kernelkit.kernels import Kernel
from kernelkit.models._losses import EpsilonInsensitiveLoss
from kernelkit.utils._constraints import Interval
from kernelkit.utils._progress import VerboseLike


class KernelSVR(KernelERMRegressor):
    r"""Epsilon-support vector regression, ``(1/n) sum loss + lam ||f||^2`` with an intercept.

    Solves (Vapnik's epsilon-insensitive loss; Smola and Schölkopf, "A tutorial on support
    vector regression", Statistics and Computing 14, 2004; course part 1, "Large-margin
    classifiers" / "Support vector machines" for the ERM form and ``C = 1 / (2 n lam)``)

    .. math:: \min_{f \in H, b} \frac{1}{\sum_j w_j} \sum_{i=1}^n w_i
              \max\big(0, |y_i - f(x_i) - b| - \varepsilon\big) + \lambda \|f\|_H^2,
              \qquad f(x) = \sum_i \alpha_i k(x_i, x),

    the package's convention with the unpenalised intercept ``b`` of libsvm.  Multiplied by
    ``1 / (2 lam)`` it is scikit-learn's ``SVR`` objective
    ``1/2 ||f||^2 + C sum_i s_i max(0, |y_i - f(x_i) - b| - epsilon)`` with
    **``C = 1 / (2 n lam)``** (``lam = 1 / (2 n C)``) and ``s_i = n w_i / sum_j w_j``: on the
    exact system the decision values equal ``SVR(kernel="precomputed", C=C,
    epsilon=epsilon)`` on the same Gram (to the solvers' ``tol``).  Integer weights fit the
    model of repeated rows.

    The fit comes from the loss-generic back-end (:mod:`kernelkit.models._erm`): the dual
    with intercept (``min 1/2 beta^T K beta + epsilon sum |beta_i| - y^T beta``,
    ``sum beta_i = 0``, ``|beta_i| <= C s_i``) by SMO with libsvm's working-set selection
    (:func:`kernelkit.solvers._smo.smo`), ``alpha = beta``; with ``solver="nystrom"`` the same
    dual on the low-rank Gram ``Phi Phi^T`` of the Nyström features, i.e. the exact minimiser
    over ``f`` in the span of the centres.  The solution is sparse: ``alpha_i = 0`` inside the
    tube ``|y_i - f(x_i) - b| < epsilon``.

    Parameters
    ----------
    kernel : Kernel, str or None, optional
        A kernelkit kernel, a kernel spec, a scikit-learn name (``"rbf"``, ``"precomputed"``
        ...) or ``None``: the default kernel of the input's kind (as
        :class:`~kernelkit.estimators.KernelRidge`; :mod:`kernelkit.kernels._resolve`).
    lam : float or "auto", default 1e-3
        Regularisation ``lam > 0`` of ``lam ||f||^2``; scikit-learn's ``C = 1 / (2 n lam)``.
        ``"auto"``: 5-fold cross-validation down the grid ``1e-1, 10^-1.5, ..., 1e-9`` times
        ``mean k(x, x)`` (:func:`kernelkit.models._erm.select_lam`), recorded in ``lam_`` and
        ``cv_results_``.
    epsilon : float, default 0.1
        Half-width of the insensitive tube (``SVR``'s ``epsilon``), ``>= 0``.
    solver : {"auto", "exact", "nystrom"}, default "auto"
        ``"exact"``: the dual on the ``n x n`` Gram; ``"nystrom"``: on the features of
        ``n_centers`` centres (``n x m`` kept); ``"auto"``: exact while KernelRidge's cost
        model keeps it (:func:`kernelkit.models._falkon.choose_solver`).  A Dask array or bag
        is fitted by the Nyström solver, its features computed on the workers.
    n_centers : int, default 1000
        Nyström only: number of centres (more than ``n``: the exact solver, with a warning).
    centers : {"uniform", "kmeans++", "greedy"} or array of points, default "uniform"
        Nyström only: how the centres are chosen (drawn by weight among distinct points), or
        the centres themselves.
    random_state : None, int, RandomState or Generator
        Seed of the centre draw and of the folds of ``lam="auto"``.
    tol : float, default 1e-3
        Stop when libsvm's maximal KKT violation ``m(a) - M(a)`` is at most ``tol`` (its
        ``eps``, ``SVR``'s ``tol``).
    max_iter : int, default -1
        Most SMO pair updates; ``-1``: no limit (``ConvergenceWarning`` when reached).
    gamma, degree, coef0 : optional
        scikit-learn's kernel parameters, used only with its kernel names.
    on_error : {"raise", "skip"}, default "raise"
        Training records that do not parse as the input kind: an error naming them, or
        ``"skip"``: left out with their targets and weights, named in a warning.
    verbose : int, bool or callable, default 0
        ``1``: progress on stderr (``[KernelSVR] iter k violation=...`` every ``2 n`` SMO
        steps); a callable receives ``(step, violation)``.

    Attributes
    ----------
    X_fit_ : torch.Tensor or batch
        The training points (``"exact"``) or the centres (``"nystrom"``).
    dual_coef_ : ndarray or torch.Tensor
        ``alpha`` on ``X_fit_``: ``f(x) = sum_j alpha_j k(x, c_j)``.
    intercept_ : float
        ``b``.
    n_iter_ : int
        SMO pair updates of the final fit.
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

    .. math:: \min_{f \in H, b} \frac{1}{\sum_j w_j} \sum_{i=1}^n w_i
              \max\big(0, |y_i - f(x_i) - b| - \varepsilon\big) + \lambda \|f\|_H^2.
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **ERM_CONSTRAINTS,
        "max_iter": [Interval(Integral, -1, None, closed="left")],
    }

    def __init__(
        self,
        kernel: Kernel | str | None = None,
        lam: float | str = 1e-3,
        *,
        epsilon: float = 0.1,
        solver: str = "auto",
        n_centers: int = 1000,
        centers: Any = "uniform",
        random_state: Any = None,
        tol: float = 1e-3,
        max_iter: int = -1,
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

    def _loss(self) -> EpsilonInsensitiveLoss:
        return EpsilonInsensitiveLoss(float(self.epsilon))


__all__ = ["KernelSVR"]
