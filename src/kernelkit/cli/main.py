"""The ``kernelkit`` command.

Exit codes: 0 success, 1 data error (one line on stderr), 2 usage error.  ``--debug`` shows
the full traceback instead of the one-line message.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from kernelkit import __version__
from kernelkit.utils.errors import KernelkitError


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kernelkit",
        description="Kernel methods and kernel-based representation learning for any data.",
    )
    parser.add_argument("--version", action="version", version=f"kernelkit {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = sub.add_parser(
        "demo",
        help="run the end-to-end demonstration job and write its report",
        description="Kernel PCA and kernel ridge classification of handwritten digits "
        "(scikit-learn's bundled 8x8 digits; no download), compared with scikit-learn.",
    )
    demo.add_argument("--out", default="demo_output", help="output folder (default: %(default)s)")
    demo.add_argument("--seed", type=int, default=0, help="random seed (default: %(default)s)")
    demo.add_argument("--quiet", action="store_true", help="print nothing but errors")
    demo.set_defaults(handler=_run_demo)

    info = sub.add_parser("info", help="versions, threads, BLAS and devices")
    info.set_defaults(handler=_run_info)
    return parser


def _run_demo(args: argparse.Namespace) -> int:
    from kernelkit.cli.demo import run_demo

    run_demo(out=args.out, seed=args.seed, quiet=args.quiet)
    return 0


def _run_info(args: argparse.Namespace) -> int:
    from kernelkit.cli.info import collect_info

    for key, value in collect_info().items():
        print(f"{key:>16}: {value}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``kernelkit`` command; returns the exit code."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except (KernelkitError, OSError, ValueError) as exc:
        if args.debug:
            raise
        print(f"kernelkit {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("kernelkit: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
