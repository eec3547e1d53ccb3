"""Bemis–Murcko scaffold splits of molecules, usable as scikit-learn's ``cv=``."""

from __future__ import annotations

from collections.abc import Iterator
from numbers import Integral
from typing import Any

import numpy as np

from kernelkit.data._molecules import parse_molecules
from kernelkit.utils._errors import InputError
from kernelkit.utils._optional import require
from kernelkit.utils._seeding import check_random_state


def murcko_scaffolds(X: Any) -> list[str]:
    """The Bemis–Murcko scaffold of each molecule as canonical SMILES (RDKit's
    ``MurckoScaffold.MurckoScaffoldSmiles``: ring systems and the linkers between them, side
    chains removed; ``""`` for an acyclic molecule).  Bemis and Murcko, "The properties of
    known drugs. 1. Molecular frameworks", J. Med. Chem. 39 (1996)."""
    scaffold = require("rdkit.Chem.Scaffolds.MurckoScaffold", purpose="scaffold splits")
    return [scaffold.MurckoScaffoldSmiles(mol=mol) for mol in parse_molecules(X)]


class ScaffoldKFold:
    """K-fold cross-validation in which molecules sharing a Bemis–Murcko scaffold stay in one
    fold (a scaffold split: test molecules have scaffolds the model never saw).

    The scaffold groups, largest first (``shuffle=False``; ties in order of first
    appearance) or in a random order (``shuffle=True``), are each placed in the fold with
    the fewest molecules so far, as scikit-learn's ``GroupKFold`` does with the scaffolds as
    groups.  Usable as ``cv=`` of scikit-learn's model selection (``cross_val_score``,
    ``GridSearchCV``) with SMILES (or RDKit molecules) as ``X``.

    Parameters
    ----------
    n_splits : int, default 5
        Number of folds (at least 2, at most the number of distinct scaffolds).
    shuffle : bool, default False
        Random order of the scaffold groups instead of largest first.
    random_state : None, int, RandomState or Generator
        Seed of the order when ``shuffle``.

    Examples
    --------
    >>> from kernelkit.data import ScaffoldKFold
    >>> smiles = ["c1ccccc1O", "c1ccccc1N", "C1CCCCC1C", "CCO", "CCN", "c1ccncc1"]
    >>> [test.tolist() for _, test in ScaffoldKFold(3).split(smiles)]
    [[0, 1], [3, 4], [2, 5]]
    """

    def __init__(self, n_splits: int = 5, *, shuffle: bool = False, random_state: Any = None):
        self.n_splits = n_splits
        self.shuffle = shuffle
        self.random_state = random_state

    def get_n_splits(self, X: Any = None, y: Any = None, groups: Any = None) -> int:
        """Number of folds."""
        return int(self.n_splits)

    def split(
        self, X: Any, y: Any = None, groups: Any = None
    ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """``(train, test)`` index arrays of each fold (``y`` and ``groups`` ignored)."""
        k = self.n_splits
        if isinstance(k, bool) or not isinstance(k, Integral) or k < 2:
            raise InputError(f"n_splits: expected an integer of at least 2, got {k!r}")
        scaffolds = murcko_scaffolds(X)
        names, first, codes, counts = np.unique(
            np.asarray(scaffolds, dtype=object),
            return_index=True,
            return_inverse=True,
            return_counts=True,
        )
        if len(names) < k:
            raise InputError(
                f"n_splits: expected at most the number of distinct scaffolds, {len(names)}, "
                f"got {k}"
            )
        if self.shuffle:
            order = check_random_state(self.random_state).permutation(len(names))
        else:
            order = np.lexsort((first, -counts))
        fold_of = np.empty(len(names), dtype=np.int64)
        sizes = np.zeros(k, dtype=np.int64)
        for g in order:
            f = int(np.argmin(sizes))
            fold_of[g] = f
            sizes[f] += counts[g]
        folds = fold_of[codes.ravel()]
        for f in range(k):
            yield np.flatnonzero(folds != f), np.flatnonzero(folds == f)

    def __repr__(self) -> str:
        return (
            f"ScaffoldKFold(n_splits={self.n_splits}, shuffle={self.shuffle}, "
            f"random_state={self.random_state})"
        )
