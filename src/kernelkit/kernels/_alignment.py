r"""The local-alignment (LA) kernel of Vert, Saigo & Akutsu, computed in log-space.

Course part 2, section 3, "Local alignment (LA) kernel" (Saigo, Vert, Ueda & Akutsu,
Bioinformatics 2004; Vert, Saigo & Akutsu 2004):

.. math:: K_{LA}^{(\beta)}(x, y) = \sum_{\pi \in \Pi(x, y)} \exp(\beta\, s_{S,g}(x, y, \pi)),

summed over all local alignments ``pi`` of ``x`` and ``y`` (plus the empty one, which
contributes 1), with score ``s = sum S(matched pairs) - sum g(gap lengths)`` and affine gap
penalty ``g(n) = gap_open + gap_extend (n - 1)``, ``g(0) = 0``.

Sign convention (course erratum 5): here ``gap_open`` and ``gap_extend`` are non-negative
*penalties* (BLAST style, e.g. 11 and 1 with BLOSUM62), so the recursion uses
``exp(-beta gap_open)``; the course's recursion is written with gap *scores* ``d = -gap_open``,
``e = -gap_extend`` and ``exp(beta d)``.

p.d. condition (Saigo et al. 2004, Vert et al. 2004; course part 2): ``K_LA`` is p.d. iff
the matrix ``(exp(beta S(a, b)))_{a, b}`` over the alphabet is positive semi-definite (the
gap kernel is always p.d.); this holds for every ``beta`` when ``S`` is conditionally p.d.
It is checked when the kernel is built.  For BLOSUM62 over the 20 standard amino acids it
holds (smallest eigenvalue of ``exp(beta S)`` is positive, e.g. 0.083 at ``beta = 0.1``); with
the ambiguity codes B, Z, X it fails for small ``beta`` (-0.021 at ``beta = 0.1``), which is why
the BLOSUM62 alphabet here is the 20 standard letters.  For a match/mismatch matrix the
condition is ``match >= mismatch``.  ``log K_LA`` (``log=True``) is **not** p.d. although it is
often used for its numerical range (Saigo et al. restore positivity by shifting eigenvalues).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from kernelkit.data._strings import ALPHABETS, StringBatch
from kernelkit.kernels._base import Batch, Kernel, NormalizedKernel
from kernelkit.kernels._strings_base import (
    _DNA_X,
    _DNA_Y,
    _PROT_X,
    _PROT_Y,
    _StringKernel,
    pairwise_diag,
    pairwise_values,
)
from kernelkit.solvers import check_psd
from kernelkit.utils._errors import InputError, NotPSDError
from kernelkit.utils._validation import check_positive

# The standard BLOSUM62 matrix (Henikoff & Henikoff 1992), NCBI layout, half-bit units.
_BLOSUM62_TEXT = """
   A  R  N  D  C  Q  E  G  H  I  L  K  M  F  P  S  T  W  Y  V  B  Z  X  *
