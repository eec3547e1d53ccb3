r"""Concatenated (two- or multi-layer) kernel regression and interpolation (Bohn, Griebel,
Rieger 2019), a scikit-learn regressor on :mod:`kernelkit.models._concatenated`."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
import torch
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.exceptions import DataConversionWarning
from sklearn.metrics import r2_score
from sklearn.utils.validation import check_is_fitted

from kernelkit.estimators._base import (
    MEMORY_BUDGET_CONSTRAINT,
    ON_ERROR_CONSTRAINT,
    RANDOM_STATE_CONSTRAINT,
    VERBOSE_CONSTRAINT,
    KernelEstimatorMixin,
    progress_of,
    result_dtype,
    to_numpy,
    warn_max_iter,
)
from kernelkit.estimators._lam_auto import kfold_lam_on_rows
from kernelkit.kernels import Gaussian, Kernel, Polynomial
from kernelkit.models._concatenated import (
    Mixture,
    build_concatenated,
    fit_concatenated,
)
from kernelkit.models._layers import layer_gram
from kernelkit.utils._constraints import Interval, StrOptions
from kernelkit.utils._errors import InputError
from kernelkit.utils._progress import VerboseLike
from kernelkit.utils._seeding import RandomStateLike, as_seed
from kernelkit.utils._validation import check_int, check_positive, like_input, owned

__all__ = ["ConcatenatedKernelRegressor", "Mixture"]

AUTO_MAX_RESTARTS = 64  # the paper's number of restarts (section 4.2): the cap of "auto"
AUTO_FIRST_ROUND = 12  # iterations before the race's first halving


def _layer_specs(inner_kernel: Any) -> list[Kernel | Mixture]:
    if inner_kernel is None:
        return [Polynomial(degree=1)]
    specs = list(inner_kernel) if isinstance(inner_kernel, list | tuple) else [inner_kernel]
    if not specs:
        raise InputError("inner_kernel: expected a Kernel, a Mixture or a non-empty list of them")
    for i, s in enumerate(specs):
        if not isinstance(s, Kernel | Mixture):
            raise InputError(
                f"inner_kernel[{i}]: expected a kernelkit Kernel or a Mixture of kernels, "
                f"got {type(s).__name__} {s!r}"
            )
    return specs


def _per_layer(value: Any, n_layers: int, name: str) -> list[Any]:
    if isinstance(value, list | tuple):
        if len(value) != n_layers:
            raise InputError(
                f"{name}: expected one value per inner layer ({n_layers}), got {len(value)}"
            )
        return list(value)
    return [value] * n_layers


def _check_no_conflicting_duplicates(X: torch.Tensor, y: torch.Tensor) -> None:
    """Interpolation needs distinct inner images; equal inputs with different targets make the
    outer Gram ``Q`` singular for every inner function (section 3.4.2)."""
    _, inverse = torch.unique(X, dim=0, return_inverse=True)
    if inverse.max() + 1 == X.shape[0]:
        return
    for g in torch.unique(inverse):
        vals = y[inverse == g]
        if vals.numel() > 1 and float(vals.max() - vals.min()) > 0:
            i = int(torch.nonzero(inverse == g)[0])
            raise InputError(
                f"X: duplicate input points with different targets (e.g. row {i}) map to the "
                "same inner image, so the outer Gram Q = [k(g(x_i), g(x_j))] is singular and "
                "no f o g interpolates them (Bohn et al., section 3.4.2); use "
                "interpolate=False with lam > 0, or the coth separation penalty separation > 0"
            )


class ConcatenatedKernelRegressor(KernelEstimatorMixin, RegressorMixin, BaseEstimator):
    r"""Concatenated kernel least squares / interpolation ``h = f o g`` (Bohn, Griebel, Rieger).

    Fits, with ``Z = g(X)`` and ``Q = [k(z_i, z_j)]`` (sections 3.4-3.5),

    .. math:: \min_{f, g}\; \frac1n \sum_i (y_i - f(g(x_i)))^2 + \lambda \|f\|^2
              + \mu \|g\|^2 \;=\; \min_c\; \lambda\, y^T (Q + n\lambda I)^{-1} y
              + \mu\, \mathcal N(c) \quad\text{(uR-X), eq. 19}

    or, with ``interpolate=True``, ``(1/n) y^T Q^{-1} y + mu N(c)`` (problem (Int)), plus the
    optional separation penalty ``separation sum_{i<j} coth ||g(x_i) - g(x_j)||^2`` (eq. 15,
    the paper's ``gamma``).  The
    inner function ``g(x) = sum_j K(x_j, x) c_j`` (eq. 16) has the matrix-valued kernel
    ``K = k_I diag(w)`` (eq. 20) or a :class:`~kernelkit.models._concatenated.Mixture`
    ``diag(k_1, ..., k_D)`` (section 4.2.3); a list of such specifications is a deeper chain
    ``f o g_L o ... o g_1``.  The coefficients ``c`` are found by L-BFGS with autograd
    gradients from ``n_restarts`` random initialisations run as one batch (the paper uses 64),
    the restart with the lowest objective is kept (``n_restarts="auto"``: ``patience``
    restarts first, the rest raced by successive halving as soon as those disagree).  The outer
    function is the closed-form ridge (interpolant) on ``Z``: ``alpha = (Q + n lam I)^{-1} y``.

    Conventions: ``(1/n)`` data term; the paper's unnormalised ``lambda, mu, gamma`` are
    ``n lam, n mu, n separation`` (its interpolation problem (Int) is ``mu = 1/n``); the outer layer
    is scikit-learn's ``KernelRidge(alpha=n * lam)`` fitted on ``inner_transform(X)``.

    Parameters
    ----------
    inner_kernel : Kernel, Mixture or list of them, default Polynomial(degree=1)
        Kernel(s) of the inner layer(s), on the input vectors (first layer) and on the
        previous layer's outputs (later layers).
    outer_kernel : Kernel, default Gaussian(sigma=1.0)
        Scalar kernel of the outer function on the inner representation.
    inner_dim : int or list of int, optional
        Output dimension ``D`` of each inner layer; ``None``: the input dimension (a scalar
        kernel, the paper's ``D = d``) or the number of kernels of a Mixture.
    lam : float or "auto", default 1e-3
        Outer regularisation (``> 0`` unless ``interpolate``).  ``"auto"``: the library's
        k-fold path (:mod:`kernelkit.estimators._lam_auto`), each fold a clone refitted on
        the other folds' rows, over the grid ``10^{-1}, ..., 10^{-9}`` (the scale of the
        default Gaussian outer kernel, ``k(z, z) = 1``); costly (every fold's fit runs all
        the restarts), and refused with ``interpolate=True`` (no ``lam``).
    mu : float or list of float, default 1e-3
        Inner regularisation of each layer (``>= 0``).
    interpolate : bool, default False
        Solve (Int) (``f o g`` interpolates the data) instead of (uR-X).
    separation : float, default 0.0
        Weight of the coth separation penalty (eq. 15, the paper's ``gamma``; renamed so that
        ``gamma`` means a kernel width in every estimator).
    weights : sequence of float or list of them, optional
        The diagonal ``w`` of eq. 20 (or of the Mixture) per layer; ``None``: ones.
    n_restarts : int or "auto", default 64
        Random initialisations, optimised together as one batch.  ``"auto"``: the
        initialisations of ``n_restarts=64`` (same ``random_state``) in two phases of one
        batch.  The first ``patience`` run; when they all end at objectives within ``1e-6``
        relative (``max - min <= 1e-6 min``: ``patience`` consecutive restarts find no
        better, and no worse, optimum than the first) the fit ends with them.  As soon as
        they are certain to disagree (two ended at different objectives, or one still
        running is already below one that ended), the other ``64 - patience`` join the
        batch and race with the pilot's restarts still running: after 12, 24, 48, ... L-BFGS
        iterations of the race the worse half (by current objective) of the restarts still
        running stops, until one runs (successive halving).  In both phases a restart that
        reaches an optimum already found (objective within ``1e-6``, Gram ``Z Z^T`` of the
        inner images within ``1e-3``, relative) stops there.  A restart that is not stopped
        by the race ends exactly as in ``n_restarts=64``.
    patience : int, default 8
        Restarts of the first phase of ``n_restarts="auto"`` (the ``k`` of "stop when ``k``
        consecutive restarts find no better optimum"), whose agreement ends the fit.
    max_iter : int, default 200
        Most L-BFGS iterations of every restart (each iteration one step of every restart
        still running, with its line search).  Reaching it warns with
        :class:`kernelkit.utils._errors.ConvergenceWarning`.
    tol : float, default 1e-9
        Stopping tolerance (gradient max-norm and relative decrease).
    polish_iter : int, default 0
        Further strong-Wolfe L-BFGS iterations on the best restart (the KAE training loop).
    init_scale : float, default 1.0
        Root-mean-square of the initial inner images.
    random_state : int, RandomState, Generator or None
        Seed of the initialisations (``None``: fresh entropy; an int for reproducible fits).  A
        generator is consumed (one draw); see :mod:`kernelkit.utils._seeding`.
    memory_budget : int, optional
        Bytes of scratch memory allowed besides the Gram blocks themselves, with the meaning of
        :func:`kernelkit.gram.gram`: the first layer's Gram and, for every restart, the Gram
        blocks on the inner images (differentiated tile by tile, :mod:`kernelkit.gram._autodiff`)
        are computed by the tiled engine within it.  ``None``: no limit (the blocks on the
        inner images are evaluated whole, fastest).
    verbose : int, bool or callable, default 0
        ``0``: silent; ``1``: progress on stderr (:mod:`kernelkit.utils._progress`: a bar on a
        terminal, else ``[ConcatenatedKernelRegressor] eval k/max_iter objective=J`` lines (the
        lowest objective of the running restarts at every batched evaluation) and a final
        ``done after ...`` line); a callable receives ``(evaluation, objective)``.
    on_error : {"raise", "skip"}, default "raise"
        Training records that do not parse as the input kind (SMILES RDKit rejects, numeric
        rows with a NaN or infinite entry): refused by name, or ``"skip"``: left out of the
        fit with their targets, named in a warning (the shared route of every supervised
        estimator, :func:`kernelkit.data._detect.drop_invalid_records`).
    gamma : float, deprecated
        The former name of ``separation`` (a ``FutureWarning`` when set; removed in 0.3).

    Attributes
    ----------
    dual_coef_ : ndarray or torch.Tensor
        Outer coefficients ``alpha`` (shape ``(n,)``), in the container of the training input.
    lam_ : float
        The ``lam`` of the fit (``lam``, or the one ``"auto"`` chose; ``cv_results_`` then
        holds the 5-fold R² of every ``lam`` visited).
    objective_ : float
        Objective of the kept restart; ``restart_objectives_`` has every restart's.
    n_restarts_run_ : int
        Restarts run (``n_restarts``; for ``"auto"``: ``patience`` when they agreed, else 64).
    restart_eliminated_ : ndarray of bool
        Which restarts the race of ``"auto"`` stopped (their ``restart_objectives_`` are the
        objectives at that point); all ``False`` otherwise.
    optima_ : dict
        The distinct optima found, by increasing objective: ``{"objective": array,
        "count": array}`` (restarts that reached each, eliminated ones not counted; see
        :func:`~kernelkit.models._concatenated.fit_concatenated` for "same optimum").
    model_ : ConcatenatedModel
        The fitted torch model (inner coefficients in ``model_.inner_layers[l].coef``).

    Notes
    -----
    Objective: with ``Z = g(X)`` and ``Q = [k(z_i, z_j)]`` (problem (uR-X); ``mu``
    weighs the inner layers' norms, ``separation`` the optional coth penalty),

    .. math:: \min_{f, g} \frac{1}{n} \sum_{i=1}^n (y_i - f(g(x_i)))^2 + \lambda \|f\|^2
              + \mu \|g\|^2.
    """

    def __init__(
        self,
        inner_kernel: Kernel | Mixture | Sequence[Kernel | Mixture] | None = None,
        outer_kernel: Kernel | None = None,
        *,
        inner_dim: int | Sequence[int] | None = None,
        lam: float | str = 1e-3,
        mu: float | Sequence[float] = 1e-3,
        interpolate: bool = False,
        separation: float = 0.0,
        weights: Any = None,
        n_restarts: int | str = 64,
        patience: int = 8,
        max_iter: int = 200,
        tol: float = 1e-9,
        polish_iter: int = 0,
        init_scale: float = 1.0,
        random_state: RandomStateLike = None,
        memory_budget: int | None = None,
        verbose: VerboseLike = 0,
        on_error: str = "raise",
        gamma: float | str = "deprecated",
    ):
        self.inner_kernel = inner_kernel
        self.outer_kernel = outer_kernel
        self.inner_dim = inner_dim
        self.lam = lam
        self.mu = mu
        self.interpolate = interpolate
        self.separation = separation
        self.gamma = gamma
        self.weights = weights
        self.n_restarts = n_restarts
        self.patience = patience
        self.max_iter = max_iter
        self.tol = tol
        self.polish_iter = polish_iter
        self.init_scale = init_scale
        self.random_state = random_state
        self.memory_budget = memory_budget
        self.verbose = verbose
        self.on_error = on_error

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "on_error": ON_ERROR_CONSTRAINT,
        "inner_kernel": [Kernel, Mixture, list, tuple, None],
        "outer_kernel": [Kernel, None],
        "inner_dim": [Interval(Integral, 1, None, closed="left"), list, tuple, None],
        "lam": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
        "mu": [Interval(Real, 0, None, closed="left"), list, tuple],
        "interpolate": ["boolean"],
        "separation": [Interval(Real, 0, None, closed="left")],
        "gamma": [Interval(Real, 0, None, closed="left"), StrOptions({"deprecated"})],
        "weights": ["array-like", None],
        "n_restarts": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "patience": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "polish_iter": [Interval(Integral, 0, None, closed="left")],
        "init_scale": [Interval(Real, 0, None, closed="neither")],
        "random_state": RANDOM_STATE_CONSTRAINT,
        "memory_budget": MEMORY_BUDGET_CONSTRAINT,
        "verbose": VERBOSE_CONSTRAINT,
    }

    @property
    def kernel(self) -> Kernel | None:  # the kernel that reads the input (input tags)
        specs = self.inner_kernel
        first = specs[0] if isinstance(specs, list | tuple) and specs else specs
        return first.kernels[0] if isinstance(first, Mixture) else first

    def _separation(self) -> float:
        """``separation``, or the deprecated ``gamma`` when given (with a ``FutureWarning``)."""
        if self.gamma == "deprecated":
            return float(self.separation)
        warnings.warn(
            "ConcatenatedKernelRegressor: 'gamma' was renamed 'separation' (the coth penalty "
            "weight; gamma means a kernel width elsewhere) and will be removed in 0.3",
            FutureWarning,
            stacklevel=3,
        )
        return float(self.gamma)

    def _lam(self, X: Any, y: Any) -> float:
        """``lam_`` (and ``cv_results_`` of ``lam="auto"``: :func:`kfold_lam_on_rows`)."""
        self.__dict__.pop("cv_results_", None)
        if self.lam != "auto":
            self.lam_ = float(check_positive(self.lam, name="lam", strict=not self.interpolate))
            return self.lam_
        if self.interpolate:
            raise InputError(
                "lam: 'auto' chooses the outer regularisation of least squares; "
                "interpolate=True has none (lam = 0): pass lam=0 or interpolate=False"
            )
        if y is None or X is None:
            raise InputError("X, y: lam='auto' needs training data and targets, got None")
        quiet = clone(self).set_params(verbose=0)
        self.lam_, self.cv_results_ = kfold_lam_on_rows(
            quiet, X, y, diagonal=torch.ones(len(np.asarray(y)))
        )
        return self.lam_

    def fit(self, X: Any, y: Any) -> ConcatenatedKernelRegressor:
        """Fit the inner coefficients (batched restarts) and the closed-form outer layer."""
        self._validate_params()
        X, y, _ = self._drop_invalid(X, y, None)
        specs = [
            Mixture([clone(k) for k in s.kernels]) if isinstance(s, Mixture) else clone(s)
            for s in _layer_specs(self.inner_kernel)
        ]
        outer = Gaussian(sigma=1.0) if self.outer_kernel is None else self.outer_kernel
        if not isinstance(outer, Kernel):
            raise InputError(
                f"outer_kernel: expected a kernelkit Kernel or None, got {type(outer).__name__}"
            )
        lam = self._lam(X, y)
        mus = [
            check_positive(m, name="mu", strict=False)
            for m in _per_layer(self.mu, len(specs), "mu")
        ]
        gamma, max_iter = self._separation(), int(self.max_iter)
        polish, tol, init_scale = int(self.polish_iter), float(self.tol), float(self.init_scale)
        auto = self.n_restarts == "auto"
        n_restarts = AUTO_MAX_RESTARTS if auto else int(self.n_restarts)
        patience = int(self.patience) if auto else None
        first = specs[0].kernels[0] if isinstance(specs[0], Mixture) else specs[0]
        self.kernel_ = first
        Xb = owned(self._prepare(first, X, reset=True), X)
        self.X_fit_ = Xb
        dtype = result_dtype(Xb)
        Y = self._validate_y_numeric(y, len(Xb), dtype)
        if Y.ndim == 2:
            if Y.shape[1] != 1:
                raise InputError(
                    f"y: expected one target per sample (shape (n,) or (n, 1)), got shape "
                    f"{tuple(Y.shape)}; fit one regressor per output column"
                )
            warnings.warn(
                "A column-vector y was passed when a 1d array was expected; it is ravelled",
                DataConversionWarning,
                stacklevel=2,
            )
            Y = Y[:, 0]
        if self.interpolate and gamma == 0 and isinstance(Xb, torch.Tensor) and Xb.ndim == 2:
            _check_no_conflicting_duplicates(Xb, Y)
        if self.inner_dim is None:
            d_in = Xb.shape[1] if isinstance(Xb, torch.Tensor) and Xb.ndim == 2 else 2
            dims = [len(s) if isinstance(s, Mixture) else d_in for s in specs]
            for i in range(1, len(specs)):
                if not isinstance(specs[i], Mixture):
                    dims[i] = dims[i - 1]
        else:
            dims = [
                check_int(d, name="inner_dim", minimum=1)
                for d in _per_layer(self.inner_dim, len(specs), "inner_dim")
            ]
        weights = None if self.weights is None else _per_layer(self.weights, len(specs), "weights")
        if weights is not None and len(specs) == 1 and np.ndim(self.weights) == 1:
            weights = [self.weights]
        model, data = build_concatenated(
            Xb,
            Y,
            specs,
            dims,
            clone(outer),
            lam=lam,
            mu=mus,
            gamma=gamma,
            interpolate=bool(self.interpolate),
            weights=weights,
            n_restarts=n_restarts,
            init_scale=init_scale,
            random_state=as_seed(self.random_state),
            memory_budget=self.memory_budget,
        )
        progress = progress_of(self, max_iter, unit="eval")
        best, res = fit_concatenated(
            model,
            data,
            max_iter=max_iter,
            tol=tol,
            polish_iter=polish,
            patience=patience,
            first_round=AUTO_FIRST_ROUND,
            progress=progress,
        )
        limit = max_iter > 0 and res.n_iter >= max_iter
        progress.done(res.n_eval, "max_iter" if limit else "converged")
        if limit:
            warn_max_iter(self, f"{res.n_eval} batched objective evaluations")
        alpha, supports = model.outer_fit(data)
        self.model_ = model
        self.supports_ = supports
        self._alpha = alpha
        self.dual_coef_ = like_input(alpha, X)
        self.best_restart_ = best
        self.restart_objectives_ = like_input(res.values.detach(), X)
        self.n_restarts_run_ = len(self.restart_objectives_)
        eliminated = res.eliminated
        self.restart_eliminated_ = (
            np.zeros(self.n_restarts_run_, dtype=bool) if eliminated is None else eliminated.numpy()
        )
        order = sorted(res.optima, key=lambda o: o.value)
        self.optima_ = {
            "objective": np.array([o.value for o in order]),
            "count": np.array([o.count for o in order], dtype=np.int64),
        }
        with torch.no_grad():
            self.objective_ = float(model.objective(data)[0])
        self.n_iter_ = res.n_iter
        return self

    def _inner(self, X: Any) -> torch.Tensor:
        check_is_fitted(self, "dual_coef_")
        Xb = self._predict_X(X)
        K1 = self.model_.inner_layers[0].gram(Xb, self.X_fit_)
        return self.model_.transform(K1, self.supports_)

    def inner_transform(self, X: Any) -> Any:
        """The learned inner representation ``g(x)`` (last inner layer), shape ``(m, D)``."""
        return like_input(self._inner(X), X)

    def predict(self, X: Any) -> Any:
        """``f(g(x)) = sum_i alpha_i k(g(x_i), g(x))``."""
        Z = self._inner(X)
        with torch.no_grad():
            Q = layer_gram(self.model_.outer_kernel, Z, self.supports_[-1], self.memory_budget)
            pred = Q @ self._alpha
        return like_input(pred, X)

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Coefficient of determination R^2 (scikit-learn's ``r2_score``)."""
        return float(r2_score(to_numpy(y), to_numpy(self.predict(X)), sample_weight=sample_weight))
