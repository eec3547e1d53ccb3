"""The ``kernelkit`` command.

Exit codes: 0 success; 1 a data error (one line on stderr, ``FILE:LINE: problem`` when the
problem is in an input file), an output path that cannot be written, a refused model file, a
missing optional package or any other error (one line naming its type: the command line
never prints a traceback without ``--debug``); 2 a usage error (unknown option or kernel, bad
value, an output that exists without ``--overwrite`` or that ``--overwrite`` may not
replace); 130 Ctrl-C; 143 SIGTERM.  ``--debug`` (anywhere on the line) shows the full
traceback instead.  Nothing is written to ``--out`` when the input is rejected or the
command is interrupted.

This module imports only the standard library and kernelkit's light modules: torch,
scikit-learn, RDKit and matplotlib are imported by the command that needs them, after
:func:`kernelkit.cli._precheck.precheck` has checked the options, ``--kernel``, the output
path and the head of every input, so ``--help``, ``--version`` and every usage error answer
at once.
"""

from __future__ import annotations

import argparse
import functools
import shutil
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from kernelkit import __version__
from kernelkit.cli._cluster import add_cluster_options
from kernelkit.utils._errors import DataFileError, KernelkitError
from kernelkit.utils._kinds import InputKind

_EPILOG = (
    "exit codes: 0 ok, 1 data error (FILE:LINE: problem), 2 usage error, 130 interrupted, "
    "143 terminated"
)
_KINDS = tuple(
    k.plural for k in InputKind if k not in (InputKind.NODE, InputKind.BAG, InputKind.ANY)
)
"""``--kind``: the plural names of the kinds of :class:`~kernelkit.utils._kinds.InputKind` that
files hold (:data:`kernelkit.data.readers.KINDS`)."""

THREADED_COMMANDS = ("demo", "autoencode", "fit", "gram")
"""Commands with ``--threads`` (torch threads; torch's own default, one per physical core,
when not given).  On loaded cores one thread can be faster than two (OpenMP threads
spin-waiting for a busy core), hence the option (``benchmarks/cli_threads.py``; measured:
``docs/measurements.md``)."""


@functools.cache
def _help_width() -> int:
    """Width of the help text: the terminal's, asked once per process (argparse asks the
    terminal for every option it adds, a system call each, about 130 per command line)."""
    return shutil.get_terminal_size().columns - 2