A  4 -1 -2 -2  0 -1 -1  0 -2 -1 -1 -1 -1 -2 -1  1  0 -3 -2  0 -2 -1  0 -4
R -1  5  0 -2 -3  1  0 -2  0 -3 -2  2 -1 -3 -2 -1 -1 -3 -2 -3 -1  0 -1 -4
N -2  0  6  1 -3  0  0  0  1 -3 -3  0 -2 -3 -2  1  0 -4 -2 -3  3  0 -1 -4
D -2 -2  1  6 -3  0  2 -1 -1 -3 -4 -1 -3 -3 -1  0 -1 -4 -3 -3  4  1 -1 -4
C  0 -3 -3 -3  9 -3 -4 -3 -3 -1 -1 -3 -1 -2 -3 -1 -1 -2 -2 -1 -3 -3 -2 -4
Q -1  1  0  0 -3  5  2 -2  0 -3 -2  1  0 -3 -1  0 -1 -2 -1 -2  0  3 -1 -4
E -1  0  0  2 -4  2  5 -2  0 -3 -3  1 -2 -3 -1  0 -1 -3 -2 -2  1  4 -1 -4
G  0 -2  0 -1 -3 -2 -2  6 -2 -4 -4 -2 -3 -3 -2  0 -2 -2 -3 -3 -1 -2 -1 -4
H -2  0  1 -1 -3  0  0 -2  8 -3 -3 -1 -2 -1 -2 -1 -2 -2  2 -3  0  0 -1 -4
I -1 -3 -3 -3 -1 -3 -3 -4 -3  4  2 -3  1  0 -3 -2 -1 -3 -1  3 -3 -3 -1 -4
L -1 -2 -3 -4 -1 -2 -3 -4 -3  2  4 -2  2  0 -3 -2 -1 -2 -1  1 -4 -3 -1 -4
K -1  2  0 -1 -3  1  1 -2 -1 -3 -2  5 -1 -3 -1  0 -1 -3 -2 -2  0  1 -1 -4
M -1 -1 -2 -3 -1  0 -2 -3 -2  1  2 -1  5  0 -2 -1 -1 -1 -1  1 -3 -1 -1 -4
F -2 -3 -3 -3 -2 -3 -3 -3 -1  0  0 -3  0  6 -4 -2 -2  1  3 -1 -3 -3 -1 -4
P -1 -2 -2 -1 -3 -1 -1 -2 -2 -3 -3 -1 -2 -4  7 -1 -1 -4 -3 -2 -2 -1 -2 -4
S  1 -1  1  0 -1  0  0  0 -1 -2 -2  0 -1 -2 -1  4  1 -3 -2 -2  0  0  0 -4
T  0 -1  0 -1 -1 -1 -1 -2 -2 -1 -1 -1 -1 -2 -1  1  5 -2 -2  0 -1 -1  0 -4
W -3 -3 -4 -4 -2 -2 -3 -2 -2 -3 -2 -3 -1  1 -4 -3 -2 11  2 -3 -4 -3 -2 -4
Y -2 -2 -2 -3 -2 -1 -2 -3  2 -1 -1 -2 -1  3 -3 -2 -2  2  7 -1 -3 -2 -1 -4
V  0 -3 -3 -3 -1 -2 -2 -3 -3  3  1 -2  1 -1 -2 -2  0 -3 -1  4 -3 -2 -1 -4
B -2 -1  3  4 -3  0  1 -1  0 -3 -4  0 -3 -3 -2  0 -1 -4 -3 -3  4  1 -1 -4
Z -1  0  0  1 -3  3  4 -2  0 -3 -3  1 -1 -3 -1  0 -1 -3 -2 -2  1  4 -1 -4
X  0 -1 -1 -1 -2 -1 -1 -1 -1 -1 -1 -1 -1 -1 -2  0  0 -2 -1 -1 -1 -1 -1 -4
* -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4 -4  1
"""

_LOG_MAX = math.log(torch.finfo(torch.float64).max)
_UNDERFLOW = -700.0


def blosum62(alphabet: str = ALPHABETS["protein"]) -> np.ndarray:
    """The BLOSUM62 scores restricted to (and ordered as) ``alphabet``, as a float64 matrix.

    The full table covers ``ARNDCQEGHILKMFPSTWYVBZX*``.
    """
    lines = [ln.split() for ln in _BLOSUM62_TEXT.strip().splitlines()]
    letters = lines[0]
    table = np.array([[float(v) for v in row[1:]] for row in lines[1:]])
    unknown = [c for c in alphabet if c not in letters]
    if unknown:
        raise InputError(
            f"alphabet: BLOSUM62 covers {''.join(letters)!r}, got unknown letters {unknown}"
        )
    idx = [letters.index(c) for c in alphabet]
    return table[np.ix_(idx, idx)]


def _shifted_exp(t: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
    """``exp(t - m)`` with differences below ``_UNDERFLOW`` sent to exactly 0.

    Their true values (< 1e-304) are invisible next to the maximum's ``exp(0) = 1`` in the
    sum, and computing them would produce subnormal numbers, which are ~20x slower on CPUs.
    """
    d = t - m
    return torch.exp(torch.where(d < _UNDERFLOW, -math.inf, d))


def _logsumexp(*terms: torch.Tensor) -> torch.Tensor:
    """Elementwise ``log(sum_t exp(terms_t))``, stable, ``-inf`` when every term is ``-inf``."""
    m = terms[0]
    for t in terms[1:]:
        m = torch.maximum(m, t)
    m = torch.nan_to_num(m, neginf=0.0)
    total = _shifted_exp(terms[0], m)
    for t in terms[1:]:
        total += _shifted_exp(t, m)
    return m + torch.log(total)


def local_alignment_log_pairs(
    xs: torch.Tensor,
    lx: torch.Tensor,
    ys: torch.Tensor,
    ly: torch.Tensor,
    *,
    beta: float,
    gap_open: float,
    gap_extend: float,
    scores: torch.Tensor | None,
    match: float = 0.0,
    mismatch: float = 0.0,
) -> torch.Tensor:
    r"""``log K_LA`` for a batch of padded pairs, by the LA recursion in log-space.

    The finite-state recursion of the course (part 2, section 3), with
    ``a = beta S(x_i, y_j)``, ``o = -beta gap_open``, ``e = -beta gap_extend``:

    .. math::
        M(i,j) &= e^{a}\,[1 + X + Y + M](i-1, j-1), \\
        X(i,j) &= e^{o} M(i-1, j) + e^{e} X(i-1, j), \\
        Y(i,j) &= e^{o} [M(i, j-1) + X(i, j-1)] + e^{e} Y(i, j-1), \\
        K &= 1 + \sum_{i \le |x|, j \le |y|} M(i, j)

    (the course's ``X_2``, ``Y_2`` tables accumulate exactly this sum), all tables zero on the
    boundary.  Every quantity is kept as its logarithm and combined by log-sum-exp, so long
    sequences neither overflow nor underflow.  The tables are swept by anti-diagonals
    ``t = i + j`` (a cell needs diagonals ``t - 1`` and ``t - 2`` only), vectorised over the
    pairs and the cells of a diagonal: ``O(|x| |y|)`` work per pair in ``|x| + |y|`` steps.
    Padded cells never feed a valid one and are masked out of the sum.

    ``scores`` is the substitution table indexed by codes, with one extra last row/column for
    pads and the unknown residue (``-inf``: it aligns with nothing); when ``None``,
    ``S = match`` on equal code points and ``mismatch`` otherwise.
    """
    P, Lx = xs.shape
    Ly = ys.shape[1]
    dt = torch.float64
    o, e = -beta * gap_open, -beta * gap_extend
    ninf = -math.inf
    i_idx = torch.arange(1, Lx + 1)
    m1 = torch.full((P, Lx + 1), ninf, dtype=dt)  # diagonal t - 1, indexed by i
    x1, y1 = m1.clone(), m1.clone()
    m2, x2, y2 = m1.clone(), m1.clone(), m1.clone()  # diagonal t - 2
    acc = torch.full((P,), ninf, dtype=dt)
    zero = torch.zeros((P, Lx), dtype=dt)
    if scores is not None:
        pad = scores.shape[0] - 1
        xs = torch.where(xs < 0, pad, xs) * (pad + 1)
        ys = torch.where(ys < 0, pad, ys)
        flat = beta * scores.reshape(-1)
    # float64 0-d tensors: two bare Python floats in torch.where would give float32
    a_match = torch.tensor(beta * match, dtype=dt)
    a_mismatch = torch.tensor(beta * mismatch, dtype=dt)
    row_ok = i_idx[None, :] <= lx[:, None]
    for t in range(2, Lx + Ly + 1):
        j = t - i_idx
        valid = (j >= 1) & (j <= Ly)
        if not bool(valid.any()):
            continue
        yj = ys[:, (j - 1).clamp(0, max(Ly - 1, 0))]
        if scores is not None:
            a = flat[xs + yj]
        else:
            a = torch.where(xs == yj, a_match, a_mismatch)
        m = a + _logsumexp(zero, x2[:, :-1], y2[:, :-1], m2[:, :-1])
        x = _logsumexp(m1[:, :-1] + o, x1[:, :-1] + e)
        y = _logsumexp(m1[:, 1:] + o, x1[:, 1:] + o, y1[:, 1:] + e)
        keep = valid[None, :]
        m = torch.where(keep, m, ninf)
        x = torch.where(keep, x, ninf)
        y = torch.where(keep, y, ninf)
        ok = row_ok & (j <= ly[:, None])
        acc = torch.logaddexp(acc, torch.logsumexp(torch.where(ok, m, ninf), dim=1))
        m2, x2, y2 = m1, x1, y1
        m1 = torch.cat((m2[:, :1], m), dim=1)
        x1 = torch.cat((x2[:, :1], x), dim=1)
        y1 = torch.cat((y2[:, :1], y), dim=1)
    return torch.logaddexp(torch.zeros_like(acc), acc)


class LocalAlignment(_StringKernel):
    r"""Local-alignment kernel ``K_LA = sum_pi exp(beta s(pi))`` (Saigo et al. 2004).

    See the module docstring for the definition, the gap sign convention and the p.d.
    condition, which is checked here: the construction raises :class:`NotPSDError` when
    ``exp(beta S)`` is not PSD over the alphabet.  Cost ``O(|x| |y|)`` per pair
    (course part 2, section 3), batched in torch over blocks of pairs, in log-space.

    Parameters
    ----------
    beta : float
        Inverse temperature ``> 0``; as ``beta -> inf``, ``log(K_LA) / beta`` tends to the
        Smith-Waterman score.
    gap_open : float
        Penalty ``>= 0`` of a gap of length 1 (``g(1)``).
    gap_extend : float
        Penalty ``>= 0`` of each further gap position.
    matrix : "BLOSUM62" or (match, mismatch)
        Substitution scores: BLOSUM62 over the 20 standard amino acids (inputs must use them),
        or a pair of numbers for a match/mismatch score on any alphabet (e.g. ``(2, -1)`` for
        DNA); letters then compare by code point.
    log : bool
        Return ``log K_LA`` instead of ``K_LA``.  That is *not* a p.d. kernel.
        With ``log=False`` values above the float64 range raise an error suggesting
        ``log=True``, ``.normalized()`` (which this class computes in log-space) or a smaller
        ``beta``.

    Examples
    --------
    >>> from kernelkit.kernels._alignment import LocalAlignment
    >>> k = LocalAlignment(beta=0.5, gap_open=3.0, gap_extend=1.0, matrix=(2.0, -1.0))
    >>> round(float(k(["A"], ["A"])), 6)  # 1 + e^{0.5 * 2}
    3.718282
    """

    def __init__(
        self,
        beta: float = 0.5,
        gap_open: float = 11.0,
        gap_extend: float = 1.0,
        matrix: Any = "BLOSUM62",
        log: bool = False,
    ):
        super().__init__()
        self.beta = check_positive(beta, name="beta")
        self.gap_open = check_positive(gap_open, name="gap_open", strict=False)
        self.gap_extend = check_positive(gap_extend, name="gap_extend", strict=False)
        if not isinstance(log, bool):
            raise InputError(f"log: expected a bool, got {log!r}")
        self.log = log
        self.matrix = matrix
        if isinstance(matrix, str):
            if matrix.upper() != "BLOSUM62":
                raise InputError(
                    f"matrix: expected 'BLOSUM62' or a (match, mismatch) pair, got {matrix!r}"
                )
            self._scores = blosum62(ALPHABETS["protein"])
            self._chars: str | None = ALPHABETS["protein"]
        elif isinstance(matrix, (tuple, list)) and len(matrix) == 2:
            for pos, v in enumerate(matrix):
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                    raise InputError(f"matrix[{pos}]: expected a finite real score, got {v!r}")
            self._match, self._mismatch = float(matrix[0]), float(matrix[1])
            self._scores = np.array([[self._match, self._mismatch], [self._mismatch, self._match]])
            self._chars = None
        else:
            raise InputError(
                f"matrix: expected 'BLOSUM62' or a (match, mismatch) pair, got {matrix!r}"
            )
        self._check_pd()

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        return [
            (cls(), _PROT_X, _PROT_Y),
            (cls(beta=0.5, gap_open=3.0, gap_extend=1.0, matrix=(2.0, -1.0)), _DNA_X, _DNA_Y),
            (cls(beta=0.1, gap_open=11.0, gap_extend=1.0), _PROT_X, None),
        ]

    def _check_pd(self) -> None:
        """Raise unless ``exp(beta S)`` is PSD (the LA kernel's p.d. condition)."""
        E = np.exp(self.beta * (self._scores - self._scores.max()))
        psd = check_psd(torch.as_tensor(E), name="matrix", strict=False)
        if not psd.is_psd:
            lam_min = psd.min_eigenvalue * math.exp(self.beta * self._scores.max())
            raise NotPSDError(
                f"matrix: the LA kernel is p.d. iff exp(beta S) is PSD over the alphabet "
                f"(Saigo et al. 2004); with matrix={self.matrix!r} and beta={self.beta} its "
                f"smallest eigenvalue is {lam_min:.3g}"
                " < 0. Use a conditionally p.d. substitution matrix (match >= mismatch), "
                "another beta, or log=True knowing log K_LA is not p.d. either"
            )

    def _alphabet_chars(self) -> str | None:
        return self._chars

    def _log_pairs(
        self, xs: torch.Tensor, lx: torch.Tensor, ys: torch.Tensor, ly: torch.Tensor
    ) -> torch.Tensor:
        if self._chars is not None:
            S = torch.as_tensor(self._scores, dtype=torch.float64)
            # last row/column: pads and the unknown residue X, which aligns with nothing
            S = torch.nn.functional.pad(S, (0, 1, 0, 1), value=-math.inf)
            return local_alignment_log_pairs(
                xs, lx, ys, ly, beta=self.beta, gap_open=self.gap_open,
                gap_extend=self.gap_extend, scores=S,
            )  # fmt: skip
        return local_alignment_log_pairs(
            xs, lx, ys, ly, beta=self.beta, gap_open=self.gap_open, gap_extend=self.gap_extend,
            scores=None, match=self._match, mismatch=self._mismatch,
        )  # fmt: skip

    def log_block(self, X: StringBatch, Y: StringBatch) -> torch.Tensor:
        """``log K_LA(X, Y)`` (always in log-space, whatever ``log``)."""
        same = Y is X
        X = self._encoded(X)
        Y = X if same else self._encoded(Y)
        return pairwise_values(
            X, Y, self._log_pairs, symmetric=Y is X, code_points=self._chars is None
        )

    def log_block_diag(self, X: StringBatch) -> torch.Tensor:
        """``log K_LA(x, x)`` for every item."""
        return pairwise_diag(self._encoded(X), self._log_pairs, code_points=self._chars is None)

    def _exp(self, logk: torch.Tensor) -> torch.Tensor:
        if self.log:
            return logk
        top = float(logk.max()) if logk.numel() else 0.0
        if top > _LOG_MAX:
            raise InputError(
                f"LocalAlignment: K_LA overflows float64 (log K up to {top:.1f} > "
                f"{_LOG_MAX:.1f}) for beta={self.beta}; use LocalAlignment(...).normalized() "
                "(computed in log-space), log=True (not p.d.), or a smaller beta"
            )
        return torch.exp(logk)

    def block(self, X: Batch, Y: Batch) -> torch.Tensor:
        return self._exp(self.log_block(X, Y))

    def block_diag(self, X: Batch) -> torch.Tensor:
        return self._exp(self.log_block_diag(X))

    def normalized(self) -> Kernel:
        """``K(x, y) / sqrt(K(x, x) K(y, y))`` computed from logs (no overflow); p.d."""
        if self.log:
            return super().normalized()
        return LogNormalizedAlignment(self)


class LogNormalizedAlignment(NormalizedKernel):
    r"""Normalised LA kernel ``exp(log K(x,y) - (log K(x,x) + log K(y,y)) / 2)``.

    The same value as :class:`~kernelkit.kernels.NormalizedKernel` on ``K_LA`` (so p.d.), but
    computed from the log-space values, so long sequences whose ``K_LA`` exceeds the float64
    range still get a normalised kernel in ``(0, 1]``.
    """

    def __init__(self, kernel: Kernel):
        super().__init__(kernel)
        if not isinstance(kernel, LocalAlignment):
            raise InputError(
                f"kernel: expected a LocalAlignment kernel, got {type(kernel).__name__}"
            )

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        return [
            (cls(LocalAlignment(beta=0.2)), _PROT_X, _PROT_Y),
            (LocalAlignment(beta=2.0).normalized(), [*_PROT_X, "W" * 40], _PROT_Y),  # K_LA > 1e308
        ]

    def block(self, X: Batch, Y: Batch) -> torch.Tensor:
        kernel: LocalAlignment = self.kernel  # type: ignore[assignment]
        lx = kernel.log_block_diag(X)
        ly = lx if Y is X else kernel.log_block_diag(Y)
        return torch.exp(kernel.log_block(X, Y) - 0.5 * (lx[:, None] + ly[None, :]))

    def block_diag(self, X: Batch) -> torch.Tensor:
        return torch.ones(len(X), dtype=torch.float64)
