"""The mutual-information and context-tree kernels against closed forms and brute force."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.integrate

from kernelkit.kernels import MutualInformation
from kernelkit.testing import check_kernel
from kernelkit.utils._errors import InputError


def test_coin_toss_gives_one_over_280():
    """Course part 2, section 2: x = 001, x' = 1010, uniform prior on the coin's bias:
    ``int theta^3 (1 - theta)^4 d theta = 3! 4! / 8! = 1/280`` (also by quadrature)."""
    kernel = MutualInformation(0, prior=1.0, alphabet="01", normalize=False)
    value = float(kernel(["001"], ["1010"])[0, 0])
    assert value == pytest.approx(1 / 280, rel=1e-12)
    quad, _ = scipy.integrate.quad(lambda t: t**3 * (1 - t) ** 4, 0, 1)
    assert value == pytest.approx(quad, rel=1e-9)


def _pe(counts, prior):
    """Dirichlet-multinomial integral of a count vector, by gamma functions."""
    size = len(counts)
    out = math.gamma(size * prior) / math.gamma(size * prior + sum(counts))
    for c in counts:
        out *= math.gamma(prior + c) / math.gamma(prior)
    return out


def _brute(strings, depth, prior, beta, alphabet):
    """``sum_S pi(S) prod_leaves P_e(n_s)`` over all trees, the counts ``n_s`` of the letters
    at positions ``i >= depth`` whose past ends with ``s``, by string slicing."""

    def counts(s):
        n = dict.fromkeys(alphabet, 0)
        for t in strings:
            for i in range(depth, len(t)):
                if t[:i].endswith(s):
                    n[t[i]] += 1
        return [n[a] for a in alphabet]

    def weight(context, d):
        if d == depth:
            return _pe(counts(context), prior)
        children = math.prod(weight(a + context, d + 1) for a in alphabet)
        return beta * _pe(counts(context), prior) + (1 - beta) * children

    def enumerate_trees(context, d):
        """Explicit list of (prior, leaves) of the trees below ``context``."""
        if d == depth:
            return [(1.0, [context])]
        out = [(beta, [context])]
        below = [enumerate_trees(a + context, d + 1) for a in alphabet]
        for combo in itertools.product(*below):
            p = (1 - beta) * math.prod(c[0] for c in combo)
            out.append((p, [leaf for c in combo for leaf in c[1]]))
        return out

    trees = enumerate_trees("", 0)
    assert math.isclose(sum(p for p, _ in trees), 1.0)
    total = sum(p * math.prod(_pe(counts(s), prior) for s in leaves) for p, leaves in trees)
    assert math.isclose(total, weight("", 0), rel_tol=1e-12)  # the recursion, for the record
    return total


@pytest.mark.parametrize(("depth", "beta"), [(1, 0.5), (2, 0.3), (2, 1.0), (3, 0.6)])
def test_context_tree_kernel_is_the_sum_over_enumerated_trees(depth, beta):
    pairs = [("0010110", "1101"), ("111", "0100101"), ("01", "10")]
    kernel = MutualInformation(depth, prior=0.5, split=beta, alphabet="01", normalize=False)
    for x, y in pairs:
        expected = _brute([x, y], depth, 0.5, beta, "01")
        assert float(kernel([x], [y])[0, 0]) == pytest.approx(expected, rel=1e-10)


def test_dna_context_tree_against_enumeration_and_normalisation():
    x, y = "ACGTTGCA", "GATTACAG"
    raw = MutualInformation(1, prior=1.0, split=0.4, alphabet="dna", normalize=False)
    expected = _brute([x, y], 1, 1.0, 0.4, "ACGT")
    assert float(raw([x], [y])[0, 0]) == pytest.approx(expected, rel=1e-10)
    norm = MutualInformation(1, prior=1.0, split=0.4, alphabet="dna")
    K = raw([x, y]).numpy()
    np.testing.assert_allclose(norm([x, y]).numpy(), K / np.sqrt(np.outer(np.diag(K), np.diag(K))))
    # the unknown residue N is not counted: a letter or a context holding it is skipped, so
    # ACNGT counts as the two pieces AC and GT (and lower case is the same letter)
    pieces = _brute(["AC", "GT", y], 1, 1.0, 0.4, "ACGT")
    assert float(raw(["ACNgt"], [y])[0, 0]) == pytest.approx(pieces, rel=1e-10)


def test_long_strings_do_not_underflow_when_normalised():
    rng = np.random.default_rng(0)
    seqs = ["".join(rng.choice(list("ACGT"), size=3000)) for _ in range(3)]
    K = MutualInformation(2)(seqs).numpy()
    assert np.isfinite(K).all() and np.allclose(np.diag(K), 1.0) and (K > 0).all()


def test_check_kernel_and_bad_parameters():
    rng = np.random.default_rng(1)
    X = ["".join(rng.choice(list("ACGT"), size=int(rng.integers(3, 15)))) for _ in range(8)]
    check_kernel(MutualInformation(2, split=0.3), X, X[:3])
    check_kernel(MutualInformation(0, prior=1.0, normalize=False), X, X[:3])
    with pytest.raises(InputError, match="split"):
        MutualInformation(1, split=0.0)
    with pytest.raises(InputError, match="alphabet"):
        MutualInformation(1, alphabet=None)
    with pytest.raises(InputError, match="depth"):
        MutualInformation(9, alphabet="protein")
