"""Default kernels that hold on real data (issue "real use, round four"): ``KernelSVC()``
equals scikit-learn's ``SVC()`` on vectors, and aligned sequences take a position-aware
kernel in every entry point."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.svm import SVC

from kernelkit import KernelRidge, KernelSVC
from kernelkit.data import load_promoter
from kernelkit.kernels import Spectrum, WeightedDegree
from kernelkit.kernels._resolve import kernel_on

SHARED_DATA = Path(
    os.environ.get("KERNELKIT_SHARED_DATA", Path(__file__).parents[3] / "shared" / "data")
)


def test_kernel_svc_with_defaults_equals_svc_with_defaults():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 6)) * [1, 2, 3, 1, 1, 5]
    y = (X[:, 0] + X[:, 1] ** 2 / 4 > 0.5).astype(int)
    ours = KernelSVC(tol=1e-8).fit(X, y)
    theirs = SVC(tol=1e-8).fit(X, y)
    np.testing.assert_allclose(
        ours.decision_function(X), theirs.decision_function(X), rtol=1e-6, atol=1e-6
    )
    assert ours.kernel_.sigma == pytest.approx(np.sqrt(X.shape[1] * X.var() / 2), rel=1e-12)


def test_aligned_sequences_take_the_weighted_degree_kernel_everywhere():
    aligned = ["ACGTACGTAA", "ACGTTTGTAC", "AAGTACGAGG", "CCGTACGTTT"]
    ragged = ["ACGT", "ACGTTT", "AAG", "CCGTACGT"]
    y = [0.0, 1.0, 0.0, 1.0]
    for make in (KernelRidge, KernelSVC):
        est = make().fit(aligned, np.array(y) if make is KernelRidge else [0, 1, 0, 1])
        assert isinstance(est.kernel_, WeightedDegree) and est.kernel_.degree == 8
        est = make().fit(ragged, np.array(y) if make is KernelRidge else [0, 1, 0, 1])
        assert isinstance(est.kernel_, Spectrum) and est.kernel_.k == 3
    assert isinstance(kernel_on(None, aligned), WeightedDegree)


@pytest.mark.skipif(not (SHARED_DATA / "promoter").is_dir(), reason="real datasets not found")
def test_the_aligned_default_beats_the_spectrum_kernel_on_promoters():
    """The measurement behind the rule (``docs/strings.md``): 10-fold accuracy of
    ``KernelSVC()`` on the 106 aligned promoters, against the former default."""
    data = load_promoter(SHARED_DATA)
    X, y = list(data.sequences), np.asarray(data.y)
    cv = StratifiedKFold(10, shuffle=True, random_state=0)
    default = cross_val_score(KernelSVC(), X, y, cv=cv).mean()
    spectrum = cross_val_score(KernelSVC(Spectrum(k=3)), X, y, cv=cv).mean()
    assert default >= spectrum + 0.02, (default, spectrum)
