"""Which kind of input a data set holds, read from the Python objects themselves.

:func:`detect_input_kind` is the one rule the estimators (``kernel=None``) and the command
line use to tell vectors, sequences, molecules and graphs apart.
"""

from __future__ import annotations

import importlib.util
import warnings
from typing import Any

import numpy as np
import torch

from kernelkit.data._bags import BagBatch, is_bag_list
from kernelkit.data._graphs import GraphBatch
from kernelkit.data._molecules import InvalidRecordsError, MoleculeBatch, _is_mol, invalid_smiles
from kernelkit.data._strings import ALPHABETS, UNKNOWN_LETTERS, StringBatch, fold_case
from kernelkit.utils._kinds import InputKind

SEQUENCE_CHARACTERS = frozenset("".join(ALPHABETS.values()) + "".join(UNKNOWN_LETTERS.values()))
"""Letters of the DNA, RNA and protein alphabets and their unknown residues ``N``, ``X``
(:data:`kernelkit.data.ALPHABETS`), upper case."""


def _items(X: Any) -> list[Any] | None:
    """The items of a 1-D container of objects, or None for anything else."""
    if isinstance(X, (str, bytes)):
        return None
    if hasattr(X, "to_numpy") and not isinstance(X, np.ndarray):
        X = X.to_numpy()
    if isinstance(X, np.ndarray):
        return X.tolist() if X.ndim == 1 and X.dtype.kind in "OUS" else None
    if isinstance(X, (list, tuple)):
        return list(X)
    return None


def _invalid_smiles(items: list[str]) -> list[int] | None:
    """Positions of the strings RDKit does not parse as SMILES (``None`` without RDKit)."""
    if importlib.util.find_spec("rdkit") is None:
        return None
    return invalid_smiles(items)


def detect_input_kind(X: Any) -> InputKind:
    """The kind of input ``X`` holds.

    Rules, in order:

    * a torch tensor, a numeric NumPy array, a ``scipy.sparse`` matrix or any other
      container of numbers: ``vector``;
    * kernelkit batches: their kind (``StringBatch``, ``GraphBatch``, ``MoleculeBatch``,
      ``BagBatch``);
    * a list or tuple of 2-D numeric arrays or tensors: ``bag`` (one bag of points each);
    * a list, tuple, 1-D object/str array or pandas Series whose items are

      - networkx graphs: ``graph``;
      - RDKit ``Mol`` objects: ``molecule``;
      - strings: ``molecule`` when some string has a character outside the sequence
        alphabets (:data:`SEQUENCE_CHARACTERS`: the DNA, RNA and protein letters, ``N`` and
        ``X``, lower case read as upper case by the case rule of
        :mod:`kernelkit.data._strings`) *and* RDKit
        parses most of the strings (more than half, every string tried) as SMILES;
        ``string`` (sequences) otherwise, so a list of DNA or protein sequences is never read
        as molecules, and SMILES are read as sequences when RDKit is not installed.  The
        decision is made on the whole input: a few invalid SMILES among valid ones do not
        turn molecules into sequences; a :class:`UserWarning` then reports the choice and
        the records that do not parse (which the molecule kernels refuse, naming them, or
        :func:`drop_invalid_records` leaves out).

    Anything else is ``vector`` (the numeric validation of the estimator then names the
    problem).
    """
    if isinstance(X, StringBatch):
        return InputKind.STRING
    if isinstance(X, GraphBatch):
        return InputKind.GRAPH
    if isinstance(X, MoleculeBatch):
        return InputKind.MOLECULE
    if isinstance(X, BagBatch) or is_bag_list(X):
        return InputKind.BAG
    if isinstance(X, torch.Tensor):
        return InputKind.VECTOR
    items = _items(X)
    if not items:
        return InputKind.VECTOR
    if all(type(x).__module__.startswith("networkx") for x in items):
        return InputKind.GRAPH
    if all(_is_mol(x) for x in items):
        return InputKind.MOLECULE
    if all(isinstance(x, str) for x in items):
        texts = [str(x) for x in items]
        if all(SEQUENCE_CHARACTERS.issuperset(fold_case(t)) for t in texts):
            return InputKind.STRING
        bad = _invalid_smiles(texts)
        if bad is None or 2 * len(bad) >= len(texts):
            return InputKind.STRING
        if bad:
            warnings.warn(
                f"X: detected as molecules ({len(texts) - len(bad)} of {len(texts)} strings "
                f"parse as SMILES); {len(bad)} do not: "
                + ", ".join(f"X[{i}] = {texts[i]!r}" for i in bad[:5])
                + (" ..." if len(bad) > 5 else ""),
                UserWarning,
                stacklevel=3,
            )
        return InputKind.MOLECULE
    return InputKind.VECTOR


