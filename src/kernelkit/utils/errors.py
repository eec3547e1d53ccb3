"""Errors of kernelkit.

Every error subclasses :class:`KernelkitError` *and* the built-in exception a caller would
expect (``ValueError``, ``TypeError``, ``ImportError``), so ``except ValueError`` keeps working.
Messages say what was expected, what came in, and how to fix it.
"""

from __future__ import annotations


class KernelkitError(Exception):
    """Base class of all kernelkit errors."""


class InputError(KernelkitError, ValueError):
    """An argument has the wrong shape, type, value or content."""


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
