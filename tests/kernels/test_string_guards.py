"""Guards of the string kernels: a feature space too large for memory is refused before
anything is allocated (with the estimate), an all-zero training Gram is an error, a Gram that
would take hours is announced."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kernelkit import KernelRidge
from kernelkit.data import StringBatch
from kernelkit.kernels import Mismatch, Spectrum, Subsequence
from kernelkit.kernels._strings import _mismatch_shifts, memory_budget
from kernelkit.utils._errors import InputError


def _seqs(n, length, seed=0):
    rng = np.random.default_rng(seed)
    return ["".join(rng.choice(list("ACGT"), length)) for _ in range(n)]


def test_mismatch_cost_counts_the_neighbourhoods_it_enumerates():
    kernel = Mismatch(k=5, m=2, alphabet="dna")
    X = StringBatch.from_sequences(_seqs(7, 12), "ACGT")
    pairs, nbytes, seconds = kernel.cost(X)
    assert pairs == 7 * (12 - 5 + 1) * len(_mismatch_shifts(5, 2, 4))
    assert pairs == 7 * 8 * sum(math.comb(5, d) * 3**d for d in range(3))
    assert nbytes > 0 and seconds > 0


def test_mismatch_12_6_on_1000_sequences_is_refused_before_allocating():
    seqs = _seqs(1000, 60)
    with pytest.raises(
        InputError,
        match=r"Mismatch\(k=12, m=6\) on 1000 sequences: .* GiB .* "
        r"above the memory budget",
    ) as info:
        KernelRidge(Mismatch(k=12, m=6, alphabet="dna")).fit(seqs, np.arange(1000.0))
    assert f"{memory_budget() / 2**30:.3g} GiB" in str(info.value)


def test_all_zero_training_gram_is_an_error_but_a_zero_cross_gram_is_not():
    with pytest.raises(InputError, match=r"every sequence is shorter than k=100 .* use k <= 30"):
        KernelRidge(Spectrum(k=100)).fit(_seqs(10, 30), np.arange(10.0))
    model = KernelRidge(Spectrum(k=3)).fit(_seqs(10, 30), np.arange(10.0))
    assert np.asarray(model.predict(["AC", "GT"])).tolist() == [0.0, 0.0]


def test_subsequence_cost_and_warning():
    kernel = Subsequence(k=2)
    cells, _ = kernel.cost(["ACG", "AC"])
    assert cells == 2 * (3 * 3 + 3 * 2 + 2 * 2)  # the pairs (x, y) with x <= y
    with pytest.warns(UserWarning, match=r"Subsequence\(k=5\) on 2000 sequences: .* h"):
        Subsequence(k=5).check_training(StringBatch.from_sequences(_seqs(2000, 200), None))
