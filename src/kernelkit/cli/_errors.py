"""Errors of the command line: a usage error exits 2 (a data error, any other, exits 1)."""

from __future__ import annotations

from kernelkit.utils._errors import KernelkitError


class UsageError(KernelkitError, ValueError):
    """A command-line argument is wrong (exit code 2): names the option and the valid values."""
