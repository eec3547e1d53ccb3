"""FASTA files (``>id key=value ...`` headers) and the alphabet check of sequences."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from kernelkit.data.readers.common import DataFile, text_lines
from kernelkit.data.strings import ALPHABETS
from kernelkit.utils.errors import DataFileError, InputError
from kernelkit.utils.kinds import InputKind


def _choose_alphabet(letters: set[str], alphabet: str | None) -> str:
    if alphabet is not None:
        if alphabet not in ALPHABETS:
            raise InputError(f"--alphabet: expected one of {sorted(ALPHABETS)}, got {alphabet!r}")
        return alphabet
    return "dna" if letters <= set(ALPHABETS["dna"]) else "protein"


def check_sequences(
    path: Path, seqs: list[str], lines: list[int], alphabet: str | None, ids: Sequence[str] = ()
) -> tuple[list[str], str]:
    """Check every letter against the alphabet; the first unknown one is reported."""
    letters = set().union(*map(set, seqs))
    name = _choose_alphabet(letters, alphabet)
    allowed = set(ALPHABETS[name])
    for i, (seq, line) in enumerate(zip(seqs, lines, strict=False)):
        if not seq:
            raise DataFileError(path, "empty sequence", line=line)
        bad = set(seq) - allowed
        if bad:
            letter = next(c for c in seq if c in bad)
            record = f" in record {ids[i]!r}" if ids else ""
            raise DataFileError(
                path,
                f"unknown letter {letter!r}{record} (alphabet {name}: {ALPHABETS[name]})",
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
            chunks[-1].append((number, stripped.upper()))
    if not ids:
        raise DataFileError(path, "no FASTA record (no line starts with '>')")
    for i, chunk in enumerate(chunks):
        if not chunk:
            raise DataFileError(path, f"record {ids[i]!r} has no sequence", line=header_lines[i])
    # check line by line so that an unknown letter is reported on its own line
    flat = [(number, part) for chunk in chunks for number, part in chunk]
    owner = [ids[i] for i, chunk in enumerate(chunks) for _ in chunk]
    _, name = check_sequences(path, [p for _, p in flat], [n for n, _ in flat], alphabet, ids=owner)
    seqs = ["".join(part for _, part in chunk) for chunk in chunks]
    keys = sorted(set().union(*fields))
    columns = {k: [f.get(k, "") for f in fields] for k in keys}
    return DataFile(InputKind.STRING, seqs, ids, path, header_lines, columns, alphabet=name)
