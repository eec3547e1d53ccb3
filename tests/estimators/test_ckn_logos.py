"""Logos of the first-layer filters: the pre-image PWMs and planted-motif recovery."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from kernelkit import SequenceCKNFeatures
from kernelkit.models._ckn_logos import filter_pwms, information_content
from kernelkit.models._ckn_seq import GappedKmerLayer
from kernelkit.models._ckn_synthetic import SPLICE_MOTIFS, planted_position_dna

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_pwm_likelihood_is_proportional_to_the_filter_response():
    """For every 3-mer ``u`` over ACGT, the response ``h`` of the layer on ``u`` (one-hot,
    ``sum`` pooling) divided by ``prod_l P_l(u_l)`` is the same constant per filter."""
    layer = GappedKmerLayer(4, 5, 3, sigma=0.5, pooling="sum")
    pwms = filter_pwms(layer, torch.eye(4, dtype=torch.float64))
    np.testing.assert_allclose(pwms.sum(-1), 1.0)
    kmers = list(itertools.product(range(4), repeat=3))
    x = torch.zeros(len(kmers), 4, 3, dtype=torch.float64)
    for i, u in enumerate(kmers):
        x[i, list(u), [0, 1, 2]] = 1.0
    with torch.no_grad():
        h = layer.position_map(x)[:, :, -1].numpy()  # (64, q)
    likelihood = np.array([[np.prod(pwms[j, [0, 1, 2], list(u)]) for j in range(5)] for u in kmers])
    ratio = h / likelihood
    np.testing.assert_allclose(ratio, np.broadcast_to(ratio[:1], ratio.shape), rtol=1e-10)
    ic = information_content(np.full((2, 4), 0.25))
    np.testing.assert_allclose(ic, 0.0, atol=1e-12)


def test_logos_recover_the_planted_motifs():
    """The synthetic splice-site motifs (10% of letters mutated): each motif has a filter
    whose consensus (argmax of its PWM) spells 8 consecutive letters of it exactly."""
    pytest.importorskip("matplotlib")
    seqs, _ = planted_position_dna(400, 60, random_state=0)
    est = SequenceCKNFeatures(32, 8, alphabet="dna", random_state=0).fit(seqs)
    pwms, figure = est.logos(6)
    assert len(pwms) == 1 and pwms[0].shape == (32, 8, 4) and len(figure.axes) >= 6
    consensus = ["".join("ACGT"[a] for a in pwm.argmax(1)) for pwm in pwms[0]]
    for motif in SPLICE_MOTIFS:
        windows = {motif[s : s + 8] for s in range(len(motif) - 7)}
        assert windows & set(consensus), (motif, consensus)


def test_logos_of_stacks_sums_and_numeric_input():
    pytest.importorskip("matplotlib")
    seqs, _ = planted_position_dna(60, 60, random_state=1)
    stack = SequenceCKNFeatures((6, 4), (3, 2), alphabet="dna", random_state=0).fit(seqs)
    pwms, _ = stack.logos(2)
    assert [p.shape for p in pwms] == [(6, 3, 4)]
    lengths = SequenceCKNFeatures(5, (2, 3), alphabet="dna", random_state=0).fit(seqs)
    assert [p.shape for p in lengths.logos(3)[0]] == [(5, 2, 4), (5, 3, 4)]
    onehot = np.eye(4)[np.random.default_rng(0).integers(0, 4, size=(20, 15))]
    numeric = SequenceCKNFeatures(4, 3, random_state=0).fit(onehot)
    pwms, figure = numeric.logos(2)
    assert pwms[0].shape == (4, 3, 4) and len(figure.axes) == 2
