"""The estimator side of the loss seam: one fit / predict for every ERM regressor.

An estimator of a loss of :mod:`kernelkit.models._losses` subclasses
:class:`KernelERMRegressor` and defines ``_loss()`` (its loss object), its parameters and its
docstring; validation, the kernel, the solvers (exact / Nyström, ``solver="auto"``), Dask
input, sample weights, ``lam="auto"``, ``on_error`` and progress come from here and from
:mod:`kernelkit.models._erm`.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
import torch
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted, column_or_1d

from kernelkit.estimators._base import (
    KERNEL_CONSTRAINTS,
    RANDOM_STATE_CONSTRAINT,
    VERBOSE_CONSTRAINT,
    KernelEstimatorMixin,
    check_distributed_nystrom,
    check_sample_weight,
    progress_of,
    to_numpy,
    warn_max_iter,
)
from kernelkit.gram._distributed import is_dask_collection, map_row_blocks
from kernelkit.gram._nystrom import CENTRE_METHODS, centre_count
from kernelkit.models._erm import (
    ErmOptions,
    KernelErmModel,
    erm_solver,
    fit_kernel_erm,
    fit_kernel_erm_distributed,
)
from kernelkit.models._falkon import nystrom_predict
from kernelkit.utils._constraints import Interval, StrOptions
from kernelkit.utils._errors import InputError
from kernelkit.utils._validation import like_input

ERM_CONSTRAINTS: dict[str, list[Any]] = {
    **KERNEL_CONSTRAINTS,
    "lam": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
    "epsilon": [Interval(Real, 0, None, closed="left")],
    "solver": [StrOptions({"auto", "exact", "nystrom"})],
    "n_centers": [Interval(Integral, 1, None, closed="left")],
    "centers": [StrOptions(set(CENTRE_METHODS)), "array-like"],
    "random_state": RANDOM_STATE_CONSTRAINT,
    "tol": [Interval(Real, 0, None, closed="neither")],
    "gamma": [Interval(Real, 0, None, closed="neither"), None],
    "degree": [Interval(Integral, 1, None, closed="left"), None],
    "coef0": [Interval(Real, 0, None, closed="left"), None],
    "on_error": [StrOptions({"raise", "skip"})],
    "verbose": VERBOSE_CONSTRAINT,
}
"""Constraints shared by the ERM regressors (each adds ``max_iter``)."""


class KernelERMRegressor(KernelEstimatorMixin, RegressorMixin, BaseEstimator):
    """Fit and predict of a regressor ``f(x) = sum_j alpha_j k(x, c_j) + b`` minimising the
    ERM of ``_loss()`` (:mod:`kernelkit.models._erm`); subclasses set the parameters."""

    lam: Any
    epsilon: float
    solver: str
    n_centers: int
    centers: Any
    random_state: Any
    tol: float
    max_iter: int

    _sparse_input: ClassVar[bool] = True

    def _loss(self) -> Any:
        raise NotImplementedError

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> Any:
        """Fit on training data ``X`` and real targets ``y`` (``sample_weight``: integer
        weights fit the model of repeated rows); a Dask array or bag ``X`` is fitted on the
        Nyström features its workers compute."""
        self._validate_params()
        for name in ("center_indices_", "cv_results_"):
            self.__dict__.pop(name, None)
        if is_dask_collection(X):
            return self._fit_distributed(X, y, sample_weight)
        X, Xb, y, w = self._fit_samples(X, y, sample_weight)
        m = centre_count(self.n_centers, self.centers)
        options = self._options(w)
        model = fit_kernel_erm(
            self._loss(), self.kernel_, Xb, self._targets(y, len(Xb)), self.lam, options,
            solver=erm_solver(str(self.solver), Xb, m), n_centers=self.n_centers,
            centers=self.centers,
        )  # fmt: skip
        return self._store(model, X, options)

    def _targets(self, y: Any, n: int) -> torch.Tensor:
        """Real targets as a float64 vector of length ``n``."""
        t = self._validate_y_numeric(y, n, torch.float64)
        try:
            return torch.as_tensor(column_or_1d(t.cpu().numpy(), warn=True))
        except ValueError as exc:
            raise InputError(
                f"y: expected one target per sample, got shape {tuple(t.shape)}"
            ) from exc

    def _options(self, w: np.ndarray | None) -> ErmOptions:
        """The fit's settings for the back-end, with a progress report for ``verbose``."""
        progress = progress_of(self, self.max_iter if self.max_iter > 0 else None)
        return ErmOptions(w, self.random_state, float(self.tol), int(self.max_iter), progress)

    def _fit_distributed(self, X: Any, y: Any, sample_weight: Any) -> Any:
        """The Nyström fit of a Dask array or bag: centres drawn by row position (or given
        as points) on the client, features on the workers, the solver on the client."""
        n = check_distributed_nystrom(self, X, points=True)
        w = check_sample_weight(sample_weight, n)
        index, centres, blocks = self._distributed_centres(X, int(self.n_centers), w)
        options = self._options(w)
        y = self._targets(np.asarray(y), n)
        model = fit_kernel_erm_distributed(
            self._loss(), self.kernel_, blocks, centres, index, y, self.lam, options
        )
        return self._store(model, None, options)

    def _store(self, model: KernelErmModel, X: Any, options: ErmOptions) -> Any:
        """The fitted attributes of ``model``; ``ConvergenceWarning`` when it stopped at
        ``max_iter``."""
        self.X_fit_ = model.centres
        self.dual_coef_ = like_input(model.coef, X)
        self.intercept_ = float(model.intercept)
        self.n_iter_ = int(model.n_iter)
        self.lam_ = float(model.lam)
        self.solver_ = model.solver
        if model.solver == "nystrom":
            self.center_indices_ = model.indices
        if model.cv_results is not None:
            self.cv_results_ = model.cv_results
        options.progress.done(self.n_iter_, "converged" if model.converged else "max_iter")
        if not model.converged:
            warn_max_iter(self)
        return self

    def predict(self, X: Any) -> Any:
        """``f(x) + b`` for the rows of ``X``; a Dask array for a Dask ``X`` (computed on
        its workers)."""
        check_is_fitted(self, "dual_coef_")
        if is_dask_collection(X):
            return map_row_blocks(
                lambda block: to_numpy(self.predict(block)).reshape(-1, 1), X, 1, np.float64
            )[:, 0]
        coef = torch.as_tensor(self.dual_coef_).to(torch.float64)
        f = nystrom_predict(self.kernel_, self._predict_X(X), self.X_fit_, coef)
        return like_input(f + self.intercept_, X)


__all__ = ["ERM_CONSTRAINTS", "KernelERMRegressor"]
