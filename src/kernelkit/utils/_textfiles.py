"""Text files as users save them: the encoding from the byte-order mark, the delimiter of a
table from its first line.  Standard library only, so the command line checks a file's head
before importing torch.

* Encodings: UTF-8 (with or without a BOM), UTF-16 and UTF-32 with a BOM, and UTF-16 without
  a BOM when every other byte of the head is NUL (what spreadsheet programs write as
  "Unicode text"); a NUL elsewhere is a binary file; other bytes that are not UTF-8 are
  named with the line they are on.
* Delimiters: tab for ``.tsv`` or a tab in the first line, else semicolon when the first line
  has more semicolons than commas (a spreadsheet's CSV in locales with a decimal comma), else
  comma.
"""

from __future__ import annotations

import codecs
from pathlib import Path

from kernelkit.utils._errors import DataFileError

HEAD_BYTES = 65536
"""Bytes read to check a file before the work starts."""

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def text_encoding(raw: bytes, path: str | Path) -> str:
    """The encoding of a text file whose first bytes are ``raw`` (see the module docstring).

    Raises
    ------
    DataFileError
        For an empty file or a binary one (a NUL byte outside UTF-16/32 text).
    """
    if not raw.strip():
        raise DataFileError(path, "empty file; expected at least one record")
    for bom, encoding in _BOMS:
        if raw.startswith(bom):
            return encoding
    head = raw[:512]
    if len(head) >= 4 and head[1::2].count(0) == len(head[1::2]) and 0 not in head[0::2][:8]:
        return "utf-16-le"
    if len(head) >= 4 and head[0::2].count(0) == len(head[0::2]) and 0 not in head[1::2][:8]:
        return "utf-16-be"
    nul = raw.find(b"\x00")
    if nul >= 0:
        raise DataFileError(path, f"binary file (NUL byte at offset {nul}); expected a text file")
    return "utf-8"


def decode_text(raw: bytes, path: str | Path, *, partial: bool = False) -> str:
    """``raw`` as text in its encoding (:func:`text_encoding`); ``partial``: ``raw`` is the
    head of a longer file (a character cut at its end is dropped).

    Raises
    ------
    DataFileError
        Empty, binary, or bytes that are not text in the encoding (naming the line).
    """
    encoding = text_encoding(raw, path)
    try:
        return codecs.getincrementaldecoder(encoding)().decode(raw, final=not partial)
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        what = "UTF-8" if encoding.startswith("utf-8") else encoding.upper()
        raise DataFileError(
            path,
            f"not {what} text (byte 0x{raw[exc.start]:02x}); save the file as UTF-8 "
            "(e.g. 'CSV UTF-8' in a spreadsheet)",
            line=line,
        ) from exc


def read_head(path: str | Path, size: int = HEAD_BYTES) -> str:
    """The first ``size`` bytes of a file as text (:func:`decode_text`)."""
    with open(path, "rb") as fh:
        raw = fh.read(size)
    return decode_text(raw, path, partial=len(raw) == size)


def delimiter(first_line: str, suffix: str = "") -> str:
    """The delimiter of a table whose first line is ``first_line`` (module docstring)."""
    if suffix.lower() == ".tsv" or "\t" in first_line:
        return "\t"
    if first_line.count(";") > first_line.count(","):
        return ";"
    return ","


__all__ = ["decode_text", "delimiter", "read_head", "text_encoding"]