def drop_invalid_records(
    X: Any, y: Any, sample_weight: Any, kind: InputKind, on_error: str
) -> tuple[Any, Any, Any]:
    """``X``, ``y`` and ``sample_weight`` without the records that do not parse as ``kind``,
    when ``on_error == "skip"``: SMILES strings RDKit rejects (molecules), numeric rows with a
    NaN or infinite entry (vectors and images); unchanged otherwise (the kernel or the numeric
    validation then refuses them, naming them).  A :class:`UserWarning` names the records
    left out; a set with no valid record is refused."""
    if on_error != "skip":
        return X, y, sample_weight
    if kind is InputKind.VECTOR:
        return _drop_non_finite_rows(X, y, sample_weight)
    items = _items(X)
    if kind is not InputKind.MOLECULE or not items:
        return X, y, sample_weight
    if not all(isinstance(x, str) for x in items):
        return X, y, sample_weight
    bad = invalid_smiles(items)
    if not bad:
        return X, y, sample_weight
    shown = [repr(items[i]) for i in bad[:5]]
    _warn_left_out(
        bad, len(items), "records that are not valid SMILES", shown, "records is a valid SMILES"
    )
    keep = np.setdiff1d(np.arange(len(items)), bad)
    return [items[i] for i in keep], _take(y, keep), _take(sample_weight, keep)


def _warn_left_out(bad: list[int], n: int, what: str, shown: list[str], valid: str) -> None:
    """Refuse when every record is bad, else warn naming the first five left out (``shown``:
    their texts)."""
    if len(bad) == n:
        raise InvalidRecordsError(f"X: none of the {n} {valid}; nothing left to fit", bad)
    warnings.warn(
        f"on_error='skip': left out {len(bad)} of {n} {what}: "
        + ", ".join(f"X[{i}] = {text}" for i, text in zip(bad[:5], shown, strict=True))
        + (" ..." if len(bad) > 5 else ""),
        UserWarning,
        stacklevel=4,
    )


def _take(v: Any, keep: np.ndarray) -> Any:
    """Rows ``keep`` of ``v`` in its own container (None stays None)."""
    if v is None:
        return None
    if hasattr(v, "iloc"):
        return v.iloc[keep]
    if isinstance(v, torch.Tensor):
        return v[torch.as_tensor(keep, device=v.device)]
    return np.asarray(v)[keep] if not isinstance(v, list) else [v[i] for i in keep]


def _drop_non_finite_rows(X: Any, y: Any, sample_weight: Any) -> tuple[Any, Any, Any]:
    """Numeric rows (first axis) without a NaN or infinite entry; other inputs unchanged
    (the numeric validation then names the problem)."""
    if isinstance(X, torch.Tensor):
        values = X.detach()
        if not values.is_floating_point() or values.ndim < 2:
            return X, y, sample_weight
        rows = values.reshape(len(values), -1).cpu().numpy()
    else:
        array = X.to_numpy() if hasattr(X, "to_numpy") else X
        if not isinstance(array, np.ndarray) or array.ndim < 2 or array.dtype.kind != "f":
            return X, y, sample_weight
        rows = array.reshape(len(array), -1)
    finite = np.isfinite(rows).all(1)
    bad = np.flatnonzero(~finite).tolist()
    if not bad:
        return X, y, sample_weight
    shown = [
        "[" + ", ".join(f"{v:g}" for v in rows[i, :4]) + (", ...]" if rows.shape[1] > 4 else "]")
        for i in bad[:5]
    ]
    _warn_left_out(bad, len(finite), "rows with a NaN or infinite value", shown, "rows is finite")
    keep = np.flatnonzero(finite)
    return _take(X, keep), _take(y, keep), _take(sample_weight, keep)


__all__ = ["detect_input_kind", "drop_invalid_records"]
