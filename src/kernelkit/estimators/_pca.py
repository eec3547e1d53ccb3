"""Kernel principal component analysis (course part 1, slides "Kernel Principal Component
Analysis (PCA)")."""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
import torch
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from kernelkit.estimators._base import (
    KERNEL_CONSTRAINTS,
    KERNEL_PARAMS_CONSTRAINT,
    KernelEstimatorMixin,
    result_dtype,
)
from kernelkit.estimators._nystrom_unsupervised import (
    nystrom_kpca,
    pre_image_map,
    signed_eigenvectors,
)
from kernelkit.estimators._preimage import (
    chosen as _chosen,
)
from kernelkit.estimators._preimage import (
    nearest_candidates,
    pick,
    squared_code_distances,
)
from kernelkit.gram import GramCenterer, gram
from kernelkit.gram._nystrom import CENTRE_METHODS, centre_count, choose_centres, too_many_centres
from kernelkit.kernels import Kernel, PrecomputedBatch
from kernelkit.kernels._precomputed import Precomputed, check_gram
from kernelkit.kernels._resolve import SKLEARN_KERNELS
from kernelkit.kernels._resolve import _gamma as sklearn_gamma
from kernelkit.kernels._sparse import SparseRows
from kernelkit.solvers import cholesky_solve, top_eigenpairs
from kernelkit.solvers._eigen import fix_signs
from kernelkit.solvers._psd import spectrum_check
from kernelkit.utils._constraints import Interval, StrOptions
from kernelkit.utils._errors import InputError, NotFittedError, NotPSDError
from kernelkit.utils._numerics import eps
from kernelkit.utils._seeding import RandomStateLike, as_seed
from kernelkit.utils._validation import like_input, to_tensor


@dataclass
class KernelPCAResult:
    """Principal components of a centred Gram matrix.

    Attributes
    ----------
    eigenvalues : torch.Tensor
        ``Delta_i > 0``, descending, shape ``(k,)`` (``k`` may be less than asked when the
        centred Gram has fewer positive eigenvalues).
    eigenvectors : torch.Tensor
        Unit eigenvectors ``u_i`` as columns, shape ``(n, k)``, signed so that the entry of
        largest magnitude of each column is positive (scikit-learn's ``svd_flip`` rule).
    alphas : torch.Tensor
        Expansion coefficients ``alpha_i = u_i / sqrt(Delta_i)`` of the unit-norm principal
        functions ``f_i = sum_j alpha_ij k~(x_j, .)``.
    """

    eigenvalues: torch.Tensor
    eigenvectors: torch.Tensor
    alphas: torch.Tensor


