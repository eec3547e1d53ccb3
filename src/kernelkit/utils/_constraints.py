"""Declarative parameter constraints of the estimators (``_parameter_constraints``).

The vocabulary of scikit-learn's parameter validation, which is private there
(``sklearn.utils._param_validation``), written once here so kernelkit depends only on
scikit-learn's public API.  A parameter's constraints are a list; the value is valid when it
satisfies one of them:

* :class:`Interval` ``(type, left, right, closed=...)``: a number of that type in the range;
* :class:`StrOptions` ``({"a", "b"})``: one of these strings;
* ``None``: the value ``None``;
* a class: an instance of it;
* ``callable``: any callable;
* ``"boolean"``: ``bool`` or ``numpy.bool_``;
* ``"random_state"``: ``None``, an int in ``[0, 2**32 - 1]`` or a ``numpy.random.RandomState``;
* ``"verbose"``: a non-negative int or a bool;
* ``"array-like"``: anything with a length, a ``shape`` or ``__array__`` that is not a scalar;
* ``"cv_object"``: a cross-validation splitter (``split`` and ``get_n_splits`` methods) or an
  iterable of ``(train, test)`` index pairs that is not a string (scikit-learn's ``cv``).

A value that satisfies none raises :class:`InvalidParameterError` with scikit-learn's sentence
``The 'NAME' parameter of CLASS must be EXPECTED. Got VALUE instead.``
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from numbers import Integral, Real
from typing import Any

import numpy as np


class InvalidParameterError(ValueError, TypeError):
    """A parameter has a type or value that none of its constraints accepts."""


class Interval:
    """Numbers of ``type`` (``Integral`` or ``Real``) between ``left`` and ``right``.

    ``None`` for a bound means unbounded; ``closed`` is ``"left"``, ``"right"``, ``"both"``
    or ``"neither"``.  NaN is in no interval.
    """

    def __init__(self, type: type, left: Any, right: Any, *, closed: str) -> None:
        if type not in (Integral, Real):
            raise ValueError(f"type: expected numbers.Integral or numbers.Real, got {type!r}")
        if closed not in ("left", "right", "both", "neither"):
            raise ValueError(
                f"closed: expected 'left', 'right', 'both' or 'neither', got {closed!r}"
            )
        if left is not None and right is not None and right < left:
            raise ValueError(f"right: expected right >= left, got {left!r} > {right!r}")
        self.type, self.left, self.right, self.closed = type, left, right, closed

    def is_satisfied_by(self, value: Any) -> bool:
        if not isinstance(value, self.type):  # bool is an Integral, as in scikit-learn
            return False
        if isinstance(value, Real) and math.isnan(value):
            return False
        left = -math.inf if self.left is None else self.left
        right = math.inf if self.right is None else self.right
        low_ok = value >= left if self.closed in ("left", "both") else value > left
        high_ok = value <= right if self.closed in ("right", "both") else value < right
        return bool(low_ok and high_ok)

    def __str__(self) -> str:
        kind = "an int" if self.type is Integral else "a float"
        left: Any = "-inf" if self.left is None else self.left
        right: Any = "inf" if self.right is None else self.right
        if self.type is not Integral:  # bounds written as floats
            left = float(left) if isinstance(self.left, Real) else left
            right = float(right) if isinstance(self.right, Real) else right
        lb = "[" if self.closed in ("left", "both") else "("
        rb = "]" if self.closed in ("right", "both") else ")"
        return f"{kind} in the range {lb}{left}, {right}{rb}"


class StrOptions:
    """One of the strings ``options``."""

    def __init__(self, options: Iterable[str]) -> None:
        self.options = set(options)

    def is_satisfied_by(self, value: Any) -> bool:
        return isinstance(value, str) and value in self.options

    def __str__(self) -> str:
        return f"a str among {sorted(self.options)}"


def _satisfies(constraint: Any, value: Any) -> bool:
    if constraint is None:
        return value is None
    if isinstance(constraint, Interval | StrOptions):
        return constraint.is_satisfied_by(value)
    if constraint is callable:
        return callable(value)
    if isinstance(constraint, type):
        return isinstance(value, constraint)
    if constraint == "boolean":
        return isinstance(value, bool | np.bool_)
    if constraint == "random_state":
        return (
            value is None
            or isinstance(value, np.random.RandomState)
            or Interval(Integral, 0, 2**32 - 1, closed="both").is_satisfied_by(value)
        )
    if constraint == "verbose":
        return isinstance(value, bool | np.bool_) or (isinstance(value, Integral) and value >= 0)
    if constraint == "array-like":
        arraylike = any(hasattr(value, a) for a in ("__len__", "shape", "__array__"))
        return arraylike and not np.isscalar(value)
    if constraint == "cv_object":
        splitter = all(callable(getattr(value, m, None)) for m in ("split", "get_n_splits"))
        return splitter or (isinstance(value, Iterable) and not isinstance(value, str))
    raise ValueError(f"unknown parameter constraint {constraint!r}")


def describe(constraint: Any) -> str:
    """The constraint in words, as in the error message."""
    if constraint is None:
        return "None"
    if constraint is callable:
        return "a callable"
    if isinstance(constraint, type):
        return f"an instance of '{constraint.__module__}.{constraint.__qualname__}'"
    words = {
        "boolean": "an instance of 'bool' or an instance of 'numpy.bool'",
        "random_state": "an int in the range [0, 4294967295], an instance of "
        "'numpy.random.mtrand.RandomState' or None",
        "verbose": "an int in the range [0, inf) or a bool",
        "array-like": "an array-like",
        "cv_object": "a cross-validation splitter or an iterable of (train, test) pairs",
    }
    return (
        words.get(constraint, str(constraint)) if isinstance(constraint, str) else str(constraint)
    )


def validate_parameter_constraints(
    constraints: Mapping[str, list[Any]], params: Mapping[str, Any], caller_name: str
) -> None:
    """Raise :class:`InvalidParameterError` for the first parameter of ``params`` that
    satisfies none of its ``constraints``."""
    for name, allowed in constraints.items():
        value = params[name]
        if any(_satisfies(c, value) for c in allowed):
            continue
        words = [describe(c) for c in allowed]
        expected = words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"
        raise InvalidParameterError(
            f"The {name!r} parameter of {caller_name} must be {expected}. Got {value!r} instead."
        )


def invalid_values(constraints: list[Any]) -> list[Any]:
    """Values that satisfy none of ``constraints`` (for tests of the validation): an object of
    a fresh class, and for each interval / option set a value just outside it."""

    class _BadType:
        def __repr__(self) -> str:
            return "<bad type>"

    out: list[Any] = [_BadType()]
    for c in constraints:
        if isinstance(c, StrOptions):
            out.append("not-an-option")
        elif isinstance(c, Interval):
            step = 1 if c.type is Integral else 1e-3 * max(1.0, abs(c.left or c.right or 1.0))
            if c.left is not None:
                out.append(c.left - step if c.closed in ("left", "both") else c.left)
            elif c.right is not None:
                out.append(c.right + step if c.closed in ("right", "both") else c.right)
    return [v for v in out if not any(_satisfies(c, v) for c in constraints)]


__all__ = [
    "Interval",
    "InvalidParameterError",
    "StrOptions",
    "describe",
    "invalid_values",
    "validate_parameter_constraints",
]
