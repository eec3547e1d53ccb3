r"""Shared parts of the string kernels: the input handling, the pairwise engine, examples.

:class:`_StringKernel` turns lists of strings into a
:class:`~kernelkit.data.StringBatch` (alphabet checked);
:func:`pairwise_values` / :func:`pairwise_diag` evaluate a dynamic programme on all pairs of
strings, batched in torch over chunks of padded pairs (the subsequence kernel of
:mod:`kernelkit.kernels._strings` and the local-alignment kernel of
:mod:`kernelkit.kernels._alignment`; course part 2, section 3).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
import torch

from kernelkit.data._strings import StringBatch, resolve_alphabet
from kernelkit.kernels._base import Kernel
from kernelkit.utils._kinds import InputKind

_PAIR_WORK = 1_000_000
"""Target number of (pair x position) cells per chunk of the pairwise dynamic programmes."""


_DNA_X = ["GATTACA", "ACGTTAACGTAC", "GGGCCC", "TTAGGC", "AC", "CATCATCAT", "ACGTACGTAA"]
_DNA_Y = ["GATTTACA", "CCGGAAT", "T", "ACGACGACG"]
_PROT_X = ["CGGSLIAMMWFGV", "CLIVMMNRLMWFGV", "MKVLAAGIV", "WWKKLLGG", "HEAGAWGHEE", "PAWHEAE"]
_PROT_Y = ["MKVLGGIVAAW", "GLFDIVKKVV", "KW"]


# ---------------------------------------------------------------------- base class
class _StringKernel(Kernel):
    """Base of the string kernels: ``input_kind = "string"``, inputs become a StringBatch.

    Lists, tuples, NumPy arrays and pandas Series of ``str`` are validated by
    :meth:`StringBatch.from_sequences` (empty strings refused, unknown characters named,
    lower case read as upper case and ``N`` / ``X`` of a named alphabet matching nothing:
    the one case rule of :mod:`kernelkit.data._strings`, which every string kernel follows);
    a :class:`~kernelkit.data.StringBatch` built by the caller is passed through (re-encoded
    if its alphabet differs from the kernel's), so empty strings are allowed that way.
    """

    input_kind: ClassVar[InputKind] = InputKind.STRING
    differentiable: ClassVar[bool] = False

    def _alphabet_chars(self) -> str | None:
        """The characters every input must use (``None``: any)."""
        return resolve_alphabet(getattr(self, "alphabet", None))

    def prepare(
        self, X: Any, *, dtype: torch.dtype | None = None, reference: bool = False
    ) -> StringBatch:
        chars = self._alphabet_chars()
        if isinstance(X, StringBatch):
            return StringBatch.from_sequences(X, chars, allow_empty=True)
        return StringBatch.from_sequences(X, chars, name="X")

    def _encoded(self, X: StringBatch) -> StringBatch:
        """``X`` encoded with the kernel's alphabet (batches built elsewhere are re-encoded)."""
        chars = self._alphabet_chars()
        if chars is None or X.alphabet == chars:
            return X
        return StringBatch.from_sequences(X, chars, allow_empty=True)


def _check_alphabet_param(alphabet: Any) -> str | None:
    resolve_alphabet(alphabet)  # validates; the given value is stored as passed
    return alphabet


# ---------------------------------------------------------------------- pairwise engine
PairFunction = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]


def pairwise_values(
    X: StringBatch,
    Y: StringBatch,
    fn: PairFunction,
    *,
    symmetric: bool,
    code_points: bool = True,
) -> torch.Tensor:
    """Evaluate ``fn`` on all pairs ``(X[a], Y[b])`` by chunks of padded pairs.

    ``fn(xs, lx, ys, ly)`` gets padded int64 code tensors ``(P, Lx)``, ``(P, Ly)`` (``x`` pads
    are -1, ``y`` pads -2, so pads never match each other) and the lengths, and returns the
    ``P`` values; it must be symmetric in its two strings, because each pair is passed with
    its shorter string first.  Pairs are sorted by lengths so each chunk pads little; with
    ``symmetric`` (``Y is X``) only pairs ``a <= b`` are computed and mirrored.
    """
    xp, lx = X.padded(pad_value=-1, code_points=code_points)
    yp, ly = Y.padded(pad_value=-1, code_points=code_points)
    width = max(xp.shape[1], yp.shape[1])
    xp = torch.nn.functional.pad(xp, (0, width - xp.shape[1]), value=-1)
    yp = torch.nn.functional.pad(yp, (0, width - yp.shape[1]), value=-1)
    nx, ny = len(X), len(Y)
    if symmetric:
        a, b = np.triu_indices(nx)
    else:
        a, b = (g.ravel() for g in np.meshgrid(np.arange(nx), np.arange(ny), indexing="ij"))
    lxa, lyb = lx.numpy()[a], ly.numpy()[b]
    # fn is symmetric in its two strings: put the shorter first (sweeps cost ~ |x| (|x| + |y|))
    swap = lxa > lyb
    order = np.lexsort((np.maximum(lxa, lyb), np.minimum(lxa, lyb)))
    a, b, swap = a[order], b[order], swap[order]
    vals = torch.empty(len(a), dtype=torch.float64)
    step = max(64, _PAIR_WORK // (2 * width + 1))
    for lo in range(0, len(a), step):
        ia, ib = torch.from_numpy(a[lo : lo + step]), torch.from_numpy(b[lo : lo + step])
        sw = torch.from_numpy(swap[lo : lo + step])
        len1 = torch.where(sw, ly[ib], lx[ia])
        len2 = torch.where(sw, lx[ia], ly[ib])
        first = torch.where(sw[:, None], yp[ib], xp[ia])[:, : int(len1.max())]
        second = torch.where(sw[:, None], xp[ia], yp[ib])[:, : int(len2.max())]
        vals[lo : lo + step] = fn(first, len1, torch.where(second < 0, -2, second), len2)
    out = torch.empty((nx, ny), dtype=torch.float64)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    out[ta, tb] = vals
    if symmetric:
        out[tb, ta] = vals
    return out


def pairwise_diag(X: StringBatch, fn: PairFunction, *, code_points: bool = True) -> torch.Tensor:
    """``fn`` on the pairs ``(X[a], X[a])``."""
    if len(X) == 0:
        return torch.zeros(0, dtype=torch.float64)
    xp, lx = X.padded(pad_value=-1, code_points=code_points)
    order = torch.from_numpy(np.argsort(lx.numpy(), kind="stable"))
    vals = torch.empty(len(X), dtype=torch.float64)
    step = max(16, _PAIR_WORK // (2 * int(lx.max()) + 1))
    for lo in range(0, len(X), step):
        idx = order[lo : lo + step]
        xs = xp[idx, : int(lx[idx].max())]
        vals[idx] = fn(xs, lx[idx], torch.where(xs < 0, -2, xs), lx[idx])
    return vals
