"""Tanimoto and MinMax on fingerprint matrices (dense NumPy, scipy.sparse, tensors): against
RDKit's bulk similarities on the bundled ESOL molecules and brute-force sums."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from kernelkit.gram import gram
from kernelkit.kernels._fingerprints import level_expansion
from kernelkit.kernels._molecules import MinMax, Tanimoto
from kernelkit.testing import check_kernel
from kernelkit.utils._errors import InputError


def _brute(M, N, *, minmax):
    if minmax:
        mins = np.minimum(M[:, None, :], N[None, :, :]).sum(-1)
        maxs = np.maximum(M[:, None, :], N[None, :, :]).sum(-1)
        return np.divide(mins, maxs, out=np.zeros_like(mins), where=maxs > 0)
    G = M @ N.T
    den = (M * M).sum(1)[:, None] + (N * N).sum(1)[None, :] - G
    return np.divide(G, den, out=np.zeros_like(G), where=den > 0)


@pytest.fixture(scope="module")
def esol_fps():
    Chem = pytest.importorskip("rdkit.Chem")
    from rdkit.Chem import rdFingerprintGenerator

    from kernelkit.data._molecule_datasets import load_esol

    smiles = load_esol().smiles[:300]
    mols = [Chem.MolFromSmiles(s) for s in smiles]
    gen = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048)
    bits = [gen.GetFingerprint(m) for m in mols]
    counts = [gen.GetCountFingerprint(m) for m in mols]
    bit_matrix = np.stack([gen.GetFingerprintAsNumPy(m) for m in mols]).astype(np.uint8)
    count_matrix = np.stack([gen.GetCountFingerprintAsNumPy(m) for m in mols])
    return bits, counts, bit_matrix, count_matrix


@pytest.mark.parametrize("container", ["dense", "sparse", "tensor"])
def test_tanimoto_on_morgan_bit_matrix_equals_rdkit_bulk(esol_fps, container):
    from rdkit import DataStructs

    bits, _, M, _ = esol_fps
    expected = np.array([DataStructs.BulkTanimotoSimilarity(f, bits) for f in bits])
    X = {"dense": M, "sparse": sp.csr_matrix(M), "tensor": torch.as_tensor(M)}[container]
    np.testing.assert_allclose(Tanimoto()(X).numpy(), expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.asarray(gram(Tanimoto(), X)), expected, rtol=0, atol=1e-12)
    # cross block, tiled, and a sparse Y against a dense X
    K = np.asarray(gram(Tanimoto(), M[:200], sp.csc_matrix(M[200:]), block_size=64))
    np.testing.assert_allclose(K, expected[:200, 200:], rtol=0, atol=1e-12)


@pytest.mark.parametrize("container", ["dense", "sparse"])
def test_minmax_on_count_matrix_equals_rdkit_count_tanimoto(esol_fps, container):
    """RDKit's TanimotoSimilarity on count vectors (UIntSparseIntVect) is sum min / sum max."""
    from rdkit import DataStructs

    _, counts, _, C = esol_fps
    expected = np.array([DataStructs.BulkTanimotoSimilarity(f, counts) for f in counts])
    X = sp.csr_matrix(C) if container == "sparse" else C
    np.testing.assert_allclose(MinMax()(X).numpy(), expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.asarray(gram(MinMax(), X)), expected, rtol=0, atol=1e-12)
    K = np.asarray(gram(MinMax(), C[:100], sp.csr_matrix(C[100:]), block_size=40))
    np.testing.assert_allclose(K, expected[:100, 100:], rtol=0, atol=1e-12)


def test_matrix_equals_molecule_input(esol_fps):
    from kernelkit.data._molecule_datasets import load_esol

    _, _, M, C = esol_fps
    smiles = load_esol().smiles[:300]
    torch.testing.assert_close(Tanimoto()(M), Tanimoto()(smiles), rtol=0, atol=1e-15)
    torch.testing.assert_close(MinMax()(C), MinMax()(smiles), rtol=0, atol=1e-15)


@pytest.mark.parametrize("minmax", [False, True])
def test_real_valued_sets_equal_brute_force(minmax):
    rng = np.random.default_rng(1)
    M = rng.exponential(size=(40, 25)) * (rng.random((40, 25)) < 0.3)
    M[3] = 0.0  # an empty row: similarity 0, also with itself
    M[7, :5] = M[8, :5] = 2.5  # ties across rows and columns
    kernel = MinMax() if minmax else Tanimoto()
    expected = _brute(M[:30], M[30:], minmax=minmax)
    np.testing.assert_allclose(kernel(M[:30], M[30:]).numpy(), expected, rtol=1e-13, atol=0)
    np.testing.assert_allclose(
        kernel(sp.coo_matrix(M)).numpy(), _brute(M, M, minmax=minmax), rtol=1e-13, atol=0
    )
    np.testing.assert_allclose(kernel.diag(M).numpy(), (M.sum(1) > 0).astype(float))
    # the caller's sparse matrix is left as given (unsorted indices, an explicit zero)
    S = sp.csr_matrix((np.array([2.0, 0.0, 1.0]), np.array([4, 1, 0]), np.array([0, 3])), (1, 5))
    kernel(S)
    np.testing.assert_array_equal(S.indices, [4, 1, 0])
    np.testing.assert_array_equal(S.data, [2.0, 0.0, 1.0])


