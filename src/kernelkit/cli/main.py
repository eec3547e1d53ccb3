"""The ``kernelkit`` command.

Exit codes: 0 success; 1 a data error (one line on stderr, ``FILE:LINE: problem`` when the
problem is in an input file), an output path that cannot be written, a refused model file or
a missing optional package; 2 a usage error (unknown option or kernel, bad value, an output
that exists without ``--overwrite``).  ``--debug`` shows the full traceback instead.  Nothing
is written to ``--out`` when the input is rejected.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from kernelkit import __version__
from kernelkit.utils.errors import DataFileError, KernelkitError

_EPILOG = "exit codes: 0 ok, 1 data error (FILE:LINE: problem), 2 usage error"


def _add_reader_options(p: argparse.ArgumentParser) -> None:
    from kernelkit.cli.kernels import KERNEL_HELP
    from kernelkit.data.readers import KINDS

    p.add_argument("--kind", choices=KINDS, help="kind of input (default: from the extension)")
    p.add_argument("--gram", action="store_true", help="the input is a precomputed Gram (.npy)")
    p.add_argument("--column", help="CSV column holding SMILES or sequences")
    p.add_argument("--columns", help="comma-separated CSV feature columns of vectors")
    p.add_argument("--alphabet", choices=("dna", "protein"), help="alphabet of sequences")
    p.add_argument(
        "--node-label", default="label", help="node attribute of graph labels ('none': ignore)"
    )
    p.add_argument("--kernel", help=KERNEL_HELP)


def _add_output_options(p: argparse.ArgumentParser, default: str | None) -> None:
    p.add_argument(
        "--out",
        default=default,
        required=default is None,
        help="output path" + (" (default: %(default)s)" if default else ""),
    )
    p.add_argument("--overwrite", action="store_true", help="replace an existing output")
    p.add_argument("--quiet", action="store_true", help="no progress bars, print only errors")


def _add_target_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--target", help="column (CSV), FASTA key=value or graph attribute to predict")
    p.add_argument("--labels", help="file with one target value per line")


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kernelkit",
        description="Kernel methods and kernel-based representation learning for any data.",
        epilog=_EPILOG,
    )
    parser.add_argument("--version", action="version", version=f"kernelkit {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = sub.add_parser(
        "demo",
        help="K2AE of the molecules of ESOL (shipped): codes, plots, comparison, report",
        description="A 2-layer K2AE with a Tanimoto kernel on ESOL (1128 molecules, shipped "
        "inside kernelkit), 2-D and 10-D codes, compared with kernel PCA; writes codes, a "
        "latent-space plot, the training curve and a report.",
        epilog=_EPILOG,
    )
    _add_output_options(demo, "demo_output")
    demo.add_argument("--seed", type=int, default=0, help="random seed (default: %(default)s)")
    demo.add_argument("--max-iter", type=int, default=50, help="L-BFGS evaluations per K2AE")
    demo.add_argument("--trees", type=int, default=100, help="random-forest trees")
    demo.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads (default 1: faster than 2 for this size on a loaded 2-core machine)",
    )
    demo.add_argument("--subset", type=int, help="use N random molecules only (a quick look)")
    demo.set_defaults(handler=_run_demo)

    auto = sub.add_parser(
        "autoencode",
        help="K2AE codes of any data file, compared with kernel PCA, with a report",
        description="Autoencode a file of vectors (CSV/TSV), molecules (.smi or a CSV "
        "column), sequences (FASTA or a CSV column), graphs (GraphML/GML or a folder of edge "
        "lists) or a precomputed Gram (.npy, --gram) with a K2AE.",
        epilog=_EPILOG,
    )
    auto.add_argument("input", help="data file or folder")
    _add_reader_options(auto)
    _add_target_options(auto)
    auto.add_argument("--dims", type=int, nargs="+", default=[2, 10], help="code widths")
    auto.add_argument("--lam", type=float, default=1e-3, help="K2AE ridge lam of every layer")
    auto.add_argument("--max-iter", type=int, default=50, help="L-BFGS objective evaluations")
    auto.add_argument("--seed", type=int, default=0, help="random seed")
    auto.add_argument("--test-size", type=float, default=0.2, help="held-out fraction")
    auto.add_argument("--trees", type=int, default=100, help="random-forest trees")
    auto.add_argument("--threads", type=int, help="torch threads (default: torch's)")
    _add_output_options(auto, "autoencode_output")
    auto.set_defaults(handler=_run_autoencode)

    fit = sub.add_parser("fit", help="fit a kernel model and save it", epilog=_EPILOG)
    fit.add_argument("input", help="data file or folder")
    fit.add_argument("--model", choices=("ridge", "svc", "autoencoder"), required=True)
    _add_reader_options(fit)
    _add_target_options(fit)
    fit.add_argument("--lam", type=float, default=1e-3, help="ridge / K2AE lam")
    fit.add_argument("--C", type=float, default=1.0, help="SVC box constraint")
    fit.add_argument("--dims", type=int, nargs="+", default=[10], help="K2AE code width")
    fit.add_argument("--max-iter", type=int, default=50, help="K2AE L-BFGS evaluations")
    fit.add_argument("--seed", type=int, default=0, help="random seed")
    _add_output_options(fit, None)
    fit.set_defaults(handler=_run_fit)

    predict = sub.add_parser(
        "predict", help="predictions (or codes) of a saved model, as CSV", epilog=_EPILOG
    )
    predict.add_argument("model", help="model saved by kernelkit fit / autoencode")
    predict.add_argument("input", help="data file or folder (a cross-Gram for Gram models)")
    _add_reader_options(predict)
    predict.add_argument("--diag", help=".npy of k(x, x) of a cross-Gram's records")
    _add_output_options(predict, None)
    predict.set_defaults(handler=_run_predict)

    gram = sub.add_parser(
        "gram", help="Gram matrix of a file, computed in blocks, to .npy", epilog=_EPILOG
    )
    gram.add_argument("input", help="data file or folder")
    gram.add_argument("--against", help="second file: the cross-Gram K(INPUT, AGAINST)")
    gram.add_argument("--block-size", type=int, default=1024, help="rows per block")
    _add_reader_options(gram)
    _add_output_options(gram, None)
    gram.set_defaults(handler=_run_gram)

    info = sub.add_parser("info", help="versions, threads, BLAS and devices")
    info.set_defaults(handler=_run_info)
    return parser


def _run_demo(args: argparse.Namespace) -> int:
    from kernelkit.cli.demo import run_demo

    run_demo(
        out=args.out,
        seed=args.seed,
        max_iter=args.max_iter,
        subset=args.subset,
        trees=args.trees,
        quiet=args.quiet,
        overwrite=args.overwrite,
    )
    return 0


def _run_autoencode(args: argparse.Namespace) -> int:
    from kernelkit.cli.commands import run_autoencode_command

    return run_autoencode_command(args)


def _run_fit(args: argparse.Namespace) -> int:
    from kernelkit.cli.commands import run_fit_command

    return run_fit_command(args)


def _run_predict(args: argparse.Namespace) -> int:
    from kernelkit.cli.commands import run_predict_command

    return run_predict_command(args)


def _run_gram(args: argparse.Namespace) -> int:
    from kernelkit.cli.commands import run_gram_command

    return run_gram_command(args)


def _run_info(args: argparse.Namespace) -> int:
    from kernelkit.cli.info import collect_info

    for key, value in collect_info().items():
        print(f"{key:>16}: {value}")
    return 0


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``kernelkit`` command; returns the exit code."""
    from kernelkit.cli.errors import UsageError

    parser = _build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    handler: Callable[[argparse.Namespace], int] = args.handler
    threads = getattr(args, "threads", None)
    if threads is not None:
        if threads < 1:
            print(
                f"kernelkit {args.command}: error: --threads: expected >= 1, got {threads}",
                file=sys.stderr,
            )
            return 2
        import torch

        torch.set_num_threads(threads)
    try:
        return handler(args)
    except UsageError as exc:
        if args.debug:
            raise
        print(f"kernelkit {args.command}: error: {_one_line(exc)}", file=sys.stderr)
        return 2
    except DataFileError as exc:
        if args.debug:
            raise
        print(_one_line(exc), file=sys.stderr)
        return 1
    except (KernelkitError, OSError, ValueError) as exc:
        if args.debug:
            raise
        print(f"kernelkit {args.command}: error: {_one_line(exc)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("kernelkit: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
