"""applicability_domain against brute-force nearest-neighbour similarities (RDKit, NumPy)."""

from __future__ import annotations

import numpy as np
import pytest

from kernelkit import GaussianProcessRegressor, KernelRidge
from kernelkit.kernels import Gaussian, Tanimoto
from kernelkit.utils._errors import NotFittedError


def test_tanimoto_domain_is_rdkit_nearest_neighbour_similarity():
    pytest.importorskip("rdkit")
    from rdkit import Chem, DataStructs
    from rdkit.Chem import rdFingerprintGenerator

    from kernelkit.data import load_esol

    esol = load_esol()
    smiles, y = list(esol.smiles[:60]), np.asarray(esol.target[:60])
    gp = GaussianProcessRegressor(Tanimoto(), optimizer=None).fit(smiles[:40], y[:40])
    score = gp.applicability_domain(smiles[40:])
    gen = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048)
    fps = [gen.GetFingerprint(Chem.MolFromSmiles(s)) for s in smiles]
    brute = [max(DataStructs.BulkTanimotoSimilarity(fp, fps[:40])) for fp in fps[40:]]
    np.testing.assert_allclose(score, brute, atol=1e-12)
    np.testing.assert_allclose(gp.applicability_domain(smiles[:5]), 1.0, atol=1e-12)


def test_gaussian_domain_is_the_nearest_training_point():
    rng = np.random.default_rng(0)
    X, Xt = rng.normal(size=(30, 3)), rng.normal(size=(7, 3))
    ridge = KernelRidge(Gaussian(0.7), lam=1e-3).fit(X, X[:, 0])
    d2 = ((Xt[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    brute = np.exp(-d2.min(1) / (2 * 0.7**2))
    np.testing.assert_allclose(ridge.applicability_domain(Xt), brute, atol=1e-12)
    with pytest.raises(NotFittedError):
        KernelRidge().applicability_domain(Xt)
