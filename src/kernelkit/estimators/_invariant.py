r"""``InvariantEmbedding``: Euclidean features of s.i.p. kernel representers (Ma et al. 2020).

Section 4 of Ma, Ganapathiraman, Yu and Zhang (ICML 2020): Nyström base embedding
(eqs. 20-21), invariance representers embedded in the same space, and the polar problem (28)
per point; the maths is in :mod:`kernelkit.invariance` and :mod:`kernelkit.models._sip`.
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral, Real
from typing import Any, ClassVar

import numpy as np
import torch
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from kernelkit.estimators._base import (
    KERNEL_CONSTRAINTS,
    MEMORY_BUDGET_CONSTRAINT,
    RANDOM_STATE_CONSTRAINT,
    VERBOSE_CONSTRAINT,
    KernelEstimatorMixin,
    progress_of,
    renamed_parameter,
    to_numpy,
)
from kernelkit.gram import GramOperator, gram
from kernelkit.gram._centres import uniform_centres
from kernelkit.gram._nystrom import CENTRE_METHODS, choose_centres, nystrom_basis
from kernelkit.gram._tiling import tile_size
from kernelkit.invariance import AGGREGATES, FEATURE_MAPS, READINGS, Invariance, InvariantFeatures
from kernelkit.invariance._embedding import assemble, embed_points, seminorm_scale
from kernelkit.kernels import Kernel
from kernelkit.utils._constraints import Interval, StrOptions
from kernelkit.utils._errors import InputError
from kernelkit.utils._progress import VerboseLike
from kernelkit.utils._seeding import RandomStateLike
from kernelkit.utils._validation import like_input

BASES = ("auto", "nystrom", "augmented")
FEATURES = ("auto", *FEATURE_MAPS)
STRENGTH_UNITS = ("absolute", "spectral")
#: most centres of ``basis="auto"``: above it the transformed inputs are subsampled
AUTO_MAX_CENTRES = 4096


class InvariantEmbedding(
    KernelEstimatorMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator
):
    r"""Invariant features ``iota(G_x)`` of semi-inner-product kernel representers.

    ``fit`` builds the Nyström embedding ``k~_x = K_z^{-1/2} k_z(x)`` on the landmarks
    (eqs. 20-21) and the invariance representers of the training data; ``transform`` solves,
    for each point, the convex polar problem (28) (Theorem 8, appendix C)

    .. math:: \min_v \|v\|^2 + s R(v)^2 \quad \text{s.t.} \quad \langle v, \tilde k_x\rangle = 1

    and returns ``iota(G_x) = v / J(v)`` (eq. 26).  With no invariance (``R = 0``) this is
    ``k~_x``, so inner products of the features are the Nyström kernel ``K_xz K_z^+ K_zx``;
    with ``aggregate="sum"`` it is ``M^{-1} k~_x``, ``M = I + s G^T G``, and the s.i.p. kernel
    ``G(x, y) = <iota(G_x), k~_y>`` (:meth:`sip_kernel`, the pairing of eq. 18) is the warped
    kernel of Ma et al. (2019), eq. (1).  The aggregations and readings are described in
    :mod:`kernelkit.invariance._embedding`; every embedded point carries a certificate, the
    relative duality gap of (28) (see :class:`kernelkit.invariance.InvariantFeatures`).

    Parameters
    ----------
    kernel : Kernel, str or None, optional
        Base kernel on vector input: a kernel, a kernel spec or a scikit-learn name
        (``"rbf"`` is ``Gaussian(sigma=sqrt(n_features / 2))``); ``None`` means
        ``Gaussian(sigma)`` with the median heuristic on the training vectors.
    invariances : sequence of Invariance
        Builders of :mod:`kernelkit.invariance`; empty means ``R = 0`` (plain Nyström).
    n_centers : int, optional
        Number of Nyström landmarks (centres); all the training points by default (as in the
        paper's experiments); more than the training points: all of them, with a warning
        that says so.
    centers : {"uniform", "kmeans++", "greedy"} or array of points, default "uniform"
        How the landmarks are chosen among the training points
        (:func:`kernelkit.gram._nystrom.choose_centres`), or the landmarks themselves
        (vectors, not necessarily training points; ``n_centers`` is then ignored).
    n_landmarks : int, optional
        Deprecated alias of ``n_centers`` (``FutureWarning``; removed in the next release).
    aggregate : {"max", "sum"}
        ``"max"``: the s.i.p. semi-norm; ``"sum"``: the quadratic one (kernel warping).
    reading : {"pairs", "transforms", "sum_of_max"}
        Where the max is taken (``aggregate="max"`` only; section 7.1 is ambiguous).
    strength : float
        Weight ``s > 0`` of the semi-norm.
    tol : float
        Target relative duality gap of each embedded point.
    max_iter : int
        Most iterations of the polar solver per point (working-set rounds of ``embed_max``,
        Newton steps of ``embed_block_max``); stopping there with a gap above ``tol`` warns
        with :class:`~kernelkit.models._sip_polar.EmbeddingConvergenceWarning`, a
        :class:`kernelkit.utils._errors.ConvergenceWarning`.
    verbose : int, bool or callable, default 0
        ``0``: silent; ``1``: progress on stderr (:mod:`kernelkit.utils._progress`: one
        ``[InvariantEmbedding] ...`` line per stage of ``fit`` (basis, semi-norm, embedding)
        and a final ``done after iter N ...`` line with the polar solver's iterations and the
        largest duality gap); a callable receives ``(N, gap)`` once.
    basis : {"auto", "nystrom", "augmented"}
        ``"auto"`` (default): ``"augmented"`` when every invariance is an input invariance
        (transformations), with at most :data:`AUTO_MAX_CENTRES` centres (the landmarks and
        a uniform random draw of the transformed inputs, seeded by ``random_state``, when
        there are more); ``"nystrom"`` when a joint invariance (mixup, label logic) is
        given, whose mixed points would multiply the dimension by the size of the lambda
        grid and the number of pairs.  ``"nystrom"``: the centres of the base embedding are
        the landmarks (eqs. 20-21), whose span does not contain the representers
        ``k(., T x_j) - k(., x_j)``, so their components outside it are projected away.
        ``"augmented"``: the centres are the landmarks and every input at which the
        invariances evaluate the kernel (the transformed images ``T_t x_j``, the mixed
        points of mixup), so the span contains the finite-difference representers exactly
        and, with ``aggregate="sum"``, :meth:`sip_kernel` equals exact kernel warping on the
        full RKHS up to the Nyström error of ``k`` itself (zero on the centres).  Cost:
        ``c = n_centers + n_T n`` centres for ``n_T`` transformations of ``n`` points: one
        ``c x c`` eigendecomposition (``O(c^3)``) and features of dimension up to ``c``
        instead of ``n_centers``.
    features : {"auto", "iota", "metric"}
        ``"auto"`` (default): ``"metric"``, except ``"iota"`` for ``aggregate="max"`` with
        ``reading="transforms"``, where the metric map is not offered.  ``"iota"``:
        ``iota(G_x) = M_{p(x)}^{-1} k~_x`` (eq. 26); its pairing with ``k~_y`` is the s.i.p.
        kernel, but a linear model on it penalises ``v^T M^2 v``.  ``"metric"``:
        ``M_{p(x)}^{-1/2} k~_x`` (:mod:`kernelkit.models._sip_metric`), whose ridge penalty
        is the s.i.p. norm and whose inner products are the warped kernel in the quadratic
        case.  Not offered for ``reading="transforms"``.
    strength_unit : {"absolute", "spectral"}
        ``"absolute"``: ``s = strength``.  ``"spectral"`` (default): ``s = strength /
        seminorm_scale_`` with ``seminorm_scale_ = sup_{||v||=1} R(v)^2`` from the spectrum
        of ``G^T G`` (:func:`kernelkit.invariance.seminorm_scale`), so ``strength=1`` weighs
        the semi-norm like the RKHS norm.
    jitter : float, optional
        ``tau`` of the eigenvalue floor ``tau mean(diag K_z)`` of ``K_z``
        (:func:`kernelkit.gram._nystrom.nystrom_basis`); default: the one regularisation rule.
    random_state : int, RandomState, Generator or None
        Seed of the landmark draw (a generator is consumed; see
        :mod:`kernelkit.utils._seeding`).
    memory_budget : int, optional
        Bytes of scratch memory allowed, with the meaning of :func:`kernelkit.gram.gram`.  Set,
        the base embedding ``K_xz U Lambda^{-1/2}`` of the points and of their transformed
        copies is a product with a :class:`~kernelkit.gram.GramOperator`, so the ``n x m`` block
        ``K_xz`` is never held, and the landmark Gram is computed by the tiled engine within
        the budget.  ``None``: no limit (``K_xz`` is formed, one GEMM).

    Attributes
    ----------
    kernel_, X_fit_ :
        Fitted kernel and training data.
    landmarks_ : ndarray or torch.Tensor
        The centres ``z``: the landmarks, followed with the augmented basis by the inputs
        the invariances embed.
    basis_used_, features_used_ : str
        The basis (``"nystrom"`` or ``"augmented"``) and feature map (``"iota"`` or
        ``"metric"``) that ``"auto"`` resolved to.
    basis_ : NystromBasis
        ``K_z^{-1/2}`` (eigenbasis form); ``n_components_`` its dimension ``d``.
    seminorm_ : SemiNorm or None
        The assembled representers (None without invariances).
    n_labels_ : int
        Labels of the joint invariances (0 otherwise).
    seminorm_scale_ : float or None
        ``sup_{||v||=1} R(v)^2`` of the fitted representers (1.0 without invariances) with
        ``strength_unit="spectral"``; None with ``"absolute"`` (not computed).
    strength_ : float
        The strength ``s`` used: ``strength`` or ``strength / seminorm_scale_``.
    certificates_ : ndarray or tensor
        Relative duality gaps of the embedded training points.
    n_iter_ : int
        Iterations of the polar solver on the training points (1 for closed forms).

    Notes
    -----
    Objective: for each point, the convex polar problem (28) on its Nyström embedding
    ``k~_x`` (``R`` the invariance penalty, ``s`` its weight)

    .. math:: \min_v \|v\|^2 + s R(v)^2 \quad \text{s.t.} \quad \langle v, \tilde k_x\rangle = 1,

    whose solution gives ``iota(G_x) = v / J(v)`` (eq. 26).
    """

    def __init__(
        self,
        kernel: Kernel | str | None = None,
        invariances: Sequence[Invariance] = (),
        *,
        n_centers: int | None = None,
        centers: str | Any = "uniform",
        n_landmarks: int | None = None,
        aggregate: str = "max",
        reading: str = "pairs",
        strength: float = 1.0,
        tol: float = 1e-8,
        max_iter: int = 100,
        basis: str = "auto",
        features: str = "auto",
        strength_unit: str = "spectral",
        jitter: float | None = None,
        random_state: RandomStateLike = None,
        memory_budget: int | None = None,
        verbose: VerboseLike = 0,
    ):
        self.kernel = kernel
        self.invariances = invariances
        self.n_centers = n_centers
        self.centers = centers
        self.n_landmarks = n_landmarks
        self.aggregate = aggregate
        self.reading = reading
        self.strength = strength
        self.tol = tol
        self.max_iter = max_iter
        self.basis = basis
        self.features = features
        self.strength_unit = strength_unit
        self.jitter = jitter
        self.random_state = random_state
        self.memory_budget = memory_budget
        self.verbose = verbose

    _parameter_constraints: ClassVar[dict[str, list[Any]]] = {
        **KERNEL_CONSTRAINTS,
        "invariances": [list, tuple, None],
        "n_centers": [Interval(Integral, 1, None, closed="left"), None],
        "centers": [StrOptions(set(CENTRE_METHODS)), "array-like"],
        "n_landmarks": [Interval(Integral, 1, None, closed="left"), None],
        "aggregate": [StrOptions(set(AGGREGATES))],
        "reading": [StrOptions(set(READINGS))],
        "strength": [Interval(Real, 0, None, closed="neither")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "jitter": [Interval(Real, 0, None, closed="left"), None],
        "random_state": RANDOM_STATE_CONSTRAINT,
        "memory_budget": MEMORY_BUDGET_CONSTRAINT,
        "basis": [StrOptions(set(BASES))],
        "features": [StrOptions(set(FEATURES))],
        "strength_unit": [StrOptions(set(STRENGTH_UNITS))],
        "verbose": VERBOSE_CONSTRAINT,
    }

    # ------------------------------------------------------------------ fit
    def _check_params(self) -> list[Invariance]:
        self._validate_params()
        invariances = list(self.invariances) if self.invariances is not None else []
        for i, inv in enumerate(invariances):
            if not isinstance(inv, Invariance):
                raise InputError(
                    f"invariances[{i}]: expected an invariance of kernelkit.invariance "
                    f"(e.g. TransformInvariance([...])), got {type(inv).__name__}"
                )
        return invariances

    def _embed_base(self, X: torch.Tensor) -> torch.Tensor:
        """``k~_x`` of the rows of ``X``; differentiable in ``X`` (the mixup ``jvp``)."""
        Z = None if X is self._landmarks else self._landmarks
        budget = self.memory_budget
        if budget is None or (torch.is_grad_enabled() and X.requires_grad):
            K_xz = gram(self.kernel_, X, Z, memory_budget=budget, differentiable=True)
            return self.basis_.features(K_xz)
        # the budget bounds the tiles; the product (n x d, the features) is the output
        side = max(X.shape[0], self._landmarks.shape[0])
        b = tile_size(side, X.element_size(), memory_budget=budget)
        return self.basis_.features(GramOperator(self.kernel_, X, Z, block_size=b))

    def fit(self, X: Any, y: Any = None) -> InvariantEmbedding:
        """Build the Nyström basis and the invariance representers, and embed ``X``."""
        self._fit(X, y)
        return self

    def fit_transform(self, X: Any, y: Any = None, **fit_params: Any) -> Any:
        """Fit and return the features of the training points (as :meth:`transform`)."""
        features = self._fit(X, y).features
        return like_input(features.reshape(features.shape[0], -1), X)

    def _fit(self, X: Any, y: Any) -> InvariantFeatures:
        invariances = self._check_params()
        Xb = self._fit_X(X)
        if not isinstance(Xb, torch.Tensor):
            raise InputError(
                f"kernel: InvariantEmbedding needs a kernel on vector input, got one on "
                f"{self.kernel_.input_kind!r} input"
            )
        n = Xb.shape[0]
        m = renamed_parameter(self, "n_landmarks", "n_centers")
        self._landmarks = Xb
        if m is not None or not isinstance(self.centers, str):
            choice = choose_centres(
                self.kernel_,
                Xb,
                n if m is None else m,
                self.centers,
                random_state=self.random_state,
                exact="the exact base embedding (every training point a landmark)",
            )
            self._landmarks = Xb if choice.exact else choice.centres
        joint = [inv for inv in invariances if inv.joint]
        self.n_labels_ = 0
        labels = None
        if joint:
            labels = self._joint_labels(y, n)
        self.basis_used_ = self._resolve_basis(invariances)
        self.features_used_ = self._resolve_features()
        if self.basis_used_ == "augmented" and invariances:
            cap = AUTO_MAX_CENTRES if self.basis == "auto" else None
            self._landmarks = self._augmented_centres(invariances, Xb, labels, cap)
        progress = progress_of(self, self.max_iter)
        progress.stage(f"{self.basis_used_} basis on {self._landmarks.shape[0]} centres")
        with torch.no_grad():
            K_zz = gram(self.kernel_, self._landmarks, memory_budget=self.memory_budget)
        self.basis_ = nystrom_basis(K_zz, jitter=self.jitter)
        self.n_components_ = self.basis_.dim
        progress.stage(f"semi-norm of {len(invariances)} invariances")
        reps = [inv.representers(self._embed_base, Xb, labels) for inv in invariances]
        self.seminorm_ = None
        if reps:
            with torch.no_grad():
                self.seminorm_ = assemble(
                    reps, aggregate=self.aggregate, reading=self.reading, n_labels=self.n_labels_
                )
        self.seminorm_scale_ = None
        self.strength_ = float(self.strength)
        if self.strength_unit == "spectral":
            self.seminorm_scale_ = 1.0 if self.seminorm_ is None else seminorm_scale(self.seminorm_)
            self.strength_ /= self.seminorm_scale_
        progress.stage(f"embedding {n} points (polar solver)")
        result = self._embed(Xb)
        self.landmarks_ = like_input(self._landmarks, X)
        self.certificates_ = like_input(result.gap, X)
        self.n_iter_ = result.iterations
        gap = float(result.gap.max()) if result.gap.numel() else 0.0
        progress.update(self.n_iter_, gap=gap)
        progress.done(self.n_iter_, f"largest gap {gap:.3g}")
        return result

    def _resolve_basis(self, invariances: list[Invariance]) -> str:
        """``basis`` with ``"auto"`` resolved (augmented for input invariances only)."""
        if self.basis != "auto":
            return self.basis
        transforms_only = bool(invariances) and not any(inv.joint for inv in invariances)
        return "augmented" if transforms_only else "nystrom"

    def _resolve_features(self) -> str:
        """``features`` with ``"auto"`` resolved (metric unless reading (b) of the max)."""
        if self.features != "auto":
            return self.features
        blocks = self.aggregate == "max" and self.reading == "transforms"
        return "iota" if blocks else "metric"

    def _augmented_centres(
        self,
        invariances: list[Invariance],
        Xb: torch.Tensor,
        labels: torch.Tensor | None,
        cap: int | None,
    ) -> torch.Tensor:
        """The landmarks and every input the invariances embed (the augmented basis).

        The builders are run once with a recording feature map (it returns a zero column,
        differentiable for the builders that take derivatives); batches equal to the training
        data are not repeated.  With ``cap``, at most ``cap`` centres: the landmarks and a
        uniform draw (``random_state``) of ``cap - n_centers`` recorded inputs.
        """
        seen: list[torch.Tensor] = []

        def record(Z: torch.Tensor) -> torch.Tensor:
            Z0 = Z.detach()
            if not (Z0.shape == Xb.shape and torch.equal(Z0, Xb)):
                seen.append(Z0)
            return Z[:, :1] * 0.0

        for inv in invariances:
            inv.representers(record, Xb, labels)
        if not seen:
            return self._landmarks
        moved = torch.cat(seen)
        room = moved.shape[0] if cap is None else max(cap - self._landmarks.shape[0], 0)
        if room < moved.shape[0]:
            index = uniform_centres(moved.shape[0], room, self.random_state)
            moved = moved[torch.as_tensor(index, device=moved.device)]
        return torch.cat([self._landmarks, moved])

    def _joint_labels(self, y: Any, n: int) -> torch.Tensor:
        """Labels of joint invariances as an ``(n, n_labels)`` float indicator tensor."""
        if y is None:
            raise InputError(
                "y: joint invariances (MixupInvariance, LabelLogicInvariance) need the labels "
                "in fit, got None"
            )
        Y = np.asarray(to_numpy(y))
        if Y.ndim == 1:
            self.classes_, codes = np.unique(Y, return_inverse=True)
            Y = np.eye(len(self.classes_))[codes]
        if Y.ndim != 2 or Y.shape[0] != n:
            raise InputError(
                f"y: expected {n} labels (class labels or an (n, n_labels) indicator matrix), "
                f"got shape {Y.shape}"
            )
        self.n_labels_ = int(Y.shape[1])
        return torch.as_tensor(Y, dtype=self.X_fit_.dtype, device=self.X_fit_.device)

    # ------------------------------------------------------------------ transform
    def _embed(self, Xb: torch.Tensor, feature_map: str | None = None) -> InvariantFeatures:
        with torch.no_grad():
            return embed_points(
                self._embed_base(Xb),
                self.seminorm_,
                strength=self.strength_,
                tol=float(self.tol),
                max_iter=int(self.max_iter),
                feature_map=feature_map or self.features_used_,
            )

    def embed(self, X: Any) -> InvariantFeatures:
        """Features of ``X`` with their certificates (gap, primal and dual values)."""
        check_is_fitted(self, "basis_")
        return self._embed(self._predict_X(X))

    def transform(self, X: Any) -> Any:
        """Invariant features ``iota(G_x)`` of the rows of ``X`` (eq. 26), a 2-D array.

        Shape ``(n, n_components_)``; for joint invariances ``(n, n_labels_ * D)`` with
        ``D = n_components_ * n_labels_``: row ``i`` holds the ``n_labels_`` representations
        of ``(x_i, label)`` one after the other (``embed(X).features`` has them as
        ``(n, n_labels_, D)``; see :func:`kernelkit.invariance.joint_scores`).  The
        certificates of these points are returned by :meth:`embed`.
        """
        check_is_fitted(self, "basis_")
        features = self._embed(self._predict_X(X)).features
        return like_input(features.reshape(features.shape[0], -1), X)

    def nystrom_features(self, X: Any) -> Any:
        """The base embedding ``k~_x = K_z^{-1/2} k_z(x)`` (eqs. 20-21) of the rows of ``X``."""
        check_is_fitted(self, "basis_")
        with torch.no_grad():
            return like_input(self._embed_base(self._predict_X(X)), X)

    def sip_kernel(self, X: Any, Y: Any = None) -> Any:
        r"""The s.i.p. kernel ``G(x, y) = <iota(G_x), k~_y>`` (eqs. 8, 18 and 25-26).

        Not symmetric in general; for ``aggregate="sum"`` it is the warped kernel of
        Ma et al. (2019), eq. (1), in the Nyström space.  Input invariances only.
        """
        check_is_fitted(self, "basis_")
        if self.n_labels_:
            raise InputError("sip_kernel: defined for input invariances, not joint ones")
        Xb = self._predict_X(X)
        Yb = Xb if Y is None else self._predict_X(Y)
        with torch.no_grad():
            value = self._embed(Xb, "iota").features @ self._embed_base(Yb).T
        return like_input(value, X)

    @property
    def _n_features_out(self) -> int:
        return self.n_components_ * max(self.n_labels_, 1) ** 2

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags


__all__ = ["InvariantEmbedding"]
