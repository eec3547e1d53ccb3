"""Typed batches of strings (DNA, proteins, any text) for the string kernels.

A :class:`StringBatch` holds ``n`` strings over an alphabet as one flat integer array
(``codes``, each character replaced by its index in ``alphabet``) with row ``offsets``
(ragged layout, CSR-style): string ``i`` is ``codes[offsets[i]:offsets[i + 1]]``.  It supports
``len(batch)`` and ``batch[i]`` / ``batch[i:j]`` / ``batch[index_array]`` (always returning a
batch), which is all the Gram engine needs to tile it, and gives a padded tensor view for the
batched dynamic programmes of :mod:`kernelkit.kernels._strings_base`.

Named alphabets: ``"dna"`` = ``ACGT``; ``"rna"`` = ``ACGU``; ``"protein"`` = the 20 standard
amino acids in one-letter code, ``ACDEFGHIKLMNPQRSTVWY``.

The case rule (:func:`case_folds`, the one rule of every string kernel, the sequence readers
and the command line):

* **Case.**  Lower-case ASCII letters are read as their upper-case letter (``"acgt"`` is
  ``"ACGT"``: lower case in DNA and protein files is soft-masking, e.g. repeats in a genome
  assembly, not another residue), unless the alphabet itself holds a letter in both cases
  (``alphabet="aAcC"``: then case is kept).  This also holds for ``alphabet=None`` (the
  alphabet inferred from the data), so ``k(s, s.lower()) == k(s, s)`` for every string
  kernel; give an alphabet with both cases to compare case-sensitively.  Only ASCII letters
  fold, so a string keeps its length.
* **Unknown residues.**  With a named alphabet, ``N`` (DNA, RNA) and ``X`` (protein) are the
  unknown-residue codes (:data:`UNKNOWN_LETTERS`): accepted, encoded as code
  ``len(alphabet)``, and they *match nothing*: a k-mer or position holding one contributes
  no feature (spectrum, mismatch, weighted degree), no letter equals them (subsequence,
  local alignment) and their one-hot column is zero (sequence CKNs); the HMM kernels, whose
  emissions need a known letter, refuse them by name.  An alphabet given as characters is
  the named one when its characters are the same (``"ACGT"`` is ``"dna"``); with
  ``alphabet=None`` or any other characters, ``N`` and ``X`` are ordinary letters.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from kernelkit.utils._errors import InputError

ALPHABETS: dict[str, str] = {
    "dna": "ACGT",
    "rna": "ACGU",
    "protein": "ACDEFGHIKLMNPQRSTVWY",
}
"""Named alphabets accepted wherever an ``alphabet`` argument is."""

UNKNOWN_LETTERS: dict[str, str] = {"dna": "N", "rna": "N", "protein": "X"}
"""The unknown-residue letter of each named alphabet (it matches nothing; module docstring)."""

_UNKNOWN_BY_CHARS = {ALPHABETS[name]: letter for name, letter in UNKNOWN_LETTERS.items()}


def case_folds(chars: str | None) -> bool:
    """Whether lower-case ASCII letters are read as upper case with the alphabet ``chars``.

    The case rule of the module docstring: ``True`` unless ``chars`` holds some ASCII letter
    in both cases (``None``, an inferred alphabet, folds).
    """
    if chars is None:
        return True
    return not any(c.islower() and c.isascii() and c.upper() in chars for c in chars)


def unknown_letter(chars: str | None) -> str | None:
    """The unknown-residue letter of the alphabet ``chars`` (``N`` for DNA and RNA, ``X`` for
    protein), or ``None`` for ``None`` and alphabets given as characters."""
    return None if chars is None else _UNKNOWN_BY_CHARS.get(chars)


def fold_case(text: str, chars: str | None = None) -> str:
    """``text`` under the case rule of ``chars``: ASCII ``a-z`` upper-cased when
    :func:`case_folds` (same length; other characters unchanged)."""
    return text.translate(_ASCII_UPPER) if case_folds(chars) else text


_ASCII_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def resolve_alphabet(alphabet: str | None, *, name: str = "alphabet") -> str | None:
    """Return the characters of ``alphabet`` (a name of :data:`ALPHABETS` or the characters).

    ``None`` stays ``None`` (infer from data).  A string of characters must be non-empty and
    free of repeated characters.
    """
    if alphabet is None:
        return None
    if not isinstance(alphabet, str):
        raise InputError(
            f"{name}: expected None, 'dna', 'rna', 'protein' or a string of characters, "
            f"got {type(alphabet).__name__}"
        )
    chars = ALPHABETS.get(alphabet, alphabet)
    if len(chars) == 0:
        raise InputError(f"{name}: expected a non-empty alphabet, got ''")
    if len(set(chars)) != len(chars):
        dup = sorted({c for c in chars if chars.count(c) > 1})
        raise InputError(f"{name}: expected distinct characters, got {chars!r} (repeated: {dup})")
    return chars


def _code_points(text: str) -> np.ndarray:
    """Unicode code points of ``text`` as int64 (UTF-32 decoding, vectorised)."""
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)


def _folded(points: np.ndarray) -> np.ndarray:
    """Code points with ASCII ``a-z`` moved to ``A-Z`` (the case rule)."""
    lower = (points >= 97) & (points <= 122)
    return np.where(lower, points - 32, points) if lower.any() else points


def _as_string_list(seqs: Any, name: str) -> list[str]:
    """Accept list / tuple / NumPy 1-D array / pandas Series of ``str``; name the bad item."""
    if isinstance(seqs, (str, bytes)):
        raise InputError(
            f"{name}: expected a sequence of strings, got a single {type(seqs).__name__} "
            f"{seqs[:20]!r}; wrap it in a list: [{seqs[:20]!r}]"
        )
    if hasattr(seqs, "to_numpy") and not isinstance(seqs, np.ndarray):
        seqs = seqs.to_numpy()
    if isinstance(seqs, np.ndarray):
        if seqs.ndim != 1:
            raise InputError(
                f"{name}: expected a 1-D array of strings, got shape {tuple(seqs.shape)}"
            )
        seqs = seqs.tolist()
    elif isinstance(seqs, torch.Tensor):
        raise InputError(
            f"{name}: expected strings, got a torch tensor of shape {tuple(seqs.shape)}; "
            "string kernels take a list of str (or a StringBatch)"
        )
    try:
        items = list(seqs)
    except TypeError as exc:
        raise InputError(
            f"{name}: expected a list, tuple, array or Series of strings, got {type(seqs).__name__}"
        ) from exc
    for i, s in enumerate(items):
        if not isinstance(s, str):
            raise InputError(
                f"{name}: expected every item to be a str, item {i} is "
                f"{type(s).__name__} ({s!r:.40})"
            )
    return items


@dataclass(frozen=True)
class StringBatch:
    """A batch of strings over an alphabet, integer-encoded in a ragged (flat + offsets) layout.

    Build it with :meth:`from_sequences`.

    Parameters
    ----------
    codes : np.ndarray
        int64 array of all characters, concatenated; ``codes[p]`` is an index into
        ``alphabet``, or ``len(alphabet)`` for the unknown-residue letter of a named alphabet
        (:func:`unknown_letter`, which matches nothing).
    offsets : np.ndarray
        int64 row pointers, shape ``(n + 1,)``; string ``i`` is ``codes[offsets[i]:offsets[i+1]]``.
    alphabet : str
        The characters; code ``c`` stands for ``alphabet[c]``.
    sequences : tuple of str
        The original strings (kept for display and re-encoding).
    """

    codes: np.ndarray
    offsets: np.ndarray
    alphabet: str
    sequences: tuple[str, ...]

    dtype = None  # structured batch: no floating dtype of its own

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_sequences(
        cls,
        seqs: Any,
        alphabet: str | None = None,
        *,
        allow_empty: bool = False,
        name: str = "X",
    ) -> StringBatch:
        """Validate and encode strings.

        Parameters
        ----------
        seqs : list, tuple, np.ndarray, pandas.Series of str, or StringBatch
            The strings.  A ``StringBatch`` is re-encoded when its alphabet differs.
        alphabet : None, "dna", "rna", "protein" or str
            ``None`` infers the alphabet as the sorted set of characters present; otherwise
            every character must belong to it or be its unknown-residue letter.  Case
            follows the module's case rule (:func:`case_folds`): lower-case letters are
            read as upper case unless the alphabet holds both cases.
        allow_empty : bool
            Whether empty strings are accepted (an empty *batch* is always refused).
        name : str
            Argument name quoted in error messages.

        Raises
        ------
        InputError
            When ``seqs`` is a single string, an item is not a ``str``, the batch is empty, a
            string is empty (unless ``allow_empty``), or a character is not in ``alphabet``
            (the message names the sequence index, the position and the character).
        """
        chars = resolve_alphabet(alphabet)
        if isinstance(seqs, StringBatch):
            if chars is None or chars == seqs.alphabet:
                if not allow_empty and len(seqs) and int(seqs.lengths.min()) == 0:
                    i = int(np.argmin(seqs.lengths))
                    raise InputError(f"{name}: expected non-empty strings, string {i} is empty")
                return seqs
            items = list(seqs.sequences)
        else:
            items = _as_string_list(seqs, name)
        if len(items) == 0:
            raise InputError(f"{name}: expected at least 1 string, got 0")
        lengths = np.fromiter((len(s) for s in items), dtype=np.int64, count=len(items))
        if not allow_empty and lengths.min() == 0:
            i = int(np.argmin(lengths))
            raise InputError(
                f"{name}: expected non-empty strings, string {i} is empty "
                "(drop it, or pass allow_empty=True where the kernel allows it)"
            )
        offsets = np.zeros(len(items) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        points = _code_points("".join(items))
        if case_folds(chars):
            points = _folded(points)
        if chars is None:
            uniq = np.unique(points)
            chars = "".join(chr(int(c)) for c in uniq)
            codes = np.searchsorted(uniq, points).astype(np.int64)
        else:
            unknown = unknown_letter(chars)
            alpha_points = _code_points(chars + (unknown or ""))
            order = np.argsort(alpha_points)
            sorted_points = alpha_points[order]
            pos = np.searchsorted(sorted_points, points).clip(max=len(alpha_points) - 1)
            bad = sorted_points[pos] != points
            if bad.any():
                p = int(np.argmax(bad))
                i = int(np.searchsorted(offsets, p, side="right") - 1)
                j = p - int(offsets[i])
                shown = next((k for k, v in ALPHABETS.items() if v == chars), None)
                label = f" ({shown})" if shown else ""
                raise InputError(
                    f"{name}: sequence {i} has character {chr(int(points[p]))!r} at position "
                    f"{j}, which is not in the alphabet {chars!r}{label}; "
                    f"{int(bad.sum())} unknown character(s) in total"
                    + (f" (write unknown residues as {unknown!r})" if unknown else "")
                )
            codes = order[pos].astype(np.int64)
        return cls(codes, offsets, chars, tuple(items))

    # ------------------------------------------------------------------ views
    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def lengths(self) -> np.ndarray:
        """int64 lengths of the strings, shape ``(n,)``."""
        return np.diff(self.offsets)

    def __getitem__(self, idx: Any) -> StringBatch:
        """Sub-batch by an int, a slice, an integer array/list/tensor or a boolean mask."""
        n = len(self)
        if isinstance(idx, torch.Tensor):
            idx = idx.detach().cpu().numpy()
        if isinstance(idx, (int, np.integer)):
            i = int(idx)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of range for a StringBatch of {n} strings")
            rows = np.array([i % n])
        else:
            rows = np.atleast_1d(np.arange(n)[idx])
        if len(rows) == 0:
            return StringBatch(np.zeros(0, np.int64), np.zeros(1, np.int64), self.alphabet, ())
        starts, ends = self.offsets[rows], self.offsets[rows + 1]
        lens = ends - starts
        offsets = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(lens, out=offsets[1:])
        gather = np.repeat(starts - offsets[:-1], lens) + np.arange(offsets[-1])
        return StringBatch(
            self.codes[gather],
            offsets,
            self.alphabet,
            tuple(self.sequences[int(r)] for r in rows),
        )

    def __iter__(self) -> Iterator[str]:
        return iter(self.sequences)

    @property
    def known(self) -> np.ndarray:
        """Flat boolean mask of the characters that are letters of the alphabet (``False``
        for the unknown-residue letter, which matches nothing)."""
        return self.codes < len(self.alphabet)

    def code_points(self) -> np.ndarray:
        """Flat int64 Unicode code points of all characters (alphabet-independent encoding);
        ``-1`` for the unknown-residue letter (equal to no letter)."""
        return np.append(_code_points(self.alphabet), -1)[self.codes]

    def padded(
        self, *, pad_value: int = -1, code_points: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Padded int64 tensor ``(n, max_len)`` of codes (or code points) and the lengths.

        Padding cells hold ``pad_value``.
        """
        lens = self.lengths
        width = int(lens.max()) if len(lens) else 0
        out = np.full((len(self), width), pad_value, dtype=np.int64)
        rows = np.repeat(np.arange(len(self)), lens)
        cols = np.arange(len(self.codes)) - np.repeat(self.offsets[:-1], lens)
        out[rows, cols] = self.code_points() if code_points else self.codes
        return torch.from_numpy(out), torch.from_numpy(lens.copy())

    def __repr__(self) -> str:
        head = ", ".join(repr(s if len(s) <= 12 else s[:12] + "...") for s in self.sequences[:3])
        more = ", ..." if len(self) > 3 else ""
        return f"StringBatch(n={len(self)}, alphabet={self.alphabet!r}, [{head}{more}])"


def as_string_batch(
    X: Any, alphabet: str | None = None, *, allow_empty: bool = False, name: str = "X"
) -> StringBatch:
    """Shorthand for :meth:`StringBatch.from_sequences` (passes batches through)."""
    return StringBatch.from_sequences(X, alphabet, allow_empty=allow_empty, name=name)


__all__ = [
    "StringBatch",
    "as_string_batch",
    "fold_case",
    "resolve_alphabet",
]
