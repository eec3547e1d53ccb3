r"""Kernel logistic regression by IRLS (course part 1, section 3.3)."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from kernelkit.estimators._base import (
    ON_ERROR_CONSTRAINT,
    RANDOM_STATE_CONSTRAINT,
    check_distributed_nystrom,
    progress_of,
    warn_max_iter,
)
from kernelkit.estimators._classes import (
    MARGIN_CONSTRAINTS,
    MarginClassifierMixin,
    signed_targets,
    squeeze_binary,
)
from kernelkit.estimators._solver_choice import record_method, requested_solver
from kernelkit.gram import gram
from kernelkit.gram._distributed import (
    is_dask_collection,
    map_row_blocks,
)
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
    nystrom_system,
)
from kernelkit.models._falkon_distributed import distributed_nystrom_system
from kernelkit.models._falkon_logistic import (
    NystromLogisticResult,
    nystrom_logistic_fit,
    nystrom_logistic_onepass,
)
from kernelkit.models._logistic_exact import KLRResult, exact_lam_path, kernel_logistic_regression
from kernelkit.models._logistic_path import (
    LogisticPath,
    holdout_rows,
    nystrom_logistic_auto,
    relative_grid,
)
from kernelkit.utils._config import deprecated_options, options
from kernelkit.utils._constraints import Interval, StrOptions
from kernelkit.utils._progress import Progress, VerboseLike
from kernelkit.utils._validation import like_input

__getattr__ = deprecated_options(__name__, {"NEWTON_STEPS": "logistic_newton_steps"})
"""``NEWTON_STEPS`` of the previous release, now the option ``logistic_newton_steps``
(``kernelkit.get_config``): importable with a ``FutureWarning`` for one release."""


class KernelLogisticRegression(MarginClassifierMixin, ClassifierMixin, BaseEstimator):
    r"""Kernel logistic regression, ``(1/n) sum loss + lam ||f||^2``.

    Solves, for labels ``y_i in {-1, +1}`` (course part 1, section 3.3),

    .. math:: \min_{f \in H} \frac1n \sum_{i=1}^n \log\big(1 + e^{-y_i f(x_i)}\big)
              + \lambda \|f\|_H^2, \qquad f(x) = \sum_i \alpha_i k(x_i, x),

    with no intercept, by IRLS: damped Newton steps, each a weighted kernel ridge regression
    (:func:`kernel_logistic_regression`).  ``P(y = classes_[1] | x) = sigma(f(x))``.

    ``lam`` has the package's meaning (the README's ``(1/n) sum loss + lam ||f||^2``, as in
    :class:`~kernelkit.estimators.KernelRidge` and
    :class:`~kernelkit.estimators.BiasFreeSVC`; the course's KLR slide writes ``lam / 2``).
    scikit-learn's ``LogisticRegression(C, fit_intercept=False)`` minimises
    ``C sum_i log(1 + exp(-y_i w^T x_i)) + ||w||^2 / 2``, the same problem times ``2 n C``
    with **``C = 1 / (2 n lam)``**: with ``kernel="linear"`` the weights ``w = X^T alpha`` and
    the probabilities equal scikit-learn's.

    .. versionchanged:: 0.2
        ``lam`` used to weight ``(lam / 2) ||f||^2`` (scikit-learn's ``C = 1 / (n lam)``).
        For the solution of an old ``lam``, pass ``lam / 2``.

    More than two classes: one-vs-rest, one binary KLR per class against the rest (each an
    IRLS run on the same Gram), predicted class the largest ``f_c(x)``, probabilities
    ``sigma(f_c(x))`` normalised to sum to one (scikit-learn's ``OneVsRestClassifier``).

    Parameters
    ----------
    kernel : Kernel, str or None, optional
        A kernelkit kernel, a kernel spec, a scikit-learn name (``"rbf"``, ``"linear"``,
        ``"precomputed"``...) or ``None``: the default kernel of the input's kind (see
        :mod:`kernelkit.kernels._resolve`).
    lam : float or "auto", default "auto"
        Regularisation ``lam > 0`` of ``lam ||f||^2``; scikit-learn's ``C = 1 / (2 n lam)``.
        ``"auto"`` (the default; formerly ``1e-3``): chosen on held-out data
        (:mod:`kernelkit.models._logistic_path`): a random 20% of the rows is held out, the
        objective on the others is followed down the grid ``1e-1, 10^-1.5, ..., 1e-9`` by
        one warm-started Newton step per value (the homotopy of logistic Falkon, Meanti et
        al., NeurIPS 2020), ``lam_`` is the largest value whose held-out logistic loss is
        within one standard error of the lowest (the path stops one value past the last
        significant fall), and ``lam_`` is fitted on every row from that iterate.  ``lam_``
        and ``cv_results_`` record it.  The grid is relative to the kernel's scale
        ``mean k(x, x)`` (1 for the Gaussian).
    solver : {"auto", "exact", "nystrom"}, default "auto"
        ``"exact"``: IRLS on the full ``n x n`` Gram matrix (one Cholesky of
        ``W^{1/2} K W^{1/2} + 2 n lam I`` per Newton step).  ``"nystrom"``: the same
        objective over ``f = sum_j alpha_j k(c_j, .)`` on the ``n_centers`` ``centers``, each
        Newton step a weighted Nyström ridge problem solved by ``nystrom_method``; with
        ``n_centers = n`` it solves the exact problem.  ``"auto"`` picks by the cost model of
        :func:`kernelkit.models._falkon.solver_costs` with ``s = 8`` Newton steps (exact when
        ``m >= n`` or its cost is small); ``solver_`` records the choice.  A Dask array or
        bag ``X`` is fitted on the workers that hold it by the Nyström solver on uniform
        centres drawn by row position (the chunks holding one read once and kept for the
        passes) or on centres given as points, each pass over ``K_nm`` one map-reduce;
        ``solver="exact"`` or other centre methods refuse it with a named error.
        ``"onepass"`` is a deprecated spelling of ``solver="nystrom",
        nystrom_method="onepass"``.
    nystrom_method : {"auto", "onepass", "pcg"}, default "auto"
        ``"onepass"``: each Newton system formed in ONE weighted pass over the data and
        solved by Cholesky (:func:`kernelkit.models._falkon_logistic.nystrom_logistic_onepass`);
        ``"pcg"``: solved by Falkon's preconditioned CG (Meanti et al., NeurIPS 2020;
        :func:`kernelkit.models._falkon_logistic.nystrom_logistic_fit`), ``K_nm`` computed
        once and kept for every later pass when it fits a quarter of the available memory
        (:func:`kernelkit.models._falkon.nystrom_system`); ``"auto"``: the cheaper by the
        cost model.  ``nystrom_method_`` records the method.
    tol : float, default 1e-6
        ``"exact"``: stop when the largest entry of ``grad J(alpha)`` is at most ``tol``;
        ``"nystrom"``: when every Newton decrement ``-grad^T delta`` is at
        most ``tol``.  Near the minimum the decrement is about twice ``J - min J``
        (Boyd and Vandenberghe, *Convex Optimization*, section 9.5.1), so the default stops
        orders of magnitude below the sampling error of ``J`` itself, about ``1 / sqrt(n)``
        (optimisation error below estimation error: Bottou and Bousquet, "The tradeoffs of
        large scale learning", NeurIPS 2007).
    max_iter : int, default 100
        Most Newton steps per binary problem (``ConvergenceWarning`` when reached).
    n_centers : int, default 1000
        Nyström solvers only: number ``m`` of centres; more than the number of samples with
        a forced Nyström solver fits the exact solver, with a warning that says so.
    centers : {"uniform", "kmeans++", "greedy"} or array of points, default "uniform"
        Nyström solvers only: how the centres are chosen among the training points
        (:func:`kernelkit.gram._nystrom.choose_centres`), or the centres themselves (points
        of the input kind; ``n_centers`` is then ignored).
    random_state : None, int, RandomState or Generator
        Seed of the centre draw (Nyström solvers) and of the held-out rows of ``lam="auto"``.
    gamma, degree, coef0 : optional
        scikit-learn's kernel parameters, used only with its kernel names.
    verbose : int, bool or callable, default 0
        ``0``: silent; ``1``: progress on stderr (:mod:`kernelkit.utils._progress`: a bar on a
        terminal, else ``[KernelLogisticRegression] iter k/max_iter objective=J`` lines per
        Newton step of the exact solver and a final ``done after ...`` line); a callable
        receives ``(step, objective)``.
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
    n_iter_ : int
        Newton steps, the most of any binary problem (``lam="auto"``: of the fit at
        ``lam_``, the path's one step per ``lam`` not counted).
    objectives_ : list of list of float
        ``J`` along the iterates of each binary problem (non-increasing).
    gradient_norm_ : ndarray
        ``max_i |grad J(alpha)_i|`` at the solution of each binary problem (``"exact"``).
    center_indices_ : ndarray of int
        ``"nystrom"`` only: indices of the centres among the training points (``X_fit_``
        then holds the centres and ``dual_coef_`` their coefficients).
    n_cg_ : int
        ``nystrom_method_ = "pcg"`` only: CG iterations over all Newton steps.
    solver_ : str
        The solver that fitted: ``"exact"`` or ``"nystrom"``.
    nystrom_method_ : str
        ``"nystrom"`` only: ``"onepass"`` or ``"pcg"``.
    lam_ : float
        The ``lam`` of the fit (``lam``, or the one ``"auto"`` chose).
    cv_results_ : dict
        ``lam="auto"`` only: the path in scikit-learn's layout (``params``, ``param_lam``,
        ``mean_test_score`` = minus the held-out log loss, ``rank_test_score``,
        ``sem_test_score`` its standard error, ``mean_test_error`` the held-out
        misclassification rate).

    Notes
    -----
    Objective: for labels ``y_i in {-1, +1}`` (one problem per class against the rest
    with more than two classes),

    .. math:: \min_{f \in H} \frac{1}{n} \sum_{i=1}^n \log\big(1 + e^{-y_i f(x_i)}\big)
              + \lambda \|f\|_H^2.
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **MARGIN_CONSTRAINTS,
        "lam": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "solver": [StrOptions({"auto", "exact", "nystrom", "onepass"})],
        "nystrom_method": [StrOptions({"auto", *NYSTROM_METHODS})],
        "tol": [Interval(Real, 0, None, closed="left")],
        "n_centers": [Interval(Integral, 1, None, closed="left")],
        "centers": [StrOptions(set(CENTRE_METHODS)), "array-like"],
        "random_state": RANDOM_STATE_CONSTRAINT,
        "on_error": ON_ERROR_CONSTRAINT,
    }

    def __init__(
        self,
        kernel: Kernel | str | None = None,
        lam: float | str = "auto",
        *,
        solver: str = "auto",
        nystrom_method: str = "auto",
        tol: float = 1e-6,
        max_iter: int = 100,
        n_centers: int = 1000,
        centers: str | Any = "uniform",
        random_state: Any = None,
        gamma: float | None = None,
        degree: int | None = None,
        coef0: float | None = None,
        verbose: VerboseLike = 0,
        on_error: str = "raise",
    ):
        self.kernel = kernel
        self.lam = lam
        self.solver = solver
        self.nystrom_method = nystrom_method
        self.tol = tol
        self.max_iter = max_iter
        self.n_centers = n_centers
        self.centers = centers
        self.random_state = random_state
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.verbose = verbose
        self.on_error = on_error

    def fit(self, X: Any, y: Any) -> KernelLogisticRegression:
        """Fit one binary KLR (two classes) or one per class (one-vs-rest); a Dask array or
        bag ``X`` is fitted on the workers that hold it (a Nyström solver, uniform centres)."""
        if is_dask_collection(X):
            return self._fit_distributed(X, y)
        X, y, _ = self._drop_invalid(X, y, None)
        Xb, Y = self._fit_targets(X, y)
        for name in ("center_indices_", "n_cg_", "gradient_norm_", "lam_", "cv_results_"):
            self.__dict__.pop(name, None)
        if not self._auto:
            self.lam_ = float(self.lam)
        record_method(self, self._choose_solver(Xb, Y, *requested_solver(self)))
        progress = progress_of(self, self.max_iter)
        if self.solver_ != "exact":
            return self._fit_nystrom(Xb, y, X, progress)
        results = self._fit_exact(Xb, Y, progress)
        coef = torch.stack([res.coef for res in results], dim=1)
        self.dual_coef_ = like_input(squeeze_binary(coef), X)
        self.n_iter_ = max(int(res.iterations) for res in results)
        self.objectives_ = [res.objectives for res in results]
        gradients = torch.tensor([res.gradient for res in results], dtype=torch.float64)
        self.gradient_norm_ = like_input(gradients, X)
        converged = all(res.converged for res in results)
        progress.done(self.n_iter_, "converged" if converged else "max_iter")
        if not converged:
            warn_max_iter(self, f"gradient {float(gradients.max()):.3g}")
        return self

    def _choose_solver(self, Xb: Batch, Y: torch.Tensor, solver: str, method: str) -> str:
        """The method of ``solver`` and ``nystrom_method``
        (:func:`~kernelkit.models._falkon.fitting_method`, the cost model with 8 Newton
        steps); ``"auto"`` is exact on a Gram input."""
        if solver == "auto" and isinstance(Xb, PrecomputedBatch):
            return "exact"
        n, m = len(Xb), centre_count(self.n_centers, self.centers)
        d = Xb.shape[1] if isinstance(Xb, torch.Tensor) and Xb.ndim == 2 else 0
        keep, steps = keeps_block(Xb, m), options().logistic_newton_steps
        return fitting_method(
            solver,
            method,
            n,
            m,
            lambda exact: choose_solver(
                n, m, d=d, c=Y.shape[1], newton_steps=steps, keep=keep, exact=exact
            ),
        )

    def _fit_nystrom(
        self, Xb: Batch, y: Any, X: Any, progress: Progress
    ) -> KernelLogisticRegression:
        """Newton steps on the ``centers``: one weighted pass per step (``"onepass"``) or
        Falkon's PCG (``"pcg"``)."""
        choice = choose_centres(
            self.kernel_,
            Xb,
            self.n_centers,
            self.centers,
            random_state=self.random_state,
            distinct=True,
        )
        system = nystrom_system(
            self.kernel_, Xb, choice.indices, centres=choice.centres, lam=self._system_lam()
        )
        return self._solve_nystrom(system, y, X, progress)

    def _system_lam(self) -> float:
        """The smallest ridge the Newton systems are solved for: ``lam`` (``"auto"``: the
        grid's smallest) in the one-pass feature coordinates, ``2 lam`` for PCG (the Hessian
        of ``lam ||f||^2``)."""
        lam = float(relative_grid()[-1]) if self._auto else float(self.lam)
        return lam * (1 if self.nystrom_method_ == "onepass" else 2)

    @property
    def _auto(self) -> bool:
        return isinstance(self.lam, str)

    def _record_path(self, path: LogisticPath) -> None:
        self.lam_ = path.lam
        self.cv_results_ = path.cv_results()

    def _fit_distributed(self, X: Any, y: Any) -> KernelLogisticRegression:
        """The Nyström fit of a Dask array or bag ``X`` (:mod:`kernelkit.gram._distributed`).

        ``centers="uniform"``: ``n_centers`` rows drawn by position, as
        :class:`~kernelkit.KernelRidge`'s Dask fit draws them
        (:func:`~kernelkit.gram._distributed.draw_kept_centres`: not among distinct points as
        in memory, which would take a pass of its own); only the blocks holding a centre are
        read for the draw and they stay in the workers' memory until the fit ends, so no
        block is read twice for the draw.  Centres given as points read nothing before the
        passes.  The labels (``n`` values) are gathered on the client, and every
        pass over ``K_nm`` (one per Newton step for ``"onepass"``, one per gradient and CG
        iteration for ``"pcg"``) is one map-reduce over the row blocks on the workers
        that hold them (:class:`~kernelkit.gram._distributed_nystrom.DistributedNystromOperator`,
        the pass of :class:`~kernelkit.KernelRidge`'s Dask fit); ``"auto"`` picks the
        cheaper Nyström solver by :func:`~kernelkit.models._falkon.choose_solver`.
        """
        self._validate_params()
        n = check_distributed_nystrom(self, X, points=True)
        for name in ("center_indices_", "n_cg_", "gradient_norm_", "lam_", "cv_results_"):
            self.__dict__.pop(name, None)
        if not self._auto:
            self.lam_ = float(self.lam)
        index, centres, blocks = self._distributed_centres(X, int(self.n_centers))
        m = len(centres)
        if y is None:
            self._check_y_length(y, n)
        y = np.asarray(y)  # the n labels (a Dask array is computed): the client's Newton state
        self.classes_, Y = signed_targets(y)
        self._check_y_length(Y, n)
        _, method = requested_solver(self)
        if method == "auto":
            d = centres.shape[1] if isinstance(centres, torch.Tensor) and centres.ndim == 2 else 0
            steps = options().logistic_newton_steps
            method = choose_solver(n, m, d=d, c=Y.shape[1], newton_steps=steps, exact=False)
        record_method(self, method)
        system = distributed_nystrom_system(
            self.kernel_, blocks, m, centres=centres, indices=index, lam=self._system_lam()
        )
        return self._solve_nystrom(system, y, None, progress_of(self, self.max_iter))

    def _solve_nystrom(
        self, system: NystromSystem, y: Any, X: Any, progress: Progress
    ) -> KernelLogisticRegression:
        """Run the one-pass Newton or Newton-PCG on a prepared system; store the attributes."""
        progress.stage(f"Newton steps on {system.op.shape[1]} centres ({self.nystrom_method_})")
        res: NystromLogisticResult
        if self._auto:
            held_out = holdout_rows(system.op.shape[0], self.random_state)
            path, res = nystrom_logistic_auto(
                system,
                y,
                held_out,
                solver=str(self.nystrom_method_),
                max_newton=self.max_iter,
                newton_tol=self.tol,
            )
            self._record_path(path)
        elif self.nystrom_method_ == "onepass":
            res = nystrom_logistic_onepass(
                system, y, float(self.lam), max_newton=self.max_iter, newton_tol=self.tol
            )
        else:
            res = nystrom_logistic_fit(
                self.kernel_,
                None,
                y,
                system.indices,
                float(self.lam),
                max_newton=self.max_iter,
                newton_tol=self.tol,
                system=system,
                sampled=True,
            )
        self.X_fit_ = res.centres
        self.center_indices_ = res.indices
        self.dual_coef_ = like_input(squeeze_binary(res.coef), X)
        self.n_iter_ = int(res.n_newton)
        if self.nystrom_method_ == "pcg":
            self.n_cg_ = res.n_cg
        self.objectives_ = [[float(J)] for J in np.atleast_1d(res.objective)]
        progress.update(res.n_newton, objective=float(np.max(res.objective)))
        progress.done(res.n_newton, "converged" if res.converged else "max_iter")
        if not res.converged:
            warn_max_iter(self, f"Newton decrement above tol={self.tol:g}")
        return self

    def _fit_exact(self, Xb: Batch, Y: torch.Tensor, progress: Progress) -> list[KLRResult]:
        """IRLS on the full Gram matrix, one run per column of the +-1 targets ``Y``."""
        K = gram(self.kernel_, Xb).to(torch.float64)
        Y = Y.to(K.device)
        start: torch.Tensor | None = None
        if self._auto:  # the held-out path, then every row from its iterate
            path = exact_lam_path(K, Y, holdout_rows(len(K), self.random_state))
            self._record_path(path)
            start = path.coef
        lam = self.lam_
        results = []
        for j in range(Y.shape[1]):
            if Y.shape[1] > 1:
                progress.stage(f"class {j + 1}/{Y.shape[1]} against the rest")
            results.append(
                kernel_logistic_regression(
                    K,
                    Y[:, j],
                    lam=lam,
                    tol=self.tol,
                    max_iter=self.max_iter,
                    progress=progress,
                    coef0=None if start is None else start[:, j],
                )
            )
        return results

    def _scores(self, X: Any) -> torch.Tensor:
        check_is_fitted(self, "dual_coef_")
        if hasattr(self, "center_indices_"):  # Nyström: in row tiles, never test x m whole
            coef = torch.as_tensor(self.dual_coef_).to(torch.float64)
            return nystrom_predict(self.kernel_, self._predict_X(X), self.X_fit_, coef)
        Kt = gram(self.kernel_, self._predict_X(X), self.X_fit_).to(torch.float64)
        return Kt @ torch.as_tensor(self.dual_coef_, device=Kt.device).to(torch.float64)

    def _on_row_blocks(self, X: Any, method: str) -> Any:
        """``method`` of a Dask array or bag, as a Dask array with its row chunks, computed
        on the workers holding the blocks (:func:`~kernelkit.gram._distributed.map_row_blocks`)."""
        n_classes = len(self.classes_)
        binary = n_classes == 2 and method != "predict_proba"
        columns = 1 if binary or method == "predict" else n_classes
        dtype = self.classes_.dtype if method == "predict" else np.float64

        def block_outputs(block: Any) -> np.ndarray:
            return np.asarray(getattr(self, method)(block)).reshape(len(block), columns)

        out = map_row_blocks(block_outputs, X, columns, dtype)
        return out[:, 0] if columns == 1 else out

    def decision_function(self, X: Any) -> Any:
        """``f(x)``: shape (m,) for two classes (positive means ``classes_[1]``), else
        (m, n_classes) one-vs-rest; a Dask array for a Dask ``X`` (computed on its workers)."""
        if is_dask_collection(X):
            return self._on_row_blocks(X, "decision_function")
        return super().decision_function(X)

    def predict(self, X: Any) -> Any:
        """Predicted class labels (the largest decision value); a Dask array for a Dask ``X``."""
        if is_dask_collection(X):
            return self._on_row_blocks(X, "predict")
        return super().predict(X)

    def predict_proba(self, X: Any) -> Any:
        """Class probabilities, shape (m, n_classes): ``[1 - sigma(f), sigma(f)]`` for two
        classes, normalised ``sigma(f_c)`` one-vs-rest; a Dask array for a Dask ``X``."""
        if is_dask_collection(X):
            return self._on_row_blocks(X, "predict_proba")
        s = self._scores(X)
        if s.ndim == 1:
            p = torch.sigmoid(s)
            return like_input(torch.stack([1 - p, p], dim=1), X)
        p = torch.sigmoid(s)
        return like_input(p / p.sum(1, keepdim=True), X)

    def predict_log_proba(self, X: Any) -> Any:
        """Logarithm of :meth:`predict_proba`."""
        proba = self.predict_proba(X)
        if isinstance(proba, torch.Tensor):
            return proba.log()
        if is_dask_collection(proba):
            return np.log(proba)
        return torch.as_tensor(proba).log().numpy()


__all__ = ["KernelLogisticRegression"]
