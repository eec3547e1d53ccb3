r"""Regularised kernel canonical correlation analysis (course part 1, section 4.6)."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from kernelkit.estimators._base import KernelEstimatorMixin, result_dtype
from kernelkit.estimators._views import fit_view, second_view
from kernelkit.gram import GramCenterer, gram
from kernelkit.kernels._resolve import resolve_kernel
from kernelkit.solvers import symmetric_eigh
from kernelkit.utils._constraints import Interval
from kernelkit.utils._errors import InputError
from kernelkit.utils._validation import like_input


def _whitening(K: torch.Tensor, tau: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    r"""Eigenvectors ``U`` of the centred Gram on its range, ``D = sqrt(lam / w)`` and
    ``1 / sqrt(lam w)`` with ``w = (1 - tau) lam + tau`` (``lam`` its eigenvalues).

    ``(1 - tau) K^2 + tau K = U diag(lam w) U^T``: so ``B^{-1/2} K = U diag(D) U^T`` on the
    range of ``K``; eigenvalues below ``n eps max(lam)`` (the centring null space and
    round-off) are dropped.
    """
    eig = symmetric_eigh(K, descending=True)
    lam = eig.values
    keep = lam > K.shape[0] * torch.finfo(K.dtype).eps * max(float(lam[0]), 1e-300)
    lam, U = lam[keep], eig.vectors[:, keep]
    w = (1.0 - tau) * lam + tau
    return U, torch.sqrt(lam / w), 1.0 / torch.sqrt(lam * w)


def _correlations(A: torch.Tensor, B: torch.Tensor) -> np.ndarray:
    """Pearson correlation of each column of ``A`` with the same column of ``B`` (0 when one
    is constant)."""
    A = A - A.mean(0)
    B = B - B.mean(0)
    norms = A.norm(dim=0) * B.norm(dim=0)
    corr = (A * B).sum(0) / torch.where(norms > 0, norms, torch.ones_like(norms))
    return corr.cpu().numpy()


def _project(centerer: GramCenterer, rows: torch.Tensor, coef: Any) -> torch.Tensor:
    """``K^c(x, x_j) coef`` with the rows centred against the training mean."""
    rows = centerer.transform(rows)
    return rows @ torch.as_tensor(coef, device=rows.device).to(rows.dtype)


class KernelCCA(
    KernelEstimatorMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator
):
    r"""Kernel CCA of two views, one kernel each, with the regularisation ``tau``.

    With centred training Grams ``K_a`` and ``K_b`` (view X and view Y), the canonical
    functions ``f_a = sum_i alpha_i k_a(x_i, .)`` and ``f_b = sum_i beta_i k_b(y_i, .)``
    solve (course part 1, section 4.6, "Regularised KCCA")

    .. math:: \begin{pmatrix} 0 & K_a K_b \\ K_b K_a & 0 \end{pmatrix}
              \begin{pmatrix} \alpha \\ \beta \end{pmatrix} = \rho
              \begin{pmatrix} (1-\tau) K_a^2 + \tau K_a & 0 \\
              0 & (1-\tau) K_b^2 + \tau K_b \end{pmatrix}
              \begin{pmatrix} \alpha \\ \beta \end{pmatrix},

    normalised by ``alpha^T ((1 - tau) K_a^2 + tau K_a) alpha = 1`` (same for ``beta``).
    Solved as an SVD: with ``K = U diag(lam) U^T`` on its range and
    ``D = sqrt(lam / ((1 - tau) lam + tau))``, the ``rho`` are the singular values of
    ``M = D_a U_a^T U_b D_b`` (the eigenvalues of ``M M^T`` by
    :func:`kernelkit.solvers.symmetric_eigh`), ``alpha = U_a diag(1/sqrt(lam_a w_a)) p`` and
    ``beta = U_b diag(1/sqrt(lam_b w_b)) M^T p / rho``.  ``tau = 0`` is unregularised CCA in
    the feature spaces (spurious correlations 1 as soon as a Gram is invertible), ``tau = 1``
    maximises the covariance.  ``rho`` is not a correlation when ``tau > 0``: the empirical
    correlations of the projected training data are ``correlations_`` (course part 1,
    section 4.6, last table).

    Parameters
    ----------
    kernels : (kernel_x, kernel_y) or None
        One kernel per view (kernelkit kernels, specs, scikit-learn names or ``None``: the
        default kernel of each view's kind, Gaussian with the median heuristic for vectors);
        the views may be of different kinds (e.g. strings and vectors).
    n_components : int, default 2
        Number of canonical pairs (at most the number of training points).
    tau : float, default 0.1
        Regularisation ``0 <= tau <= 1``.

    Attributes
    ----------
    kernels_ : tuple of Kernel
        The fitted kernels of the two views.
    rho_ : ndarray, shape (n_components,)
        The generalised eigenvalues (largest first).
    correlations_ : ndarray, shape (n_components,)
        ``corr(K_a alpha_k, K_b beta_k)`` on the training data.
    alpha_, beta_ : ndarray or tensor, shape (n, n_components)
        Dual coefficients of the canonical functions of each view.

    Notes
    -----
    ``fit(X, Y)`` takes both views; ``transform(X)`` returns the X-view projection
    ``sum_i alpha_i k_a^c(x_i, x)`` (centred with the training mean) and
    ``transform(X, Y)`` the pair ``(Z_x, Z_y)``.  ``fit_transform(X, Y)`` is scikit-learn's:
    the X-view projection.

    Notes
    -----
    Objective: the ``l``-th pair of canonical functions solves, orthogonally to the
    previous pairs (``tau`` in ``[0, 1]``; empirical (co)variances of the centred training
    data),

    .. math:: \max_{f_a, f_b} \widehat{\mathrm{cov}}(f_a(x), f_b(y)) \quad \text{s.t.} \quad
              (1 - \tau) \widehat{\mathrm{var}}(f_a(x)) + \frac{\tau}{n} \|f_a\|^2 = \frac1n
              \ \text{(same for } f_b),

    the generalised eigenproblem above.
    """

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        "kernels": [tuple, list, None],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "tau": [Interval(Real, 0, 1, closed="both")],
    }

    def __init__(self, kernels: Any = None, n_components: int = 2, tau: float = 0.1):
        self.kernels = kernels
        self.n_components = n_components
        self.tau = tau

    def _kernel_pair(self) -> tuple[Any, Any]:
        if self.kernels is None:
            return None, None
        if len(self.kernels) != 2:
            raise InputError(
                f"kernels: expected a pair (kernel_x, kernel_y), got {len(self.kernels)} kernels"
            )
        return self.kernels[0], self.kernels[1]

    def fit(self, X: Any, Y: Any) -> KernelCCA:
        """Fit the canonical pairs of the views ``X`` and ``Y`` (same number of samples)."""
        self._validate_params()
        spec_x, spec_y = self._kernel_pair()
        kernel_x, self.X_fit_ = fit_view(
            self, resolve_kernel(spec_x, X, name="kernels[0]"), X, reset=True
        )
        if Y is None:
            raise InputError(
                "Y: KernelCCA requires y to be passed, but the target y is None (y is the "
                "second view Y)"
            )
        kernel_y, self.Y_fit_, self.n_features_y_ = second_view(
            resolve_kernel(spec_y, Y, name="kernels[1]"), Y, None, reset=True
        )
        n = len(self.X_fit_)
        if len(self.Y_fit_) != n:
            raise InputError(f"Y: expected {n} samples (as X), got {len(self.Y_fit_)}")
        if self.n_components > n:
            raise InputError(
                f"n_components: expected at most the number of samples ({n}), got "
                f"{self.n_components}"
            )
        self.kernels_ = (kernel_x, kernel_y)
        dtype = result_dtype(self.X_fit_)
        Ka = torch.as_tensor(gram(kernel_x, self.X_fit_)).to(dtype)
        Kb = torch.as_tensor(gram(kernel_y, self.Y_fit_)).to(Ka.device, dtype)
        self.centerer_x_, self.centerer_y_ = GramCenterer().fit(Ka), GramCenterer().fit(Kb)
        Ka, Kb = self.centerer_x_.transform(Ka), self.centerer_y_.transform(Kb)
        tau = float(self.tau)
        Ua, Da, Sa = _whitening(Ka, tau)
        Ub, Db, Sb = _whitening(Kb, tau)
        M = Da[:, None] * (Ua.T @ Ub) * Db[None, :]
        k = self.n_components
        eig = symmetric_eigh(M @ M.T, descending=True)
        rho = eig.values[:k].clamp(min=0.0).sqrt()
        P = eig.vectors[:, :k]
        if P.shape[1] < k:  # rank of view X below n_components: the rest are zero pairs
            P = torch.nn.functional.pad(P, (0, k - P.shape[1]))
            rho = torch.nn.functional.pad(rho, (0, k - rho.shape[0]))
        Q = (M.T @ P) / torch.where(rho > 0, rho, torch.ones_like(rho))[None, :]
        alpha = Ua @ (Sa[:, None] * P)
        beta = Ub @ (Sb[:, None] * Q)
        self.rho_ = like_input(rho, X)
        self.correlations_ = like_input(torch.as_tensor(_correlations(Ka @ alpha, Kb @ beta)), X)
        self.alpha_ = like_input(alpha, X)
        self.beta_ = like_input(beta, X)
        return self

    def transform(self, X: Any, Y: Any = None) -> Any:
        """Projections of new points: ``Z_x`` (n_samples, n_components), or ``(Z_x, Z_y)``
        when ``Y`` is given."""
        check_is_fitted(self, "alpha_")
        kernel_x, kernel_y = self.kernels_
        Xb = self._prepare(kernel_x, X, reset=False)
        Zx = like_input(_project(self.centerer_x_, gram(kernel_x, Xb, self.X_fit_), self.alpha_), X)
        if Y is None:
            return Zx
        _, Yb, _ = second_view(kernel_y, Y, self.n_features_y_, reset=False)
        Zy = _project(self.centerer_y_, gram(kernel_y, Yb, self.Y_fit_), self.beta_)
        return Zx, like_input(Zy, X)

    @property
    def _n_features_out(self) -> int:
        return self.n_components

    def __sklearn_tags__(self) -> Any:
        tags = super(KernelEstimatorMixin, self).__sklearn_tags__()
        tags.target_tags.required = True
        first = None if self.kernels is None else self.kernels[0]
        kind = getattr(first, "input_kind", "vector")
        if kind not in ("vector", "gram", "any"):
            tags.input_tags.two_d_array = False
            tags.input_tags.string = True
        return tags


__all__ = ["KernelCCA"]
