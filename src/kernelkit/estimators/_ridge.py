"""Kernel ridge regression (course part 1, slide "Kernel ridge regression (KRR)"), exact, by the
one-pass Nyström normal equations or by Nyström-preconditioned CG (Falkon;
:mod:`kernelkit.models._falkon`)."""

from __future__ import annotations

from collections.abc import Callable
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
import torch
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.metrics import r2_score
from sklearn.utils.validation import check_is_fitted

from kernelkit.estimators._base import (
    KERNEL_CONSTRAINTS,
    ON_ERROR_CONSTRAINT,
    RANDOM_STATE_CONSTRAINT,
    VERBOSE_CONSTRAINT,
    KernelEstimatorMixin,
    check_distributed_nystrom,
    check_sample_weight,
    progress_of,
    result_dtype,
    to_numpy,
    unit_mean_weights,
    warn_max_iter,
)
from kernelkit.estimators._ridge_selection import (
    check_nystrom_selection,
    fit_selected,
    fit_selected_nystrom,
    ridge_interval,
    selects_hyperparameters,
    smallest_lam,
)
from kernelkit.estimators._solver_choice import record_method, requested_solver
from kernelkit.gram import gram
from kernelkit.gram._distributed import is_dask_collection, map_row_blocks
from kernelkit.gram._nystrom import CENTRE_METHODS, centre_count, choose_centres
from kernelkit.kernels import Kernel, PrecomputedBatch
from kernelkit.kernels._base import Batch
from kernelkit.models._falkon import (
    NYSTROM_METHODS,
    NystromSystem,
    choose_solver,
    fitting_method,
    keeps_block,
    nystrom_predict,
    nystrom_ridge,
    nystrom_ridge_onepass,
    nystrom_system,
    priced_as_kept,
    unmapped_onepass,
)
from kernelkit.models._falkon_distributed import distributed_nystrom_system
from kernelkit.models._ridge import weighted_kernel_ridge
from kernelkit.utils._constraints import Interval, StrOptions
from kernelkit.utils._errors import InputError
from kernelkit.utils._validation import like_input


def _cost_dims(X: Any, Y: Any) -> tuple[int, int]:
    """``d`` (the columns of two-dimensional rows: a tensor, an array, a Dask array; else 0)
    and ``c`` (the outputs) of the cost model of
    :func:`~kernelkit.models._falkon.choose_solver`."""
    d = int(X.shape[1]) if len(getattr(X, "shape", ())) == 2 else 0
    return d, int(Y.shape[1]) if len(getattr(Y, "shape", ())) == 2 else 1


_FIT_STATE = ("center_indices_", "lam_", "cv_results_", "loo_residuals_", "loo_groups_", "_X_train")


