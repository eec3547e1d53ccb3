"""kernelkit's command line: ``kernelkit --help`` (``docs/cli.md``)."""

from kernelkit.cli._main import main

__all__ = ["main"]
