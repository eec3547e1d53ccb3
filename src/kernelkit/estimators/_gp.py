"""Gaussian-process regression on any kernelkit kernel (:mod:`kernelkit.models._gp`)."""

from __future__ import annotations

import math
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
    KernelEstimatorMixin,
    result_dtype,
    to_numpy,
)
from kernelkit.estimators._gp_tasks import fit_tasks, is_auto, point_noise, predict_tasks
from kernelkit.estimators._solver_choice import announce_solver
from kernelkit.gram import gram
from kernelkit.gram._centres import take
from kernelkit.gram._nystrom import CENTRE_METHODS, choose_centres
from kernelkit.kernels import Kernel
from kernelkit.kernels._base import Batch, ScaledKernel
from kernelkit.models._conformal import conformal_interval
from kernelkit.models._falkon import choose_solver, forced_solver
from kernelkit.models._gp import GPFit, gp_fit, gp_predict
from kernelkit.models._gp_eigen import spectral_objective
from kernelkit.models._gp_nystrom import (
    SparseGPPosterior,
    StreamedBound,
    row_tiles,
    sparse_gp_bound,
    sparse_gp_posterior,
    sparse_gp_predict,
    sparse_gp_statistics,
)
from kernelkit.models._hyperparams import continuous_params, differentiable_params, kernel_with
from kernelkit.solvers import cholesky_factor, lbfgs
from kernelkit.utils._constraints import Interval, StrOptions
from kernelkit.utils._errors import InputError, NotPSDError
from kernelkit.utils._seeding import check_random_state
from kernelkit.utils._validation import like_input

RESTART_SPREAD = math.log(100.0)
"""Random restarts draw each log-hyper-parameter uniformly within this of its start."""

MAX_ITER = 200
"""L-BFGS iterations per start."""

__all__ = ["GaussianProcessRegressor"]


