"""The kinds of input kernelkit reads: one vocabulary for kernels, estimators, readers and CLI.

Each kernel declares the kind it takes (``Kernel.input_kind``), file readers say which kind a
file holds, estimators pick a default kernel per kind and the command line names kinds in its
options.  :class:`InputKind` is a ``str`` enum, so ``kernel.input_kind == "vector"`` holds and
a kind prints as its value; :meth:`InputKind.parse` also accepts the plural names of the
command line (``vectors``, ``sequences``, ``graphs``, ``molecules``, ``nodes``, ``bags``).
"""

from __future__ import annotations

from enum import Enum

from kernelkit.utils._errors import InputError


class InputKind(str, Enum):
    """A kind of input: what one item of a data set is."""

    VECTOR = "vector"
    STRING = "string"
    GRAPH = "graph"
    NODE = "node"
    MOLECULE = "molecule"
    GRAM = "gram"
    BAG = "bag"
    ANY = "any"

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return repr(self.value)

    @property
    def plural(self) -> str:
        """The command line's name of a data set of this kind (``vectors``, ``sequences``…)."""
        return _PLURALS[self]

    @classmethod
    def parse(cls, text: str | InputKind) -> InputKind:
        """The kind named by ``text``: a value (``"string"``) or a plural (``"sequences"``).

        Raises
        ------
        InputError
            For any other name, listing the valid ones.
        """
        if isinstance(text, InputKind):
            return text
        name = str(text).strip().lower()
        for kind in cls:
            if name in (kind.value, _PLURALS[kind]):
                return kind
        valid = ", ".join(f"{k.value}/{_PLURALS[k]}" for k in cls)
        raise InputError(f"input kind: expected one of {valid}; got {text!r}")


_PLURALS = {
    InputKind.VECTOR: "vectors",
    InputKind.STRING: "sequences",
    InputKind.GRAPH: "graphs",
    InputKind.NODE: "nodes",
    InputKind.MOLECULE: "molecules",
    InputKind.GRAM: "gram",
    InputKind.BAG: "bags",
    InputKind.ANY: "any",
}
