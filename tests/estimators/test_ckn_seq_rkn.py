"""RKN-max, stacked layers and BLOSUM62 rows through the sequence CKN estimators."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from kernelkit import SequenceCKNClassifier, SequenceCKNFeatures
from kernelkit.kernels._alignment import blosum62
from kernelkit.models._ckn_seq import GappedKmerLayer, KmerStack
from kernelkit.utils._errors import InputError

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _motif_data(n, seed=0, motif="GATTAC"):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    seqs = []
    for label in y:
        s = list(rng.choice(list("ACGT"), size=int(rng.integers(20, 30))))
        if label:
            p = int(rng.integers(0, len(s) - len(motif)))
            s[p : p + len(motif)] = list(motif)
        seqs.append("".join(s))
    return seqs, y


def test_rkn_max_fits_through_the_classifier_and_finds_a_gapped_motif():
    seqs, y = _motif_data(160)
    clf = SequenceCKNClassifier(
        16, 6, gap_penalty=0.5, pooling="max", sigma=0.5, n_bins=1, random_state=0, lam=1e-3
    ).fit(seqs[:100], y[:100])
    assert isinstance(clf.network_, GappedKmerLayer) and clf.network_.pooling == "max"
    assert clf.score(seqs[100:], y[100:]) >= 0.9


def test_stacked_features_are_the_kmer_stack_and_the_case_rule_holds():
    seqs, _ = _motif_data(30)
    est = SequenceCKNFeatures(
        (8, 6), (3, 2), gap_penalty=0.4, pooling="max", n_bins=(1, 2), alphabet="dna",
        random_state=0,
    ).fit(seqs)  # fmt: skip
    net = est.network_
    assert isinstance(net, KmerStack) and [layer.k for layer in net.layers] == [3, 2]
    assert net.layers[1].in_channels == 8 and net.layers[0].levels == (1,)
    Z = est.transform(seqs[:6])
    assert Z.shape == (6, 18) and est.n_components_ == 18
    x = torch.zeros(6, 4, 30, dtype=torch.float64)
    for i, s in enumerate(seqs[:6]):
        for t, ch in enumerate(s):
            x[i, "ACGT".index(ch), t] = 1.0
    with torch.no_grad():
        np.testing.assert_allclose(Z, net(x).numpy(), rtol=1e-12)
    np.testing.assert_allclose(est.transform([s.lower() for s in seqs[:6]]), Z, rtol=1e-12)
    with pytest.raises(InputError, match="k: expected one length or one per layer"):
        SequenceCKNFeatures((8, 6, 4), (3, 2)).fit(seqs)


def test_blosum62_rows_equal_the_numeric_profile_input():
    """``encoding="blosum62"``: letter ``a`` is ``2^{s(a, .)/2}`` normalised to sum 1 (the
    BLOSUM62 table of the alignment kernel), the same features as passing those rows as an
    ``(n, T, A)`` array."""
    rng = np.random.default_rng(0)
    letters = "ACDEFGHIKLMNPQRSTVWY"
    seqs = ["".join(rng.choice(list(letters), size=12)) for _ in range(10)]
    est = SequenceCKNFeatures(6, 3, encoding="blosum62", alphabet="protein", random_state=0)
    Z = est.fit(seqs).transform(seqs)
    odds = 2.0 ** (blosum62(letters) / 2)
    rows = odds / odds.sum(1, keepdims=True)
    profiles = np.stack([rows[[letters.index(c) for c in s]] for s in seqs])
    numeric = SequenceCKNFeatures(6, 3, random_state=0).fit(profiles)
    numeric.network_.load_state_dict(est.network_.state_dict())
    np.testing.assert_allclose(numeric.transform(profiles), Z, rtol=1e-12)
    with pytest.raises(InputError, match="alphabet: BLOSUM62 covers"):
        SequenceCKNFeatures(6, 3, encoding="blosum62", alphabet="ACGU").fit(["ACGU" * 3])


def test_stacked_rkn_classifier_roundtrips_through_io(tmp_path):
    pytest.importorskip("safetensors")
    from kernelkit.io import load, save

    seqs, y = _motif_data(40)
    clf = SequenceCKNClassifier(
        (6, 4), 3, gap_penalty=0.5, pooling="max", max_iter=2, random_state=0
    ).fit(seqs, y)
    loaded = load(save(clf, tmp_path / "rkn.zip"))
    np.testing.assert_array_equal(loaded.predict_proba(seqs), clf.predict_proba(seqs))
