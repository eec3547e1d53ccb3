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


def _shifted_by_one(n, seed, motif="TGA", length=40):
    """Aligned sequences with the motif at position 21 (class 1) or 22 (class 0): the same
    quarter of the sequence, so only bins of single positions tell the classes apart."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    seqs = []
    for label in y:
        s = rng.choice(list("ACGT"), size=length)
        p = 21 if label else 22
        s[p : p + len(motif)] = list(motif)
        seqs.append("".join(s))
    return seqs, y


def test_an_exact_position_on_aligned_input_chooses_one_bin_per_position():
    X, y = _shifted_by_one(80, 0)
    params = {**SMALL, "k": 3}
    clf = SequenceCKNClassifier(**params).fit(X, y)
    arch = clf.architecture_
    assert arch["n_bins"] == (40,) and arch["pooling"] == "mean"
    # mean and max pooling agree over bins of one position: max is not a candidate
    assert [(c["n_bins"], c["pooling"]) for c in arch["candidates"]] == [
        ((1, 4), "mean"), ((40,), "mean")
    ]  # fmt: skip
    scores = [c["cv_accuracy"] for c in arch["candidates"]]
    assert scores[1] > scores[0]
    X_test, y_test = _shifted_by_one(200, 1)
    assert clf.score(X_test, y_test) >= 0.95
    fixed = SequenceCKNClassifier(**params, n_bins=40, pooling="max", lam=arch["lam"])
    np.testing.assert_allclose(
        clf.decision_function(X_test), fixed.fit(X, y).decision_function(X_test), rtol=1e-8
    )
    # unequal lengths: the pyramid is the only candidate
    ragged = [s[: 30 + i % 10] for i, s in enumerate(X)]
    assert SequenceCKNClassifier(**params, pooling="mean").fit(ragged, y).architecture_[
        "n_bins"
    ] in ((1,), (1, 4))


def test_an_explicit_parameter_is_not_searched():
    X, y = _presence_not_count(60, 0)
    clf = SequenceCKNClassifier(**SMALL, pooling="mean").fit(X, y)
    # one candidate left (DNA: one-hot only): nothing is searched beyond lam="auto"
    assert set(clf.architecture_) == {"encoding", "n_bins", "lam"}
    assert clf.architecture_["encoding"] == "one_hot"
    assert all(layer.pooling == "mean" for layer in kmer_layers(clf.network_))


def test_the_budget_keeps_the_first_candidate_and_names_the_skipped():
    X, y = _fixed_position(60, 0)  # aligned: the position bins are a candidate too
    with config_context(ckn_search_seconds=1e-9):
        clf = SequenceCKNClassifier(**SMALL).fit(X, y)
    arch = clf.architecture_
    assert [c["pooling"] for c in arch["candidates"]] == ["mean"]
    assert arch["skipped"] == [
        {"encoding": "one_hot", "n_bins": (40,), "pooling": "mean"},
        {"encoding": "one_hot", "n_bins": (1, 4), "pooling": "max"},
    ]
    assert arch["pooling"] == "mean"


def test_blosum62_is_a_candidate_for_protein_strings_only():
    rng = np.random.default_rng(0)
    letters = list(ALPHABETS["protein"])
    X = ["".join(rng.choice(letters, size=20)) for _ in range(40)]
    y = np.array([s.count("K") + s.count("R") > 2 for s in X], dtype=int)
    params = {**SMALL, "k": 3, "alphabet": "protein", "pooling": "mean", "n_bins": (1, 4)}
    clf = SequenceCKNClassifier(**params).fit(X, y)
    assert [c["encoding"] for c in clf.architecture_["candidates"]] == ["blosum62", "one_hot"]
    assert clf.architecture_["encoding"] in ("one_hot", "blosum62")
    dna = SequenceCKNClassifier(**SMALL, pooling="mean", n_bins=(1, 4))
    dna.fit(*_fixed_position(30, 0))
    assert "candidates" not in dna.architecture_ and dna.architecture_["encoding"] == "one_hot"


def test_auto_is_refused_by_the_feature_transformer():
    from kernelkit import SequenceCKNFeatures
    from kernelkit.utils._errors import InputError

    with pytest.raises((InputError, ValueError), match="pooling"):
        SequenceCKNFeatures(4, 3, pooling="auto").fit(["ACGTACGT", "TTGACCAG"])
