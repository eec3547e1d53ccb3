r"""Multiple kernel learning by SimpleMKL's reduced gradient (course part 3, section 4)."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
import torch
from sklearn.base import BaseEstimator, clone
from sklearn.metrics import accuracy_score, r2_score
from sklearn.utils import ClassifierTags, RegressorTags
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d

from kernelkit.data import detect_input_kind
from kernelkit.estimators._base import (
    ON_ERROR_CONSTRAINT,
    VERBOSE_CONSTRAINT,
    KernelEstimatorMixin,
    _reraise,
    progress_of,
    to_numpy,
    warn_max_iter,
)
from kernelkit.estimators._lam_auto import kfold_lam
from kernelkit.estimators._mkl_losses import (
    InnerSolution,
    hinge_solution,
    logistic_solution,
    squared_solution,
)
from kernelkit.estimators._views import fit_view
from kernelkit.gram import gram
from kernelkit.kernels import Gaussian, Kernel
from kernelkit.kernels._resolve import VectorKernelRecipe, resolve_kernel
from kernelkit.kernels._specs import default_kernel, median_sigma
from kernelkit.utils._constraints import Interval, StrOptions
from kernelkit.utils._errors import InputError
from kernelkit.utils._kinds import InputKind
from kernelkit.utils._progress import VerboseLike
from kernelkit.utils._validation import like_input, to_tensor

DEFAULT_WIDTHS = (0.5, 1.0, 2.0)
"""Multiples of the median-heuristic width of the default Gaussian kernels (vector input)."""


def reduced_gradient_direction(eta: np.ndarray, grad: np.ndarray) -> np.ndarray:
    r"""SimpleMKL's descent direction on the simplex (Rakotomamonjy et al. 2008, eq. 12).

    With ``mu = argmax eta``: ``D_m = 0`` if ``eta_m = 0`` and ``g_m - g_mu > 0``,
    ``D_m = -(g_m - g_mu)`` for the other ``m != mu``, and ``D_mu = -sum_{m != mu} D_m`` (so
    ``sum D = 0`` and ``eta + t D`` stays on the hyperplane ``sum eta = 1``).
    """
    mu = int(np.argmax(eta))
    D = -(grad - grad[mu])
    D[(eta <= 0) & (grad - grad[mu] > 0)] = 0.0
    D[mu] = 0.0
    D[mu] = -D.sum()
    return D


class SimpleMKL(KernelEstimatorMixin, BaseEstimator):
    r"""Multiple kernel learning: kernel weights on the simplex and the predictor, jointly.

    Learns ``K_eta = sum_m eta_m K_m`` over the simplex ``{eta >= 0, sum eta = 1}`` by
    minimising (Lanckriet et al. 2004; course part 3, section 4)

    .. math:: J(\eta) = \min_{f \in H_{K_\eta}} R(f^n) + \lambda \|f\|^2_{H_{K_\eta}},

    convex in ``eta``, with SimpleMKL's reduced gradient (Rakotomamonjy, Bach, Canu &
    Grandvalet 2008, section 3): for fixed ``eta`` the single-kernel problem gives ``gamma``
    (``f = sum_j gamma_j K_eta(x_j, .)``) and ``dJ / deta_m = -lam gamma^T K_m gamma``;
    the direction of :func:`reduced_gradient_direction` is followed to the largest feasible
    step while ``J`` decreases there (a weight reaches 0), else by Armijo backtracking, so
    ``J`` decreases monotonically (``objective_history_``).  Stops when the KKT conditions
    hold to ``tol``: ``max_{eta_m > 0} g_m - min_m g_m <= tol |J|``.

    Losses (``R = (1/n) sum_i loss``): ``"squared"`` (KRR; ``gamma = (K_eta + n lam I)^{-1}
    y``, ``J = lam y^T gamma``), ``"hinge"`` (SVM, libsvm's C-SVM with ``C = 1/(2 n lam)``
    and an intercept, as SimpleMKL) and ``"logistic"`` (kernel logistic regression by damped
    IRLS); see :mod:`kernelkit.estimators._mkl_losses`.  Several classes are one-vs-rest
    problems sharing ``eta``: ``J`` is the sum of their objectives (and so is the gradient).

    Parameters
    ----------
    kernels : list of kernels, "precomputed" or None
        Kernels over the same inputs (kernelkit kernels, kernel specs or scikit-learn names;
        e.g. ``[Spectrum(3), Mismatch(4, 1, alphabet="dna"), LocalAlignment(...)]``).
        ``"precomputed"``: ``X`` is a list of ``M`` Gram matrices (``fit``: ``(n, n)`` each;
        ``predict``: ``(m, n)`` rows against the training points), MKLpy's convention.
        ``None``: Gaussian kernels of widths ``(0.5, 1, 2)`` times the median heuristic for
        vectors, the default kernel of the input's kind otherwise.
    lam : float or "auto", default 1e-2
        Regularisation ``lam > 0`` of ``R + lam ||f||^2``.  ``"auto"``: the best 5-fold
        cross-validated score over the one grid of the estimators without a closed-form
        leave-one-out (:mod:`kernelkit.estimators._lam_auto`), each fold a SimpleMKL on the
        training Grams computed once.
    loss : {"squared", "hinge", "logistic"}, default "squared"
        ``"squared"`` makes a regressor; the other two make a classifier.
    scale : "trace" or None, default "trace"
        ``"trace"``: each training Gram is divided by its mean diagonal ``tr(K_m) / n`` (the
        same factor is applied to the test Grams), so the weights compare kernels of
        different scales; ``None``: as given.
    max_iter : int, default 100
        Most reduced-gradient steps.
    tol : float, default 1e-4
        Relative KKT tolerance of the stopping test, also the inner solvers' tolerance.
    verbose : int, bool or callable, default 0
        ``0``: silent; ``1``: progress on stderr (:mod:`kernelkit.utils._progress`: a bar on a
        terminal, else ``[SimpleMKL] iter k/max_iter objective=J`` lines per reduced-gradient
        step and a final ``done after ...`` line); a callable receives ``(step, objective)``.
    on_error : {"raise", "skip"}, default "raise"
        Training records that do not parse as the input kind (SMILES RDKit rejects, numeric
        rows with a NaN or infinite entry): refused by name, or ``"skip"``: left out of the
        fit with their targets, named in a warning (the shared route of every supervised
        estimator, :func:`kernelkit.data._detect.drop_invalid_records`).

    Attributes
    ----------
    weights_ : ndarray or tensor, shape (M,)
        The kernel weights ``eta`` (on the simplex; of the trace-scaled kernels with
        ``scale="trace"``).
    kernels_ : list of Kernel
        The fitted kernels (empty with ``"precomputed"``).
    scales_ : ndarray or tensor, shape (M,)
        Factors dividing each Gram (1 with ``scale=None``).
    dual_coef_ : ndarray or tensor, shape (n,) or (n, n_classes)
        ``gamma`` of each problem; ``intercept_`` the intercepts (hinge only, else 0).
    objective_history_ : list of float
        ``J(eta)`` after each step (non-increasing).
    n_iter_ : int
        Reduced-gradient steps taken.
    lam_ : float
        The ``lam`` of the fit (``lam``, or the one ``"auto"`` chose).
    cv_results_ : dict
        ``lam="auto"`` only: the score of every ``lam`` of the grid on every fold.
    classes_ : ndarray
        Class labels (classification losses).

    Notes
    -----
    Objective: over the kernel weights ``eta`` on the simplex and the predictor (the
    loss is the squared, hinge or logistic loss),

    .. math:: \min_{\eta \ge 0,\ \sum_m \eta_m = 1}\ \min_{f \in H_{K_\eta}}
              \frac{1}{n} \sum_{i=1}^n \ell(y_i, f(x_i)) + \lambda \|f\|^2_{H_{K_\eta}}.
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "kernels": [list, tuple, StrOptions({"precomputed"}), None],
        "lam": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "loss": [StrOptions({"squared", "hinge", "logistic"})],
        "scale": [StrOptions({"trace"}), None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "verbose": VERBOSE_CONSTRAINT,
        "on_error": ON_ERROR_CONSTRAINT,
    }

    def __init__(
        self,
        kernels: Any = None,
        lam: float | str = 1e-2,
        loss: str = "squared",
        *,
        scale: str | None = "trace",
        max_iter: int = 100,
        tol: float = 1e-4,
        verbose: VerboseLike = 0,
        on_error: str = "raise",
    ):
        self.kernels = kernels
        self.lam = lam
        self.loss = loss
        self.scale = scale
        self.max_iter = max_iter
        self.tol = tol
        self.verbose = verbose
        self.on_error = on_error

    # ------------------------------------------------------------------ inputs
    def _resolved(self, X: Any) -> list[Kernel | VectorKernelRecipe]:
        if self.kernels is None:
            kind = detect_input_kind(X)
            if kind is not InputKind.VECTOR:
                return [default_kernel(kind)]
            return [
                VectorKernelRecipe(
                    lambda Xt, w=None, f=f: Gaussian(sigma=f * median_sigma(Xt, sample_weight=w))
                )
                for f in DEFAULT_WIDTHS
            ]
        if len(self.kernels) == 0:
            raise InputError("kernels: expected at least one kernel, got an empty list")
        resolved = []
        for i, k in enumerate(self.kernels):
            if isinstance(k, str) and k.strip().lower() == "precomputed":
                raise InputError(
                    f"kernels: item {i} is 'precomputed'; pass kernels='precomputed' and a list "
                    "of Gram matrices as X"
                )
            resolved.append(resolve_kernel(k, X, name=f"kernels[{i}]"))
        kinds = [InputKind.parse(k.input_kind) for k in resolved]
        named = {kind for kind in kinds if kind is not InputKind.ANY}
        if len(named) > 1:
            listing = ", ".join(f"{i}: {kind.value!r}" for i, kind in enumerate(kinds))
            raise InputError(
                "kernels: expected kernels over the same inputs (one input kind), got kernels "
                f"over different inputs ({listing})"
            )
        return resolved

    def _fit_grams(self, X: Any) -> torch.Tensor:
        """The stack of training Grams ``(M, n, n)`` (scaled, float64 on the CPU), storing the
        fitted kernels."""
        self.kernels_, self.X_fits_ = [], []
        if self.kernels == "precomputed":
            grams = _gram_list(X, None)
            self.n_features_in_ = grams.shape[1]
        else:
            for i, spec in enumerate(self._resolved(X)):
                kernel, batch = fit_view(self, spec, X, reset=i == 0)
                if i == 0:
                    self.X_fit_ = batch
                self.kernels_.append(kernel)
                self.X_fits_.append(batch)
            grams = torch.stack(
                [
                    torch.as_tensor(gram(k, b)).to("cpu", torch.float64)
                    for k, b in zip(self.kernels_, self.X_fits_, strict=True)
                ]
            )
        n = grams.shape[1]
        if self.scale == "trace":
            scales = grams.diagonal(dim1=1, dim2=2).sum(1) / n
            scales = torch.where(scales > 0, scales, torch.ones_like(scales))
        else:
            scales = torch.ones(grams.shape[0], dtype=grams.dtype)
        self._scales = scales.numpy()
        self.scales_ = like_input(scales, X)
        return grams / scales[:, None, None]

    def _test_grams(self, X: Any, active: np.ndarray) -> torch.Tensor:
        """Scaled test Grams ``(M_active, m, n)`` of the kernels with a positive weight."""
        if self.kernels == "precomputed":
            grams = _gram_list(X, self.n_features_in_)[torch.as_tensor(active)]
        else:
            grams = torch.stack(
                [
                    torch.as_tensor(
                        gram(
                            self.kernels_[m],
                            self._prepare(self.kernels_[m], X, reset=False),
                            self.X_fits_[m],
                        )
                    ).to("cpu", torch.float64)
                    for m in active
                ]
            )
        return grams / torch.as_tensor(self._scales[active])[:, None, None]

    def _targets(self, y: Any, n: int) -> torch.Tensor:
        """Targets as columns ``(n, T)``: ``y`` (squared loss) or +-1 one-vs-rest columns."""
        if y is None:
            self._check_y_length(y, n)
        labels = to_numpy(y)
        self._check_y_length(labels, n)
        try:
            labels = column_or_1d(labels, warn=True)
            if self.loss == "squared":
                return torch.as_tensor(
                    self._validate_y_numeric(labels, n, torch.float64).numpy()[:, None]
                )
            check_classification_targets(labels)
        except ValueError as exc:
            raise _reraise(exc, "y") from exc
        self.classes_ = np.unique(labels)
        if len(self.classes_) < 2:
            raise InputError(
                f"y: SimpleMKL classification needs at least 2 classes, got 1 class "
                f"({self.classes_[0]!r})"
            )
        columns = self.classes_[1:] if len(self.classes_) == 2 else self.classes_
        return torch.as_tensor(np.stack([np.where(labels == c, 1.0, -1.0) for c in columns], 1))

    # ------------------------------------------------------------------ fit
    def _penalty(self) -> float:
        """The ``lam`` of the objective: ``lam``, or ``lam_`` once ``lam="auto"`` chose it."""
        if self.lam != "auto":
            return float(self.lam)
        check_is_fitted(self, "lam_")
        return self.lam_

    def _inner(self, K: torch.Tensor, y: torch.Tensor) -> InnerSolution:
        lam = self._penalty()
        if self.loss == "squared":
            return squared_solution(K, y, lam)
        if self.loss == "hinge":
            return hinge_solution(K, y, lam, min(self.tol, 1e-3))
        return logistic_solution(K, y, lam, self.tol)

    def objective(self, grams: torch.Tensor, eta: np.ndarray, Y: torch.Tensor) -> tuple:
        """``J(eta)`` summed over the target columns, its gradient and the inner solutions.

        ``dJ / deta_m = -lam sum_c gamma_c^T K_m gamma_c`` (course part 3, section 4).
        """
        K = torch.einsum("m,mij->ij", torch.as_tensor(eta, dtype=grams.dtype), grams)
        solutions = [self._inner(K, Y[:, c]) for c in range(Y.shape[1])]
        G = torch.stack([s.gamma for s in solutions], 1)
        grad = -self._penalty() * torch.einsum("ic,mij,jc->m", G, grams, G)
        return sum(s.objective for s in solutions), grad.numpy(), solutions

    def fit(self, X: Any, y: Any) -> SimpleMKL:
        """Learn the kernel weights and the predictor on training data ``X`` and targets ``y``."""
        self._validate_params()
        X, y, _ = self._drop_invalid(X, y, None)
        grams = self._fit_grams(X)
        Y = self._targets(y, grams.shape[1])
        self._select_lam(grams, y)
        M = grams.shape[0]
        eta = np.full(M, 1.0 / M)
        value, grad, solutions = self.objective(grams, eta, Y)
        self.objective_history_ = [value]
        self.n_iter_ = 0
        converged = M == 1
        progress = progress_of(self, self.max_iter)
        while not converged and self.n_iter_ < self.max_iter:
            active = eta > 0
            if grad[active].max() - grad.min() <= self.tol * max(abs(value), 1e-300):
                converged = True
                break
            D = reduced_gradient_direction(eta, grad)
            step = self._line_search(grams, Y, eta, D, grad, value)
            if step is None:
                converged = True
                break
            eta, value, grad, solutions = step
            self.objective_history_.append(value)
            self.n_iter_ += 1
            progress.update(self.n_iter_, objective=value)
        progress.done(self.n_iter_, "converged" if converged else "max_iter")
        if not converged:
            warn_max_iter(self, "KKT gap of the kernel weights")
        self._weights = eta
        self.weights_ = like_input(torch.as_tensor(eta), X)
        gammas = torch.stack([s.gamma for s in solutions], 1)
        self.dual_coef_ = like_input(gammas[:, 0] if Y.shape[1] == 1 else gammas, X)
        self._intercept = np.array([s.intercept for s in solutions], dtype=np.float64)
        self.intercept_ = like_input(torch.as_tensor(self._intercept), X)
        return self

    def _select_lam(self, grams: torch.Tensor, y: Any) -> None:
        """``lam_`` (and ``cv_results_`` of ``lam="auto"``: :func:`kfold_lam` on ``grams``)."""
        self.__dict__.pop("cv_results_", None)
        if self.lam != "auto":
            self.lam_ = float(self.lam)
            return
        on_grams = clone(self).set_params(kernels="precomputed", scale=None, verbose=0)
        self.lam_, self.cv_results_ = kfold_lam(
            on_grams,
            list(grams.numpy()),
            to_numpy(y),
            diagonal=grams.diagonal(dim1=1, dim2=2).mean(0),
            classifier=self.loss != "squared",
        )

    def _line_search(self, grams, Y, eta, D, grad, value) -> tuple | None:
        """Largest feasible step if it decreases ``J``, else Armijo backtracking from it."""
        down = D < 0
        if not down.any():
            return None
        t_max = float(np.min(-eta[down] / D[down]))
        slope = float(grad @ D)
        t = t_max
        for _ in range(40):
            new = np.clip(eta + t * D, 0.0, None)
            if t == t_max:
                new[down & (np.isclose(-eta / np.where(down, D, -1.0), t_max, rtol=1e-12))] = 0.0
            new /= new.sum()
            new_value, new_grad, solutions = self.objective(grams, new, Y)
            if new_value < value and (t == t_max or new_value <= value + 1e-4 * t * slope):
                return new, new_value, new_grad, solutions
            t /= 2.0
        return None

    # ------------------------------------------------------------------ predict
    def _scores(self, X: Any) -> torch.Tensor:
        check_is_fitted(self, "weights_")
        active = np.flatnonzero(self._weights > 0)
        Kt = torch.einsum(
            "m,mij->ij", torch.as_tensor(self._weights[active]), self._test_grams(X, active)
        )
        gamma = torch.as_tensor(to_numpy(self.dual_coef_), dtype=Kt.dtype)
        b = torch.as_tensor(self._intercept if gamma.ndim == 2 else self._intercept[0])
        return Kt @ gamma + b

    @available_if(lambda self: self.loss != "squared")
    def decision_function(self, X: Any) -> Any:
        """``f(x) = sum_j gamma_j sum_m eta_m K_m(x_j, x) (+ b)``, one column per problem."""
        return like_input(self._scores(X), X)

    def predict(self, X: Any) -> Any:
        """Regression values (squared loss) or class labels (hinge, logistic)."""
        scores = self._scores(X)
        if self.loss == "squared":
            return like_input(scores, X)
        scores = scores.numpy()
        index = (scores > 0).astype(int) if scores.ndim == 1 else scores.argmax(1)
        labels = self.classes_[index]
        if isinstance(X, torch.Tensor) and labels.dtype.kind in "biuf":
            return torch.as_tensor(labels, device=X.device)
        return labels

    def score(self, X: Any, y: Any) -> float:
        """R^2 (squared loss) or accuracy (classification losses)."""
        pred = to_numpy(self.predict(X))
        if self.loss == "squared":
            return float(r2_score(to_numpy(y), pred))
        return float(accuracy_score(to_numpy(y), pred))

    def __sklearn_tags__(self) -> Any:
        tags = super(KernelEstimatorMixin, self).__sklearn_tags__()
        tags.estimator_type = "regressor" if self.loss == "squared" else "classifier"
        if self.kernels == "precomputed":
            tags.input_tags.two_d_array = False
        elif isinstance(self.kernels, (list, tuple)) and self.kernels:
            first = self.kernels[0]
            kind = getattr(first, "input_kind", InputKind.VECTOR)
            if kind not in ("vector", "gram", "any"):
                tags.input_tags.two_d_array = False
                tags.input_tags.string = True
        if tags.estimator_type == "classifier":
            tags.classifier_tags = ClassifierTags()
        else:
            tags.regressor_tags = RegressorTags()
        return tags


