r"""Kernels on strings: k-spectrum, (k, m)-mismatch and gap-weighted subsequence kernels.

Course part 2, section 3 ("Kernels for biological sequences"):

* :class:`Spectrum` (Leslie et al., 2002): ``Phi_u(x) = #occurrences of u in x`` for
  ``u in A^k``, ``K(x, y) = sum_u Phi_u(x) Phi_u(y)``; explicit sparse features.
* :class:`Mismatch` (Leslie et al., 2004): ``Phi_u(x) = #k-mers of x within Hamming distance m
  of u``; explicit sparse features by enumerating the m-neighbourhood of every k-mer.
* :class:`Subsequence` (Lodhi et al., 2002): ``Phi_u(x) = sum_{i: x(i) = u} lam^{l(i)}`` over
  index sequences ``i`` with ``l(i) = i_k - i_1 + 1``; the O(k |x| |y|) dynamic programme,
  batched in torch over pairs.

The local-alignment kernel lives in :mod:`kernelkit.kernels._alignment`; the input handling and
the pairwise engine that both kernels use are in :mod:`kernelkit.kernels._strings_base`.

Feature keys.  Items are featurised independently (no fitted vocabulary), so a k-mer must get
the same int64 key in every batch.  With an ``alphabet`` given, a k-mer is its base-``|A|``
number (exact whenever ``|A|^k < 2^63``).  With ``alphabet=None`` the key is built from the
characters' Unicode code points: a k-mer of ASCII characters with ``k <= 9`` is its exact
base-128 number (a non-negative key); any other k-mer gets a stable 63-bit SplitMix64 hash of
its code points placed in the negative keys, so the two key spaces never meet and a collision
needs two distinct non-ASCII (or long) k-mers with equal 63-bit hashes.
"""

from __future__ import annotations

import itertools
import math
import os
import warnings
from typing import Any

import numpy as np
import torch

from kernelkit.data._strings import StringBatch, resolve_alphabet
from kernelkit.kernels._base import Batch, Kernel, NormalizedKernel
from kernelkit.kernels._features import SparseFeatures, sparse_feature_gram
from kernelkit.kernels._strings_base import (
    _DNA_X,
    _DNA_Y,
    _PROT_X,
    _PROT_Y,
    _check_alphabet_param,
    _StringKernel,
    pairwise_diag,
    pairwise_values,
)
from kernelkit.utils._errors import InputError
from kernelkit.utils._validation import check_int, check_positive