class _Formatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows ``(default: X)`` after an option's help, unless the default is ``None`` or
    ``False`` (nothing to show) or the help already says what the default is."""

    def __init__(self, prog: str, **kwargs: Any) -> None:
        kwargs.setdefault("width", _help_width())
        super().__init__(prog, **kwargs)

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if action.default in (None, False, argparse.SUPPRESS) or "default" in text:
            return text
        return super()._get_help_string(action)


def _add_reader_options(p: argparse.ArgumentParser, kernel_help: str | None) -> None:
    p.add_argument("--kind", choices=_KINDS, help="kind of input (default: from the extension)")
    p.add_argument("--gram", action="store_true", help="the input is a precomputed Gram (.npy)")
    p.add_argument("--column", help="CSV column holding SMILES or sequences (with --kind)")
    p.add_argument("--columns", help="comma-separated CSV feature columns of vectors")
    p.add_argument(
        "--alphabet",
        choices=("dna", "rna", "protein"),
        help="alphabet of sequences (default: detected); lower case is read as upper case "
        "(soft-masking), N (dna, rna) or X (protein) is an unknown residue matching nothing",
    )
    p.add_argument(
        "--node-label", default="label", help="node attribute of graph labels ('none': ignore)"
    )
    p.add_argument(
        "--skip-invalid",
        action="store_true",
        help="leave out records that do not parse (e.g. invalid SMILES), listing their lines, "
        "instead of stopping",
    )
    p.add_argument(
        "--standardize",
        action="store_true",
        help="standardise molecules with RDKit (largest fragment, neutralised); a model fitted "
        "so standardises what it predicts",
    )
    if kernel_help is not None:
        p.add_argument("--kernel", help=kernel_help)


def _kernel_help(detailed: bool) -> str:
    """``--kernel``'s help; with every kernel's parameters for the subcommand being run
    (that needs the kernels module, hence torch: not imported for ``kernelkit --help``)."""
    if not detailed:
        return "kernel NAME[:param=value,...]; default: the input kind's (see COMMAND --help)"
    from kernelkit.cli._kernels import KERNEL_HELP, kernel_parameters

    return f"{KERNEL_HELP}. Kernels and their parameters: {kernel_parameters()}"


def _add_output_options(p: argparse.ArgumentParser, default: str | None, what: str) -> None:
    p.add_argument("--out", default=default, required=default is None, help=what)
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an existing output (only one kernelkit wrote; never an input)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress, print only errors")


def _add_common(p: argparse.ArgumentParser, command: str) -> None:
    # SUPPRESS keeps the value given before the subcommand when this one is absent
    p.add_argument(
        "--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks"
    )
    if command in THREADED_COMMANDS:
        p.add_argument(
            "--threads",
            type=int,
            default=None,
            help="torch threads (default: torch's, one per physical core; 1 can be faster "
            "when other jobs keep the cores busy, benchmarks/cli_threads.py)",
        )


def _add_target_options(p: argparse.ArgumentParser, *, task_default: str) -> None:
    p.add_argument("--target", help="column (CSV), FASTA key=value or graph attribute to predict")
    p.add_argument("--labels", help="file with one target value per line")
    p.add_argument(
        "--task",
        choices=("regression", "classification"),
        help="force the target's type; default: " + task_default,
    )


_AUTO_TASK = (
    "numbers are regression, except integers with at most 10 distinct values (classes); "
    "text is classes; a numeric column with a text cell is an error"
)


def _subcommand(
    sub: argparse._SubParsersAction, name: str, helptext: str, description: str
) -> argparse.ArgumentParser:
    p = sub.add_parser(
        name, help=helptext, description=description, epilog=_EPILOG, formatter_class=_Formatter
    )
    _add_common(p, name)
    return p


@functools.cache
def _build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; ``command``: the subcommand whose help is asked for, whose ``--kernel``
    help lists every kernel's parameters (that imports the kernels, so only for help).

    Built once per process and ``command`` (``parse_args`` leaves a parser unchanged), so
    in-process callers of :func:`main` (tests, notebooks) pay for its 130 options once."""
    parser = argparse.ArgumentParser(
        prog="kernelkit",
        description="Kernel methods and kernel-based representation learning for any data.",
        epilog=_EPILOG,
        formatter_class=_Formatter,
    )
    parser.add_argument("--version", action="version", version=f"kernelkit {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def kernel(name: str) -> str:
        return _kernel_help(name == command)

    demo = _subcommand(
        sub,
        "demo",
        "K2AE of the molecules of ESOL (shipped): codes, plots, comparison, report",
        "A 2-layer K2AE with a Tanimoto kernel on ESOL (1128 molecules, shipped inside "
        "kernelkit), 2-D and 10-D codes, compared with kernel PCA; writes codes, a latent-space "
        "plot, the training curve, a report and readme_numbers.md (the README's table).",
    )
    _add_output_options(demo, "demo_output", "output folder")
    demo.add_argument("--seed", type=int, default=0, help="random seed")
    demo.add_argument(
        "--max-iter", type=int, default=50, help="L-BFGS iterations per K2AE (at most)"
    )
    demo.add_argument("--trees", type=int, default=100, help="random-forest trees")
    demo.add_argument("--subset", type=int, help="use N random molecules only (a quick look)")
    demo.set_defaults(handler=_run_demo)

    auto = _subcommand(
        sub,
        "autoencode",
        "K2AE codes of any data file, compared with kernel PCA, with a report",
        "Autoencode a file of vectors (CSV/TSV), molecules (.smi or a CSV column), sequences "
        "(FASTA or a CSV column), graphs (GraphML/GML or a folder of edge lists) or a "
        "precomputed Gram (.npy, --gram) with a 2-layer K2AE, compared with kernel PCA on a "
        "held-out split; with a target, a random forest on the codes.",
    )
    auto.add_argument("input", help="data file or folder")
    _add_reader_options(auto, kernel("autoencode"))
    _add_target_options(auto, task_default=_AUTO_TASK)
    auto.add_argument("--dims", type=int, nargs="+", default=[2, 10], help="code widths")
    auto.add_argument("--lam", type=float, default=1e-3, help="K2AE ridge lam of every layer")
    auto.add_argument(
        "--max-iter",
        type=int,
        default=50,
        help="L-BFGS iterations (at most; each takes one or more objective evaluations)",
    )
    auto.add_argument(
        "--landmarks",
        default="auto",
        help="landmark points of the K2AE (Nystroem): a number, 'none' (exact), or 'auto' "
        "(exact up to 1500 training records, else 500 landmarks)",
    )
    auto.add_argument("--seed", type=int, default=0, help="random seed")
    auto.add_argument("--test-size", type=float, default=0.2, help="held-out fraction")
    auto.add_argument("--trees", type=int, default=100, help="random-forest trees")
    _add_output_options(auto, "autoencode_output", "output folder")
    auto.set_defaults(handler=_run_autoencode)

    fit = _subcommand(
        sub,
        "fit",
        "fit a kernel model and save it",
        "Fit kernel ridge regression, a Gaussian process, a kernel SVC or a K2AE on a data "
        "file and save the model (a .zip file or a folder) for kernelkit predict and "
        "kernelkit.io.load.",
    )
    fit.add_argument("input", help="data file or folder")
    fit.add_argument("--model", choices=("ridge", "gp", "svc", "autoencoder"), required=True)
    _add_reader_options(fit, kernel("fit"))
    _add_target_options(
        fit, task_default="regression for ridge, classification for svc (class names as written)"
    )
    fit.add_argument(
        "--lam",
        help="ridge / K2AE lam; with --cv a list such as 1e-4,1e-3; 'auto' (ridge; its default "
        "without --cv or --split): leave-one-out (Nystrom, a cluster: GCV) over a grid, then "
        "L-BFGS on log lam; default 1e-3 otherwise. A gp learns its noise",
    )
    fit.add_argument(
        "--cv",
        type=int,
        help="K-fold cross-validation over the grid of --lam and --kernel lists (e.g. "
        "weighted-degree:degree=3,5,8); fits the best cell on all records",
    )
    fit.add_argument(
        "--split",
        metavar="COLUMN",
        help="column marking each record 'train' or 'test': fit on train, score on test",
    )
    fit.add_argument("--C", type=float, default=1.0, help="SVC box constraint")
    fit.add_argument("--dims", type=int, nargs="+", default=[10], help="K2AE code width")
    fit.add_argument("--max-iter", type=int, default=50, help="K2AE L-BFGS iterations (at most)")
    fit.add_argument("--seed", type=int, default=0, help="random seed")
    add_cluster_options(fit)
    _add_output_options(fit, None, "model path (.zip, or a folder)")
    fit.set_defaults(handler=_run_fit)

    predict = _subcommand(
        sub,
        "predict",
        "predictions (or codes) of a saved model, as CSV",
        "Predictions of a model saved by kernelkit fit or autoencode (codes for an "
        "autoencoder), one CSV row per record; class predictions as the class names. Vector "
        "CSV columns are matched to the training columns by name. The model carries its "
        "kernel (no --kernel).",
    )
    predict.add_argument("model", help="model saved by kernelkit fit / autoencode")
    predict.add_argument("input", help="data file or folder (a cross-Gram for Gram models)")
    _add_reader_options(predict, None)
    predict.add_argument("--kernel", help=argparse.SUPPRESS)
    predict.add_argument("--diag", help=".npy of k(x, x) of a cross-Gram's records")
    predict.add_argument(
        "--interval",
        type=float,
        metavar="LEVEL",
        help="add lower and upper columns: jackknife+ intervals of level LEVEL such as 0.9 "
        "(ridge and gp models fitted exactly)",
    )
    predict.add_argument(
        "--std", action="store_true", help="add the posterior standard deviation (gp models)"
    )
    _add_output_options(predict, None, "CSV file of predictions")
    predict.set_defaults(handler=_run_predict)

    gram = _subcommand(
        sub,
        "gram",
        "Gram matrix of a file, computed in blocks, to .npy",
        "The Gram matrix K(INPUT, INPUT), or K(INPUT, AGAINST), of a kernel, computed in "
        "blocks of rows into a .npy file (memory-mapped).",
    )
    gram.add_argument("input", help="data file or folder")
    gram.add_argument("--against", help="second file: the cross-Gram K(INPUT, AGAINST)")
    gram.add_argument("--block-size", type=int, default=1024, help="rows per block")
    _add_reader_options(gram, kernel("gram"))
    _add_output_options(gram, None, ".npy file")
    gram.set_defaults(handler=_run_gram)

    two = _subcommand(
        sub,
        "two-sample",
        "kernel two-sample test (MMD): do two files hold samples of one distribution?",
        "The kernel two-sample test of kernelkit.stats on two files of one kind (vectors, "
        "molecules, sequences, graphs): prints MMD^2 and the p-value, writes a report with the "
        "null histogram and, for vectors and molecules, the records where the witness "
        "function is largest.",
    )
    two.add_argument("a", help="first data file or folder (A)")
    two.add_argument("b", help="second data file or folder (B), read as the kind of A")
    _add_reader_options(two, kernel("two-sample"))
    two.add_argument(
        "--method",
        choices=("permutation", "spectral", "linear", "block"),
        default="permutation",
        help="null distribution: permutations of the pooled Gram, its spectrum (Gretton et "
        "al. 2009), or the Gaussian null of the linear-time / block statistic",
    )
    two.add_argument(
        "--permutations", type=int, default=1000, help="permutations (or null draws) J"
    )
    two.add_argument("--seed", type=int, default=0, help="random seed")
    two.add_argument("--top", type=int, default=10, help="witness examples per file")
    _add_output_options(two, "two_sample_output", "output folder")
    two.set_defaults(handler=_run_two_sample)

    sug = _subcommand(
        sub,
        "suggest",
        "the next records to measure (Bayesian optimisation over a library)",
        "Fit a Gaussian process on the records of a library whose --target is measured "
        "(an empty cell, nan or NA marks a record not measured yet) and rank the others by "
        "an acquisition (kernelkit.bo.suggest): prints the next --n picks, with the "
        "posterior mean and standard deviation, and writes them with --out.",
    )
    sug.add_argument("input", help="library file (e.g. a CSV with SMILES and a target column)")
    _add_reader_options(sug, kernel("suggest"))
    sug.add_argument("--target", required=True, help="column of the measured values")
    sug.add_argument("--n", type=int, default=5, help="how many records to suggest")
    sug.add_argument(
        "--acquisition",
        choices=("ei", "ucb", "pi", "thompson"),
        default="ei",
        help="expected improvement, upper confidence bound, probability of improvement or "
        "Thompson sampling (batches: kriging believer, or joint draws for thompson)",
    )
    sug.add_argument("--minimize", action="store_true", help="look for the lowest target")
    sug.add_argument("--seed", type=int, default=0, help="random seed")
    sug.add_argument("--out", help="CSV file of the picks (default: printed only)")
    sug.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an existing output (only one kernelkit wrote; never an input)",
    )
    sug.add_argument("--quiet", action="store_true", help="no progress, print only errors")
    sug.set_defaults(handler=_run_suggest)

    info = _subcommand(
        sub,
        "info",
        "versions, threads, BLAS and devices",
        "Versions of kernelkit and its dependencies, thread counts, BLAS and devices.",
    )
    info.set_defaults(handler=_run_info)
    return parser