def _gram_list(X: Any, n_train: int | None) -> torch.Tensor:
    """A list of Gram matrices as a float64 stack ``(M, rows, n)``, shapes checked."""
    if isinstance(X, (np.ndarray, torch.Tensor)) or not isinstance(X, (list, tuple)) or not X:
        raise InputError(
            "X: with kernels='precomputed' expected a non-empty list of Gram matrices, got "
            f"{type(X).__name__}"
        )
    grams = [to_tensor(K, name=f"X[{i}]", dtype=torch.float64) for i, K in enumerate(X)]
    for i, K in enumerate(grams):
        if K.ndim != 2 or K.shape != grams[0].shape:
            raise InputError(
                f"X[{i}]: expected Gram matrices of the same shape {tuple(grams[0].shape)} "
                f"(one per kernel, over the same inputs), got {tuple(K.shape)}"
            )
        if not bool(torch.isfinite(K).all()):
            raise InputError(f"X[{i}]: Gram matrix has NaN or infinite entries")
    rows, cols = grams[0].shape
    expected = rows if n_train is None else n_train
    if cols != expected:
        raise InputError(
            f"X[0]: expected Gram matrices with {expected} columns (the training points), got "
            f"shape {(rows, cols)}"
        )
    return torch.stack(grams)


__all__ = ["SimpleMKL", "reduced_gradient_direction"]
