"""Kernel ridge regression (course part 1, slide "Kernel ridge regression (KRR)")."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
import torch
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.metrics import r2_score
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted

from kernelkit.estimators._base import (
    KERNEL_CONSTRAINTS,
    KernelEstimatorMixin,
    check_sample_weight,
    result_dtype,
    to_numpy,
)
from kernelkit.gram import gram
from kernelkit.kernels import Kernel
from kernelkit.solvers import CholeskyResult, cholesky_factor, cholesky_solve
from kernelkit.utils.validation import like_input


def kernel_ridge_coefficients(
    K: torch.Tensor, Y: torch.Tensor, *, lam: float, overwrite_K: bool = False
) -> CholeskyResult | None:
    r"""Dual coefficients of kernel ridge regression, ``alpha = (K + n lam I)^{-1} Y``.

    Minimiser of the regularised empirical risk (course part 1, slide "Kernel ridge regression
    (KRR)")

    .. math:: \min_{f \in H} \frac{1}{n} \sum_{i=1}^n (y_i - f(x_i))^2 + \lambda \|f\|_H^2,

    whose representer form ``f = sum_i alpha_i k(x_i, .)`` has the stationarity condition
    ``(2/n) K [(K + n lam I) alpha - Y] = 0``, hence ``alpha = (K + n lam I)^{-1} Y``
    (scikit-learn's ``KernelRidge(alpha=n * lam)``).  For several output columns this is the
    vector-valued RKHS ridge with the identity operator: one solve, one column per output.

    Parameters
    ----------
    K : torch.Tensor
        Training Gram matrix, shape ``(n, n)``.
    Y : torch.Tensor
        Targets, shape ``(n,)`` or ``(n, n_outputs)``.
    lam : float
        Regularisation ``lam >= 0`` (``lam = 0`` interpolates, with the jitter ladder of
        :func:`kernelkit.solvers.cholesky_solve` when ``K`` is singular).
    overwrite_K : bool
        Fast path for large ``n``: shift the diagonal and factorise ``K`` *in place* (no
        second ``n x n`` buffer, no validation pass).  ``K`` is destroyed, and the function
        returns ``None`` when ``K + n lam I`` is not numerically positive definite; the caller
        then rebuilds ``K`` and calls again without ``overwrite_K`` (jitter ladder).

    Returns
    -------
    CholeskyResult or None
        ``solution`` holds ``alpha`` (same shape as ``Y``); ``jitter`` the jitter used.
    """
    n = K.shape[0]
    if not overwrite_K:
        return cholesky_solve(K, Y, shift=n * lam)
    fac = cholesky_factor(K, shift=n * lam, jitter=0.0, overwrite=True, strict=False)
    if not fac.success:
        return None
    X = fac.solve(Y)
    if not bool(torch.isfinite(X).all()):
        return None
    return CholeskyResult(X, fac.factor, 0.0, n * lam)


class KernelRidge(KernelEstimatorMixin, RegressorMixin, BaseEstimator):
    r"""Kernel ridge regression with the course's ``(1/n)`` convention.

    Solves (course part 1, section 3.1)

    .. math:: \min_{f \in H} \frac{1}{n} \sum_{i=1}^n \|y_i - f(x_i)\|^2 + \lambda \|f\|_H^2,
              \qquad \alpha = (K + n \lambda I)^{-1} Y, \qquad f(x) = \sum_i \alpha_i k(x_i, x).

    Multi-output targets are handled jointly (vector-valued RKHS with the identity operator),
    which is the same as one independent ridge per output column.  This equals
    scikit-learn's ``KernelRidge(alpha=n * lam)``: with ``Gaussian(sigma)``, its
    ``kernel="rbf", gamma=1 / (2 sigma^2)``.

    With ``sample_weight`` the data term is ``(1/n) sum_i w_i (y_i - f(x_i))^2`` (weighted
    KRR, course part 1, section 3.2 "Weighted KRR"), whose solution is

    .. math:: \alpha = W^{1/2} (W^{1/2} K W^{1/2} + n \lambda I)^{-1} W^{1/2} y,
              \qquad W = \mathrm{diag}(w),

    the stationarity condition ``W (K alpha - y) + n lam alpha = 0`` written with the symmetric
    matrix ``W^{1/2} K W^{1/2}`` (valid for ``w_i >= 0``; a zero weight gives
    ``alpha_i = 0``).  ``n`` is the number of samples, so this equals scikit-learn's
    ``KernelRidge(alpha=n * lam).fit(X, y, sample_weight=w)``.

    Parameters
    ----------
    kernel : Kernel, str or None, optional
        A kernelkit kernel, a kernel spec (``"gaussian:sigma=2"``), a scikit-learn name
        (``"rbf"``, ``"laplacian"``, ``"poly"``, ``"linear"``, ``"cosine"``,
        ``"precomputed"``) or ``None``: the default kernel of the input's kind (Gaussian with
        the median heuristic for vectors, Tanimoto for molecules, ``Spectrum(k=3)`` for
        sequences, Weisfeiler-Lehman for graphs); see :mod:`kernelkit.estimators._kernels`.
        With ``Precomputed()`` (or ``"precomputed"``) ``fit`` takes the training Gram and
        ``predict`` the Gram rows of new points against the training points.
    lam : float, default 1e-3
        Regularisation ``lam >= 0`` of the ``(1/n)``-normalised objective; scikit-learn's
        ``alpha`` is ``n * lam`` (its default ``alpha = 1`` is ``lam = 1/n``: 1e-3 matches it
        at n = 1000).
    gamma, degree, coef0 : optional
        scikit-learn's kernel parameters, used only with its kernel names: ``gamma`` of
        ``"rbf"``, ``"laplacian"``, ``"poly"`` (``None``: ``1 / n_features``), ``degree``
        (``None``: 3) and ``coef0`` (``None``: 1) of ``"poly"``.

    Attributes
    ----------
    kernel_ : Kernel
        The fitted clone of ``kernel``.
    X_fit_ : torch.Tensor or batch
        The training data prepared by ``kernel_``.
    dual_coef_ : ndarray or torch.Tensor
        ``alpha``, shape ``(n_samples,)`` or ``(n_samples, n_outputs)``, in the container of
        the training input.
    jitter_ : float
        Jitter added to the diagonal by the Cholesky solver (0 unless ``K + n lam I`` was
        numerically singular).
    n_features_in_ : int
        Number of features (vector input) or of training points (precomputed Gram).

    Examples
    --------
    >>> import numpy as np
    >>> from kernelkit import KernelRidge
    >>> from kernelkit.kernels import Gaussian
    >>> X = np.linspace(0, 1, 20)[:, None]
    >>> model = KernelRidge(Gaussian(sigma=0.2), lam=1e-3).fit(X, np.sin(6 * X[:, 0]))
    >>> model.predict(X[:2]).shape
    (2,)
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **KERNEL_CONSTRAINTS,
        "lam": [Interval(Real, 0, None, closed="left")],
        "gamma": [Interval(Real, 0, None, closed="neither"), None],
        "degree": [Interval(Integral, 1, None, closed="left"), None],
        "coef0": [Interval(Real, 0, None, closed="left"), None],
    }

    def __init__(
        self,
        kernel: Kernel | str | None = None,
        lam: float = 1e-3,
        *,
        gamma: float | None = None,
        degree: int | None = None,
        coef0: float | None = None,
    ):
        self.kernel = kernel
        self.lam = lam
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> KernelRidge:
        """Fit ``alpha = (K + n lam I)^{-1} y`` (weighted: see the class docstring)."""
        self._validate_params()
        lam = float(self.lam)
        Xb = self._fit_X(X)
        dtype = result_dtype(Xb)
        Y = self._validate_y_numeric(y, len(Xb), dtype)
        K = gram(self.kernel_, Xb)
        Y = Y.to(K.device)
        w = check_sample_weight(sample_weight, len(Xb))
        root_w = None if w is None else torch.as_tensor(np.sqrt(w), dtype=K.dtype, device=K.device)
        Y = _weigh(Y, root_w)
        result = kernel_ridge_coefficients(_weigh_gram_(K, root_w), Y, lam=lam, overwrite_K=True)
        del K
        if result is None:  # not numerically PD: rebuild K and climb the jitter ladder
            K = _weigh_gram_(gram(self.kernel_, Xb), root_w)
            result = kernel_ridge_coefficients(K, Y, lam=lam)
        self.dual_coef_ = like_input(_weigh(result.solution, root_w), X)
        self.jitter_ = float(result.jitter)
        return self

    def predict(self, X: Any) -> Any:
        """Predictions ``f(x) = sum_i alpha_i k(x_i, x)`` for new data ``X``."""
        check_is_fitted(self, "dual_coef_")
        Xb = self._predict_X(X)
        Kt = gram(self.kernel_, Xb, self.X_fit_)
        alpha = torch.as_tensor(self.dual_coef_, device=Kt.device).to(Kt.dtype)
        return like_input(Kt @ alpha, X)

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """Coefficient of determination R^2 of the predictions (scikit-learn's ``r2_score``)."""
        pred = to_numpy(self.predict(X))
        return float(r2_score(to_numpy(y), pred, sample_weight=sample_weight))

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = True
        return tags


def _weigh(Y: torch.Tensor, root_w: torch.Tensor | None) -> torch.Tensor:
    """``W^{1/2} Y`` (rows scaled by the square roots of the weights); ``Y`` when unweighted."""
    if root_w is None:
        return Y
    return Y * (root_w if Y.ndim == 1 else root_w[:, None])


def _weigh_gram_(K: torch.Tensor, root_w: torch.Tensor | None) -> torch.Tensor:
    """``W^{1/2} K W^{1/2}`` in place; ``K`` when unweighted."""
    if root_w is None:
        return K
    return K.mul_(root_w[:, None]).mul_(root_w[None, :])


__all__ = ["KernelRidge", "kernel_ridge_coefficients"]