def test_level_expansion_sums_minimums():
    rng = np.random.default_rng(2)
    M = rng.integers(0, 4, size=(12, 6)).astype(float)
    U, delta = level_expansion(sp.csr_matrix(M))
    S = (U.multiply(delta[None, :]) @ U.T).toarray()
    np.testing.assert_array_equal(S, np.minimum(M[:, None, :], M[None, :, :]).sum(-1))
    # one level per distinct non-zero value of each column
    assert U.shape[1] == sum(len(np.unique(col[col > 0])) for col in M.T)


@pytest.mark.parametrize("kernel", [Tanimoto(), MinMax()], ids=repr)
def test_check_kernel_on_matrices(kernel):
    rng = np.random.default_rng(3)
    M = rng.poisson(0.5, size=(24, 50)).astype(float)
    check_kernel(kernel, M[:16], M[16:])
    check_kernel(kernel, sp.csr_matrix(M[:16]), sp.csr_matrix(M[16:]))


def test_gram_stays_sparse_on_a_billion_columns():
    """10^9 columns (as hashed features): a dense copy would need 1.6 TB.  What is checked is
    the memory the Gram takes (NumPy/SciPy allocations traced, load-independent): a few
    hundred kB, nothing that grows with the 10^9 columns."""
    rng = np.random.default_rng(4)
    n, per_row, used = 200, 30, 2000
    small = sp.csr_matrix(
        (np.ones(n * per_row), (np.repeat(np.arange(n), per_row), rng.choice(used, n * per_row))),
        shape=(n, used),
    )
    small.data[:] = 1.0  # bits (duplicates were summed)
    scale = 10**9 // used
    X = sp.csr_matrix((small.data, small.indices * scale, small.indptr), shape=(n, 10**9))
    tracemalloc.start()
    K = np.asarray(gram(Tanimoto(), X))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    A = small.toarray()
    np.testing.assert_allclose(K, _brute(A, A, minmax=False), rtol=0, atol=1e-14)
    np.testing.assert_allclose(np.asarray(gram(MinMax(), X)), K, rtol=0, atol=1e-14)
    assert peak < 10 * 2**20, f"{peak / 2**20:.1f} MiB traced while forming a 200 x 200 Gram"


@pytest.mark.parametrize("kernel", [Tanimoto(), MinMax()], ids=repr)
def test_bad_matrices_named(kernel):
    M = np.ones((3, 4))
    with pytest.raises(InputError, match=r"X: expected non-negative .* got minimum -1"):
        kernel(M - 2 * np.eye(3, 4))
    bad = M.copy()
    bad[1, 2] = np.nan
    with pytest.raises(InputError, match="X: expected finite fingerprint values, got NaN"):
        kernel(sp.csr_matrix(bad))
    with pytest.raises(InputError, match=r"X: expected a 2-D fingerprint .* got shape \(4,\)"):
        kernel(np.ones(4))
    with pytest.raises(InputError, match=r"X: expected at least one row, got shape \(0, 4\)"):
        kernel(np.ones((0, 4)))
    with pytest.raises(InputError, match="Y: expected 4 fingerprint columns \\(as X\\), got 5"):
        kernel(M, np.ones((2, 5)))
    pytest.importorskip("rdkit")
    with pytest.raises(InputError, match="Y: expected the same input type as X"):
        kernel(M, ["CCO"])


def test_estimator_on_sparse_fingerprints(esol_fps):
    from kernelkit.estimators import KernelRidge

    _, _, M, _ = esol_fps
    from kernelkit.data._molecule_datasets import load_esol

    y = np.asarray(load_esol().target[:300])
    X = sp.csr_matrix(M)
    dense = KernelRidge(Tanimoto(), lam=1e-3).fit(M[:250], y[:250]).predict(M[250:])
    sparse = KernelRidge(Tanimoto(), lam=1e-3).fit(X[:250], y[:250]).predict(X[250:])
    np.testing.assert_allclose(sparse, dense, rtol=1e-12)
    K = Tanimoto()(M).numpy()
    alpha = np.linalg.solve(K[:250, :250] + 250 * 1e-3 * np.eye(250), y[:250])
    np.testing.assert_allclose(sparse, K[250:, :250] @ alpha, rtol=1e-8)