class GaussianProcessRegressor(KernelEstimatorMixin, RegressorMixin, BaseEstimator):
    r"""Exact Gaussian-process regression with hyper-parameters learned by marginal likelihood.

    Model (Rasmussen and Williams 2006, section 2.2): ``y = f(x) + eps``,
    ``f ~ GP(0, amplitude * k)``, ``eps ~ N(0, noise)``; the posterior mean and covariance
    and the log marginal likelihood come from one Cholesky factorisation of
    ``amplitude K + noise I`` (Algorithm 2.1; :mod:`kernelkit.models._gp`).  With
    ``optimizer="lbfgs"`` the amplitude, the noise (when ``"auto"``) and every continuous
    parameter of the kernel (e.g. a Gaussian ``sigma``, a Matérn length scale) maximise the
    log marginal likelihood by L-BFGS in log space, gradients by autograd, on any input kind
    whose kernel computes with tensors (vectors, fingerprints, strings, graphs, a Gram).
    The posterior mean equals kernel ridge regression with ``n lam = noise / amplitude``.

    With ``solver="nystrom"`` the GP is Titsias's sparse variational GP ("Variational
    learning of inducing variables in sparse Gaussian processes", AISTATS 2009) on
    ``n_centers`` centres chosen among the training points: the hyper-parameters maximise
    his lower bound of the log marginal likelihood, the mean is Nyström kernel ridge
    regression with ``n lam = noise / amplitude``, and the variance
    ``a (k(x, x) - phi^T phi) + noise phi^T (Phi^T Phi + noise / a I)^{-1} phi`` with the
    Nyström features ``phi = L^{-1} k_m(x)`` (:mod:`kernelkit.models._gp_nystrom`).  It needs
    one pass over the data per evaluation of the bound and ``O(n m + m^2)`` memory; with
    every training point a centre it is the exact GP.

    scikit-learn's ``GaussianProcessRegressor(kernel=ConstantKernel(a) * RBF(sigma),
    alpha=noise)`` is this model with ``Gaussian(sigma)``, ``amplitude=a``, ``noise=noise``;
    its ``... + WhiteKernel(noise)`` has the same likelihood and mean, and a predictive
    standard deviation that includes the noise (``sqrt(std**2 + noise)`` here).

    Parameters
    ----------
    kernel : Kernel, str or None
        As for :class:`~kernelkit.estimators.KernelRidge` (``None``: Gaussian with the median
        heuristic for vectors, Tanimoto for molecules ...).
    noise : "auto", float or array of shape (n_samples,), default "auto"
        Noise variance ``s2 > 0``: learned (``"auto"``, started at ``0.1 * amplitude``) or
        fixed; an array gives each training point its own variance (heteroscedastic noise,
        ``K_y = a K + diag(noise)``; scikit-learn's ``alpha`` array; exact solver).
    amplitude : "auto" or float, default "auto"
        Signal variance ``a > 0`` multiplying the kernel: learned (``"auto"``, started at the
        variance of the (normalised) targets, 1 when they are constant) or fixed.
    optimizer : {"lbfgs"} or None, default "lbfgs"
        ``None`` keeps the given / starting hyper-parameters.
    n_restarts_optimizer : int, default 0
        Further L-BFGS runs from starts drawn log-uniformly within a factor 100 of the first
        start (``random_state``); the largest likelihood is kept.
    normalize_y : bool, default False
        Centre and scale the targets to unit variance before fitting (scikit-learn's rule).
    solver : {"auto", "exact", "nystrom"}, default "auto"
        ``"exact"``: the ``n x n`` Cholesky; ``"nystrom"``: the sparse variational GP on
        ``n_centers`` centres; ``"auto"``: exact unless the cost model of kernel ridge
        regression (:func:`~kernelkit.models._falkon.choose_solver`) prefers a Nyström solver.
        More centres than training points fits the exact GP, with a warning.
    n_centers : int, default 1000
        Number of centres (inducing points) of the Nyström solver; the default of every
        estimator whose ``solver`` has a Nyström choice (learning the hyper-parameters takes
        one pass per evaluation of the bound, about 20 evaluations, each ``O(n m^2)``).
    centers : {"uniform", "kmeans++", "greedy"}, default "uniform"
        How the centres are chosen among the training points (as in
        :class:`~kernelkit.estimators.KernelRidge`).
    random_state : None, int, RandomState or Generator
        Seed of the restarts, of the centres, of ``sample_y``'s default and of
        ``predict_interval("split")``.
    mean : {"zero", "constant"}, default "zero"
        Prior mean of ``f``: zero, or a constant learned with the hyper-parameters (profiled
        out by generalised least squares at every evaluation of the likelihood, Rasmussen
        and Williams 2006, section 2.7; exact solver).
    task_covariance : None, "icm" or array of shape (p, p), default None
        Several output columns: ``None`` fits them as independent GPs sharing the kernel and
        the hyper-parameters; ``"icm"`` learns the intrinsic coregionalisation model
        ``Cov[f_j(x), f_j'(x')] = B_jj' k(x, x')``, ``B = W W^T + diag(v)`` of rank
        ``task_rank`` (Bonilla et al. 2007; the amplitude, when ``"auto"``, is then 1, absorbed
        in ``B``); an array fixes ``B``.  With a task covariance, NaN in ``y`` marks a missing
        entry (:mod:`kernelkit.models._gp_icm`); exact solver, one noise variance shared by the
        tasks, one L-BFGS start (``n_restarts_optimizer`` unused).
    task_rank : int, default 1
        Rank ``r`` of ``W`` with ``task_covariance="icm"``.
    on_error : {"raise", "skip"}, default "raise"
        Training records that do not parse as the input kind (SMILES RDKit rejects): an
        :class:`~kernelkit.data._molecules.InvalidRecordsError` naming them, or ``"skip"``:
        left out of the fit with their targets, named in a warning (the shared route of
        every supervised estimator, :func:`kernelkit.data._detect.drop_invalid_records`).

    Attributes
    ----------
    kernel_ : Kernel
        ``ScaledKernel(kernel with learned parameters, amplitude_)``.
    amplitude_, noise_ : float
        Learned (or given) amplitude and noise variance (of the normalised targets);
        ``noise_`` is the array when one was given.
    mean_ : float or ndarray
        The constant mean of ``y`` (``mean="constant"``; else the normalisation's mean).
    task_covariance_ : ndarray of shape (p, p) or None
        The task covariance ``B`` (``task_covariance`` set), else ``None``.
    log_marginal_likelihood_value_ : float
        ``log p(y | X)`` at the fitted hyper-parameters (normalised targets); with the
        Nyström solver, Titsias's lower bound of it.
    alpha_ : ndarray or torch.Tensor
        Coefficients of the posterior mean ``kernel_(x, X_fit_) @ alpha_``:
        ``(amplitude K + noise I)^{-1} y`` (exact), ``L^{-T} B^{-1} b / amplitude`` on the
        centres (Nyström).
    X_fit_ : torch.Tensor or batch
        Training data prepared by ``kernel_`` (exact) or the centres (Nyström).
    solver_ : str
        ``"exact"`` or ``"nystrom"``: the solver that ran.
    center_indices_ : ndarray of int
        Indices of the centres among the training points (Nyström solver only).
    y_train_ : ndarray or torch.Tensor
        Training targets (as given).
    n_features_in_ : int

    Notes
    -----
    Objective: the kernel's continuous parameters, ``amplitude`` ``a`` and ``noise``
    ``s`` (those not fixed) maximise the log marginal likelihood (Rasmussen and Williams 2006,
    eq. 2.30)

    .. math:: \log p(y \mid X) = -\frac12 y^T (a K + s I)^{-1} y
              - \frac12 \log\det(a K + s I) - \frac{n}{2} \log 2\pi,

    and the posterior mean is kernel ridge regression,
    ``min_f (1/n) sum_i (y_i - f(x_i))^2 + lam ||f||^2`` in the RKHS of ``a k``, with
    ``lam = s / (n a)``.

    Examples
    --------
    >>> import numpy as np
    >>> from kernelkit import GaussianProcessRegressor
    >>> X = np.linspace(0, 1, 30)[:, None]
    >>> gp = GaussianProcessRegressor().fit(X, np.sin(6 * X[:, 0]))
    >>> mean, std = gp.predict(X[:2], return_std=True)
    >>> mean.shape, std.shape
    ((2,), (2,))
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **KERNEL_CONSTRAINTS,
        "noise": [StrOptions({"auto"}), Interval(Real, 0, None, closed="neither"), "array-like"],
        "mean": [StrOptions({"zero", "constant"})],
        "task_covariance": [None, StrOptions({"icm"}), "array-like"],
        "task_rank": [Interval(Integral, 1, None, closed="left")],
        "amplitude": [StrOptions({"auto"}), Interval(Real, 0, None, closed="neither")],
        "optimizer": [StrOptions({"lbfgs"}), None],
        "n_restarts_optimizer": [Interval(Integral, 0, None, closed="left")],
        "normalize_y": ["boolean"],
        "solver": [StrOptions({"auto", "exact", "nystrom"})],
        "n_centers": [Interval(Integral, 1, None, closed="left")],
        "centers": [StrOptions(set(CENTRE_METHODS))],
        "random_state": RANDOM_STATE_CONSTRAINT,
        "on_error": ON_ERROR_CONSTRAINT,
    }

    def __init__(
        self,
        kernel: Kernel | str | None = None,
        *,
        noise: Any = "auto",
        amplitude: str | float = "auto",
        mean: str = "zero",
        optimizer: str | None = "lbfgs",
        n_restarts_optimizer: int = 0,
        normalize_y: bool = False,
        solver: str = "auto",
        n_centers: int = 1000,
        centers: str = "uniform",
        random_state: Any = None,
        on_error: str = "raise",
        task_covariance: Any = None,
        task_rank: int = 1,
    ):
        self.kernel = kernel
        self.noise = noise
        self.amplitude = amplitude
        self.optimizer = optimizer
        self.n_restarts_optimizer = n_restarts_optimizer
        self.normalize_y = normalize_y
        self.solver = solver
        self.n_centers = n_centers
        self.centers = centers
        self.random_state = random_state
        self.on_error = on_error
        self.mean = mean
        self.task_covariance = task_covariance
        self.task_rank = task_rank

    # ------------------------------------------------------------------ fit
    def fit(self, X: Any, y: Any) -> GaussianProcessRegressor:
        """Learn the hyper-parameters (``optimizer``) and factorise the training covariance
        (exact) or form the one-pass statistics of the sparse GP (``solver_ == "nystrom"``)."""
        self._validate_params()
        X, y, _ = self._drop_invalid(X, y, None)
        Xb = self._fit_X(X)
        if self.task_covariance is not None:
            fit_tasks(self, X, Xb, y, MAX_ITER)
            return self
        self.task_covariance_ = None
        Y = self._validate_y_numeric(y, len(Xb), result_dtype(Xb))
        self.y_train_ = like_input(Y, X)
        Yn = self._normalise(Y)
        var = float(Yn.var(0, unbiased=False).mean())
        amp0 = var if var > 0 else 1.0
        noise_vec = point_noise(self.noise, len(Xb), Yn.dtype)
        start: dict[str, Any] = {
            "amplitude": amp0 if is_auto(self.amplitude) else float(self.amplitude),
            "noise": 0.1 * amp0
            if is_auto(self.noise)
            else float(self.noise)
            if noise_vec is None
            else noise_vec,
        }
        design = torch.ones(len(Xb), 1, dtype=Yn.dtype) if self.mean == "constant" else None
        base = self.kernel_
        exact_only = noise_vec is not None or design is not None
        self.solver_ = self._choose_solver(Xb, exact_only=exact_only)
        announce_solver(self)
        centres = None
        if self.solver_ == "nystrom":
            choice = choose_centres(
                base,
                Xb,
                int(self.n_centers),
                self.centers,
                random_state=self.random_state,
                distinct=True,
            )
            self.center_indices_, centres = choice.indices, choice.centres
        names: list[str] = []
        values = start
        K_base = None
        if self.optimizer is not None:
            names = differentiable_params(base, Xb, continuous_params(base, "auto"))
            learned = [k for k in ("amplitude", "noise") if is_auto(getattr(self, k))]
            if centres is None and not names and learned and noise_vec is None:
                K_base = gram(base, Xb)  # reused by the final factorisation
                objective = spectral_objective(K_base, Yn, start, learned, design)
            elif centres is None:
                objective = self._exact_objective(base, Xb, Yn, start, names, learned, design)
            else:
                objective = self._sparse_objective(base, Xb, centres, Yn, start, names, learned)
            values = self._optimise(
                objective, {**start, **base.get_params(deep=True)}, names + learned, start
            )
        kernel = base.set_params(**{n: values[n] for n in names}) if names else base
        self.amplitude_ = float(values["amplitude"])
        self.noise_ = (
            float(values["noise"]) if noise_vec is None else like_input(noise_vec.clone(), X)
        )
        self.kernel_ = ScaledKernel(kernel, self.amplitude_)
        self._offset = torch.zeros(Yn.shape[1:], dtype=Yn.dtype)
        if centres is None:
            self.X_fit_ = Xb
            K = gram(self.kernel_, Xb) if K_base is None else self.amplitude_ * K_base
            fit = gp_fit(K, Yn, values["noise"], design)
            self._factor, self._coef = fit.factor, fit.coef
            if fit.mean is not None:
                self._offset = fit.mean[0]
            self.mean_ = like_input(self._offset * self._y_std + self._y_mean, X)
            self.alpha_ = like_input(fit.coef, X)
            self.log_marginal_likelihood_value_ = float(fit.log_marginal_likelihood)
            return self
        self.X_fit_ = centres
        self.mean_ = like_input(self._y_mean.clone(), X)
        stats = sparse_gp_statistics(kernel, Xb, centres, Yn)
        post = sparse_gp_posterior(stats, self.amplitude_, self.noise_, single_output=Yn.ndim == 1)
        self._coef, self._basis, self._factor = post.coef, post.basis, post.factor
        self.alpha_ = like_input(post.coef / self.amplitude_, X)
        bound = sparse_gp_bound(stats, self.amplitude_, self.noise_)
        self.log_marginal_likelihood_value_ = float(bound)
        return self

    def _choose_solver(self, Xb: Batch, exact_only: bool = False) -> str:
        """``solver`` resolved: ``"auto"`` is exact unless the Nyström cost model of
        :func:`~kernelkit.models._falkon.choose_solver` prefers a Nyström solver; more centres
        than points is the exact GP (with a warning).  Per-point noise and a constant mean
        (``exact_only``) are exact-solver features."""
        n, m = len(Xb), int(self.n_centers)
        if exact_only:
            if self.solver == "nystrom":
                raise InputError(
                    "solver: noise given per point and mean='constant' need solver='exact' "
                    "or 'auto', got 'nystrom'"
                )
            return "exact"
        if self.solver == "auto":
            d = int(Xb.shape[1]) if isinstance(Xb, torch.Tensor) and Xb.ndim == 2 else 0
            return "exact" if choose_solver(n, m, d=d) == "exact" else "nystrom"
        return forced_solver(self.solver, n, m)

    def _normalise(self, Y: torch.Tensor) -> torch.Tensor:
        """Targets centred and scaled (``normalize_y``), with the constants stored."""
        if self.normalize_y:
            mean, std = Y.mean(0), Y.std(0, unbiased=False)
            std = torch.where(std > 0, std, torch.ones_like(std))
        else:
            mean = torch.zeros(Y.shape[1:], dtype=Y.dtype, device=Y.device)
            std = torch.ones_like(mean)
        self._y_mean, self._y_std = mean, std
        return (Y - mean) / std

    @staticmethod
    def _exact_objective(
        base: Kernel,
        Xb: Batch,
        Y: torch.Tensor,
        start: dict[str, float],
        names: list[str],
        learned: list[str],
        design: torch.Tensor | None = None,
    ) -> Callable[[torch.Tensor], torch.Tensor]:
        """``-log p(y | X)`` of the exact GP as a function of the log-hyper-parameters (the
        mean ``design @ beta`` profiled out, :func:`~kernelkit.models._gp.gp_fit`)."""
        keys = names + learned
        fixed = {k: torch.as_tensor(start[k], dtype=Y.dtype) for k in ("amplitude", "noise")}

        def objective(t: torch.Tensor) -> torch.Tensor:
            v = dict(zip(keys, torch.exp(t), strict=True))
            K = kernel_with(base, {n: v[n] for n in names}).block(Xb, Xb)
            amp = v.get("amplitude", fixed["amplitude"])
            noise = v.get("noise", fixed["noise"])
            return -gp_fit(amp * K, Y, noise, design).log_marginal_likelihood

        return objective

    @staticmethod
    def _sparse_objective(
        base: Kernel,
        Xb: Batch,
        centres: Batch,
        Y: torch.Tensor,
        start: dict[str, float],
        names: list[str],
        learned: list[str],
    ) -> Callable[[torch.Tensor], torch.Tensor]:
        """``-F`` (Titsias's bound, :mod:`kernelkit.models._gp_nystrom`) of the log-hyper-
        parameters: statistics formed once when only the amplitude and the noise are learned,
        two streamed passes per evaluation otherwise."""
        if names:
            return StreamedBound(
                lambda v: kernel_with(base, v), names, Xb, centres, Y, start, learned
            )
        stats = sparse_gp_statistics(base, Xb, centres, Y)

        def objective(t: torch.Tensor) -> torch.Tensor:
            v = dict(zip(learned, torch.exp(t), strict=True))
            amp = v.get("amplitude", start["amplitude"])
            return -sparse_gp_bound(stats, amp, v.get("noise", start["noise"]))

        return objective

    def _optimise(
        self,
        objective: Callable[[torch.Tensor], torch.Tensor],
        values: dict[str, Any],
        keys: list[str],
        start: dict[str, float],
    ) -> dict[str, float]:
        """L-BFGS over the log-hyper-parameters ``keys`` from ``values`` and the random
        restarts; the best finite objective wins."""
        if not keys:
            return start
        t0 = np.log([float(values[k]) for k in keys])
        rng = check_random_state(self.random_state)
        starts = [t0] + [
            t0 + rng.uniform(-RESTART_SPREAD, RESTART_SPREAD, size=len(keys))
            for _ in range(self.n_restarts_optimizer)
        ]
        best_t, best_f = t0, math.inf
        for s in starts:
            t = torch.tensor(s, dtype=torch.float64, requires_grad=True)
            try:
                lbfgs(lambda t=t: objective(t), [t], max_iter=MAX_ITER, tolerance_grad=1e-9)
                with torch.no_grad():
                    f = float(objective(t))
            except NotPSDError:
                continue
            if math.isfinite(f) and f < best_f:
                best_t, best_f = t.detach().numpy(), f
        return {**start, **dict(zip(keys, np.exp(best_t).tolist(), strict=True))}

    # ------------------------------------------------------------------ predict
    def predict(self, X: Any, return_std: bool = False, return_cov: bool = False) -> Any:
        """Posterior mean of ``f`` at ``X``; with its standard deviation or covariance.

        The spread is that of the latent ``f`` (add ``noise_`` to the variances for a new
        observation), in the units of ``y``.
        """
        check_is_fitted(self, "alpha_")
        if return_std and return_cov:
            raise InputError(
                "return_std, return_cov: at most one of them can be requested, got both True"
            )
        Xb = self._predict_X(X)
        if getattr(self, "task_covariance_", None) is not None:
            return predict_tasks(self, X, Xb, return_std, return_cov)
        if self.solver_ == "nystrom":
            mean, spread = self._predict_sparse(Xb, return_std, return_cov)
        else:
            Ks = gram(self.kernel_, Xb, self.X_fit_)
            prior_diag = self.kernel_.block_diag(Xb).to(Ks.dtype) if return_std else None
            prior_cov = gram(self.kernel_, Xb) if return_cov else None
            lml = torch.tensor(self.log_marginal_likelihood_value_)
            fit = GPFit(self._factor, self._coef, lml, 0.0)
            mean, spread = gp_predict(fit, Ks, prior_diag, prior_cov)
            mean = mean + self._offset.to(mean)
        mean = mean.to(self._y_std.dtype) * self._y_std + self._y_mean
        if spread is None:
            return like_input(mean, X)
        if return_std:
            std = spread.sqrt()
            std = std * self._y_std if mean.ndim == 1 else std[:, None] * self._y_std
            return like_input(mean, X), like_input(std, X)
        cov = spread * self._y_std**2 if mean.ndim == 1 else spread[..., None] * self._y_std**2
        return like_input(mean, X), like_input(cov, X)

    def _predict_sparse(
        self, Xb: Batch, return_std: bool, return_cov: bool
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Sparse-GP mean and variance in row tiles (covariance: one block)."""
        base = self.kernel_.kernel
        post = SparseGPPosterior(
            self._coef, self._basis, self._factor, self.amplitude_, self.noise_
        )
        if return_cov:
            Ks = base.block(Xb, self.X_fit_)
            return sparse_gp_predict(post, Ks, prior_cov=base.block(Xb, Xb))
        means, spreads = [], []
        for i, j in row_tiles(len(Xb), len(self.X_fit_)):
            rows = Xb[i:j] if isinstance(Xb, torch.Tensor) else take(Xb, np.arange(i, j))
            diag = base.block_diag(rows) if return_std else None
            mean, var = sparse_gp_predict(post, base.block(rows, self.X_fit_), diag)
            means.append(mean)
            spreads.append(var)
        return torch.cat(means), (torch.cat(spreads) if return_std else None)

    def sample_y(self, X: Any, n_samples: int = 1, random_state: Any = 0) -> Any:
        """Draws of ``f`` from the posterior at ``X``: shape ``(m, n_samples)`` (single output)
        or ``(m, n_outputs, n_samples)``, as scikit-learn's ``sample_y``."""
        if isinstance(n_samples, bool) or not isinstance(n_samples, Integral) or n_samples < 1:
            raise InputError(f"n_samples: expected a positive integer, got {n_samples!r}")
        mean, cov = self.predict(X, return_cov=True)
        mean_t, cov_t = torch.as_tensor(mean), torch.as_tensor(cov)
        rng = check_random_state(random_state)
        if mean_t.ndim == 1:
            pairs = [(mean_t, cov_t)]
        else:
            pairs = list(zip(mean_t.unbind(1), cov_t.unbind(2), strict=True))
        draws = []
        for mu, C in pairs:
            L = cholesky_factor(C, name="cov").factor
            z = torch.as_tensor(rng.standard_normal((C.shape[0], n_samples)), dtype=C.dtype)
            draws.append(mu.reshape(-1, 1) + L @ z.to(L.device))
        out = draws[0] if mean_t.ndim == 1 else torch.stack(draws, 1)
        return like_input(out, X)

    def predict_interval(self, X: Any, alpha: float = 0.1, method: str = "jackknife+") -> Any:
        r"""Conformal intervals of ``y``, shape ``(n_samples, 2)``; as
        :meth:`KernelRidge.predict_interval <kernelkit.estimators.KernelRidge.predict_interval>`
        with the GP's leave-one-out fits (Rasmussen and Williams 2006, eq. 5.12:
        ``r_i = [K_y^{-1} y]_i / [K_y^{-1}]_ii``).  Jackknife+ covers with probability at
        least ``1 - 2 alpha`` (Barber et al. 2021, Theorem 1); split conformal at least
        ``1 - alpha``.  Single output."""
        check_is_fitted(self, "alpha_")
        if self.solver_ != "exact":
            raise InputError(
                f"predict_interval: the conformal intervals need the exact GP's leave-one-out "
                f"fits; refit with solver='exact' or use predict(X, return_std=True) "
                f"(fitted solver_={self.solver_!r})"
            )
        if self._coef.ndim != 1 or getattr(self, "task_covariance_", None) is not None:
            raise InputError("y: predict_interval needs a single-output fit")
        if not isinstance(self.noise_, float) or self.mean != "zero":
            raise InputError(
                "predict_interval: the conformal intervals need one noise variance and "
                f"mean='zero'; got noise per point or mean={self.mean!r} (use predict(X, "
                "return_std=True))"
            )
        Xb = self._predict_X(X)
        K = gram(self.kernel_, self.X_fit_)
        Kt = gram(self.kernel_, Xb, self.X_fit_)
        y = (torch.as_tensor(self.y_train_).to(K) - self._y_mean) / self._y_std
        out = conformal_interval(
            K,
            Kt,
            y,
            shift=self.noise_,
            alpha=alpha,
            method=method,
            rng=check_random_state(self.random_state),
        )
        return like_input(out * self._y_std + self._y_mean, X)

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Coefficient of determination R^2 of the posterior mean."""
        return float(r2_score(to_numpy(y), to_numpy(self.predict(X)), sample_weight=sample_weight))

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = True
        return tags