def _run_demo(args: argparse.Namespace) -> int:
    from kernelkit.cli._demo import run_demo

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
    from kernelkit.cli._commands import run_autoencode_command

    return run_autoencode_command(args)


def _run_fit(args: argparse.Namespace) -> int:
    from kernelkit.cli._models import run_fit_command

    return run_fit_command(args)


def _run_predict(args: argparse.Namespace) -> int:
    from kernelkit.cli._models import run_predict_command

    return run_predict_command(args)


def _run_gram(args: argparse.Namespace) -> int:
    from kernelkit.cli._commands import run_gram_command

    return run_gram_command(args)


def _run_two_sample(args: argparse.Namespace) -> int:
    from kernelkit.cli._two_sample import run_two_sample_command

    return run_two_sample_command(args)


def _run_suggest(args: argparse.Namespace) -> int:
    from kernelkit.cli._suggest import run_suggest_command

    return run_suggest_command(args)


def _run_info(args: argparse.Namespace) -> int:
    from kernelkit.cli._info import collect_info

    for key, value in collect_info().items():
        print(f"{key:>16}: {value}")
    return 0


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _warnings_as_lines(args: argparse.Namespace) -> None:
    """Python warnings raised inside a command print as ``kernelkit CMD: warning: MESSAGE
    [HH:MM:SS]`` on stderr, one line each (none with ``--quiet``; ``--debug`` keeps Python's
    format)."""
    if args.debug:
        return

    def show(message: Warning | str, *_: object, **__: object) -> None:
        from kernelkit.cli._progress import warn

        warn(args, " ".join(str(message).split()))

    warnings.showwarning = show


