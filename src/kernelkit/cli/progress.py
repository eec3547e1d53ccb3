"""Progress on stderr: one plain line per stage, and a bar per K2AE fit on a terminal.

A stage line (``kernelkit autoencode: fitting the 2-D K2AE``) is printed whether or not
stderr is a terminal, so a piped or logged run shows where it is; ``--quiet`` silences both.
"""

from __future__ import annotations

import sys
import time
from typing import Any


def stage(where: Any, message: str) -> None:
    """Print ``kernelkit COMMAND: message [HH:MM:SS]`` on stderr (nothing with ``--quiet``).

    ``where``: anything with the attributes ``command`` and ``quiet`` (the parsed arguments,
    the settings of a job).
    """
    if getattr(where, "quiet", False):
        return
    prefix = f"kernelkit {getattr(where, 'command', '') or ''}".rstrip()
    print(f"{prefix}: {message} [{time.strftime('%H:%M:%S')}]", file=sys.stderr, flush=True)


def progress_bar(total: int, desc: str, quiet: bool) -> Any:
    """A tqdm bar on stderr, or ``None`` with ``--quiet`` or when stderr is not a terminal."""
    if quiet or not sys.stderr.isatty():
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, leave=False)


def warn(where: Any, message: str) -> None:
    """Print ``kernelkit COMMAND: warning: message`` on stderr (nothing with ``--quiet``)."""
    stage(where, f"warning: {message}")
