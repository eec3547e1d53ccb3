"""Errors of kernelkit.

Every error subclasses :class:`KernelkitError` *and* the built-in exception a caller would
expect (``ValueError``, ``TypeError``, ``ImportError``), so ``except ValueError`` keeps working.
Messages say what was expected, what came in, and how to fix it.
"""

from __future__ import annotations

from typing import Any


class KernelkitError(Exception):
    """Base class of all kernelkit errors."""


class InputError(KernelkitError, ValueError):
    """An argument has the wrong shape, type, value or content."""


class SparseInputError(InputError, TypeError):
    """Sparse input where only dense input is read (a ``TypeError`` too, as scikit-learn's)."""


class NotPSDError(KernelkitError, ValueError):
    """A matrix that must be positive semi-definite is not (beyond the tolerance)."""


class ConvergenceError(KernelkitError, RuntimeError):
    """An iterative method failed in a way that leaves no usable answer."""


class MissingDependencyError(KernelkitError, ImportError):
    """An optional dependency is not installed; the message names the extra to install."""


class DataFileError(InputError):
    """A data file cannot be read: names the file, the line (or record) and the problem.

    ``str(error)`` is ``"FILE:LINE: problem"`` (``"FILE: problem"`` when no line applies), the
    one-line form the command line prints.
    """

    def __init__(self, path: object, problem: str, *, line: int | str | None = None):
        self.path = str(path)
        self.line = line
        self.problem = problem
        where = self.path if line is None else f"{self.path}:{line}"
        super().__init__(f"{where}: {problem}")


def _sklearn_classes() -> dict[str, type]:
    """:class:`ParameterError`, :class:`NotFittedError` and :class:`ConvergenceWarning`,
    built on first use.

    ``ParameterError`` subclasses :class:`kernelkit.utils._constraints.InvalidParameterError`,
    ``NotFittedError`` scikit-learn's ``NotFittedError`` and ``ConvergenceWarning``
    scikit-learn's ``ConvergenceWarning``; building them on first access (PEP 562 module
    ``__getattr__``) keeps ``import kernelkit.utils._errors`` free of scikit-learn, whose
    import the command line's start-up does not pay.
    """
    from sklearn.exceptions import ConvergenceWarning as SkConvergenceWarning
    from sklearn.exceptions import NotFittedError as SkNotFittedError

    from kernelkit.utils._constraints import InvalidParameterError

    class ParameterError(InputError, InvalidParameterError):
        """A constructor parameter of an estimator has the wrong type or value.

        Raised by the declarative validation of ``_parameter_constraints``
        (:mod:`kernelkit.utils._constraints`); ``str(error)`` starts with the parameter's name,
        then scikit-learn's sentence ``The 'lam' parameter of KernelRidge must be ... Got ...
        instead.``  It is an :class:`InputError` (a ``ValueError``) and a ``TypeError``.
        """

    class NotFittedError(InputError, SkNotFittedError):
        """A method needs what ``fit`` did not learn (e.g. ``inverse_transform`` without
        ``fit_inverse_transform=True``): an :class:`InputError` and scikit-learn's
        ``NotFittedError`` (a ``ValueError`` and an ``AttributeError``)."""

    class ConvergenceWarning(SkConvergenceWarning):
        """An iterative optimiser stopped at ``max_iter`` before its stopping test held.

        A subclass of scikit-learn's ``ConvergenceWarning``, so its warning filters apply.
        """

    classes = (ParameterError, NotFittedError, ConvergenceWarning)
    for cls in classes:
        cls.__module__ = __name__
        cls.__qualname__ = cls.__name__
    return {cls.__name__: cls for cls in classes}


def __getattr__(name: str) -> Any:
    if name in ("ParameterError", "NotFittedError", "ConvergenceWarning"):
        globals().update(_sklearn_classes())
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