def _command_on_line(argv: Sequence[str]) -> str | None:
    """The first argument naming a subcommand (options come before it or after it)."""
    return next(
        (
            a
            for a in argv
            if a
            in ("demo", "autoencode", "fit", "predict", "gram", "two-sample", "suggest", "info")
        ),
        None,
    )


def _set_threads(args: argparse.Namespace) -> None:
    threads = getattr(args, "threads", None)
    if threads is None:
        return
    import torch

    torch.set_num_threads(threads)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``kernelkit`` command; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    helping = "-h" in argv or "--help" in argv
    parser = _build_parser(_command_on_line(argv) if helping else None)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    from kernelkit.cli._errors import UsageError
    from kernelkit.cli._output import Terminated, terminate_as_interrupt
    from kernelkit.cli._precheck import precheck

    handler: Callable[[argparse.Namespace], int] = args.handler
    _warnings_as_lines(args)
    try:
        with terminate_as_interrupt():
            precheck(args)
            _set_threads(args)
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
    except Terminated:
        print("kernelkit: terminated", file=sys.stderr)
        return 143
    except KeyboardInterrupt:
        print("kernelkit: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # never a traceback: one line naming the error (exit 1)
        if args.debug:
            raise
        print(
            f"kernelkit {args.command}: error: {type(exc).__name__}: {_one_line(exc)} "
            "(unexpected; --debug shows the traceback)",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())