def kernel_pca(
    Kc: torch.Tensor,
    n_components: int,
    *,
    method: str = "auto",
    seed: int = 0,
    max_iter: int | None = None,
    remove_zero_eig: bool = True,
    gram_scale: float = 0.0,
) -> KernelPCAResult:
    r"""Kernel PCA of a *centred* Gram matrix (course part 1, slide "Kernel Principal
    Component Analysis (PCA): Summary").

    The principal functions maximise the variance ``(1/n) sum_k f(x_k)^2`` under
    ``||f||_H = 1`` and orthogonality; with ``f_i = sum_j alpha_ij k~(x_j, .)`` and
    ``K_c = U Delta U^T`` the solution is

    .. math:: \alpha_i = u_i / \sqrt{\Delta_i}, \qquad
              \alpha_i^T K_c \alpha_j = \delta_{ij},

    and the training projections are ``K_c alpha_i = sqrt(Delta_i) u_i``.  Eigenvalues that
    are not positive (``Delta_i <= n eps max(Delta_1, max|K|)``: round-off of a singular
    ``K_c``, whose centring loses ``eps max|K|`` per entry of the uncentred ``K``; note
    ``K_c 1 = 0``) cannot be normalised and are dropped (course section 6, pitfalls); with
    ``remove_zero_eig=False`` they are kept as components of eigenvalue 0 whose projections are
    0 (``alpha_i = 0``; scikit-learn's ``remove_zero_eig=False``).  Significantly negative
    eigenvalues among the ``n_components`` largest are an error
    (:func:`check_negative_eigenvalues`).

    Parameters
    ----------
    Kc : torch.Tensor
        Centred training Gram, shape ``(n, n)``.
    n_components : int
        Number of components asked for (``<= n``).
    method : str
        Eigensolver of :func:`kernelkit.solvers.top_eigenpairs`.
    seed : int
        Seed of the iterative eigensolvers' random start.
    max_iter : int, optional
        ``max_iter`` of :func:`~kernelkit.solvers.top_eigenpairs` (``"randomized"``: the power
        iterations).
    remove_zero_eig : bool
        Drop the zero eigenvalues (True) or keep them as zero components (False).
    gram_scale : float
        ``max|K|`` of the Gram before centring (0: unknown), the scale of its round-off.

    Raises
    ------
    NotPSDError
        For a significantly negative eigenvalue among the ``n_components`` largest.
    """
    n = Kc.shape[0]
    eig = top_eigenpairs(
        Kc, n_components, method=method, largest=True, seed=seed, max_iter=max_iter
    )
    values, vectors = eig.values, eig.vectors
    check_negative_eigenvalues(values)
    top = float(values[0]) if values.numel() else 0.0
    keep = values > max(n, 1) * eps(values.dtype) * max(top, gram_scale)
    if top <= 0:
        keep = torch.zeros_like(keep)
    vectors = fix_signs(vectors)  # the solvers' sign rule (top_eigenpairs already applies it)
    if not remove_zero_eig:  # zero-variance components: eigenvalue 0, projections 0
        values = torch.where(keep, values, torch.zeros_like(values))
        scale = torch.where(keep, values, torch.ones_like(values)).rsqrt() * keep
        return KernelPCAResult(values, vectors, vectors * scale)
    values, vectors = values[keep], vectors[:, keep]
    return KernelPCAResult(values, vectors, vectors / values.sqrt())


def check_negative_eigenvalues(values: torch.Tensor) -> None:
    """Refuse kept eigenvalues of a centred Gram that are significantly negative.

    A Gram matrix is PSD, so an eigenvalue below ``-tol max(Delta_max, 0)``
    (:func:`kernelkit.solvers.spectrum_check`, the rule of
    :func:`kernelkit.solvers.check_psd`) among those asked for means the matrix is not a Gram
    (e.g. a precomputed similarity), not round-off.

    Raises
    ------
    NotPSDError
        With scikit-learn's sentence ``There are significant negative eigenvalues``.
    """
    verdict = spectrum_check(values)
    if not verdict.is_psd:
        largest, smallest = float(values.abs().max()), verdict.min_eigenvalue
        raise NotPSDError(
            f"n_components: There are significant negative eigenvalues ({-smallest / largest:.3g} "
            "of the maximum positive) among the components asked for: the centred Gram is not "
            "positive semi-definite (a precomputed similarity that is not a kernel?); ask for "
            "fewer components or clip its negative eigenvalues"
        )


def center_train_gram_(K: torch.Tensor, centerer: GramCenterer) -> torch.Tensor:
    r"""Centre the symmetric training Gram ``K`` *in place* with a centerer fitted on it.

    ``K^c_ij = K_ij - m_i - m_j + g`` with the column means ``m`` (= row means, ``K`` being
    symmetric) and grand mean ``g`` (course part 1, slide "Centering data in the feature
    space"); equal to ``centerer.transform(K)`` without a second ``n x n`` buffer.
    """
    m = centerer.col_means_.to(K.device, K.dtype)
    return K.sub_(m[:, None]).sub_(m[None, :]).add_(centerer.grand_mean_)