# ---------------------------------------------------------------------- k-mer keys
def _splitmix64(z: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser on uint64 arrays (wrapping arithmetic), a stable 64-bit mixer."""
    z = z + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def _window_starts(batch: StringBatch, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Flat start positions of every k-mer window that stays inside its string and holds no
    unknown-residue letter (which matches nothing, :mod:`kernelkit.data._strings`), and its
    row."""
    lens = batch.lengths
    rows = np.repeat(np.arange(len(batch)), lens)
    pos = np.arange(len(batch.codes))
    ok = pos + k <= batch.offsets[rows + 1]
    unknown = np.concatenate(([0], np.cumsum(~batch.known)))
    ok[ok] &= unknown[pos[ok] + k] == unknown[pos[ok]]
    return pos[ok], rows[ok]


def _exact_keys(digits: np.ndarray, starts: np.ndarray, k: int, base: int) -> np.ndarray:
    """``sum_t digits[s + t] base^(k - 1 - t)`` for every start ``s`` (needs ``base^k < 2^63``)."""
    keys = np.zeros(len(starts), dtype=np.int64)
    for t in range(k):
        keys = keys * base + digits[starts + t]
    return keys


def _hash_keys(digits: np.ndarray, starts: np.ndarray, k: int) -> np.ndarray:
    """Stable 63-bit hashes of the windows, mapped to negative int64 keys."""
    h = np.full(len(starts), 0x243F6A8885A308D3, dtype=np.uint64)
    for t in range(k):
        h = _splitmix64(h ^ digits[starts + t].astype(np.uint64))
    return (h | np.uint64(1 << 63)).view(np.int64)


def kmer_keys(batch: StringBatch, k: int, alphabet: str | None) -> tuple[np.ndarray, np.ndarray]:
    """Keys of all k-mer occurrences of a batch and the row each comes from.

    See the module docstring for the key scheme; ``alphabet`` is the kernel's (the batch must
    be encoded with it), or ``None`` to key by code points.
    """
    starts, rows = _window_starts(batch, k)
    if alphabet is not None:
        base = len(alphabet)
        if k * np.log2(max(base, 2)) < 63:
            return _exact_keys(batch.codes, starts, k, base), rows
        return _hash_keys(batch.codes, starts, k), rows
    points = batch.code_points()
    if k > 9:
        return _hash_keys(points, starts, k), rows
    ascii_char = points < 128
    ascii_win = np.ones(len(starts), dtype=bool)
    for t in range(k):
        ascii_win &= ascii_char[starts + t]
    keys = np.empty(len(starts), dtype=np.int64)
    keys[ascii_win] = _exact_keys(points, starts[ascii_win], k, 128)
    keys[~ascii_win] = _hash_keys(points, starts[~ascii_win], k)
    return keys, rows


def count_features(rows: np.ndarray, keys: np.ndarray, n: int) -> SparseFeatures:
    """Sparse count features from occurrence lists ``(row, key)``: ``Phi_key(row) = #``.

    Two single-key sorts (keys to dense ids, then ``row * n_ids + id``), much faster than a
    two-key ``lexsort``; keys come out sorted within each row.
    """
    if len(keys):
        uniq, ids = np.unique(keys, return_inverse=True)
        pairs, counts = np.unique(rows.astype(np.int64) * len(uniq) + ids, return_counts=True)
        rows, keys = pairs // len(uniq), uniq[pairs % len(uniq)]
        values = counts.astype(np.float64)
    else:
        values = np.zeros(0)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    return SparseFeatures(indptr, keys.astype(np.int64), values)


def _feature_diag(F: SparseFeatures) -> torch.Tensor:
    """``<Phi(x), Phi(x)>`` per row of sparse features."""
    rows = np.repeat(np.arange(len(F)), np.diff(F.indptr))
    return torch.as_tensor(
        np.bincount(rows, weights=F.values**2, minlength=len(F)), dtype=torch.float64
    )


def check_not_all_zero(kernel: Kernel, X: StringBatch) -> None:
    """Refuse training sequences that are all shorter than the kernel's ``k`` (then every
    feature, and every Gram entry, is 0).

    Raises
    ------
    InputError
        Naming ``k``, the longest sequence and the fix.
    """
    k = getattr(kernel, "k", None)  # weighted degree has none: any letter is a feature
    longest = int(np.max(X.lengths)) if len(X) else 0
    if k is not None and len(X) and longest < k:
        raise InputError(
            f"k: every sequence is shorter than k={k} (the longest has {longest} letters), so "
            f"every feature of {type(kernel).__name__} is 0 and its Gram matrix is all zero; "
            f"use k <= {longest}"
        )


class _FeatureStringKernel(_StringKernel):
    """A string kernel with explicit sparse features: ``K = Phi(X) Phi(Y)^T``."""

    def check_training(self, X: StringBatch) -> None:
        """Refuse training sequences that are all shorter than ``k`` (an all-zero Gram;
        :func:`check_not_all_zero`); called by the estimators' ``fit``."""
        check_not_all_zero(self, X)

    def features(self, X: StringBatch) -> SparseFeatures:
        raise NotImplementedError

    def block(self, X: StringBatch, Y: StringBatch) -> torch.Tensor:
        FX = self.features(X)
        FY = FX if Y is X else self.features(Y)
        return sparse_feature_gram(FX, FY)

    def block_diag(self, X: StringBatch) -> torch.Tensor:
        return _feature_diag(self.features(X))

    def normalized(self) -> Kernel:
        """The normalised kernel, with explicit features ``Phi(x) / ||Phi(x)||``."""
        return FeatureNormalizedKernel(self)


class FeatureNormalizedKernel(NormalizedKernel):
    r"""Normalised kernel of an explicit-feature kernel, itself with explicit features.

    .. math:: \tilde k(x, y) = \frac{k(x, y)}{\sqrt{k(x, x) k(y, y)}}
              = \Big\langle \frac{\Phi(x)}{\|\Phi(x)\|}, \frac{\Phi(y)}{\|\Phi(y)\|}
              \Big\rangle,

    the same value as :class:`~kernelkit.kernels.NormalizedKernel` (items without features,
    ``Phi(x) = 0``, map to 0), but :meth:`features` returns the row-normalised sparse features,
    so the Gram engine computes it by one sparse product instead of tile by tile.  p.d.
    """

    def __init__(self, kernel: Kernel):
        super().__init__(kernel)
        if not isinstance(kernel, _FeatureStringKernel):
            raise InputError(
                f"kernel: expected a string kernel with explicit features (Spectrum, Mismatch), "
                f"got {type(kernel).__name__}"
            )

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        return [
            (cls(Spectrum(3)), [*_DNA_X, "A"], _DNA_Y),  # "A" has no 3-mer: a zero row
            (Mismatch(3, 1, alphabet="protein").normalized(), _PROT_X, _PROT_Y),
        ]

    def features(self, X: StringBatch) -> SparseFeatures:
        F = self.kernel.features(X)
        counts = np.diff(F.indptr)
        norms = np.sqrt(_feature_diag(F).numpy())
        values = F.values / np.repeat(norms, counts) if len(F.values) else F.values
        return SparseFeatures(F.indptr, F.keys, values)

    def block(self, X: StringBatch, Y: StringBatch) -> torch.Tensor:
        FX = self.features(X)
        FY = FX if Y is X else self.features(Y)
        return sparse_feature_gram(FX, FY)

    def block_diag(self, X: StringBatch) -> torch.Tensor:
        F = self.kernel.features(X)
        return torch.as_tensor(np.diff(F.indptr) > 0, dtype=torch.float64)


# ---------------------------------------------------------------------- spectrum
class Spectrum(_FeatureStringKernel):
    r"""The k-spectrum kernel (Leslie, Eskin & Noble, 2002).

    .. math:: \Phi_u(x) = \#\{i : x_i \dots x_{i+k-1} = u\},\quad
              K(x, y) = \sum_{u \in \mathcal{A}^k} \Phi_u(x) \Phi_u(y).

    Course part 2, section 3, "k-spectrum": at most ``|x| - k + 1`` non-zero features, so the
    Gram is a sparse product ``Phi(X) Phi(Y)^T`` (:meth:`features` returns them with exact
    integer k-mer keys, see the module docstring).  p.d. (explicit features).

    Parameters
    ----------
    k : int
        Length of the k-mers (``>= 1``).  Strings shorter than ``k`` have no features.
    alphabet : None, "dna", "rna", "protein" or str
        Characters allowed in the input (unknown ones raise :class:`InputError`);
        ``None`` accepts any character and keys k-mers by code points.
        Lower case is read as upper case and ``N`` / ``X`` of a named alphabet match
        nothing (the case rule of :mod:`kernelkit.data._strings`).
    """

    def __init__(self, k: int = 3, alphabet: str | None = None):
        super().__init__()
        self.k = check_int(k, name="k", minimum=1)
        self.alphabet = _check_alphabet_param(alphabet)

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        return [
            (cls(3), _DNA_X, _DNA_Y),
            (cls(2, alphabet="protein"), _PROT_X, _PROT_Y),
            (cls(11, alphabet="dna"), [*_DNA_X, "ACGTACGTACGTAC"], _DNA_Y),  # 4^11 exact keys
            (cls(12), _PROT_X, _PROT_Y),  # hashed keys (k > 9 without alphabet)
        ]

    def features(self, X: StringBatch) -> SparseFeatures:
        """Sparse k-mer counts, one row per string."""
        X = self._encoded(X)
        keys, rows = kmer_keys(X, self.k, self._alphabet_chars())
        return count_features(rows, keys, len(X))


# ---------------------------------------------------------------------- mismatch
def _mismatch_shifts(k: int, m: int, size: int) -> np.ndarray:
    """All digit shifts ``s in {0..size-1}^k`` with at most ``m`` non-zero entries.

    Adding a shift modulo ``size`` to a k-mer enumerates its Hamming m-neighbourhood, each
    neighbour exactly once.  Shape ``(sum_{d<=m} C(k, d) (size-1)^d, k)``.
    """
    rows = [np.zeros(k, dtype=np.int64)]
    for d in range(1, m + 1):
        for pos in itertools.combinations(range(k), d):
            vals = np.array(list(itertools.product(range(1, size), repeat=d)), dtype=np.int64)
            block = np.zeros((len(vals), k), dtype=np.int64)
            block[:, list(pos)] = vals
            rows.extend(block)
    return np.asarray(rows, dtype=np.int64).reshape(-1, k)


def memory_budget() -> int:
    """Bytes a kernel's features may take: half of the machine's physical memory (8 GiB
    where it cannot be read)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2
    except (ValueError, OSError, AttributeError):
        return 8 * 2**30


_BYTES_PER_OCCURRENCE = 96
"""Bytes held per (k-mer, neighbour) pair while the mismatch features are built: its int64
key and row, and the sort and count of :func:`count_features` (peak resident memory of
``Mismatch(k=8, m=2)`` on 1000 DNA sequences of length 100: 2.4 GB for 2.6e7 pairs)."""

_OCCURRENCES_PER_SECOND = 1e6
"""Pairs per second :meth:`Mismatch.features` handles: an order of size for the estimate
(the calibrating run is in ``docs/measurements.md``)."""


class Mismatch(_FeatureStringKernel):
    r"""The (k, m)-mismatch kernel (Leslie, Eskin, Cohen, Weston & Noble, 2004).

    .. math:: \Phi_u(x) = \#\{i : d_H(x_i \dots x_{i+k-1}, u) \le m\},\quad
              K(x, y) = \sum_{u \in \mathcal{A}^k} \Phi_u(x) \Phi_u(y),

    with ``d_H`` the Hamming distance (no gaps).  Course part 2, section 3, "(k,m)-mismatch";
    ``m = 0`` is the spectrum kernel.  The features are explicit: every k-mer of ``x`` adds one
    to each of the ``sum_{d<=m} C(k, d) (|A|-1)^d`` words of its m-neighbourhood (enumerated
    here; cost ``O(|x| k^m |A|^m)``, the factor the course's erratum 7 restores; fine for
    small ``k`` and ``m``).  p.d. (explicit features).

    Parameters
    ----------
    k : int
        k-mer length (``>= 1``).
    m : int
        Number of mismatches allowed, ``0 <= m < k``.
    alphabet : "dna", "rna", "protein" or str
        Required: the kernel's value depends on ``|A|`` (words ``u`` may use letters absent
        from ``x`` and ``y``), so it cannot be inferred batch by batch.
    """

    def __init__(self, k: int = 3, m: int = 1, alphabet: str | None = None):
        super().__init__()
        self.k = check_int(k, name="k", minimum=1)
        self.m = check_int(m, name="m", minimum=0)
        if self.m >= self.k:
            raise InputError(
                f"m: expected 0 <= m < k = {self.k} (with m >= k every word matches every "
                f"k-mer), got {m!r}"
            )
        self.alphabet = _check_alphabet_param(alphabet)
        chars = resolve_alphabet(alphabet)
        if chars is not None and self.k * np.log2(max(len(chars), 2)) >= 63:
            raise InputError(
                f"k: |alphabet|^k must be < 2^63 for exact mismatch keys, got "
                f"{len(chars)}^{self.k}; use a smaller k"
            )

    def _alphabet_chars(self) -> str:
        chars = resolve_alphabet(self.alphabet)
        if chars is None:
            raise InputError(
                "alphabet: Mismatch needs an alphabet (its value depends on |A|, so it cannot "
                "be inferred per batch); got None, pass alphabet='dna', 'protein' or the "
                "characters, e.g. Mismatch(k=3, m=1, alphabet='dna')"
            )
        return chars

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        return [
            (cls(3, 1, alphabet="dna"), _DNA_X, _DNA_Y),
            (cls(4, 2, alphabet="dna"), _DNA_X, _DNA_Y),
            (cls(3, 1, alphabet="protein"), _PROT_X, _PROT_Y),
        ]

    def cost(self, X: Any) -> tuple[int, int, float]:
        """``(pairs, bytes, seconds)``: the (k-mer, neighbour) pairs of the features of ``X``,
        ``n_kmers * sum_{d <= m} C(k, d) (|A| - 1)^d``, and the memory and time estimated for
        building them (:data:`_BYTES_PER_OCCURRENCE`, :data:`_OCCURRENCES_PER_SECOND`)."""
        X = X if isinstance(X, StringBatch) else self.prepare(X)
        size = len(self._alphabet_chars())
        n_kmers = int(np.clip(np.asarray(X.lengths) - self.k + 1, 0, None).sum())
        neighbours = sum(math.comb(self.k, d) * (size - 1) ** d for d in range(self.m + 1))
        pairs = n_kmers * neighbours
        return pairs, pairs * _BYTES_PER_OCCURRENCE, pairs / _OCCURRENCES_PER_SECOND

    def check_cost(self, X: Any) -> None:
        """Refuse, before allocating, features larger than :func:`memory_budget`.

        Raises
        ------
        InputError
            Naming the estimate (pairs, memory, time), the budget and the fix.
        """
        pairs, nbytes, seconds = self.cost(X)
        budget = memory_budget()
        if nbytes > budget:
            raise InputError(
                f"Mismatch(k={self.k}, m={self.m}) on {len(X)} sequences: {pairs:.3g} "
                f"(k-mer, neighbour) pairs, about {nbytes / 2**30:.3g} GiB and "
                f"{seconds / 60:.3g} min to build, above the memory budget of "
                f"{budget / 2**30:.3g} GiB (half the machine's memory); use a smaller m or k"
            )

    def check_training(self, X: StringBatch) -> None:
        """Refuse training sequences all shorter than ``k``, or whose features would exceed
        the memory budget (:meth:`check_cost`), before anything is allocated."""
        check_not_all_zero(self, X)
        self.check_cost(X)

    def features(self, X: StringBatch) -> SparseFeatures:
        """Sparse mismatch features ``Phi_u(x)``, keyed by the base-``|A|`` number of ``u``
        (refused before allocating when larger than the budget, :meth:`check_cost`)."""
        X = self._encoded(X)
        self.check_cost(X)
        size = len(self._alphabet_chars())
        k = self.k
        starts, rows = _window_starts(X, k)
        shifts = _mismatch_shifts(k, self.m, size)
        powers = size ** np.arange(k - 1, -1, -1, dtype=np.int64)
        windows = X.codes[starts[:, None] + np.arange(k)[None, :]]
        chunk = max(1, 2_000_000 // (len(shifts) * k))
        all_keys, all_rows = [], []
        for lo in range(0, len(starts), chunk):
            w = windows[lo : lo + chunk]
            neigh = (w[:, None, :] + shifts[None, :, :]) % size
            all_keys.append((neigh @ powers).ravel())
            all_rows.append(np.repeat(rows[lo : lo + chunk], len(shifts)))
        keys = np.concatenate(all_keys) if all_keys else np.zeros(0, np.int64)
        occ_rows = np.concatenate(all_rows) if all_rows else np.zeros(0, np.int64)
        return count_features(occ_rows, keys, len(X))


# ---------------------------------------------------------------------- subsequence
def subsequence_pairs(
    xs: torch.Tensor, lx: torch.Tensor, ys: torch.Tensor, ly: torch.Tensor, k: int, lam: float
) -> torch.Tensor:
    r"""Gap-weighted subsequence kernel ``K_k`` for a batch of padded pairs (Lodhi et al.).

    Auxiliary ``B_q(i, j) = B_q(x_{1..i}, y_{1..j})`` with ``B_0 = 1`` and (course part 2,
    section 3, "Gapped substring")

    .. math:: B_q(i, j) = \lambda B_q(i-1, j) + \lambda B_q(i, j-1) - \lambda^2 B_q(i-1, j-1)
              + [x_i = y_j] \lambda^2 B_{q-1}(i-1, j-1),

    ``B_q = 0`` when ``min(i, j) < q``, and ``K_k = \lambda^2 \sum_{i, j} [x_i = y_j]
    B_{k-1}(i-1, j-1)`` (the sum over the positions of the last matched letter).  The table
    is swept by anti-diagonals ``t = i + j`` (each depends on ``t - 1`` and ``t - 2`` only),
    vectorised over the pairs, the cells of a diagonal and ``q``: ``O(k |x| |y|)`` work in
    ``|x| + |y|`` steps.  Pads never match, so padded cells never reach a valid one.
    """
    P, Lx = xs.shape
    Ly = ys.shape[1]
    dt = torch.float64
    lam2 = lam * lam
    i_idx = torch.arange(1, Lx + 1)
    d2 = torch.zeros((P, k, Lx + 1), dtype=dt)  # diagonal t - 2 (t = 0 at start)
    d1 = torch.zeros((P, k, Lx + 1), dtype=dt)  # diagonal t - 1
    d2[:, 0] = 1.0
    d1[:, 0] = 1.0
    total = torch.zeros(P, dtype=dt)
    for t in range(2, Lx + Ly + 1):
        j = t - i_idx  # column of the cell (i, j) on this diagonal, i = 1..Lx
        valid = (j >= 1) & (j <= Ly)
        if not bool(valid.any()):
            continue
        jc = (j - 1).clamp(0, max(Ly - 1, 0))
        match = ((xs == ys[:, jc]) & valid).to(dt)  # (P, Lx): [x_i = y_j]
        prev_last = d2[:, k - 1, :-1]  # B_{k-1}(i-1, j-1)
        total += lam2 * (match * prev_last).sum(1)
        new = torch.zeros_like(d1)
        new[:, 0] = 1.0
        if k > 1:
            upd = (
                lam * (d1[:, 1:, :-1] + d1[:, 1:, 1:])
                - lam2 * d2[:, 1:, :-1]
                + lam2 * match[:, None, :] * d2[:, :-1, :-1]
            )
            new[:, 1:, 1:] = upd * valid.to(dt)
        d2, d1 = d1, new
    return total


_SUBSEQUENCE_CELLS_PER_SECOND = 1e6
"""Cells per second of :func:`subsequence_pairs` (2.2e5 measured with 60 DNA sequences of
length 80, k=3, on the 2-core machine at load 14; an order of size for the estimate)."""


class Subsequence(_StringKernel):
    r"""Gap-weighted subsequence kernel (Lodhi, Saunders, Shawe-Taylor, Cristianini & Watkins,
    2002).

    .. math:: \Phi_u(x) = \sum_{\mathbf{i} : x(\mathbf{i}) = u} \lambda^{l(\mathbf{i})},
              \quad l(\mathbf{i}) = i_k - i_1 + 1,\quad
              K_k(x, y) = \sum_{u \in \mathcal{A}^k} \Phi_u(x) \Phi_u(y),

    summed over increasing index tuples ``i`` of length ``k``.  Course part 2, section 3,
    "Gapped substring": the O(k |x| |y|) dynamic programme of :func:`subsequence_pairs`,
    batched in torch over blocks of padded pairs.  Example: ``K_2(cat, cat) = 2 lam^4 +
    lam^6``.  p.d. (an inner product of the features ``Phi``).

    Parameters
    ----------
    k : int
        Subsequence length (``>= 1``).
    lam : float
        Gap decay, ``0 < lam <= 1`` (here ``lam`` is the decay factor of Lodhi et al., not a
        regularisation strength).
    alphabet : None, "dna", "rna", "protein" or str
        Characters allowed in the input; ``None`` accepts any (letters compare by code point).
        Lower case is read as upper case and ``N`` / ``X`` of a named alphabet match
        nothing (the case rule of :mod:`kernelkit.data._strings`).
    """

    def __init__(self, k: int = 2, lam: float = 0.5, alphabet: str | None = None):
        super().__init__()
        self.k = check_int(k, name="k", minimum=1)
        self.lam = check_positive(lam, name="lam")
        if self.lam > 1.0:
            raise InputError(
                f"lam: expected a decay 0 < lam <= 1 (larger values weight long gaps "
                f"exponentially more), got {lam!r}"
            )
        self.alphabet = _check_alphabet_param(alphabet)

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        return [
            (cls(2, 0.5), _DNA_X, _DNA_Y),
            (cls(3, 0.8, alphabet="protein"), _PROT_X, _PROT_Y),
            (cls(1, 1.0), _DNA_X, None),
        ]

    def cost(self, X: Any) -> tuple[float, float]:
        """``(cells, seconds)``: the dynamic-programme cells ``k |x| |y|`` summed over the
        pairs of the Gram of ``X`` (symmetric: each pair once) and the time estimated at
        :data:`_SUBSEQUENCE_CELLS_PER_SECOND`."""
        X = X if isinstance(X, StringBatch) else self.prepare(X)
        lengths = np.asarray(X.lengths, dtype=np.float64)
        total = lengths.sum()
        cells = self.k * (total * total + (lengths * lengths).sum()) / 2
        return cells, cells / _SUBSEQUENCE_CELLS_PER_SECOND

    def check_training(self, X: StringBatch) -> None:
        """As :meth:`_FeatureStringKernel.check_training`; warns, with the estimate, when the
        training Gram would take more than ten minutes (:meth:`cost`)."""
        check_not_all_zero(self, X)
        cells, seconds = self.cost(X)
        if seconds > 600:
            warnings.warn(
                f"Subsequence(k={self.k}) on {len(X)} sequences: {cells:.3g} dynamic-programme "
                f"cells, about {seconds / 3600:.3g} h for the training Gram; a spectrum or "
                "weighted-degree kernel, or a subsample, is far cheaper",
                UserWarning,
                stacklevel=3,
            )

    def _pairs(
        self, xs: torch.Tensor, lx: torch.Tensor, ys: torch.Tensor, ly: torch.Tensor
    ) -> torch.Tensor:
        return subsequence_pairs(xs, lx, ys, ly, self.k, self.lam)

    def block(self, X: Batch, Y: Batch) -> torch.Tensor:
        return pairwise_values(X, Y, self._pairs, symmetric=Y is X)

    def block_diag(self, X: Batch) -> torch.Tensor:
        return pairwise_diag(X, self._pairs)
