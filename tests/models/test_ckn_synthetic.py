"""The synthetic position-aware DNA task: motifs where the classes say, named errors."""

from __future__ import annotations

import numpy as np
import pytest

from kernelkit.models._ckn_synthetic import SPLICE_MOTIFS, planted_position_dna
from kernelkit.utils._errors import InputError


def test_motifs_are_planted_at_the_class_positions():
    seqs, y = planted_position_dna(300, 60, jitter=2, mutation=0.0, random_state=3)
    assert len(seqs) == 300 and {len(s) for s in seqs} == {60}
    assert set(np.unique(y)) == {0, 1, 2} and abs(np.mean(y == 2) - 0.5) < 0.1
    for s, label in zip(seqs, y, strict=True):
        if label < 2:
            motif = SPLICE_MOTIFS[label]
            centre = 30 - len(motif) // 2
            assert any(s[c : c + len(motif)] == motif for c in range(centre - 2, centre + 3))
        else:
            starts = [
                (m, p) for m in SPLICE_MOTIFS for p in range(61 - len(m)) if s[p : p + len(m)] == m
            ]
            far = [(m, p) for m, p in starts if abs(p - (30 - len(m) // 2)) >= len(m) + 2]
            assert far, s


def test_same_seed_same_data_and_named_errors():
    first = planted_position_dna(20, random_state=1)
    again = planted_position_dna(20, random_state=1)
    assert first[0] == again[0] and (first[1] == again[1]).all()
    with pytest.raises(InputError, match="weights"):
        planted_position_dna(10, weights=(0.5, 0.5))
    with pytest.raises(InputError, match="length"):
        planted_position_dna(10, length=20)
    with pytest.raises(InputError, match="motifs"):
        planted_position_dna(10, motifs=("ACGN", "AC"))
    with pytest.raises(InputError, match="mutation"):
        planted_position_dna(10, mutation=1.0)
