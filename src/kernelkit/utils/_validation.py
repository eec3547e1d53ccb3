"""Input validation and the dtype / device / container policy.

Arrays may come as NumPy arrays, pandas objects, Python lists or torch tensors.  They are
converted to torch tensors for the maths; :func:`like_input` converts results back to the
container of the input (NumPy in, NumPy out; torch in, torch out on the same device).
"""

from __future__ import annotations

import dataclasses
import math
from numbers import Real
from typing import Any

import numpy as np
import torch
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import column_or_1d

from kernelkit.utils._errors import InputError
from kernelkit.utils._numerics import DEFAULT_DTYPE

_TORCH_FLOATS = (torch.float32, torch.float64)
"""Floating dtypes computed as they come; half precision (``float16``, ``bfloat16``) is
computed in float32 (:func:`to_tensor`): CPU linear algebra (``eigh``, Cholesky) has no
half-precision routines."""

_HALF_FLOATS = (torch.float16, torch.bfloat16)


def largest_entry(dtype: torch.dtype) -> float:
    """The largest magnitude :func:`to_tensor` accepts in a floating ``dtype``:
    ``sqrt(largest float) / 1e4`` (1.3e150 in float64, 1.8e15 in float32), so that squared
    differences and inner products of entries, summed over up to ``2e7`` features, stay
    finite (every kernel forms them)."""
    return math.sqrt(torch.finfo(dtype).max) / 1e4


def resolve_dtype(dtype: Any) -> torch.dtype | None:
    """Map ``None``, a torch dtype, a NumPy dtype or a string to a torch floating dtype."""
    if dtype is None or isinstance(dtype, torch.dtype):
        return dtype
    name = np.dtype(dtype).name
    mapping = {"float64": torch.float64, "float32": torch.float32, "float16": torch.float16}
    if name not in mapping:
        raise InputError(f"dtype: expected a floating dtype (float32 or float64), got {dtype!r}")
    return mapping[name]


def to_tensor(
    X: Any,
    *,
    name: str = "X",
    dtype: torch.dtype | None = None,
    device: torch.device | str | None = None,
    ndim: int | None = 2,
    allow_empty: bool = False,
) -> torch.Tensor:
    """Validate a numeric array and return it as a floating torch tensor.

    Parameters
    ----------
    X : array-like or torch.Tensor
        The data.  pandas objects use their ``.to_numpy()``.
    name : str
        Argument name quoted in error messages.
    dtype : torch.dtype, optional
        Target dtype.  Default: keep a float32 or float64 tensor's dtype; float32 for a
        half-precision tensor (``float16``, ``bfloat16``: CPU linear algebra has no
        half-precision routines, so it is computed in float32 and results are float32);
        float32 for a float32 array; float64 for everything else.
    device : torch.device or str, optional
        Target device.  Default: keep a tensor's device; CPU for everything else.
    ndim : int or None
        Required number of dimensions (1-D input is *not* silently reshaped to 2-D).
    allow_empty : bool
        Whether zero samples are accepted.

    Raises
    ------
    InputError
        On non-numeric content (a pandas column is named), a wrong number of dimensions,
        zero samples or zero features, NaN or infinite values, or entries whose magnitude
        exceeds :func:`largest_entry` (their squares would overflow), each naming the index.
    """
    if X is None:
        raise InputError(f"{name}: expected an array, got None")
    if isinstance(X, torch.Tensor):
        t = X
        if dtype is None and t.dtype in _HALF_FLOATS:
            dtype = torch.float32
        elif dtype is None:
            dtype = t.dtype if t.dtype in _TORCH_FLOATS else DEFAULT_DTYPE
        t = t.to(dtype=dtype, device=device if device is not None else t.device)
    else:
        if hasattr(X, "dtypes") and hasattr(X, "columns"):
            check_frame_columns(X, name)
        if hasattr(X, "to_numpy"):
            X = X.to_numpy()
        try:
            arr = np.asarray(X)
        except (ValueError, TypeError) as exc:
            raise InputError(f"{name}: expected a numeric array, could not convert: {exc}") from exc
        if arr.dtype.kind not in "biuf":
            if arr.dtype.kind == "c":
                raise InputError(f"{name}: expected real numbers, got complex dtype {arr.dtype}")
            try:
                arr = arr.astype(np.float64)
            except (ValueError, TypeError) as exc:
                raise InputError(
                    f"{name}: expected numeric values, got dtype {arr.dtype} "
                    f"(e.g. {arr.ravel()[:1].tolist()}); structured inputs need a kernel "
                    "for their kind (strings, graphs, molecules)"
                ) from exc
        if dtype is None:
            dtype = torch.float32 if arr.dtype == np.float32 else DEFAULT_DTYPE
        t = torch.as_tensor(arr, dtype=dtype, device=device)
    if ndim is not None and t.ndim != ndim:
        hint = " (reshape a single feature with X.reshape(-1, 1))" if t.ndim == 1 else ""
        raise InputError(f"{name}: expected a {ndim}-D array, got shape {tuple(t.shape)}{hint}")
    if not allow_empty and t.ndim >= 1 and t.shape[0] == 0:
        raise InputError(f"{name}: expected at least 1 sample, got 0 (shape {tuple(t.shape)})")
    if t.ndim == 2 and t.shape[1] == 0:
        raise InputError(f"{name}: expected at least 1 feature, got 0 (shape {tuple(t.shape)})")
    check_finite(t, name=name)
    return t


