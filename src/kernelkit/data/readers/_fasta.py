"""FASTA files (``>id key=value ...`` headers) and the alphabet check of sequences.

Letters follow the case rule of :mod:`kernelkit.data._strings`: lower case (soft-masking) is
read as upper case, and ``N`` (DNA, RNA) or ``X`` (protein) is the unknown residue, which
matches nothing.  The alphabet is detected on the upper-cased letters, the unknown-residue
letters aside (:func:`detect_alphabet`), so soft-masked DNA with ``N`` runs is DNA; what was
folded and how many unknown residues there are is kept in :attr:`DataFile.note`.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from pathlib import Path

from kernelkit.data._strings import ALPHABETS, UNKNOWN_LETTERS, fold_case
from kernelkit.data.readers._common import DataFile, text_lines
from kernelkit.utils._errors import DataFileError, InputError
from kernelkit.utils._kinds import InputKind

_NUCLEIC = ("dna", "rna")


def detect_alphabet(letters: set[str]) -> str:
    """``"dna"`` when the (upper-case) ``letters`` are ``ACGT`` and ``N``, ``"rna"`` for
    ``ACGU`` and ``N``, else ``"protein"``."""
    for name in _NUCLEIC:
        if letters <= set(ALPHABETS[name] + UNKNOWN_LETTERS[name]):
            return name
    return "protein"


def _choose_alphabet(letters: set[str], alphabet: str | None) -> str:
    if alphabet is not None:
        if alphabet not in ALPHABETS:
            raise InputError(f"--alphabet: expected one of {sorted(ALPHABETS)}, got {alphabet!r}")
        return alphabet
    return detect_alphabet(letters)


def case_note(raw: Sequence[str], seqs: Sequence[str], name: str) -> str:
    """One line saying how many ASCII letters were lower case (read as upper case) and how
    many are the unknown residue of alphabet ``name`` (empty when neither)."""
    lower = sum(s.count(c) for s in raw for c in string.ascii_lowercase)
    unknown = UNKNOWN_LETTERS[name]
    n_unknown = sum(s.count(unknown) for s in seqs)
    parts = []
    if lower:
        parts.append(f"{lower} lower-case letters (soft-masking) read as upper case")
    if n_unknown:
        parts.append(f"{n_unknown} unknown residues {unknown!r} match nothing")
    return f"alphabet {name}: " + "; ".join(parts) if parts else ""


def check_sequences(
    path: Path, seqs: list[str], lines: list[int], alphabet: str | None, ids: Sequence[str] = ()
) -> tuple[list[str], str]:
    """Fold the case of ``seqs`` (the case rule) and check every letter against the
    alphabet (given, or detected); the first unknown one is reported with its line.

    Returns the folded sequences and the alphabet's name.
    """
    seqs = [fold_case(s) for s in seqs]
    letters = set().union(*map(set, seqs))
    name = _choose_alphabet(letters, alphabet)
    allowed = set(ALPHABETS[name] + UNKNOWN_LETTERS[name])
    for i, (seq, line) in enumerate(zip(seqs, lines, strict=False)):
        if not seq:
            raise DataFileError(path, "empty sequence", line=line)
        bad = set(seq) - allowed
        if bad:
            letter = next(c for c in seq if c in bad)
            record = f" in record {ids[i]!r}" if ids else ""
            raise DataFileError(
                path,
                f"unknown letter {letter!r}{record} (alphabet {name}: {ALPHABETS[name]}, "
                f"unknown residue {UNKNOWN_LETTERS[name]})",
                line=line,
            )
    return seqs, name


def read_fasta(path: Path, text: str, alphabet: str | None) -> DataFile:
    ids: list[str] = []
    header_lines: list[int] = []
    fields: list[dict[str, str]] = []
    chunks: list[list[tuple[int, str]]] = []
    for number, line in text_lines(text):
        stripped = line.strip()
        if not stripped or stripped.startswith(";"):
            continue
        if stripped.startswith(">"):
            parts = stripped[1:].split()
            if not parts:
                raise DataFileError(path, "FASTA header without an id", line=number)
            ids.append(parts[0])
            header_lines.append(number)
            fields.append(dict(p.split("=", 1) for p in parts[1:] if "=" in p))
            chunks.append([])
        elif not chunks:
            raise DataFileError(
                path, "sequence before the first '>' header; expected FASTA", line=number
            )
        else:
            chunks[-1].append((number, stripped))
    if not ids:
        raise DataFileError(path, "no FASTA record (no line starts with '>')")
    for i, chunk in enumerate(chunks):
        if not chunk:
            raise DataFileError(path, f"record {ids[i]!r} has no sequence", line=header_lines[i])
    # check line by line so that an unknown letter is reported on its own line
    flat = [(number, part) for chunk in chunks for number, part in chunk]
    owner = [ids[i] for i, chunk in enumerate(chunks) for _ in chunk]
    raw = [p for _, p in flat]
    parts, name = check_sequences(path, raw, [n for n, _ in flat], alphabet, ids=owner)
    seqs, start = [], 0
    for chunk in chunks:
        seqs.append("".join(parts[start : start + len(chunk)]))
        start += len(chunk)
    keys = sorted(set().union(*fields))
    columns = {k: [f.get(k, "") for f in fields] for k in keys}
    return DataFile(
        InputKind.STRING,
        seqs,
        ids,
        path,
        header_lines,
        columns,
        alphabet=name,
        note=case_note(raw, parts, name),
    )
