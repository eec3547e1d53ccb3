"""Input handling shared by the kernel estimators: kernel, parameters, training batch, tags.

Every estimator of :mod:`kernelkit.estimators` reads its data *through its kernel*:

* ``kernel`` is a kernelkit kernel, a kernel spec (``"gaussian:sigma=2"``), a scikit-learn
  name (``"rbf"`` with ``gamma``, ``"precomputed"``...) or ``None``, the default kernel of the
  kind of ``X`` (vectors: ``Gaussian`` with the median heuristic); see
  :mod:`kernelkit.kernels._resolve`.  The fitted kernel is ``kernel_`` (a clone of a
  given kernel), so later changes to the ``kernel`` parameter never leak into a fitted model.
* Constructor parameters are validated declaratively, from the class's
  ``_parameter_constraints`` (:mod:`kernelkit.utils._constraints`, scikit-learn's
  vocabulary), at the start of ``fit``; a bad value raises
  :class:`~kernelkit.utils._errors.ParameterError` naming the parameter, what was expected
  and what came in.
* The training data are stored as ``X_fit_ = kernel_.prepare(X, reference=True)``, never a
  view of the caller's array (:func:`~kernelkit.utils._validation.owned`): a float
  tensor for vector kernels, a :class:`~kernelkit.kernels.PrecomputedBatch` for
  ``Precomputed()``, and the kernel's own batch type for structured kernels (strings,
  graphs, molecules ...).
* Array input (vector kernels and precomputed Grams) is validated as scikit-learn does
  (``validate_data``: NaN/inf, complex, sparse, 1-D, empty input, ``n_features_in_`` and
  ``feature_names_in_``); the errors are re-raised as :class:`~kernelkit.utils.InputError`.
  Sparse ``X`` (CSR/CSC/COO, sparse torch tensors) is taken by the kernels that accept it
  (``Kernel.accepts_sparse``) as :class:`~kernelkit.kernels._sparse.SparseRows`, never
  densified whole.
  Torch tensors skip NumPy entirely and stay on their device.  A precomputed cross-Gram must
  have one column per training point.
* dtype: float64 by default; float32 input (tensor or NumPy array) stays float32, so the Gram
  matrix and the solves run in float32.  Outputs and fitted array attributes follow the
  container of the training input (:func:`kernelkit.utils._validation.like_input`): NumPy in,
  NumPy out; torch in, torch out on the same device.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from numbers import Integral
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
import torch
from sklearn.base import clone
from sklearn.utils.validation import check_array, validate_data

from kernelkit.data._detect import detect_input_kind, drop_invalid_records
from kernelkit.estimators._domain import max_similarity
from kernelkit.gram._distributed import draw_kept_centres, is_dask_collection, n_rows
from kernelkit.kernels import Kernel, Linear, PrecomputedBatch
from kernelkit.kernels._base import Batch, batch_dtype
from kernelkit.kernels._callable import CallableKernel
from kernelkit.kernels._resolve import (
    VectorKernelRecipe,
    parameter_accepts_sparse,
    parameter_kind,
    resolve_kernel,
)
from kernelkit.kernels._sparse import SparseRows
from kernelkit.utils import _errors as errors
from kernelkit.utils._constraints import (
    Interval,
    InvalidParameterError,
    StrOptions,
    validate_parameter_constraints,
)
from kernelkit.utils._errors import InputError
from kernelkit.utils._kinds import InputKind
from kernelkit.utils._progress import Progress
from kernelkit.utils._validation import (
    check_finite,
    check_frame_columns,
    like_input,
    owned,
    to_tensor,
)

ARRAY_KINDS = (InputKind.VECTOR, InputKind.GRAM)
"""Input kinds given as numeric arrays (validated like scikit-learn input)."""

SPARSE_FORMATS = ("csr", "csc", "coo")
"""``scipy.sparse`` formats taken by kernels that accept sparse rows (``accepts_sparse``)."""


KERNEL_CONSTRAINTS: dict[str, list[Any]] = {"kernel": [Kernel, str, callable, None]}
"""Constraint of the ``kernel`` parameter (strings are checked by the kernel resolver)."""

KERNEL_PARAMS_CONSTRAINT: dict[str, list[Any]] = {"kernel_params": [dict, None]}
"""``kernel_params``: keyword arguments of a callable ``kernel`` (scikit-learn's name)."""

RANDOM_STATE_CONSTRAINT: list[Any] = ["random_state", np.random.Generator]
"""``random_state``: None, an int, a ``RandomState`` or a ``Generator`` (see
:mod:`kernelkit.utils._seeding`)."""

MEMORY_BUDGET_CONSTRAINT: list[Any] = [Interval(Integral, 1, None, closed="left"), None]
"""``memory_budget``: bytes of scratch memory for the tiled Gram engine, or None (no limit)."""

VERBOSE_CONSTRAINT: list[Any] = ["verbose", callable]
"""``verbose``: a non-negative int, a bool, or a callable progress report."""

ON_ERROR_CONSTRAINT: list[Any] = [StrOptions({"raise", "skip"})]
"""``on_error`` of every supervised estimator (:meth:`KernelEstimatorMixin._drop_invalid`)."""


def progress_of(estimator: Any, total: int | None = None, unit: str = "iter") -> Progress:
    """The progress report of ``estimator``'s fit for its ``verbose`` (the one format of
    :mod:`kernelkit.utils._progress`: ``[ClassName] iter 5/100 objective=...`` lines on stderr,
    a bar on a terminal, ``verbose(iteration, value)`` when callable)."""
    return Progress(type(estimator).__name__, total, getattr(estimator, "verbose", 0), unit=unit)


def warn_max_iter(estimator: Any, detail: str = "") -> None:
    """Warn with :class:`~kernelkit.utils._errors.ConvergenceWarning` that ``estimator``'s
    optimiser stopped at ``max_iter`` before its stopping test held."""
    extra = f" ({detail})" if detail else ""
    warnings.warn(
        f"{type(estimator).__name__}: the optimiser stopped at max_iter={estimator.max_iter} "
        f"iterations{extra} before its stopping test held (tol={estimator.tol}); increase "
        "max_iter or tol",
        errors.ConvergenceWarning,
        stacklevel=3,
    )


def renamed_parameter(
    estimator: Any, old: str, new: str, values: dict[Any, Any] | None = None
) -> Any:
    """The value of parameter ``new``, or of its deprecated alias ``old`` when that is set.

    A deprecated alias defaults to ``None``; set, it wins over ``new`` for one release, with a
    ``FutureWarning`` naming both (``values`` maps its old values onto the new vocabulary).
    """
    value = getattr(estimator, old)
    if value is None:
        return getattr(estimator, new)
    warnings.warn(
        f"{type(estimator).__name__}: {old}={value!r} is deprecated and will be removed in the "
        f"next release; use {new}= instead",
        FutureWarning,
        stacklevel=3,
    )
    return values.get(value, value) if values else value


def check_sample_weight(sample_weight: Any, n: int) -> np.ndarray | None:
    """Validated non-negative sample weights as a float64 array (None: unweighted).

    Raises
    ------
    InputError
        For weights of the wrong length or shape, negative, NaN or infinite weights, or all
        weights zero.
    """
    if sample_weight is None:
        return None
    try:
        w = np.asarray(to_numpy(sample_weight), dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"sample_weight: expected numbers, got {exc}") from exc
    if w.ndim == 0:
        w = np.full(n, float(w))
    if w.shape != (n,):
        raise InputError(
            f"sample_weight: expected shape ({n},) (one weight per sample) or a scalar, got "
            f"shape {w.shape}"
        )
    if not np.isfinite(w).all() or (w < 0).any() or not (w > 0).any():
        raise InputError(
            "sample_weight: expected finite non-negative weights, not all zero; got "
            f"min {w.min():.3g}, max {w.max():.3g}"
        )
    return w


def unit_mean_weights(w: np.ndarray | None) -> np.ndarray | None:
    """Weights rescaled to mean 1, ``w_i n / sum_j w_j`` (None stays None).

    The solvers' ``(1/n) sum_i w_i loss_i`` then is ``(1 / sum_j w_j) sum_i w_i loss_i``: the
    mean loss of the sample in which row ``i`` is repeated ``w_i`` times, so integer weights
    fit the same model as repeated rows and a zero weight as a dropped row.
    """
    return None if w is None else w * (len(w) / w.sum())


def check_distributed_nystrom(estimator: Any, X: Any, *, points: bool = False) -> int:
    """The number of rows of a Dask array or bag ``X`` that a Nyström estimator fits on its
    workers; refuses what the distributed fit does not do (``solver="exact"``, centres other
    than ``"uniform"``, or than centres given as points with ``points=True``) and an
    ``n_centers`` outside ``[1, n]`` for drawn centres, by name.

    Raises
    ------
    InputError
    """
    solver, centers, m = estimator.solver, estimator.centers, estimator.n_centers
    given = points and not isinstance(centers, str)
    uniform = isinstance(centers, str) and centers == "uniform"
    if solver == "exact" or not (given or uniform):
        expected = "centers='uniform' or an array of points" if points else "centers='uniform'"
        raise InputError(
            f"X: Dask input is fitted by solver='auto' or 'nystrom' with {expected}, "
            f"got solver={solver!r}, centers={centers!r}"
        )
    n = n_rows(X)
    if not given and not (isinstance(m, Integral) and 1 <= m <= n):
        raise InputError(f"n_centers: expected an integer in [1, n_samples = {n}], got {m!r}")
    return n


def _reraise(exc: ValueError, name: str) -> InputError:
    msg = str(exc)
    if not (msg.startswith(f"{name}:") or msg.startswith(f"{name} ") or f"Input {name}" in msg):
        msg = f"{name}: {msg}"
    return InputError(msg)


@contextmanager
def _readonly_ok() -> Iterator[None]:
    """Silence torch's warning on read-only arrays (memmaps): estimators never write to X."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
        yield


def to_numpy(value: Any) -> np.ndarray:
    """A tensor or array-like as a NumPy array (tensors moved to the CPU)."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    return np.asarray(value)


class KernelEstimatorMixin:
    """Kernel, input and tag handling of the kernel estimators (see the module docstring).

    Subclasses have a ``kernel`` parameter and call :meth:`_fit_X` in ``fit`` and
    :meth:`_predict_X` in prediction methods.
    """

    kernel: Any
    _parameter_constraints: dict[str, list[Any]]
    _sparse_input: ClassVar[bool] = False
    """Whether the estimator takes sparse X (with a kernel that accepts it; the ``sparse``
    tag): set by the estimators whose every path works on
    :class:`~kernelkit.kernels._sparse.SparseRows`."""

    # ------------------------------------------------------------------ parameters
    def _validate_params(self) -> None:
        """Check every constructor parameter against ``_parameter_constraints``.

        Raises
        ------
        ParameterError
            ``"NAME: The 'NAME' parameter of CLASS must be EXPECTED. Got VALUE instead."``
        """
        params = {name: getattr(self, name) for name in self._parameter_constraints}
        for name, constraints in self._parameter_constraints.items():
            try:
                validate_parameter_constraints(
                    {name: constraints}, {name: params[name]}, caller_name=type(self).__name__
                )
            except InvalidParameterError as exc:
                raise errors.ParameterError(f"{name}: {exc}") from None

    def _default_kernel(self, X: Any) -> Any:
        """The kernel of ``kernel=None``: ``None`` is the default of the input's kind
        (:func:`kernelkit.kernels._specs.default_spec`); an estimator may name another."""
        return None

    def _kernel_extras(self, spec: Any = None) -> dict[str, Any]:
        """scikit-learn's kernel parameters (``gamma``, ``degree``, ``coef0``, and
        ``kernel_params`` when it is a dict of a callable's arguments) of the estimator.

        ``KernelRidge.kernel_params`` is a model-selection grid instead (not a dict);
        ``spec``, the kernel being resolved, lets an estimator set defaults by kernel name
        (unused here)."""
        extras = {p: getattr(self, p, None) for p in ("gamma", "degree", "coef0")}
        params = getattr(self, "kernel_params", None)
        extras["kernel_params"] = params if isinstance(params, dict) else None
        return extras

    # ------------------------------------------------------------------ X
    def _drop_invalid(
        self, X: Any, y: Any, sample_weight: Any, kind: InputKind | None = None
    ) -> tuple[Any, Any, Any]:
        """``X``, ``y``, ``sample_weight`` without the records that do not parse, with
        ``on_error="skip"`` (:func:`kernelkit.data._detect.drop_invalid_records`); ``kind``
        defaults to the kind of the ``kernel`` parameter, else the kind ``X`` holds."""
        on_error = self.on_error
        if on_error != "skip" or X is None:
            return X, y, sample_weight
        if kind is None:
            kernel = getattr(self, "kernel", None)
            kind = parameter_kind(kernel) if kernel is not None else detect_input_kind(X)
        return drop_invalid_records(X, y, sample_weight, kind, on_error)

    def _fit_samples(
        self, X: Any, y: Any, sample_weight: Any
    ) -> tuple[Any, Batch, Any, np.ndarray | None]:
        """The input route of ``fit(X, y, sample_weight)``: ``(X, X_fit_, y, w)``.

        Records that do not parse are dropped with their targets and weights when the
        estimator has ``on_error="skip"`` (:meth:`_drop_invalid`); ``X`` is validated and the
        kernel resolved by :meth:`_fit_X`, a data-dependent kernel counting row ``i``
        ``w_i`` times; ``w`` is the validated weights (:func:`check_sample_weight`).
        """
        X, y, sample_weight = self._drop_invalid(X, y, sample_weight)
        Xb = self._fit_X(X, sample_weight)
        return X, Xb, y, check_sample_weight(sample_weight, len(Xb))

    def _fit_X(self, X: Any, sample_weight: Any = None) -> Batch:
        """Resolve ``kernel_``, validate the training input and store ``X_fit_``.

        A vector kernel whose hyperparameters come from the data (the median heuristic, a
        default ``gamma``) is built on the validated training tensor, its rows counted
        ``sample_weight`` times (:func:`check_sample_weight`), so integer weights and
        repeated rows give the same kernel.
        """
        if X is None:
            raise InputError("X: expected data, got None")
        self._refuse_dask(X)
        spec = self.kernel if self.kernel is not None else self._default_kernel(X)
        kernel = resolve_kernel(spec, X, owner=type(self).__name__, **self._kernel_extras(spec))
        if isinstance(kernel, VectorKernelRecipe):
            self.X_fit_ = owned(self._prepare(Linear(), X, reset=True), X)
            w = check_sample_weight(sample_weight, len(self.X_fit_))
            self.kernel_ = kernel.build(self.X_fit_, w)
            if isinstance(self.X_fit_, SparseRows) and not self.kernel_.accepts_sparse:
                raise InputError(
                    f"X: {self.kernel_!r} does not take sparse input (got "
                    f"{type(X).__name__}); use a kernel of inner products and norms or "
                    "densify X"
                )
        else:
            # a callable's kernel is built here: kernel_params stay the caller's objects (not
            # copied), as in scikit-learn
            fresh = isinstance(kernel, CallableKernel) and kernel is not self.kernel
            self.kernel_ = kernel if fresh else clone(kernel)
            self.X_fit_ = owned(self._prepare(self.kernel_, X, reset=True), X)
        if hasattr(self.kernel_, "check_training"):  # e.g. an all-zero Gram, a feature blow-up
            self.kernel_.check_training(self.X_fit_)
        return self.X_fit_

    def _distributed_centres(
        self,
        X: Any,
        n_centers: int,
        sample_weight: np.ndarray | None = None,
        *,
        centers: Any = None,
    ) -> tuple[np.ndarray | None, Batch, Any]:
        """The centres of a Nyström fit of a Dask array or bag ``X``: ``(indices, centres,
        blocks)``, the centres validated by :meth:`_fit_X` (which resolves ``kernel_`` on
        them).

        ``centers`` (default: the ``centers`` parameter) a method name: ``n_centers`` rows
        drawn by position with probabilities proportional to ``sample_weight``
        (:func:`~kernelkit.gram._distributed.draw_kept_centres`, the in-memory
        :func:`~kernelkit.gram._centres.uniform_centres`), ``blocks`` the row blocks of ``X``
        with those holding a centre kept on the workers; centres given as points (indices
        ``None``) read nothing and ``blocks`` is ``X``.

        Raises
        ------
        InputError
            No centre given, or centres whose width differs from ``X``'s.
        """
        index, rows, blocks = None, self.centers if centers is None else centers, X
        if isinstance(rows, str):
            index, rows, blocks = draw_kept_centres(X, n_centers, self.random_state, sample_weight)
        elif len(rows) == 0:
            raise InputError("centers: expected at least one centre, got none")
        centres = self._fit_X(rows)
        width = getattr(X, "shape", ())[1:]
        if index is None and isinstance(centres, torch.Tensor) and centres.shape[1:] != width:
            raise InputError(
                f"centers: expected points with the {width[0] if width else '?'} features of "
                f"X, got shape {tuple(centres.shape)}"
            )
        return index, centres, blocks

    def _predict_X(self, X: Any) -> Batch:
        """Validate new input against the training input and prepare it with ``kernel_``."""
        return self._prepare(self.kernel_, X, reset=False)

    def _refuse_dask(self, X: Any) -> None:
        """The one check for Dask input: an estimator that reaches the in-memory validation
        with a Dask array or bag has no distributed path, and never gathers it silently."""
        if is_dask_collection(X):
            raise InputError(
                f"X: {type(self).__name__} has no distributed (Dask) path; got a "
                f"{type(X).__module__}.{type(X).__name__}. Compute it into memory first "
                "(X.compute()), or use an estimator that fits on the workers (KernelRidge "
                "with a Nyström solver, NystromFeatures)"
            )

    def _prepare(self, kernel: Kernel, X: Any, *, reset: bool) -> Batch:
        kind = kernel.input_kind
        if X is None:
            raise InputError("X: expected data, got None")
        self._refuse_dask(X)
        dtype = None if reset else batch_dtype(self.X_fit_)
        if kind not in ARRAY_KINDS or isinstance(X, PrecomputedBatch):
            batch = kernel.prepare(X, dtype=dtype, reference=reset)
            if len(batch) == 0:
                raise InputError("X: expected at least 1 sample, got 0")
            if reset:
                for attr in ("n_features_in_", "feature_names_in_"):
                    if hasattr(self, attr):
                        delattr(self, attr)
                if isinstance(batch, PrecomputedBatch):
                    self.n_features_in_ = batch.rows.shape[1]
            elif isinstance(batch, PrecomputedBatch):
                self._check_gram_columns(batch.rows)
            return batch
        if kind == "gram" and not reset:
            self._check_gram_columns(X)
        if isinstance(X, torch.Tensor):
            self._check_tensor_features(X, reset=reset)
        else:
            if hasattr(X, "dtypes") and hasattr(X, "columns"):
                check_frame_columns(X, "X")  # names a non-numeric (e.g. categorical) column
            try:
                X = validate_data(
                    self,
                    X,
                    reset=reset,
                    dtype=(np.float64, np.float32),
                    ensure_all_finite=True,
                    accept_sparse=SPARSE_FORMATS if self._takes_sparse(kernel) else False,
                )
            except ValueError as exc:
                raise _reraise(exc, "X") from exc
            except TypeError as exc:  # sparse X for a kernel that needs dense rows
                if not sp.issparse(X):
                    raise
                raise _reraise(exc, "X") from exc
            if dtype is not None:
                X = X.astype(np.float64 if dtype == torch.float64 else np.float32, copy=False)
        with _readonly_ok():
            return kernel.prepare(X, dtype=dtype, reference=reset)

    def _takes_sparse(self, kernel: Kernel) -> bool:
        """Sparse X is taken when the kernel accepts it and the estimator's ``sparse`` tag
        says so (estimators that densify their input leave the tag off)."""
        return bool(kernel.accepts_sparse) and self.__sklearn_tags__().input_tags.sparse

    def _check_tensor_features(self, X: torch.Tensor, *, reset: bool) -> None:
        if X.ndim != 2:
            hint = " (reshape a single feature with X.reshape(-1, 1))" if X.ndim == 1 else ""
            raise InputError(f"X: expected a 2-D array, got shape {tuple(X.shape)}{hint}")
        if reset:
            self.n_features_in_ = int(X.shape[1])
            if hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
        elif X.shape[1] != self.n_features_in_:
            raise InputError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input"
            )

    def _check_gram_columns(self, X: Any) -> None:
        shape = getattr(X, "shape", None)
        n = getattr(self, "n_features_in_", None)
        if shape is not None and len(shape) == 2 and n is not None and shape[1] != n:
            raise InputError(
                f"X: expected precomputed Gram rows against the {n} training points "
                f"(shape (m, {n})), got shape {tuple(shape)}"
            )

    # ------------------------------------------------------------------ domain
    def applicability_domain(self, X: Any) -> Any:
        """Largest kernel similarity of each point of ``X`` to the fitted model's data.

        ``max_i k(x, x_i) / sqrt(k(x, x) k(x_i, x_i))`` over the points the fit kept in
        ``X_fit_`` (the training points; a Nyström fit's centres): 1 on a training point,
        the nearest-neighbour Tanimoto similarity with a Tanimoto kernel; low values flag
        points outside the model's applicability domain
        (:mod:`kernelkit.estimators._domain`).

        Returns
        -------
        ndarray or torch.Tensor of shape (n_samples,)
        """
        kernel, reference = getattr(self, "kernel_", None), getattr(self, "X_fit_", None)
        if not isinstance(kernel, Kernel) or reference is None:
            raise errors.NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet (or keeps no kernel "
                "and data to compare with); call 'fit' first"
            )
        return like_input(max_similarity(kernel, reference, self._predict_X(X)), X)

    # ------------------------------------------------------------------ y
    def _check_y_length(self, y: Any, n: int) -> None:
        if y is None:
            raise InputError(
                f"y: {type(self).__name__} requires y to be passed, but the target y is None"
            )
        m = y.shape[0] if hasattr(y, "shape") and len(y.shape) else len(y)
        if m != n:
            raise InputError(
                f"y: expected {n} targets (one per sample of X), got {m}; X and y must have "
                "the same number of samples"
            )

    def _validate_y_numeric(self, y: Any, n: int, dtype: torch.dtype) -> torch.Tensor:
        """Numeric targets as a 1-D or 2-D tensor of ``dtype`` with ``n`` rows; finite and
        below :func:`~kernelkit.utils._validation.largest_entry` in magnitude (squared
        residuals of larger targets overflow), the first bad one named."""
        if y is None:
            self._check_y_length(y, n)
        if isinstance(y, torch.Tensor):
            t = to_tensor(y, name="y", dtype=dtype, ndim=None)
        else:
            try:
                arr = check_array(
                    y,
                    ensure_2d=False,
                    dtype=np.float64,
                    ensure_all_finite=True,
                    input_name="y",
                )
            except ValueError as exc:
                raise _reraise(exc, "y") from exc
            with _readonly_ok():
                t = torch.as_tensor(arr, dtype=dtype)
            check_finite(t, name="y")
        if t.ndim not in (1, 2):
            raise InputError(
                f"y: expected a 1-D or 2-D array of targets, got shape {tuple(y.shape)}"
            )
        self._check_y_length(t, n)
        return t

    # ------------------------------------------------------------------ tags
    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()  # type: ignore[misc]
        kind = parameter_kind(self.kernel)
        tags.input_tags.pairwise = kind == InputKind.GRAM
        tags.input_tags.sparse = self._sparse_input and parameter_accepts_sparse(self.kernel)
        if kind not in ARRAY_KINDS:
            tags.input_tags.two_d_array = False
            tags.input_tags.string = kind in ("string", "molecule", "any")
        return tags


def device_of(batch: Batch) -> torch.device:
    """Device of a prepared batch (CPU for structured batches)."""
    if isinstance(batch, torch.Tensor):
        return batch.device
    if isinstance(batch, PrecomputedBatch):
        return batch.rows.device
    return torch.device("cpu")


def result_dtype(batch: Batch) -> torch.dtype:
    """Floating dtype of the computations on a batch (float64 when it has none)."""
    dtype = batch_dtype(batch)
    return dtype if isinstance(dtype, torch.dtype) and dtype.is_floating_point else torch.float64