def check_frame_columns(X: Any, name: str) -> None:
    """Raise :class:`InputError` naming the first column of a pandas DataFrame whose values
    are not numbers (a categorical or text column), its dtype and an example value."""
    for j, column in enumerate(X.columns):
        series = X.iloc[:, j]
        kind = getattr(series.dtype, "kind", "O")
        if kind in "biuf":
            continue
        try:
            np.asarray(series.to_numpy(), dtype=np.float64)
        except (ValueError, TypeError):
            example = next((v for v in series if not _is_number(v)), series.iloc[0])
            raise InputError(
                f"{name}: column {column!r} has dtype {series.dtype} with non-numeric values "
                f"(e.g. {example!r}); expected numbers: encode it (e.g. scikit-learn's "
                "OneHotEncoder) or drop it"
            ) from None


def _is_number(value: Any) -> bool:
    try:
        float(value)
    except (ValueError, TypeError):
        return False
    return True


def check_finite(t: torch.Tensor, *, name: str) -> None:
    """Raise :class:`InputError` if ``t`` holds NaN or infinite values, or (float32 and
    float64) entries above :func:`largest_entry` in magnitude (their squares overflow),
    naming the first one.  A half-precision tensor, asked for explicitly, has its own
    range and is only checked to be finite."""
    if not (t.is_floating_point() and t.numel()):
        return
    if not bool(torch.isfinite(t).all()):
        bad = torch.nonzero(~torch.isfinite(t))[0].tolist()
        value = t[tuple(bad)].item()
        raise InputError(
            f"{name}: expected finite values, found {value} at index {tuple(bad)}; "
            "remove or impute NaN/inf before fitting"
        )
    if t.dtype not in _TORCH_FLOATS:
        return
    limit = largest_entry(t.dtype)
    big = t.abs() > limit
    if bool(big.any()):
        bad = torch.nonzero(big)[0].tolist()
        value = t[tuple(bad)].item()
        raise InputError(
            f"{name}: entry {value:.3g} at index {tuple(bad)} is too large: kernels square "
            f"differences and products of entries, which overflow {t.dtype} above "
            f"|value| = {limit:.2g}; rescale {name} (e.g. scikit-learn's StandardScaler)"
        )


def check_positive(value: Any, *, name: str, strict: bool = True) -> float:
    """Return ``value`` as a float after checking it is a finite (strictly) positive real."""
    if isinstance(value, bool) or not isinstance(value, Real) or not np.isfinite(value):
        raise InputError(f"{name}: expected a finite real number, got {value!r}")
    if (strict and value <= 0) or (not strict and value < 0):
        bound = "> 0" if strict else ">= 0"
        raise InputError(f"{name}: expected a value {bound}, got {value!r}")
    return float(value)


