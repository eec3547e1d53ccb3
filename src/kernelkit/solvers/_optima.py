r"""Distinct optima of a multi-start minimisation, compared up to the problem's symmetries.

Two restarts reach *the same optimum* when their objective values agree to a relative
tolerance ``rtol``,

.. math:: |f_a - f_b| \le \mathrm{rtol}\; |f_b|,

and a symmetry-invariant summary ``phi(x)`` of their parameters (the parameters themselves
by default) agrees to ``invariant_rtol`` in relative Frobenius norm,
``||phi(x_a) - phi(x_b)||_F <= invariant_rtol ||phi(x_b)||_F``.  Near a non-degenerate
minimiser ``f(x) - f* ~ (x - x*)^T H (x - x*) / 2``, so an objective within ``rtol`` of
``f*`` leaves the parameters within about ``sqrt(rtol)`` of ``x*`` (relative); that is the
default ``invariant_rtol``.  A problem whose objective is unchanged by a group of
transformations of the parameters (rotations, sign flips or permutations of a hidden
representation) needs an invariant ``phi`` that those transformations leave unchanged,
otherwise every copy of one optimum counts as a new one.  Both tolerances are relative: an
optimum whose value (or summary) is zero is matched only exactly, so shift such an
objective (or summary) away from zero.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

__all__ = ["DistinctOptima", "Optimum"]


@dataclass(frozen=True)
class Optimum:
    """One distinct optimum: the lowest objective reached there and how many restarts did."""

    value: float
    count: int


class DistinctOptima:
    """Registry of the distinct optima found so far (in the order they were found).

    Parameters
    ----------
    rtol : float, default 1e-6
        Relative tolerance on the objective value.
    invariant : callable, optional
        ``phi``: rows of parameters ``(m, p)`` -> summaries ``(m, ...)`` invariant under the
        problem's symmetries; ``None``: the parameters themselves.
    invariant_rtol : float, optional
        Relative Frobenius tolerance on ``phi``; ``None``: ``sqrt(rtol)``.
    """

    def __init__(
        self,
        rtol: float = 1e-6,
        invariant: Callable[[torch.Tensor], torch.Tensor] | None = None,
        invariant_rtol: float | None = None,
    ):
        self.rtol = float(rtol)
        self.invariant = invariant
        self.invariant_rtol = math.sqrt(self.rtol) if invariant_rtol is None else invariant_rtol
        self.values: list[float] = []
        self.counts: list[int] = []
        self._summaries: list[torch.Tensor] = []

    def __len__(self) -> int:
        return len(self.values)

    @property
    def optima(self) -> list[Optimum]:
        """The optima in the order they were found (the labels of :meth:`assign` index it)."""
        return [Optimum(v, c) for v, c in zip(self.values, self.counts, strict=True)]

    def _close_values(self, value: float) -> list[int]:
        return [k for k, v in enumerate(self.values) if abs(value - v) <= self.rtol * abs(v)]

    def assign(self, x: torch.Tensor, values: torch.Tensor, *, add: bool = True) -> torch.Tensor:
        """Label the rows of ``x`` (final objectives ``values``) with the optimum they reached.

        Rows are taken in order; a row that matches no registered optimum starts a new one
        when ``add`` (otherwise it keeps the label ``-1``, as do non-finite values).  The
        counts and the lowest value of every matched optimum are updated.

        Returns
        -------
        torch.Tensor
            ``(m,)`` integer labels, indices into :attr:`optima` or ``-1``.
        """
        vals = [float(v) for v in values.detach().cpu()]
        labels = torch.full((len(vals),), -1, dtype=torch.long, device=values.device)
        need = [
            i for i, v in enumerate(vals) if math.isfinite(v) and (add or self._close_values(v))
        ]
        if not need:
            return labels
        with torch.no_grad():
            rows = x[need]
            summary = rows if self.invariant is None else self.invariant(rows)
            summary = summary.detach().reshape(len(need), -1)
        for s, i in zip(summary, need, strict=True):
            label = -1
            for k in self._close_values(vals[i]):
                ref = self._summaries[k]
                if float((s - ref).norm()) <= self.invariant_rtol * float(ref.norm()):
                    label = k
                    break
            if label < 0 and add:
                self.values.append(vals[i])
                self.counts.append(0)
                self._summaries.append(s.clone())
                label = len(self.values) - 1
            if label >= 0:
                self.counts[label] += 1
                self.values[label] = min(self.values[label], vals[i])
                labels[i] = label
        return labels
