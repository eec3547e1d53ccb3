"""ScaffoldKFold against RDKit's Murcko scaffolds computed independently (GetScaffoldForMol)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.model_selection import cross_val_score

from kernelkit import KernelRidge
from kernelkit.data import ScaffoldKFold, load_esol
from kernelkit.kernels import Tanimoto
from kernelkit.utils._errors import InputError

Chem = pytest.importorskip("rdkit.Chem")
from rdkit.Chem.Scaffolds import MurckoScaffold  # noqa: E402


def _scaffold(smiles: str) -> str:
    core = MurckoScaffold.GetScaffoldForMol(Chem.MolFromSmiles(smiles))
    return Chem.MolToSmiles(core)


@pytest.mark.parametrize("shuffle", [False, True])
def test_no_scaffold_is_shared_between_train_and_test(shuffle):
    esol = load_esol()
    smiles, y = list(esol.smiles[:300]), np.asarray(esol.target[:300])
    scaffolds = np.array([_scaffold(s) for s in smiles])
    cv = ScaffoldKFold(5, shuffle=shuffle, random_state=0)
    seen = np.zeros(len(smiles), dtype=int)
    sizes = []
    for train, test in cv.split(smiles):
        assert not set(scaffolds[train]) & set(scaffolds[test])
        assert len(np.intersect1d(train, test)) == 0 and len(train) + len(test) == len(smiles)
        seen[test] += 1
        sizes.append(len(test))
    assert np.all(seen == 1)  # a partition
    # greedy smallest-fold filling: sizes differ by at most the largest scaffold group
    largest = max(np.unique(scaffolds, return_counts=True)[1])
    assert max(sizes) - min(sizes) <= largest
    scores = cross_val_score(KernelRidge(Tanimoto(), lam=1e-3), smiles, y, cv=cv)
    assert scores.shape == (5,) and np.all(np.isfinite(scores))


def test_scaffold_errors_are_named():
    with pytest.raises(InputError, match="n_splits: expected an integer of at least 2"):
        next(ScaffoldKFold(1).split(["CCO", "c1ccccc1"]))
    with pytest.raises(InputError, match=r"n_splits: expected at most .* 2"):
        next(ScaffoldKFold(3).split(["CCO", "CCN", "c1ccccc1"]))
