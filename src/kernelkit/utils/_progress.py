"""Progress display: the one way kernelkit reports the progress of a computation.

Every ``verbose`` parameter of an iterative estimator, the Gram engine's ``progress`` and the
command line's stage lines go through :class:`Progress`, which writes to stderr only:

* ``verbose`` falsy (``0``, ``False``): nothing.
* ``verbose`` callable: ``verbose(iteration, value)`` at every :meth:`Progress.update`
  (``value`` the first quantity reported, e.g. the objective or the residual); nothing is
  written.
* ``verbose`` truthy otherwise: a tqdm bar when stderr is a terminal (and tqdm imports);
  otherwise one plain line per stage, in one format for every estimator::

      [KernelLogisticRegression] iter 1/100 objective=0.6931
      [KernelLogisticRegression] iter 5/100 objective=0.2315
      [KernelLogisticRegression] done after iter 7 (converged)

  An iteration line is written at the first iteration, every 5% of ``total`` and at the last
  one; :meth:`Progress.stage` writes one line at once (``[Name] message``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TextIO

__all__ = ["Progress", "VerboseLike", "write_line"]

VerboseLike = int | bool | Callable[[int, float], Any] | None
"""What a ``verbose`` parameter accepts: a non-negative int, a bool or a callable."""

LINES = 20
"""Iteration lines of a run of known length, at most (plus the first and the last)."""


def write_line(text: str, stream: TextIO | None = None) -> None:
    """Write ``text`` and a newline on ``stream`` (default: the current ``sys.stderr``)."""
    out = sys.stderr if stream is None else stream
    out.write(text + "\n")
    out.flush()


def _terminal_bar(total: int | None, desc: str, unit: str, stream: TextIO) -> Any:
    """A tqdm bar on ``stream``, or None when tqdm is not installed."""
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency; the fallback is lines
        return None
    return tqdm(total=total, desc=desc, unit=unit, file=stream, leave=False)


class Progress:
    """The progress report of one computation named ``name`` (module docstring).

    Parameters
    ----------
    name : str
        Shown in brackets at the start of every line (the estimator's class name), or as the
        bar's description.
    total : int, optional
        Iterations expected at most (``max_iter``); None when unknown.
    verbose : int, bool or callable
        ``0``/``False``: silent; a callable: ``verbose(iteration, value)``; otherwise on.
    unit : str
        What an iteration is (``"iter"``, ``"epoch"``, ``"tile"``, ...).
    lines : bool
        Whether to write plain lines when stderr is not a terminal (``False``: a bar on a
        terminal or nothing, for the command line whose stages are reported apart).
    stream : text stream, optional
        Where to write (default: ``sys.stderr`` at construction).
    terminal : bool, optional
        Whether ``stream`` is a terminal (default: ``stream.isatty()``).
    """

    def __init__(
        self,
        name: str,
        total: int | None = None,
        verbose: VerboseLike = 1,
        *,
        unit: str = "iter",
        lines: bool = True,
        stream: TextIO | None = None,
        terminal: bool | None = None,
    ) -> None:
        self.name = name
        self.total = None if total is None or total < 0 else int(total)
        self.unit = unit
        self.callback = verbose if callable(verbose) else None
        self.stream = sys.stderr if stream is None else stream
        on = self.callback is None and bool(verbose)
        if terminal is None:
            terminal = bool(getattr(self.stream, "isatty", lambda: False)())
        self.bar = _terminal_bar(self.total, name, unit, self.stream) if on and terminal else None
        self.lines = on and self.bar is None and lines
        self.count = 0
        self._last = ""

    @property
    def active(self) -> bool:
        """Whether anything is reported (a callback, a bar or lines)."""
        return self.callback is not None or self.bar is not None or self.lines

    def update(self, iteration: int | None = None, **values: float) -> None:
        """Report that ``iteration`` (default: the previous one plus 1) is done, with
        ``values`` (``objective=...``, ``residual=...``)."""
        self.count = self.count + 1 if iteration is None else int(iteration)
        if self.callback is not None:
            self.callback(self.count, float(next(iter(values.values()), float("nan"))))
            return
        shown = " ".join(f"{k}={float(v):.6g}" for k, v in values.items())
        if self.bar is not None:
            self.bar.n = self.count if self.total is None else min(self.count, self.total)
            if shown:
                self.bar.set_postfix_str(shown, refresh=False)
            self.bar.refresh()
            return
        if not self.lines:
            return
        of = "" if self.total is None else f"/{self.total}"
        self._last = f"[{self.name}] {self.unit} {self.count}{of}" + (f" {shown}" if shown else "")
        if self._due(self.count):
            write_line(self._last, self.stream)
            self._last = ""

    def _flush(self) -> None:
        if self._last:
            write_line(self._last, self.stream)
            self._last = ""

    def _due(self, it: int) -> bool:
        if self.total is None:
            return True
        return it == 1 or it == self.total or it % max(1, self.total // LINES) == 0

    def stage(self, message: str) -> None:
        """Report a stage at once: a plain line ``[name] message`` (above a bar), after the
        last iteration line if it was skipped."""
        self._flush()
        if self.bar is not None:
            self.bar.write(f"[{self.name}] {message}", file=self.stream)
        elif self.lines:
            write_line(f"[{self.name}] {message}", self.stream)

    def close(self, message: str | None = None) -> None:
        """End the report: the last iteration line if it was skipped, then ``message`` as a
        stage (``"done after iter 7 (converged)"``), and the bar closed."""
        self._flush()
        if message:
            self.stage(message)
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def done(self, n_iter: int, stopped: str) -> None:
        """:meth:`close` with the line ``done after UNIT N (stopped)``."""
        self.close(f"done after {self.unit} {n_iter} ({stopped})")

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
