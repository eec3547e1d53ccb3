"""kernelkit.data."""

from kernelkit.data.strings import ALPHABETS, StringBatch

__all__ = ["ALPHABETS", "StringBatch"]