class KernelPCA(
    KernelEstimatorMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator
):
    r"""Kernel PCA: principal components in the RKHS (course part 1, section 4.2).

    ``fit`` centres the training Gram in feature space (:class:`kernelkit.gram.GramCenterer`),
    takes its top eigenpairs ``(Delta_i, u_i)``, drops non-positive eigenvalues and normalises
    ``alpha_i = u_i / sqrt(Delta_i)`` so that the principal functions have unit RKHS norm.
    ``transform(X)`` projects new points, ``K~(X, X_fit) alpha`` with the test rows centred by
    the *training* means; ``fit_transform`` returns ``sqrt(Delta_i) u_i``.  Equal, up to the
    sign of each column, to scikit-learn's ``KernelPCA`` with the same kernel (signs here
    follow the same ``svd_flip`` rule, so they usually agree too).

    Parameters
    ----------
    kernel : Kernel, str or None, optional
        A kernelkit kernel, a kernel spec, a scikit-learn name (``"rbf"``, ``"poly"``,
        ``"precomputed"``...) or ``None``: the default kernel of the input's kind (see
        :mod:`kernelkit.kernels._resolve`).  ``Precomputed()`` takes the training Gram in
        ``fit`` and Gram rows against the training points in ``transform``.
    n_components : int or None, default 2
        Number of components (at most the number of training samples); ``None``: every
        component of positive eigenvalue (scikit-learn's ``n_components=None``).  Fewer are
        kept when the centred Gram has fewer positive eigenvalues (at most
        ``rank(K_c) <= n - 1``).
    eigen_solver : str, default "auto"
        Method of :func:`kernelkit.solvers.top_eigenpairs` (``"auto"`` picks the fastest
        exact method for the size); ``"dense"`` is ``"full"`` (LAPACK, scikit-learn's name),
        ``"randomized"`` the randomised range finder of Halko, Martinsson and Tropp (2011)
        with ``iterated_power`` power iterations
        (:func:`kernelkit.solvers.randomized_eigh`; approximate, for a decaying
        spectrum and ``n_components << n``).
    iterated_power : int or "auto", default "auto"
        Power iterations of ``eigen_solver="randomized"`` (``"auto"``: 7 when
        ``n_components < n / 10``, else 4, as scikit-learn).
    fit_inverse_transform : bool, default False
        Learn an approximate pre-image map (vector input only; Bakır, Weston, Schölkopf 2004,
        as scikit-learn): kernel ridge regression from the training codes ``Z`` back to ``X``
        with the same kernel on the codes, ``beta = (k(Z, Z) + n inverse_lam I)^{-1} X`` and
        ``inverse_transform(z) = k(z, Z) beta``.
    inverse_lam : float, default 1.0
        Ridge ``lam >= 0`` of the pre-image map, in the ``(1/n) sum loss + lam ||g||^2``
        convention: scikit-learn's ``alpha`` is ``n * inverse_lam``.
    random_state : int, RandomState, Generator or None
        Seed of the random start of the iterative eigensolvers (``"arpack"``, ``"block"``;
        ``"full"`` and ``"subset"`` are deterministic); ``None`` draws fresh entropy
        (an int makes fits reproducible).  A generator is consumed (see
        :mod:`kernelkit.utils._seeding`).
    gamma, degree, coef0 : optional
        scikit-learn's kernel parameters, used only with its kernel names.
    kernel_params : dict, optional
        Keyword arguments of a callable ``kernel`` (``f(x, y, **kernel_params)``).
    solver : {"exact", "nystrom"}, default "exact"
        ``"exact"``: the ``n x n`` centred Gram above.  ``"nystrom"``: the same eigenproblem on
        the Nyström-approximated Gram of ``n_centers`` centres, solved in the ``m``-dimensional
        feature space (``S = Phi^T Phi - n mu mu^T``, one streamed pass over the data; see
        :mod:`kernelkit.estimators._nystrom_unsupervised`); ``transform`` is streamed in row
        tiles, ``reconstruction_error`` measures the distance to the Nyström mean and the
        pre-image map is fitted by one-pass Nyström ridge regression on the same centres.
        With ``n_centers = n`` it equals the exact solver (up to the sign of each column).
    n_centers : int, default 1000
        ``"nystrom"`` only: number ``m`` of centres; more than the training samples fits the
        exact solver, with a warning that says so.
    centers : {"uniform", "kmeans++", "greedy"} or array of points, default "uniform"
        ``"nystrom"`` only: how the centres are chosen
        (:func:`kernelkit.gram._nystrom.choose_centres`), or the centres themselves.
    remove_zero_eig : bool, default True
        Drop the components of zero eigenvalue (``Delta_i <= n eps max(Delta_1, max|K|)``:
        no variance, no unit-norm principal function), so ``n_components_`` may be less than
        ``n_components``.  ``False`` keeps exactly ``n_components`` (scikit-learn's default):
        those components get eigenvalue 0 and projections 0.  ``n_components=None`` always
        drops them (as scikit-learn).

    With scikit-learn's name ``kernel="precomputed"`` the matrix is read as scikit-learn's
    ``KernelPCA`` reads it: a non-symmetric matrix is replaced by its symmetric part
    ``(K + K^T) / 2`` (same quadratic form ``x^T K x``) with a ``UserWarning``, and it need
    not be PSD as long as the ``n_components`` largest eigenvalues of the centred matrix are
    not significantly negative (else ``NotPSDError``, scikit-learn's "There are significant
    negative eigenvalues").  kernelkit's ``Precomputed()`` keeps its checks (symmetric to
    round-off, PSD; :func:`kernelkit.kernels._precomputed.check_gram`), and the Grams of
    kernelkit's kernels and of callables are used as computed (with the same check of the
    kept eigenvalues).

    Attributes
    ----------
    eigenvalues_ : ndarray or tensor, shape (n_components_,)
        Eigenvalues ``Delta_i`` of the centred Gram (the variance of component ``i`` is
        ``Delta_i / n``).
    eigenvectors_ : ndarray or tensor, shape (n_samples, n_components_)
        Unit eigenvectors ``u_i`` of the centred Gram.
    n_components_ : int
        Number of components kept.
    gamma_ : float or None
        The ``gamma`` of a scikit-learn kernel name that reads it (``"rbf"``, ``"laplacian"``,
        ``"poly"``): ``gamma``, or ``1 / n_features`` when None (``"chi2"``: 1); None for
        other kernels.
    centerer_ : GramCenterer
        Training means used to centre test rows.
    dual_coef_, X_transformed_fit_ :
        The pre-image map (when ``fit_inverse_transform``).
    solver_ : str
        The solver that fitted (``"exact"`` or ``"nystrom"``).

    Notes
    -----
    Objective: the ``l``-th principal function maximises the empirical variance of the
    centred training data under unit RKHS norm, orthogonally to the previous ones,

    .. math:: \max_{f \in H,\ \|f\|_H = 1,\ f \perp f_1, \dots, f_{l-1}}
              \frac{1}{n} \sum_{i=1}^n \big(f(x_i) - \bar f\big)^2,

    i.e. the eigenproblem ``K_c u = Delta u`` of the centred Gram, ``f = sum_i alpha_i
    k(x_i, .)`` with ``alpha = u / sqrt(Delta)``.
    """

    _sparse_input: ClassVar[bool] = True

    def __init__(
        self,
        kernel: Kernel | str | None = None,
        n_components: int | None = 2,
        *,
        eigen_solver: str = "auto",
        iterated_power: int | str = "auto",
        fit_inverse_transform: bool = False,
        inverse_lam: float = 1.0,
        random_state: RandomStateLike = None,
        gamma: float | None = None,
        degree: int | None = None,
        coef0: float | None = None,
        kernel_params: dict | None = None,
        solver: str = "exact",
        n_centers: int = 1000,
        centers: str | Any = "uniform",
        remove_zero_eig: bool = True,
    ):
        self.kernel = kernel
        self.n_components = n_components
        self.eigen_solver = eigen_solver
        self.iterated_power = iterated_power
        self.fit_inverse_transform = fit_inverse_transform
        self.inverse_lam = inverse_lam
        self.random_state = random_state
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.solver = solver
        self.n_centers = n_centers
        self.centers = centers
        self.remove_zero_eig = remove_zero_eig

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **KERNEL_CONSTRAINTS,
        **KERNEL_PARAMS_CONSTRAINT,
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "eigen_solver": [
            StrOptions({"auto", "dense", "full", "subset", "arpack", "block", "randomized"})
        ],
        "iterated_power": [Interval(Integral, 0, None, closed="left"), StrOptions({"auto"})],
        "fit_inverse_transform": ["boolean"],
        "inverse_lam": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state", np.random.Generator],
        "gamma": [Interval(Real, 0, None, closed="neither"), None],
        "degree": [Interval(Integral, 1, None, closed="left"), None],
        "coef0": [Interval(Real, 0, None, closed="left"), None],
        "solver": [StrOptions({"exact", "nystrom"})],
        "n_centers": [Interval(Integral, 1, None, closed="left")],
        "centers": [StrOptions(set(CENTRE_METHODS)), "array-like"],
        "remove_zero_eig": ["boolean"],
    }

    # ------------------------------------------------------------------ fit
    def _fit(self, X: Any) -> torch.Tensor:
        self._validate_params()
        inverse_lam = float(self.inverse_lam)
        if self.fit_inverse_transform and (
            isinstance(self.kernel, Precomputed)
            or (isinstance(self.kernel, str) and self.kernel.strip().lower() == "precomputed")
        ):
            raise InputError(
                "fit_inverse_transform: Cannot fit_inverse_transform with a precomputed kernel "
                "(the pre-image map is learned from the input vectors); set "
                "fit_inverse_transform=False"
            )
        name = self.kernel.strip().lower() if isinstance(self.kernel, str) else None
        Xb = self._fit_X(self._precomputed_gram(X) if name == "precomputed" else X)
        n = len(Xb)
        self.gamma_ = (
            sklearn_gamma(self.gamma, Xb, name=name)
            if "gamma" in SKLEARN_KERNELS.get(name, ())
            else None
        )
        n_components = n if self.n_components is None else int(self.n_components)
        if n_components > n:
            raise InputError(
                f"n_components: expected at most n_samples={n} components (one per training "
                f"sample), got {n_components}"
            )
        if self.fit_inverse_transform and isinstance(Xb, SparseRows):
            raise InputError(
                "fit_inverse_transform: the pre-image map is dense in X (one row of n_features "
                f"per sample); got sparse X of shape {Xb.shape}, densify X or set "
                "fit_inverse_transform=False"
            )
        if self.fit_inverse_transform and self.kernel_.input_kind != "vector":
            raise InputError(
                "fit_inverse_transform: the pre-image map needs vector input, got a kernel on "
                f"{self.kernel_.input_kind!r} input; set fit_inverse_transform=False"
            )
        self.__dict__.pop("_nystrom", None)
        self.solver_ = "exact"
        if self.solver == "nystrom" and not too_many_centres(
            centre_count(self.n_centers, self.centers), n, exact="the exact solver"
        ):
            self.solver_ = "nystrom"
            return self._fit_nystrom(Xb, n_components, X)
        K = gram(self.kernel_, Xb)
        scale = float(K.abs().max())
        self.centerer_ = GramCenterer().fit(K)
        Kc = center_train_gram_(K, self.centerer_)
        seed = as_seed(self.random_state)
        method = "full" if self.eigen_solver == "dense" else self.eigen_solver
        power = None if self.iterated_power == "auto" else int(self.iterated_power)
        remove = bool(self.remove_zero_eig) or self.n_components is None
        result = kernel_pca(
            Kc,
            n_components,
            method=method,
            seed=seed,
            max_iter=power,
            remove_zero_eig=remove,
            gram_scale=scale,
        )
        del Kc
        self._alphas = result.alphas
        self.n_components_ = int(result.eigenvalues.shape[0])
        self.eigenvalues_ = like_input(result.eigenvalues, X)
        self.eigenvectors_ = like_input(result.eigenvectors, X)
        Z = result.eigenvectors * result.eigenvalues.sqrt()
        if self.fit_inverse_transform:
            self._Z_fit = Z
            Kz = gram(self.kernel_, Z)
            self._pre_image = cholesky_solve(Kz, self.X_fit_, shift=n * inverse_lam).solution
            self.X_transformed_fit_ = like_input(Z, X)
            self.dual_coef_ = like_input(self._pre_image, X)
        return Z

    @staticmethod
    def _precomputed_gram(X: Any) -> Any:
        """A precomputed training Gram as :class:`PrecomputedBatch`: square, finite, its
        symmetric part when not symmetric (warned), not checked PSD (see the class docs)."""
        if isinstance(X, PrecomputedBatch) or sp.issparse(X):
            return X
        K = check_gram(to_tensor(X, name="X"), check_psd=False, symmetrise=True)
        return PrecomputedBatch(K, K.diagonal().clone(), torch.arange(K.shape[0]))

    def _fit_nystrom(self, Xb: Any, n_components: int, X: Any) -> torch.Tensor:
        """``solver="nystrom"``: the eigenproblem in the Nyström feature space."""
        if isinstance(Xb, PrecomputedBatch):
            raise InputError(
                "solver: 'nystrom' evaluates the kernel against its centres; a precomputed "
                "Gram has no such rows, use solver='exact'"
            )
        choice = choose_centres(
            self.kernel_, Xb, self.n_centers, self.centers, random_state=self.random_state
        )
        model = nystrom_kpca(self.kernel_, Xb, choice, n_components)
        p = int(model.eigenvalues.shape[0])
        model, u = signed_eigenvectors(model, model.codes(Xb)[:, :p])
        self._nystrom = model
        self.n_components_ = p
        self.eigenvalues_ = like_input(model.eigenvalues, X)
        self.eigenvectors_ = like_input(u, X)
        Z = u * model.eigenvalues.sqrt()
        if self.fit_inverse_transform:
            self._Z_fit = Z
            self._pre_image = pre_image_map(self.kernel_, Z, self.X_fit_, choice, self.inverse_lam)
            self.X_transformed_fit_ = like_input(Z, X)
            self.dual_coef_ = like_input(self._pre_image.coef, X)
        return Z.to(result_dtype(Xb))

    def fit(self, X: Any, y: Any = None) -> KernelPCA:
        """Fit the principal components of the training data ``X`` (``y`` is ignored)."""
        self._fit(X)
        return self

    def fit_transform(self, X: Any, y: Any = None, **fit_params: Any) -> Any:
        """Fit and return the training projections ``sqrt(Delta_i) u_i``."""
        return like_input(self._fit(X), X)

    # ------------------------------------------------------------------ transform
    def transform(self, X: Any) -> Any:
        """Projections ``K~(X, X_fit) alpha`` of new points (test rows centred by train means)."""
        check_is_fitted(self, "eigenvalues_")
        Xb = self._predict_X(X)
        if hasattr(self, "_nystrom"):
            codes = self._nystrom.codes(Xb)[:, : self.n_components_]
            return like_input(codes.to(result_dtype(Xb)), X)
        Kt = self.centerer_.transform(gram(self.kernel_, Xb, self.X_fit_))
        return like_input(Kt @ self._alphas.to(Kt.device, Kt.dtype), X)

    def reconstruction_error(self, X: Any) -> Any:
        r"""Squared distance in feature space between ``phi(x)`` and its KPCA reconstruction.

        The reconstruction is the projection of ``phi(x)`` on the affine span of the training
        mean and the kept principal axes (Schölkopf, Smola, Müller 1998; course part 1,
        section 2), so with the centred feature ``phi_c(x) = phi(x) - mu`` and the codes ``z``,

        .. math:: \|\phi_c(x)\|^2 - \|z(x)\|^2, \qquad
                  \|\phi_c(x)\|^2 = k(x, x) - \frac2n \sum_j k(x, x_j) + \bar K_{\cdot\cdot},

        clipped at 0 against round-off.  Needs ``k(x, x)`` (a ``Precomputed`` kernel takes a
        ``PrecomputedBatch`` with ``diag``).
        """
        check_is_fitted(self, "eigenvalues_")
        _, residual = self._codes_residuals(self._predict_X(X))
        return like_input(residual, X)

    def _codes_residuals(self, Xb: Any) -> tuple[torch.Tensor, torch.Tensor]:
        """Codes ``z(x)`` and the squared residuals ``||phi_c(x)||^2 - ||z(x)||^2`` (see
        :meth:`reconstruction_error`) of a prepared batch, from one pass of Gram rows."""
        if hasattr(self, "_nystrom"):  # the distance to the Nyström mean mu
            out = self._nystrom.codes(Xb)
            Z, cross = out[:, :-1], out[:, -1]
            diag = self.kernel_.block_diag(Xb).to(out.device, out.dtype)
            norm_c = diag - 2 * cross + self._nystrom.mean_norm
            return Z[:, : self.n_components_], (norm_c - (Z * Z).sum(1)).clamp_min(0)
        rows = gram(self.kernel_, Xb, self.X_fit_)
        Z = self.centerer_.transform(rows) @ self._alphas.to(rows.device, rows.dtype)
        diag = self.kernel_.block_diag(Xb).to(rows.device, rows.dtype)
        norm_c = diag - 2 * rows.mean(1) + self.centerer_.grand_mean_
        return Z, (norm_c - (Z * Z).sum(1)).clamp_min(0)

    def inverse_transform(
        self,
        X: Any,
        candidates: Any = None,
        *,
        return_index: bool = False,
        return_distance: bool = False,
    ) -> Any:
        r"""Pre-images of codes ``X``: the learned map, or the nearest of ``candidates``.

        Without ``candidates``: ``k(z, Z_fit) beta``, the map learned with
        ``fit_inverse_transform=True`` (vector input; see the class docs).  With
        ``candidates`` (any input the kernel takes): for each code ``z`` the candidate ``c``
        nearest to the reconstruction ``mu + sum_k z_k v_k`` in feature space,
        ``||phi(c) - hat phi(z)||^2 = r(c) + ||z - z(c)||^2`` (``r`` the
        :meth:`reconstruction_error`, ``z(c)`` the code of ``c``; the axes ``v_k`` are
        orthonormal), by tiles of candidates (:mod:`kernelkit.estimators._preimage`).  The
        chosen candidates come in their container (rows of an array or tensor, else a list),
        followed by their positions (``return_index``) and squared distances
        (``return_distance``), in that order.
        """
        check_is_fitted(self, "eigenvalues_")
        if candidates is None and not self.fit_inverse_transform:
            raise NotFittedError(
                "inverse_transform: the pre-image map was not learned; refit with "
                "fit_inverse_transform=True, or pass candidates= to choose pre-images among "
                "given items"
            )
        Z = to_tensor(X, name="X", dtype=None if candidates is not None else self._Z_fit.dtype)
        if Z.shape[1] != self.n_components_:
            raise InputError(
                f"X: expected codes with {self.n_components_} columns (n_components_), "
                f"got shape {tuple(Z.shape)}"
            )
        if candidates is not None:
            Cb = self._predict_X(candidates)

            def distances(tile: Any) -> torch.Tensor:
                codes, residual = self._codes_residuals(tile)
                Zt = Z.to(codes.device, codes.dtype)
                return residual[None, :] + squared_code_distances(Zt, codes)

            index, dist = nearest_candidates(len(Z), Cb, distances)
            return _chosen(pick(candidates, index), index, dist, return_index, return_distance)
        Z = Z.to(self._Z_fit.device)
        if hasattr(self, "_nystrom"):
            return like_input(self._pre_image(Z), X)
        Kz = gram(self.kernel_, Z, self._Z_fit)
        return like_input(Kz @ self._pre_image, X)

    @property
    def _n_features_out(self) -> int:
        return self.n_components_

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


__all__ = [
    "KernelPCA",
    "KernelPCAResult",
    "center_train_gram_",
    "check_negative_eigenvalues",
    "kernel_pca",
]