def check_int(value: Any, *, name: str, minimum: int = 1) -> int:
    """Return ``value`` as an int after checking it is an integer ``>= minimum``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise InputError(f"{name}: expected an integer >= {minimum}, got {value!r}")
    return int(value)


def owned(value: Any, source: Any) -> Any:
    """``value`` with every tensor that shares memory with ``source`` replaced by a copy.

    A fitted model owns its data (scikit-learn's ``copy_X``): the training batch an estimator
    stores must not be a view of the caller's array (``torch.from_numpy`` and
    ``torch.as_tensor`` share memory), or overwriting that array after ``fit`` would move
    every later prediction.  ``value`` is a tensor, a dataclass of tensors (a
    :class:`~kernelkit.kernels.PrecomputedBatch`) or anything else (returned as is);
    ``source`` is the caller's input (NumPy, pandas or torch).  Only shared tensors are
    copied, so an input the validation already copied costs nothing more.
    """
    if isinstance(value, torch.Tensor):
        return value.clone() if _shares_memory(value, source) else value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {
            f.name: owned(getattr(value, f.name), source)
            for f in dataclasses.fields(value)
            if isinstance(getattr(value, f.name), torch.Tensor)
        }
        return dataclasses.replace(value, **fields) if fields else value
    return value


def _shares_memory(tensor: torch.Tensor, source: Any) -> bool:
    if isinstance(source, torch.Tensor):
        if source.device != tensor.device or tensor.numel() == 0 or source.numel() == 0:
            return False
        a, b = tensor.untyped_storage(), source.untyped_storage()
        return a.data_ptr() < b.data_ptr() + b.nbytes() and b.data_ptr() < a.data_ptr() + a.nbytes()
    if tensor.device.type != "cpu":
        return False
    array = source.to_numpy() if hasattr(source, "to_numpy") else source
    if not isinstance(array, np.ndarray):
        return False
    return bool(np.shares_memory(tensor.detach().numpy(), array))


def like_input(result: torch.Tensor, reference: Any) -> Any:
    """Return ``result`` in the container of ``reference``: torch stays torch, else NumPy."""
    if isinstance(reference, torch.Tensor):
        return result.to(reference.device)
    return result.detach().cpu().numpy()


@dataclasses.dataclass(frozen=True)
class EncodedLabels:
    """Labels already encoded by :func:`signed_targets`, passed in place of ``y`` where a loop
    would encode the same labels at every step (a ``lam`` path's Newton steps: the check and
    the ``np.unique`` of ``n`` labels, ``O(n log n)`` each time; ``docs/measurements.md``).

    Attributes
    ----------
    classes : ndarray
        The sorted classes.
    Y : torch.Tensor, shape (n, p)
        The ``+-1`` targets.
    """

    classes: np.ndarray
    Y: torch.Tensor

    @classmethod
    def of(cls, y: Any) -> EncodedLabels:
        """Encode ``y`` once (:func:`signed_targets`)."""
        return cls(*signed_targets(y))


def signed_targets(y: Any) -> tuple[np.ndarray, torch.Tensor]:
    """Classes and the +-1 targets of the binary problems, shape ``(n, p)``.

    ``p = 1`` for two classes (``+1`` marks ``classes_[1]``), ``p = n_classes`` otherwise
    (column ``c``: ``+1`` for class ``c``, ``-1`` for the others).  :class:`EncodedLabels`
    are returned as they are.

    Raises
    ------
    InputError
        For non-classification targets or a single class.
    """
    if isinstance(y, EncodedLabels):
        return y.classes, y.Y
    labels = y.detach().cpu().numpy() if isinstance(y, torch.Tensor) else np.asarray(y)
    try:
        labels = column_or_1d(labels, warn=True)
        check_classification_targets(labels)
    except ValueError as exc:
        raise InputError(f"y: {exc}") from exc
    classes, codes = np.unique(labels, return_inverse=True)
    if len(classes) < 2:
        raise InputError(
            f"y: expected at least 2 classes, got 1 class ({classes[0]!r}); a classifier "
            "needs examples of two classes or more"
        )
    if len(classes) == 2:
        signs = np.where(codes == 1, 1.0, -1.0)[:, None]
    else:
        signs = np.where(codes[:, None] == np.arange(len(classes))[None, :], 1.0, -1.0)
    return classes, torch.as_tensor(signs, dtype=torch.float64)


def check_signs(y: torch.Tensor, *, name: str = "y") -> torch.Tensor:
    """``y`` as a float64 vector after checking every entry is -1 or +1 (binary problems).

    Raises
    ------
    InputError
        Naming the values that came in (multi-class or 0/1 labels must be mapped first).
    """
    y = torch.as_tensor(y, dtype=torch.float64)
    if y.ndim != 1:
        raise InputError(
            f"{name}: expected a 1-D vector of -1/+1 labels, got shape {tuple(y.shape)}"
        )
    values = torch.unique(y)
    if not bool(((values == 1) | (values == -1)).all()):
        shown = ", ".join(f"{v:g}" for v in values[:6].tolist())
        raise InputError(
            f"{name}: expected binary labels in {{-1, +1}}, got the values {{{shown}"
            f"{', ...' if len(values) > 6 else ''}}}; map two classes to -1/+1 (more classes: "
            "one problem per class, as the estimators do)"
        )
    return y