class KernelRidge(KernelEstimatorMixin, RegressorMixin, BaseEstimator):
    r"""Kernel ridge regression with the course's ``(1/n)`` convention.

    Solves (course part 1, section 3.1)

    .. math:: \min_{f \in H} \frac{1}{n} \sum_{i=1}^n \|y_i - f(x_i)\|^2 + \lambda \|f\|_H^2,
              \qquad \alpha = (K + n \lambda I)^{-1} Y, \qquad f(x) = \sum_i \alpha_i k(x_i, x).

    Multi-output targets are handled jointly (vector-valued RKHS with the identity operator),
    which is the same as one independent ridge per output column.  This equals
    scikit-learn's ``KernelRidge(alpha=n * lam)``: with ``Gaussian(sigma)``, its
    ``kernel="rbf", gamma=1 / (2 sigma^2)``.

    With ``sample_weight`` the weights are repetitions (weighted KRR, course part 1, section
    3.2 "Weighted KRR", normalised by the weight total):

    .. math:: \min_{f \in H} \frac{1}{\sum_j w_j} \sum_{i=1}^n w_i \|y_i - f(x_i)\|^2
              + \lambda \|f\|_H^2, \qquad
              \alpha = W^{1/2} (W^{1/2} K W^{1/2} + (\textstyle\sum_j w_j) \lambda I)^{-1}
              W^{1/2} y,

    ``W = diag(w)``, the stationarity condition ``W (K alpha - y) + (sum w) lam alpha = 0``
    written with the symmetric matrix ``W^{1/2} K W^{1/2}`` (valid for ``w_i >= 0``; a zero
    weight gives ``alpha_i = 0``).  This equals scikit-learn's
    ``KernelRidge(alpha=sum(w) * lam).fit(X, y, sample_weight=w)``, and integer weights fit
    the model of the repeated rows (a zero weight: the row dropped): the data-dependent
    defaults (median-heuristic width, ``gamma="scale"``) count row ``i`` ``w_i`` times and
    the Nyström centres are drawn among distinct points by weight.  Only ``solver="auto"``'s
    cost model counts rows, not weights.

    Parameters
    ----------
    kernel : Kernel, str or None, optional
        A kernelkit kernel, a kernel spec (``"gaussian:sigma=2"``), a scikit-learn name
        (``"rbf"``, ``"laplacian"``, ``"poly"``, ``"linear"``, ``"cosine"``,
        ``"precomputed"``) or ``None``: the default kernel of the input's kind (Gaussian with
        the median heuristic for vectors, Tanimoto for molecules, ``Spectrum(k=3)`` for
        sequences, Weisfeiler-Lehman for graphs); see :mod:`kernelkit.kernels._resolve`.
        With ``Precomputed()`` (or ``"precomputed"``) ``fit`` takes the training Gram and
        ``predict`` the Gram rows of new points against the training points.
    lam : float, list of float or "auto", default "auto"
        Regularisation ``lam >= 0`` of the ``(1/n)``-normalised objective; scikit-learn's
        ``alpha`` is ``n * lam`` (its default ``alpha = 1`` is ``lam = 1/n``).  A list of
        positive values is a grid scored by ``cv``.  ``"auto"`` (the default) scores the grid
        ``1e-9 .. 10`` (21 values) by ``cv`` and refines the best value by zooming in
        ``log lam`` on the closed-form criterion (LOO on the Nyström solvers: one 9-value grid
        between the best value's neighbours; refits on folds: the best grid value); ``lam_``
        is the choice.  Cost: the exact solver
        takes one eigendecomposition of the (weighted) Gram for the whole path
        (:mod:`kernelkit.models._ridge_path`; about ``6 n^3`` flops against the ``n^3 / 3`` of
        one Cholesky, then ``O(n^2)`` per value), the Nyström solvers the one-pass statistics
        ``H``, ``r`` and one ``m x m`` eigendecomposition (:mod:`kernelkit.models._nystrom_path`;
        ``O(m^2)`` per value, GCV without a further pass), and ``solver="auto"`` weighs these
        costs (below).  A Dask fit selects by GCV on the one-pass statistics formed on the
        workers (one pass over ``X``; ``cv="loo"``, folds or ``kernel_params`` are refused
        there by name).  A float fits that ``lam`` alone.
    cv : {"loo", "gcv"}, int, splitter, iterable of (train, test) or None, default None
        Criterion of a ``lam`` grid or ``"auto"``: closed-form leave-one-out error
        ``sum_i w_i r_i^2 / sum_i w_i`` with ``r_i = (y_i - f_i) / (1 - H_ii)`` (training
        inputs the kernel cannot tell apart, such as duplicated rows, are left out together
        on the exact solver: ``r_G = (I - H_GG)^{-1} (y_G - f_G)``, see ``loo_groups_``),
        generalised cross-validation ``(1/n)||(I - H) y||^2 / (1 - tr H / n)^2`` (Golub, Heath
        and Wahba 1979), or the weighted mean squared error over refits on the folds of
        ``KFold(cv)`` (an int), of a scikit-learn splitter or of given ``(train, test)`` index
        pairs (exact solver).  ``None``: leave-one-out on the exact solver, GCV on the Nyström
        solvers (whose leave-one-out needs a pass over the data per grid).  Unused for a float
        ``lam`` without ``kernel_params``.
    kernel_params : "auto", list of str or None, default None
        Kernel parameters tuned with ``lam`` on the ``cv`` criterion (``"loo"`` or ``"gcv"``)
        by a coordinate search in log space: each parameter in turn is multiplied by
        ``2^{+-1}`` and ``2^{+-2}`` (one parameter: the grid of its start times 1/4 to 4),
        every trial scored by the best closed-form criterion over the ``lam`` grid (one
        eigendecomposition each).
        ``"auto"`` takes every continuous positive parameter of the kernel (e.g. the Gaussian
        ``sigma``, started at the median heuristic), a list names them (nested as
        ``"k1__sigma"``).
    gamma, degree, coef0 : optional
        scikit-learn's kernel parameters, used only with its kernel names: ``gamma`` of
        ``"rbf"``, ``"laplacian"``, ``"poly"`` (``None``: ``1 / n_features``), ``degree``
        (``None``: 3) and ``coef0`` (``None``: 1) of ``"poly"``.
    solver : {"auto", "exact", "nystrom"}, default "auto"
        ``"exact"``: the Cholesky solve above (``O(n^2)`` memory, ``O(n^3)`` time).
        ``"nystrom"``: ``f`` restricted to ``f(x) = sum_j alpha_j k(x, c_j)`` over
        ``n_centers`` centres, the same objective minimised over that span by
        ``nystrom_method``; with ``n_centers = n`` it equals the exact solver.  ``"auto"``:
        the cheapest by the cost model of :func:`kernelkit.models._falkon.solver_costs`
        (float64 GEMM flops, kernel evaluations included; its constants are options,
        ``docs/configuration.md``; its derivation ``docs/scale.md``, "Cost model"): exact
        when ``m >= n`` or its cost is below the option ``exact_flops``; a precomputed
        kernel and ``lam = 0`` are exact.  ``solver_`` records the choice.  ``"onepass"``
        is a deprecated spelling of ``solver="nystrom", nystrom_method="onepass"``.
    nystrom_method : {"auto", "onepass", "pcg"}, default "auto"
        How the Nyström system is solved, ``K_nm`` streamed in row tiles (kept in memory for
        later passes when it fits a quarter of it, :func:`kernelkit.models._falkon.
        nystrom_system`).  ``"onepass"``: the ``m x m`` normal equations
        ``(K_nm^T W K_nm / n + lam K_mm) alpha = K_nm^T W y / n`` formed in ONE pass and
        solved by Cholesky (:func:`kernelkit.models._falkon.nystrom_ridge_onepass`).
        ``"pcg"``: Falkon (Rudi, Carratino and Rosasco, NeurIPS 2017, Algorithm 1): CG
        preconditioned with ``chol(K_mm)`` and ``chol(T T^T / m + lam I)``, one pass per
        iteration.  Both penalise ``lam alpha^T (K_mm + tau s I) alpha`` with the same jitter
        (:func:`~kernelkit.solvers._nystrom_pcg.centre_jitter`).  ``"auto"``: the cheaper by
        the cost model.  A ``lam`` path (``"auto"`` or a list) runs on the one-pass
        statistics whatever this says; ``nystrom_method_`` records the method.
    n_centers : int, default 1000
        Number ``m`` of Nyström centres; more than ``n_samples`` with a forced Nyström
        solver fits the exact solver, with a warning that says so.
    centers : {"uniform", "kmeans++", "greedy"} or array of points, default "uniform"
        How the centres are chosen among the training points
        (:func:`kernelkit.gram._nystrom.choose_centres`), or the centres themselves (points
        of the input kind, not necessarily training points; ``n_centers`` is then ignored).
        On a Dask array or bag, ``"uniform"`` draws ``n_centers`` rows by position
        (probabilities proportional to the weights; not among distinct points, which would
        take a pass over ``X`` of its own) and keeps the chunks holding them in the
        workers' memory until the fit ends, so that the one-pass solver reads every chunk
        exactly once (memory: those chunks, i.e. all of ``X`` spread over the workers once
        ``n_centers`` is a few times the number of chunks); given points read nothing
        before the passes and keep nothing
        (:func:`kernelkit.gram._distributed.draw_kept_centres`).
    max_iter : int, default 100
        Most CG iterations of ``"pcg"`` (each is one pass over the training rows).
    tol : float, default 1e-6
        Relative residual of the preconditioned system at which CG stops; a
        :class:`~kernelkit.utils._errors.ConvergenceWarning` with the residual reached is
        raised when ``max_iter`` comes first.  The one-pass solver sums the tiles' unmapped
        ``K_b^T W_b K_b`` (2-3x less time per pass) when the relative error this adds to
        its solution is bounded by ``tol``
        (:func:`~kernelkit.solvers._nystrom_normal.unmapped_error_bound`), and maps each tile
        to the Nyström features otherwise.
    random_state : None, int, RandomState or Generator
        Seed of the centre draw.
    verbose : int, bool or callable, default 0
        ``0``: silent; ``1``: progress of the Nyström CG on stderr
        (:mod:`kernelkit.utils._progress`: a bar on a terminal, else ``[KernelRidge] iter
        k/max_iter residual=r`` lines and a final ``done after ...`` line); a callable is
        called as ``verbose(iteration, residual)``.  The direct solvers report nothing.
    block_size : int, optional
        Rows per tile of the streamed products (default: 2 MiB tiles).
    on_error : {"raise", "skip"}, default "raise"
        Training records that do not parse as the input kind (SMILES RDKit rejects): an
        :class:`~kernelkit.data._molecules.InvalidRecordsError` naming them (count and first
        five), or ``"skip"``: left out of the fit, with their targets and weights, named in a
        warning (:func:`kernelkit.data._detect.drop_invalid_records`).

    Attributes
    ----------
    kernel_ : Kernel
        The fitted clone of ``kernel``.
    X_fit_ : torch.Tensor or batch
        The training data prepared by ``kernel_`` (``"nystrom"``: the centres).
    dual_coef_ : ndarray or torch.Tensor
        ``alpha``, shape ``(n_samples,)`` or ``(n_samples, n_outputs)`` (``"nystrom"``: one
        row per centre), in the container of the training input.
    jitter_ : float
        Jitter added to the diagonal by the Cholesky solver (0 unless ``K + n lam I`` was
        numerically singular; ``"nystrom"``: the jitter of ``chol(K_mm)``).
    lam_ : float
        The ``lam`` of the fit: ``lam`` when it is one number, else the chosen one (grid,
        ``"auto"`` or ``kernel_params`` fits).
    cv_results_ : dict
        Grid fits only: scikit-learn's layout (``params``, ``param_lam``,
        ``mean_test_score`` = minus the criterion, ``rank_test_score``; per-fold
        ``split{k}_test_score`` and ``std_test_score`` for an integer ``cv``).
    loo_residuals_ : ndarray or torch.Tensor
        Grid fits only: the leave-one-out residuals ``y_i - f^{(-i)}(x_i)`` at ``lam_``
        (``f^{(-G)}``: the fit without the point's group of ``loo_groups_``).
    loo_groups_ : ndarray of int, shape (n_samples,)
        Exact grid fits only: group label of each training point; points with one label
        have equal feature-space images (``K_ii + K_jj - 2 K_ij`` zero to round-off:
        identical inputs, or e.g. molecules with one fingerprint) and are left out together
        by ``cv="loo"`` (:func:`kernelkit.models._ridge_path.duplicate_groups`).  All labels
        distinct: plain leave-one-out.
    center_indices_ : ndarray of int
        ``"nystrom"`` only: indices of the centres among the training points.
    n_iter_ : int
        CG iterations run (``"pcg"``); 1 for the exact and one-pass solvers (one direct
        solve).
    solver_ : str
        The solver that fitted: ``"exact"`` or ``"nystrom"``.
    nystrom_method_ : str
        ``"nystrom"`` only: ``"onepass"`` or ``"pcg"``.
    n_features_in_ : int
        Number of features (vector input) or of training points (precomputed Gram).

    Notes
    -----
    Objective: with sample weights ``w`` (all 1 when not given),

    .. math:: \min_{f \in H} \frac{1}{\sum_j w_j} \sum_{i=1}^n w_i \|y_i - f(x_i)\|^2
              + \lambda \|f\|_H^2.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelkit import KernelRidge
    >>> from kernelkit.kernels import Gaussian
    >>> X = np.linspace(0, 1, 20)[:, None]
    >>> model = KernelRidge(Gaussian(sigma=0.2)).fit(X, np.sin(6 * X[:, 0]))
    >>> model.predict(X[:2]).shape
    (2,)
    >>> bool(1e-9 <= model.lam_ <= 10)
    True
    """

    _sparse_input: ClassVar[bool] = True

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **KERNEL_CONSTRAINTS,
        "lam": [Interval(Real, 0, None, closed="left"), "array-like", StrOptions({"auto"})],
        "cv": [
            StrOptions({"loo", "gcv"}),
            Interval(Integral, 2, None, closed="left"),
            "cv_object",
            None,
        ],
        "kernel_params": [StrOptions({"auto"}), list, None],
        "gamma": [Interval(Real, 0, None, closed="neither"), None],
        "degree": [Interval(Integral, 1, None, closed="left"), None],
        "coef0": [Interval(Real, 0, None, closed="left"), None],
        "solver": [StrOptions({"auto", "exact", "nystrom", "onepass"})],
        "nystrom_method": [StrOptions({"auto", *NYSTROM_METHODS})],
        "n_centers": [Interval(Integral, 1, None, closed="left")],
        "centers": [StrOptions(set(CENTRE_METHODS)), "array-like"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "random_state": RANDOM_STATE_CONSTRAINT,
        "verbose": VERBOSE_CONSTRAINT,
        "block_size": [Interval(Integral, 1, None, closed="left"), None],
        "on_error": ON_ERROR_CONSTRAINT,
    }

    def __init__(
        self,
        kernel: Kernel | str | None = None,
        lam: Any = "auto",
        *,
        cv: Any = None,
        kernel_params: str | list[str] | None = None,
        gamma: float | None = None,
        degree: int | None = None,
        coef0: float | None = None,
        solver: str = "auto",
        nystrom_method: str = "auto",
        n_centers: int = 1000,
        centers: str = "uniform",
        max_iter: int = 100,
        tol: float = 1e-6,
        random_state: Any = None,
        verbose: int | bool | Callable[[int, float], Any] = 0,
        block_size: int | None = None,
        on_error: str = "raise",
    ):
        self.kernel = kernel
        self.lam = lam
        self.cv = cv
        self.kernel_params = kernel_params
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.solver = solver
        self.nystrom_method = nystrom_method
        self.n_centers = n_centers
        self.centers = centers
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.verbose = verbose
        self.block_size = block_size
        self.on_error = on_error

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> KernelRidge:
        """Fit ``alpha = (K + n lam I)^{-1} y`` (weights: ``n`` becomes ``sum(w)``, see the
        class docstring)."""
        self._validate_params()
        if is_dask_collection(X):
            return self._fit_distributed(X, y, sample_weight)
        X, Xb, y, w = self._fit_samples(X, y, sample_weight)
        Y = self._validate_y_numeric(y, len(Xb), result_dtype(Xb))
        w = unit_mean_weights(w)
        for attr in _FIT_STATE:
            self.__dict__.pop(attr, None)
        self._y_fit, self._sample_weight, self._X_train = Y, w, Xb
        solver, method = requested_solver(self)
        if selects_hyperparameters(self):
            record_method(self, self._selection_solver(Xb, Y, solver))
            if self.solver_ == "exact":
                return fit_selected(self, Xb, Y, w, X)
            return fit_selected_nystrom(self, Xb, Y, w, X)
        lam = self.lam_ = float(self.lam)
        record_method(self, self._choose_solver(Xb, Y, solver, method))
        if self.solver_ != "exact":
            return self._fit_nystrom(Xb, Y, w, X)
        coef, self.jitter_ = weighted_kernel_ridge(lambda: gram(self.kernel_, Xb), Y, w, lam=lam)
        self.dual_coef_ = like_input(coef, X)
        self.n_iter_ = 1
        return self

    def predict(self, X: Any) -> Any:
        """Predictions ``f(x) = sum_i alpha_i k(x_i, x)`` for new data ``X``."""
        check_is_fitted(self, "dual_coef_")
        if is_dask_collection(X):
            return self._predict_distributed(X)
        Xb = self._predict_X(X)
        if hasattr(self, "center_indices_"):
            coef = torch.as_tensor(self.dual_coef_).to(torch.float64)
            pred = nystrom_predict(self.kernel_, Xb, self.X_fit_, coef, block_size=self.block_size)
            return like_input(pred.to(result_dtype(Xb)), X)
        Kt = gram(self.kernel_, Xb, self.X_fit_)
        alpha = torch.as_tensor(self.dual_coef_, device=Kt.device).to(Kt.dtype)
        return like_input(Kt @ alpha, X)

    def predict_interval(self, X: Any, alpha: float = 0.1, method: str = "jackknife+") -> Any:
        r"""Conformal prediction intervals, shape ``(n_samples, 2)`` (lower, upper).

        ``"jackknife+"`` (Barber, Candès, Ramdas and Tibshirani, Ann. Statist. 2021): from the
        closed-form leave-one-out fits ``f^{(-i)}`` (no refit), ``[q^-_alpha{f^{(-i)}(x) -
        R_i}, q^+_alpha{f^{(-i)}(x) + R_i}]``; coverage at least ``1 - 2 alpha`` for
        exchangeable data (their Theorem 1), close to ``1 - alpha`` in practice.  ``"split"``:
        a refit on a random half (``random_state``) at the same ``lam``, ``f(x) +- q``, ``q``
        the ``ceil((1 - alpha)(n_cal + 1))``-th smallest absolute residual on the other half;
        coverage at least ``1 - alpha``.  A Nyström fit (in memory) uses the leave-one-out
        models of the Nyström model with its centres (two passes over the training rows).
        Single output; see :mod:`kernelkit.models._conformal`."""
        check_is_fitted(self, "dual_coef_")
        return ridge_interval(self, X, alpha, method)

    def _selection_solver(self, Xb: Batch, Y: torch.Tensor, solver: str) -> str:
        """The method of a ``lam`` selection: exact, or ``"onepass"`` (the Nyström path from
        the one-pass statistics) when forced or when ``"auto"``'s cost model of the path
        (``select``) picks it; ``kernel_params`` and a Gram input select on the exact path."""
        if self.kernel_params is not None or isinstance(Xb, PrecomputedBatch):
            return "exact"
        n, m = len(Xb), centre_count(self.n_centers, self.centers)
        d, c = _cost_dims(Xb, Y)
        method = fitting_method(
            solver,
            "onepass",
            n,
            m,
            lambda exact: choose_solver(n, m, d=d, c=c, select=True, exact=exact),
        )
        return "exact" if method == "exact" else "onepass"

    def _choose_solver(self, Xb: Batch, Y: torch.Tensor, solver: str, method: str) -> str:
        """The method of ``solver`` and ``nystrom_method``
        (:func:`~kernelkit.models._falkon.fitting_method`); ``"auto"`` is exact on a Gram
        input and for ``lam = 0``."""
        if solver == "auto" and (isinstance(Xb, PrecomputedBatch) or float(self.lam) <= 0):
            return "exact"
        n, m = len(Xb), centre_count(self.n_centers, self.centers)
        d, c = _cost_dims(Xb, Y)
        keep, lam, tol = keeps_block(Xb, m), float(self.lam), float(self.tol)
        return fitting_method(
            solver,
            method,
            n,
            m,
            lambda exact: choose_solver(n, m, d=d, c=c, tol=tol, keep=keep, lam=lam, exact=exact),
        )

    def _fit_nystrom(self, Xb: Batch, Y: torch.Tensor, w: np.ndarray | None, X: Any) -> KernelRidge:
        """Nyström fit on ``n_centers`` centres: one pass or Falkon's PCG (``solver_``)."""
        self._check_nystrom_lam()
        system = self._nystrom_system(Xb, w, float(self.lam))
        return self._solve_nystrom(system, Y, w, result_dtype(Xb), X)

    def _nystrom_system(self, Xb: Batch, w: np.ndarray | None, lam: float) -> NystromSystem:
        """The centres of ``n_centers`` / ``centers`` (drawn by weight among distinct points)
        and the Nyström system on them, prepared for ``lam`` and above."""
        choice = choose_centres(
            self.kernel_,
            Xb,
            self.n_centers,
            self.centers,
            random_state=self.random_state,
            sample_weight=w,
            distinct=True,
        )
        return nystrom_system(
            self.kernel_,
            Xb,
            choice.indices,
            centres=choice.centres,
            block_size=self.block_size,
            lam=lam,
        )

    def _check_nystrom_lam(self) -> None:
        if smallest_lam(self) <= 0:
            raise InputError(
                f"lam: expected lam > 0 with solver={self.solver_!r} (the Nyström solvers "
                f"factorise a system regularised by lam), got {self.lam!r}"
            )

    def _choose_unmapped(self, system: NystromSystem, Y: torch.Tensor, lam: float) -> None:
        """``"auto"``'s PCG choice again once the centres' factor shows that the one-pass
        statistics would be summed unmapped (:func:`~kernelkit.models._falkon.unmapped_onepass`),
        which the cost model prices lower (``unmapped=True``); PCG on a kept ``K_nm`` as
        :func:`~kernelkit.models._falkon.priced_as_kept` says."""
        if not (self.nystrom_method == "auto" and self.nystrom_method_ == "pcg"):
            return
        if not unmapped_onepass(system, lam, float(self.tol)):
            return
        d, c = _cost_dims(system.op.centres, Y)
        self.nystrom_method_ = choose_solver(
            system.n,
            len(system.K_mm),
            d=d,
            c=c,
            tol=float(self.tol),
            exact=False,
            keep=priced_as_kept(system.op),
            lam=lam,
            unmapped=True,
        )

    def _solve_nystrom(
        self, system: NystromSystem, Y: torch.Tensor, w: np.ndarray | None, dtype: Any, X: Any
    ) -> KernelRidge:
        """Run the one-pass solver or Falkon's PCG on a prepared system; store the attributes."""
        lam = float(self.lam)
        self._choose_unmapped(system, Y, lam)
        weights = None if w is None else torch.as_tensor(w, dtype=torch.float64)
        self.X_fit_ = system.op.centres
        self.center_indices_ = system.indices
        if self.nystrom_method_ == "onepass":
            one = nystrom_ridge_onepass(system, Y, lam, sample_weight=weights, tol=self.tol)
            coef = one.coef[:, 0] if Y.ndim == 1 else one.coef
            self.n_iter_ = 1
            self.jitter_ = system.jitter + one.factor.jitter
            self.dual_coef_ = like_input(coef.to(dtype), X)
            return self
        progress = progress_of(self, self.max_iter)
        result = nystrom_ridge(
            system,
            Y,
            lam,
            sample_weight=weights,
            tol=self.tol,
            max_iter=self.max_iter,
            callback=lambda k, rel: progress.update(k, residual=float(rel.max())),
        )
        progress.done(result.cg.iterations, "converged" if result.cg.converged else "max_iter")
        if not result.cg.converged:
            warn_max_iter(self, f"CG relative residual {result.cg.residual:.3g}")
        coef = result.coef[:, 0] if Y.ndim == 1 else result.coef
        self.n_iter_ = result.cg.iterations
        self.jitter_ = system.factor.jitter
        self.dual_coef_ = like_input(coef.to(dtype), X)
        return self

    def _fit_distributed(self, X: Any, y: Any, sample_weight: Any) -> KernelRidge:
        """The Nyström fit of a Dask array or bag ``X`` (:mod:`kernelkit.gram._distributed`),
        each pass one map-reduce over its row blocks on the workers that hold them.

        ``centers="uniform"``: ``n_centers`` rows drawn by position with probabilities
        proportional to the weights
        (:func:`~kernelkit.gram._distributed.draw_kept_centres`: not among distinct points
        as in memory, which would take a pass of its own); only the blocks holding a centre
        are read for the draw and they stay in the workers' memory until the fit ends, so
        the one-pass solver reads every block of ``X`` exactly once and PCG reads the other
        blocks once per pass.  Centres given as points read nothing before the passes.  A
        kernel whose parameters come from the data (the median heuristic, ``gamma="scale"``)
        reads them from the centres.  ``y`` and ``sample_weight`` (``n`` floats each) are
        gathered on the client.
        """
        n = check_distributed_nystrom(self, X, points=True)
        m = centre_count(self.n_centers, self.centers)
        for attr in _FIT_STATE:
            self.__dict__.pop(attr, None)
        selecting = selects_hyperparameters(self)
        _, method = requested_solver(self)
        if selecting:  # the lam path stands on the one-pass statistics
            check_nystrom_selection(self, distributed=True)
            method = "onepass"
        elif method == "auto":
            d, c = _cost_dims(X, y)
            method = choose_solver(
                n, m, d=d, c=c, tol=float(self.tol), exact=False, lam=float(self.lam)
            )
        record_method(self, method)
        self._check_nystrom_lam()
        if not selecting:
            self.lam_ = float(self.lam)
        w = check_sample_weight(None if sample_weight is None else np.asarray(sample_weight), n)
        w = unit_mean_weights(w)
        index, centres, blocks = self._distributed_centres(X, m, w)
        dtype = result_dtype(centres)
        Y = self._validate_y_numeric(np.asarray(y), n, dtype)
        system = distributed_nystrom_system(
            self.kernel_, blocks, len(centres), centres=centres, indices=index,
            lam=smallest_lam(self),
        )  # fmt: skip
        if selecting:
            return fit_selected_nystrom(self, None, Y, w, None, system=system)
        self._solve_nystrom(system, Y, w, dtype, None)
        return self

    def _predict_distributed(self, X: Any) -> Any:
        """Predictions of a Dask array or bag, as a Dask array with its row chunks."""
        coef = torch.as_tensor(self.dual_coef_).to(torch.float64)
        vector = coef.ndim == 1
        dtype = np.dtype(str(result_dtype(self.X_fit_)).replace("torch.", ""))

        def block_predictions(block: Any) -> np.ndarray:
            Xb = self._predict_X(block)
            pred = nystrom_predict(self.kernel_, Xb, self.X_fit_, coef, block_size=self.block_size)
            return pred.reshape(len(Xb), -1).numpy()

        pred = map_row_blocks(block_predictions, X, 1 if vector else coef.shape[1], dtype)
        return pred[:, 0] if vector else pred

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Coefficient of determination R^2 of the predictions (scikit-learn's ``r2_score``)."""
        pred = to_numpy(self.predict(X))
        return float(r2_score(to_numpy(y), pred, sample_weight=sample_weight))

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = True
        return tags


__all__ = ["KernelRidge"]
