"""Progress on stderr: one plain line per stage, and a bar per long step on a terminal.

A stage line (``kernelkit autoencode: fitting the 2-D K2AE``) is printed whether or not
stderr is a terminal, so a piped or logged run shows where it is; ``--quiet`` silences both.
Both go through :mod:`kernelkit.utils._progress`, the library's one progress mechanism.
"""

from __future__ import annotations

import time
from typing import Any

from kernelkit.utils._progress import Progress, write_line


def stage(where: Any, message: str) -> None:
    """Print ``kernelkit COMMAND: message [HH:MM:SS]`` on stderr (nothing with ``--quiet``).

    ``where``: anything with the attributes ``command`` and ``quiet`` (the parsed arguments,
    the settings of a job).
    """
    if getattr(where, "quiet", False):
        return
    prefix = f"kernelkit {getattr(where, 'command', '') or ''}".rstrip()
    write_line(f"{prefix}: {message} [{time.strftime('%H:%M:%S')}]")


def progress_bar(total: int, desc: str, quiet: bool) -> Progress:
    """A :class:`~kernelkit.utils._progress.Progress` over ``total`` steps: a bar on stderr
    when it is a terminal, silent with ``--quiet`` or otherwise (the stage lines say where a
    piped run is)."""
    return Progress(desc, total, not quiet, lines=False)


def warn(where: Any, message: str) -> None:
    """Print ``kernelkit COMMAND: warning: message`` on stderr (nothing with ``--quiet``)."""
    stage(where, f"warning: {message}")
