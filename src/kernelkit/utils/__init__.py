"""Validation, numerical policy, seeding and optional imports (the bottom layer)."""

from kernelkit.utils.errors import (
    ConvergenceError,
    InputError,
    KernelkitError,
    MissingDependencyError,
    NotPSDError,
)

__all__ = [
    "ConvergenceError",
    "InputError",
    "KernelkitError",
    "MissingDependencyError",
    "NotPSDError",
]
