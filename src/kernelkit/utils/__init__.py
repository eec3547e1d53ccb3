"""Validation, numerical policy, seeding and optional imports (the bottom layer)."""

from kernelkit.utils._errors import (
    ConvergenceError,
    DataFileError,
    InputError,
    KernelkitError,
    MissingDependencyError,
    NotPSDError,
)

__all__ = [
    "ConvergenceError",
    "DataFileError",
    "InputError",
    "KernelkitError",
    "MissingDependencyError",
    "NotPSDError",
]
