"""``kernelkit fit --solver nystrom`` on a Dask cluster: ``--scheduler ADDRESS`` or ``--workers N``.

The records are read on this machine and handed to the workers as a Dask array (vectors) or
bag (strings, graphs, molecules) cut into row blocks; the Nyström-PCG fit then runs its
``K_nm`` products on the workers (:mod:`kernelkit.gram._distributed`).  Dask is imported only
when one of the two options is given.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from typing import Any

from kernelkit.cli._errors import UsageError
from kernelkit.cli._progress import stage


def add_cluster_options(p: argparse.ArgumentParser) -> None:
    """The ``--solver``, ``--centers``, ``--scheduler`` and ``--workers`` options of ``fit``."""
    p.add_argument(
        "--solver",
        choices=("exact", "nystrom"),
        default="exact",
        help="ridge solver: exact, or Nyström on --centers centres for large n (the one-pass "
        "normal equations or Falkon's preconditioned CG, by cost)",
    )
    p.add_argument(
        "--centers", type=int, default=1000, help="Nyström centres m (with --solver nystrom)"
    )
    p.add_argument("--scheduler", help="address of a running Dask scheduler (tcp://host:8786)")
    p.add_argument("--workers", type=int, help="start a local Dask cluster of N worker processes")


def check_cluster_options(args: argparse.Namespace) -> None:
    """Usage errors of the solver and cluster options, before any data is read."""
    on_cluster = args.scheduler is not None or args.workers is not None
    if args.scheduler is not None and args.workers is not None:
        raise UsageError("--scheduler and --workers: give one of them, not both")
    if args.workers is not None and args.workers < 1:
        raise UsageError(f"--workers: expected at least 1, got {args.workers}")
    if args.centers < 1:
        raise UsageError(f"--centers: expected at least 1, got {args.centers}")
    if args.solver == "nystrom" and args.model != "ridge":
        raise UsageError(f"--solver nystrom: only --model ridge has it, got --model {args.model}")
    if on_cluster and args.solver != "nystrom":
        option = "--scheduler" if args.scheduler is not None else "--workers"
        raise UsageError(f"{option}: a cluster fit needs --model ridge --solver nystrom")


@contextlib.contextmanager
def cluster_client(args: argparse.Namespace) -> Iterator[Any]:
    """The Dask client of ``--scheduler`` / ``--workers`` (``None`` without them)."""
    if args.scheduler is None and args.workers is None:
        yield None
        return
    try:
        import distributed
    except ImportError as err:
        raise UsageError(
            "--scheduler / --workers: Dask is not installed (pip install 'kernelkit[dask]')"
        ) from err
    if args.scheduler is not None:
        stage(args, f"connecting to the Dask scheduler at {args.scheduler}")
        try:
            client = distributed.Client(args.scheduler, timeout="10s")
        except OSError as err:
            raise UsageError(f"--scheduler: cannot reach {args.scheduler!r} ({err})") from None
        with client:
            yield client
        return
    stage(args, f"starting a local Dask cluster of {args.workers} worker processes")
    with (
        distributed.LocalCluster(
            n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


def distribute(items: Any, client: Any) -> Any:
    """``items`` as a Dask array (a NumPy array or tensor) or bag, in row blocks on ``client``.

    Two blocks per worker thread, so that every worker has work while one block is slow.
    """
    import numpy as np

    threads = sum(client.nthreads().values())
    blocks = max(1, min(len(items), 2 * threads))
    if hasattr(items, "shape"):
        import dask.array as da

        array = np.asarray(items)
        rows = -(-len(array) // blocks)
        return da.from_array(array, chunks=(rows, *array.shape[1:])).persist()
    import dask.bag as db

    return db.from_sequence(list(items), npartitions=blocks).persist()
