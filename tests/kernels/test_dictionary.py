"""Dictionary kernels (SVM-pairwise empirical map, motif kernel) against explicit loops."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from kernelkit.kernels import DictionaryKernel, Gaussian, Spectrum
from kernelkit.testing import check_kernel
from kernelkit.utils._errors import InputError

SEQS = ["GATTACA", "ACGTTAACGT", "GGGCCC", "TTAGGC", "CATCATCAT"]


def test_svm_pairwise_is_the_product_of_score_rows_by_a_loop():
    reference = ["GATTA", "CCCGG", "TACAT"]
    base = Spectrum(2)
    kernel = DictionaryKernel(reference, base)
    phi = np.array([[float(base([x], [d])[0, 0]) for d in reference] for x in SEQS])
    np.testing.assert_allclose(kernel(SEQS).numpy(), phi @ phi.T)
    np.testing.assert_allclose(kernel(SEQS, SEQS[:2]).numpy(), phi @ phi[:2].T)
    np.testing.assert_allclose(kernel.diag(SEQS).numpy(), (phi**2).sum(1))


class _LengthGap(Spectrum):
    """A score that is not a kernel: ``s(x, y) = -| |x| - |y| |``."""

    def block(self, X, Y):
        lx, ly = torch.as_tensor(X.lengths), torch.as_tensor(Y.lengths)
        return -(lx[:, None] - ly[None, :]).abs().double()


def test_the_gram_is_psd_for_a_score_that_is_not_a_kernel():
    """SVM-pairwise is p.d. whatever the score: ``Phi Phi^T`` over a reference set."""
    score = _LengthGap()
    S = score(SEQS)
    assert float(torch.linalg.eigvalsh(S).min()) < -1  # the score alone is not p.d.
    K = DictionaryKernel(SEQS[:3], score)(SEQS)
    torch.testing.assert_close(K, S[:, :3] @ S[:, :3].T)
    assert float(torch.linalg.eigvalsh(K).min()) > -1e-9 * float(K.max())


def test_motif_kernel_counts_shared_motif_occurrences_with_the_case_rule():
    motifs = ["GA.T", "C[AG]T", "G{3}", "TTT"]
    kernel = DictionaryKernel(motifs)
    phi = np.array([[float(re.search(m, s) is not None) for m in motifs] for s in SEQS])
    np.testing.assert_array_equal(phi[0], [1, 0, 0, 0])  # GATTACA: GATT only
    np.testing.assert_array_equal(phi[4], [0, 1, 0, 0])  # CATCATCAT: CAT
    np.testing.assert_allclose(kernel(SEQS).numpy(), phi @ phi.T)
    np.testing.assert_allclose(kernel([s.lower() for s in SEQS], SEQS).numpy(), phi @ phi.T)


def test_any_input_kind_and_check_kernel():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(10, 3))
    kernel = DictionaryKernel(X[:4], Gaussian(sigma=1.0))
    assert kernel.input_kind == "vector"
    F = Gaussian(sigma=1.0)(torch.as_tensor(X), torch.as_tensor(X[:4])).numpy()
    np.testing.assert_allclose(kernel(X).numpy(), F @ F.T)
    check_kernel(kernel, X, X[:3])
    check_kernel(DictionaryKernel(["AC", "G.G"]), SEQS, SEQS[:2])
    with pytest.raises(InputError, match="dictionary: expected regular expressions"):
        DictionaryKernel(["[AC"])
    with pytest.raises(InputError, match="dictionary: expected at least one"):
        DictionaryKernel([])
