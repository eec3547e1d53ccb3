r"""Position-aware string kernels: the weighted-degree kernel, with and without shifts.

The spectrum and mismatch kernels of :mod:`kernelkit.kernels._strings` forget where a k-mer
sits; aligned DNA signals (splice sites, promoters, start codons) are about positions.  The
weighted-degree (WD) kernel (Rätsch & Sonnenburg 2004, "Accurate splice site detection for
Caenorhabditis elegans"; Sonnenburg, Rätsch & Schölkopf 2005) compares two sequences of the
same length ``L`` k-mer by k-mer *at the same position*; the WD kernel with shifts (Rätsch,
Sonnenburg & Schölkopf 2005, "RASE: recognition of alternatively spliced exons in
C. elegans", eq. 2) also matches k-mers displaced by up to ``S`` positions.  Context: the
course's sequence kernels, part 2, section 3.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from kernelkit.data._strings import StringBatch
from kernelkit.kernels._base import Kernel
from kernelkit.kernels._features import SparseFeatures
from kernelkit.kernels._strings import _FeatureStringKernel, _splitmix64
from kernelkit.kernels._strings_base import _check_alphabet_param
from kernelkit.solvers import cholesky_factor
from kernelkit.utils._errors import InputError
from kernelkit.utils._validation import check_int

_EQUAL_DNA_X = ["GATTACAGAT", "ACGTTAACGT", "GGGCCCAAAT", "TTAGGCTTAG", "ACACACACAC", "CATCATCATC"]
_EQUAL_DNA_Y = ["GATTTACAGA", "CCGGAATTAC", "TTTTTTTTTT", "ACGACGACGA"]


class UnequalLengthError(InputError):
    """Sequences of different lengths given to a kernel defined on equal-length sequences."""


def degree_weights(degree: int) -> np.ndarray:
    r"""``beta_k = 2 (d - k + 1) / (d (d + 1))`` for ``k = 1..d`` (they sum to 1)."""
    k = np.arange(1, degree + 1, dtype=np.float64)
    return 2.0 * (degree - k + 1) / (degree * (degree + 1))


def shift_weights(shift: int) -> np.ndarray:
    r"""``delta_s = 1 / (2 (s + 1))`` for ``s = 0..S`` (Rätsch et al. 2005)."""
    return 1.0 / (2.0 * (np.arange(shift + 1, dtype=np.float64) + 1.0))


def shift_matrix(positions: int, shift: int) -> np.ndarray:
    r"""The position-coupling matrix ``M`` of the WD kernel with shifts.

    ``M[a, a] = 2 delta_0 = 1`` and ``M[a, b] = delta_{|a - b|}`` for ``1 <= |a - b| <= S``
    (0 elsewhere): a banded Toeplitz matrix whose symbol
    ``1 + sum_{s=1}^S cos(s theta) / (s + 1)`` stays above ``1 - log 2 > 0.3``, so ``M`` is
    positive definite for every ``S`` and ``L`` (its smallest eigenvalue is about 0.5).
    """
    delta = shift_weights(shift)
    lag = np.abs(np.subtract.outer(np.arange(positions), np.arange(positions)))
    M = np.where(lag <= shift, delta[np.minimum(lag, shift)], 0.0)
    np.fill_diagonal(M, 1.0)
    return M


def _windows(codes: np.ndarray, k: int, base: int | None) -> np.ndarray:
    """Keys of the k-mers at every position of an ``(n, L)`` code matrix, shape ``(n, L-k+1)``.

    ``base`` given: the exact base-``base`` number of the k-mer; ``None``: a SplitMix64 hash of
    the code points.
    """
    P = codes.shape[1] - k + 1
    if base is not None:
        keys = np.zeros((codes.shape[0], P), dtype=np.int64)
        for t in range(k):
            keys = keys * base + codes[:, t : t + P]
        return keys
    h = np.full((codes.shape[0], P), 0x243F6A8885A308D3, dtype=np.uint64)
    for t in range(k):
        h = _splitmix64(h ^ codes[:, t : t + P].astype(np.uint64))
    return h.view(np.int64)


class WeightedDegree(_FeatureStringKernel):
    r"""The weighted-degree string kernel, optionally with shifts (Rätsch & Sonnenburg).

    For two sequences ``x, y`` of the same length ``L``, with ``u_{k,l}(x)`` the k-mer of
    ``x`` starting at position ``l``,

    .. math:: K(x, y) = \sum_{k=1}^{d} \beta_k \sum_{l=1}^{L-k+1}
              \mathbb{1}[u_{k,l}(x) = u_{k,l}(y)],\qquad
              \beta_k = \frac{2 (d - k + 1)}{d (d + 1)}

    (Rätsch & Sonnenburg 2004; ``d`` is ``degree``).  With ``shift = S > 0``, the WD kernel
    with shifts (Rätsch, Sonnenburg & Schölkopf 2005, eq. 2, uniform position weights)

    .. math:: K(x, y) = \sum_{k=1}^{d} \beta_k \sum_{l=1}^{L-k+1}
              \sum_{s=0,\ s+l \le L-k+1}^{S} \delta_s
              \big(\mathbb{1}[u_{k,l+s}(x) = u_{k,l}(y)]
              + \mathbb{1}[u_{k,l}(x) = u_{k,l+s}(y)]\big),\qquad
              \delta_s = \frac{1}{2 (s + 1)},

    which is the WD kernel at ``S = 0``.  Grouping the terms,
    ``K = sum_k beta_k sum_{a, b} M[a, b] 1[u_{k,a}(x) = u_{k,b}(y)]`` with the banded
    Toeplitz matrix ``M`` of :func:`shift_matrix` (positive definite, so ``K`` is p.d.).

    Explicit sparse features (the fast path; the Gram is one sparse product): with
    ``M = C C^T`` (Cholesky, lower; ``C = I`` without shifts), feature ``(k, j, u)`` is
    ``sqrt(beta_k) sum_a C[a, j] 1[u_{k,a}(x) = u]``, so each k-mer occurrence adds at most
    ``S + 1`` non-zeros.  Keys are exact (``((k-1) L + j) |A|^d + u`` in base ``|A|``) when an
    ``alphabet`` is given and they fit in 62 bits, else stable 63-bit SplitMix64 hashes of
    ``(k, j, u)`` in the negative keys.

    Parameters
    ----------
    degree : int
        Largest k-mer length ``d >= 1``.
    shift : int, default 0
        Largest displacement ``S >= 0`` of matching k-mers (0: the plain WD kernel).
    alphabet : None, "dna", "rna", "protein" or str
        Characters allowed in the input; ``None`` accepts any character.
        Lower case is read as upper case and ``N`` / ``X`` of a named alphabet match
        nothing (the case rule of :mod:`kernelkit.data._strings`).

    Raises
    ------
    UnequalLengthError
        (an :class:`~kernelkit.utils.InputError`) when the sequences of ``X`` and ``Y`` do not
        all have the same length: the kernel compares positions.
    """

    def __init__(self, degree: int = 3, shift: int = 0, alphabet: str | None = None):
        super().__init__()
        self.degree = check_int(degree, name="degree", minimum=1)
        self.shift = check_int(shift, name="shift", minimum=0)
        self.alphabet = _check_alphabet_param(alphabet)

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        return [
            (cls(3), _EQUAL_DNA_X, _EQUAL_DNA_Y),
            (cls(4, shift=2, alphabet="dna"), _EQUAL_DNA_X, _EQUAL_DNA_Y),
            (cls(12, shift=1), _EQUAL_DNA_X, _EQUAL_DNA_Y),  # degree > L: longer k-mers vanish
            (cls(2, shift=3, alphabet="dna").normalized(), _EQUAL_DNA_X, _EQUAL_DNA_Y),
        ]

    def _code_matrix(self, X: StringBatch) -> tuple[np.ndarray, int | None, np.ndarray]:
        """The ``(n, L)`` code matrix, the key base (``None``: hashed code points) and the
        ``(n, L)`` mask of known letters (``False`` at the unknown-residue letter)."""
        lengths = X.lengths
        if len(lengths) and (lengths != lengths[0]).any():
            bad = int(np.flatnonzero(lengths != lengths[0])[0])
            raise UnequalLengthError(
                f"X: {type(self).__name__} compares sequences position by position and needs "
                f"equal lengths; sequence 0 has length {lengths[0]}, sequence {bad} has "
                f"length {lengths[bad]}"
            )
        chars = self._alphabet_chars()
        L = int(lengths[0]) if len(lengths) else 0
        if chars is None:
            return X.code_points().reshape(len(X), L), None, X.known.reshape(len(X), L)
        X = self._encoded(X)
        bits = self.degree * np.log2(max(len(chars), 2)) + np.log2(self.degree * L + 1)
        base = len(chars) if bits < 62 else None
        return X.codes.reshape(len(X), L), base, X.known.reshape(len(X), L)

    def block(self, X: StringBatch, Y: StringBatch) -> torch.Tensor:
        if len(X) and len(Y) and X.lengths[0] != Y.lengths[0]:
            raise UnequalLengthError(
                f"Y: {type(self).__name__} needs sequences of the training length "
                f"{X.lengths[0]}, got length {Y.lengths[0]}"
            )
        return super().block(X, Y)

    def features(self, X: StringBatch) -> SparseFeatures:
        """Sparse features ``sqrt(beta_k) (C^T v_{k,u}(x))_j`` keyed by ``(k, j, u)``; a k-mer
        holding the unknown-residue letter adds nothing (it matches no k-mer)."""
        codes, base, known = self._code_matrix(X)
        n, L = codes.shape
        beta = degree_weights(self.degree)
        all_rows, all_keys, all_vals = [], [], []
        for k in range(1, min(self.degree, L) + 1):
            P = L - k + 1
            chol = self._coupling_factor(P)
            kmers = _windows(codes, k, base)
            whole = np.logical_and.reduce([known[:, t : t + P] for t in range(k)])
            for lag in range(min(self.shift, P - 1) + 1):
                a = np.arange(lag, P)  # occurrence position; feature position j = a - lag
                keep = whole[:, a]
                weight = np.sqrt(beta[k - 1]) * chol[a, a - lag]
                pos = np.broadcast_to(a - lag + (k - 1) * L, (n, len(a)))
                all_keys.append(self._keys(kmers[:, a], pos, base)[keep])
                all_vals.append(np.broadcast_to(weight, (n, len(a)))[keep])
                all_rows.append(np.broadcast_to(np.arange(n)[:, None], (n, len(a)))[keep])
        if not all_keys:
            return SparseFeatures(np.zeros(n + 1, np.int64), np.zeros(0, np.int64), np.zeros(0))
        return summed_features(
            np.concatenate(all_rows), np.concatenate(all_keys), np.concatenate(all_vals), n
        )

    def _coupling_factor(self, positions: int) -> np.ndarray:
        """Lower Cholesky factor ``C`` of :func:`shift_matrix` (the identity without shifts)."""
        if self.shift == 0:
            return np.eye(positions)
        M = torch.as_tensor(shift_matrix(positions, self.shift))
        return cholesky_factor(M, jitter=0.0, name="M").factor.numpy()

    def _keys(self, kmers: np.ndarray, pos: np.ndarray, base: int | None) -> np.ndarray:
        """Keys of the features ``(k, j, u)``, with ``pos = (k - 1) L + j``."""
        if base is not None:
            return pos.astype(np.int64) * np.int64(base) ** self.degree + kmers
        h = _splitmix64(kmers.view(np.uint64) ^ np.uint64(0x9E3779B97F4A7C15))
        h = _splitmix64(h ^ pos.astype(np.uint64))
        return (h | np.uint64(1 << 63)).view(np.int64)


def summed_features(
    rows: np.ndarray, keys: np.ndarray, values: np.ndarray, n: int
) -> SparseFeatures:
    """Sparse features from weighted occurrences ``(row, key, value)``, duplicates summed."""
    uniq, ids = np.unique(keys, return_inverse=True)
    pairs, inverse = np.unique(rows.astype(np.int64) * len(uniq) + ids, return_inverse=True)
    summed = np.bincount(inverse, weights=values, minlength=len(pairs))
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(pairs // len(uniq), minlength=n), out=indptr[1:])
    return SparseFeatures(indptr, uniq[pairs % len(uniq)], summed)


__all__ = [
    "UnequalLengthError",
    "WeightedDegree",
    "degree_weights",
    "shift_matrix",
    "shift_weights",
]
