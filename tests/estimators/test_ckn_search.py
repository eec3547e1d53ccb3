"""The architecture search of ``SequenceCKNClassifier`` (``pooling`` / ``encoding`` = "auto").

Planted tasks whose right architecture is known by construction; the oracle of the final
model is the estimator fitted with the chosen values given explicitly.
"""

from __future__ import annotations

import numpy as np
import pytest

from kernelkit import SequenceCKNClassifier, config_context
from kernelkit.data._strings import ALPHABETS
from kernelkit.models._ckn_seq import kmer_layers

SMALL = {"n_filters": 8, "k": 6, "n_kmers": 2000, "alphabet": "dna", "random_state": 0}


def _presence_not_count(n, seed, motif="GGGGGG"):
    """Class 1: the exact motif once, anywhere; class 0: three copies with one mismatch each.

    Lengths 40-400 (log-uniform), background with 10 % G.  The best match (max pooling)
    tells the classes apart; the mean over positions mixes the decoys' count with the
    length, so max pooling is the right answer."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    seqs = []
    for label in y:
        length = int(np.exp(rng.uniform(np.log(40), np.log(400))))
        s = rng.choice(list("ACGT"), size=length, p=[0.3, 0.3, 0.1, 0.3])
        for _ in range(1 if label else 3):
            m = list(motif)
            if not label:
                m[int(rng.integers(len(m)))] = str(rng.choice(list("ACT")))
            p = int(rng.integers(0, length - len(m) + 1))
            s[p : p + len(m)] = m
        seqs.append("".join(s))
    return seqs, y


def _fixed_position(n, seed, motif="GATTACA", length=40):
    """Both classes carry the motif once, class 1 near the start, class 0 near the end:
    only position bins tell them apart."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    seqs = []
    for label in y:
        s = rng.choice(list("ACGT"), size=length)
        p = 2 if label else length - len(motif) - 2
        s[p : p + len(motif)] = list(motif)
        seqs.append("".join(s))
    return seqs, y


def test_a_motif_anywhere_chooses_max_pooling_and_equals_the_fixed_model():
    X, y = _presence_not_count(120, 0)
    clf = SequenceCKNClassifier(**SMALL).fit(X, y)
    arch = clf.architecture_
    assert arch["pooling"] == "max" and arch["encoding"] == "one_hot"
    assert [c["pooling"] for c in arch["candidates"]] == ["mean", "max"]
    scores = {c["pooling"]: c["cv_accuracy"] for c in arch["candidates"]}
    assert scores["max"] > scores["mean"] and arch["cv_accuracy"] == scores["max"]
    assert arch["skipped"] == [] and arch["lam"] == clf.lam_
    assert all(layer.pooling == "max" for layer in kmer_layers(clf.network_))
    # oracle: the model fitted with the chosen architecture given explicitly
    fixed = SequenceCKNClassifier(
        **SMALL, pooling="max", encoding="one_hot", n_bins=arch["n_bins"], lam=arch["lam"]
    ).fit(X, y)
    np.testing.assert_allclose(clf.decision_function(X), fixed.decision_function(X), rtol=1e-8)
    assert fixed.architecture_ == {"n_bins": arch["n_bins"], "lam": arch["lam"]}


def test_a_motif_at_a_fixed_position_keeps_the_position_bins():
    X, y = _fixed_position(80, 0)
    clf = SequenceCKNClassifier(**SMALL).fit(X, y)
    assert clf.architecture_["n_bins"] == (1, 4)
    assert clf.architecture_["cv_accuracy"] == 1.0
    X_test, y_test = _fixed_position(200, 1)
    assert clf.score(X_test, y_test) == 1.0


def test_an_explicit_parameter_is_not_searched():
    X, y = _presence_not_count(60, 0)
    clf = SequenceCKNClassifier(**SMALL, pooling="mean").fit(X, y)
    # one candidate left (DNA: one-hot only): nothing is searched beyond lam="auto"
    assert set(clf.architecture_) == {"encoding", "n_bins", "lam"}
    assert clf.architecture_["encoding"] == "one_hot"
    assert all(layer.pooling == "mean" for layer in kmer_layers(clf.network_))


def test_the_budget_keeps_the_first_candidate_and_names_the_skipped():
    X, y = _presence_not_count(60, 0)
    with config_context(ckn_search_seconds=1e-9):
        clf = SequenceCKNClassifier(**SMALL).fit(X, y)
    arch = clf.architecture_
    assert [c["pooling"] for c in arch["candidates"]] == ["mean"]
    assert arch["skipped"] == [{"encoding": "one_hot", "pooling": "max"}]
    assert arch["pooling"] == "mean"


def test_blosum62_is_a_candidate_for_protein_strings_only():
    rng = np.random.default_rng(0)
    letters = list(ALPHABETS["protein"])
    X = ["".join(rng.choice(letters, size=20)) for _ in range(40)]
    y = np.array([s.count("K") + s.count("R") > 2 for s in X], dtype=int)
    params = {**SMALL, "k": 3, "alphabet": "protein", "pooling": "mean"}
    clf = SequenceCKNClassifier(**params).fit(X, y)
    assert [c["encoding"] for c in clf.architecture_["candidates"]] == ["blosum62", "one_hot"]
    assert clf.architecture_["encoding"] in ("one_hot", "blosum62")
    dna = SequenceCKNClassifier(**SMALL, pooling="mean").fit(*_fixed_position(30, 0))
    assert "candidates" not in dna.architecture_ and dna.architecture_["encoding"] == "one_hot"


def test_auto_is_refused_by_the_feature_transformer():
    from kernelkit import SequenceCKNFeatures
    from kernelkit.utils._errors import InputError

    with pytest.raises((InputError, ValueError), match="pooling"):
        SequenceCKNFeatures(4, 3, pooling="auto").fit(["ACGTACGT", "TTGACCAG"])
