"""Nyström maps of kernelkit.gram._nystrom and the NystromFeatures transformer.

Oracles: the exact Gram (m = n centres), LAPACK's pivoted Cholesky ``dpstrf`` and a
brute-force residual loop (greedy), NumPy's ``eigh`` (KPCA Nyström), an independent NumPy
k-means++ on the explicit Gram, scikit-learn's ``Nystroem`` (uniform centres), and the
closed-form law of sampling without replacement (the uniform draw).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg.lapack
import torch
from sklearn.base import clone
from sklearn.kernel_approximation import Nystroem

from kernelkit import NystromFeatures
from kernelkit.gram import gram, nystrom_map
from kernelkit.gram._centres import kmeanspp_centres, pivoted_cholesky
from kernelkit.gram._nystrom import METHODS, cholesky_basis, nystrom_basis
from kernelkit.kernels import Gaussian, Linear, Polynomial, Precomputed, Spectrum
from kernelkit.utils._errors import InputError, NotPSDError


@pytest.fixture(autouse=True)
def _one_thread(one_torch_thread):
    """Tiny problems: one torch thread."""


def _X(n=50, d=4, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)) * np.linspace(2.0, 0.5, d)


def _gram(kernel, X):
    return np.asarray(gram(kernel, torch.as_tensor(X)))


# ---------------------------------------------------------------------- m = n is exact
@pytest.mark.parametrize("method", METHODS)
def test_n_centres_reproduce_the_exact_gram(method):
    X = _X()
    kernel = Gaussian(2.0)
    K = _gram(kernel, X)
    Z = NystromFeatures(kernel, n_centers=len(X), centers=method, random_state=0).fit_transform(X)
    assert Z.shape == (50, 50)
    np.testing.assert_allclose(Z @ Z.T, K, rtol=0, atol=1e-8 * np.abs(K).max())


@pytest.mark.parametrize("method", METHODS)
def test_n_centres_on_strings_and_precomputed_reproduce_the_gram(method):
    rng = np.random.default_rng(1)
    S = ["".join(rng.choice(list("ACGT"), size=15)) for _ in range(30)]
    kernel = Spectrum(k=2).normalized()
    K = np.asarray(gram(kernel, S))
    for k, X in ((kernel, S), (Precomputed(), K)):
        est = NystromFeatures(k, n_centers=30, centers=method, random_state=0).fit(X)
        Z = est.transform(X)
        # the spectrum kernel with k = 2 has rank <= 16: the floor drops the null directions
        assert est.n_components_ <= 16
        np.testing.assert_allclose(Z @ Z.T, K, rtol=0, atol=1e-8)


def test_uniform_centres_equal_sklearn_nystroem_kernel():
    """scikit-learn's Nystroem on the same centres gives the same approximate kernel."""
    X, Xnew = _X(), _X(n=7, seed=3)
    est = NystromFeatures(Gaussian(1.5), n_centers=12, random_state=0).fit(X)
    idx = est.component_indices_
    gamma = 1 / (2 * 1.5**2)
    sk = Nystroem(kernel="rbf", gamma=gamma, n_components=12).fit(X[idx])  # all 12 used
    ours, ref = est.transform(Xnew), sk.transform(Xnew)
    np.testing.assert_allclose(ours @ ours.T, ref @ ref.T, rtol=1e-9, atol=1e-12)


def test_eigenvalue_floor_drops_duplicate_centres():
    X = np.repeat(_X(n=10), 3, axis=0)
    est = NystromFeatures(Gaussian(2.0), n_centers=30).fit(X)
    assert est.n_components_ == 10
    Z = est.transform(X)
    np.testing.assert_allclose(Z @ Z.T, _gram(Gaussian(2.0), X), atol=1e-8)


# ---------------------------------------------------------------------- greedy
def _dpstrf(K, k):
    """Pivots and the ``n x k`` factor (rows in the original order) of LAPACK's dpstrf."""
    c, piv, rank, info = scipy.linalg.lapack.dpstrf(K, lower=1)
    assert info in (0, 1)
    L = np.tril(c)[:, :k]
    G = np.empty_like(L)
    G[piv[: len(K)] - 1] = L
    return piv[:k] - 1, G, rank


@pytest.mark.parametrize("kernel", [Gaussian(1.5) + 0.3 * Linear(), Polynomial(degree=2)])
def test_greedy_equals_lapack_pivoted_cholesky(kernel):
    X = _X()
    K = _gram(kernel, X)
    pc = pivoted_cholesky(kernel, X, 50)
    piv, G, rank = _dpstrf(K, len(pc.pivots))
    # Polynomial(2) on R^4 has rank 15: both stop there
    assert len(pc.pivots) == rank == (15 if isinstance(kernel, Polynomial) else 50)
    np.testing.assert_array_equal(pc.pivots, piv)
    np.testing.assert_allclose(pc.factor.numpy(), G, rtol=0, atol=1e-10 * np.sqrt(K.max()))
    # the transformer's features on the training points are the same factor
    est = NystromFeatures(kernel, n_centers=20, centers="greedy").fit(X)
    np.testing.assert_array_equal(est.component_indices_, piv[:20])
    np.testing.assert_allclose(est.transform(X), G[:, :20], atol=1e-9 * np.sqrt(K.max()))


def test_greedy_residuals_are_the_schur_complements_of_a_brute_force_loop():
    """Each pivot is the argmax of diag(K - K_XZ K_ZZ^{-1} K_ZX), computed by direct inverse."""
    X = _X(n=40)
    kernel = Gaussian(1.0) + 0.5 * Linear()
    K = _gram(kernel, X)
    chosen = []
    residuals = []
    for _ in range(12):
        if chosen:
            Kz = K[np.ix_(chosen, chosen)]
            r = np.diag(K) - np.einsum("ij,jk,ik->i", K[:, chosen], np.linalg.inv(Kz), K[:, chosen])
        else:
            r = np.diag(K).copy()
        residuals.append(r.max())
        chosen.append(int(np.argmax(r)))
    pc = pivoted_cholesky(kernel, X, 12)
    np.testing.assert_array_equal(pc.pivots, chosen)
    assert np.all(np.diff(residuals) <= 0)  # greedy residuals never increase
    Kz = K[np.ix_(chosen, chosen)]
    final = np.diag(K) - np.einsum("ij,jk,ik->i", K[:, chosen], np.linalg.inv(Kz), K[:, chosen])
    np.testing.assert_allclose(pc.residual.numpy(), final, atol=1e-10)


def test_greedy_stops_at_the_rank_and_reconstructs_a_finite_rank_kernel():
    X = _X(n=30, d=3)
    Z = NystromFeatures(Linear(), n_centers=10, centers="greedy").fit_transform(X)
    assert Z.shape == (30, 3)
    np.testing.assert_allclose(Z @ Z.T, X @ X.T, atol=1e-10)


# ---------------------------------------------------------------------- kpca
def test_kpca_rank_p_keeps_the_top_eigenpairs():
    X, Xnew = _X(), _X(n=6, seed=2)
    kernel = Gaussian(2.0)
    est = NystromFeatures(kernel, n_centers=20, centers="kpca", rank=5, random_state=0).fit(X)
    assert est.n_components_ == 5
    C = X[est.component_indices_]
    w, U = np.linalg.eigh(_gram(kernel, C))
    Up, wp = U[:, -5:], w[-5:]
    Kxc = np.asarray(gram(kernel, torch.as_tensor(Xnew), torch.as_tensor(C)))
    ref = Kxc @ Up @ np.diag(1 / wp) @ Up.T @ Kxc.T
    Z = est.transform(Xnew)
    np.testing.assert_allclose(Z @ Z.T, ref, rtol=1e-9, atol=1e-12)
    # same centres as the uniform method with the same seed
    uni = NystromFeatures(kernel, n_centers=20, random_state=0).fit(X)
    np.testing.assert_array_equal(uni.component_indices_, est.component_indices_)


# ---------------------------------------------------------------------- kmeans++
def _kmeanspp_numpy(K, m, seed):
    """k-means++ D^2 sampling on an explicit Gram, written independently in NumPy."""
    rng = np.random.default_rng(seed)
    n = len(K)
    diag = np.diag(K)
    chosen = [int(rng.integers(n))]
    d2 = np.full(n, np.inf)
    for _ in range(m - 1):
        c = chosen[-1]
        d2 = np.minimum(d2, np.maximum(diag + diag[c] - 2 * K[:, c], 0))
        chosen.append(int(rng.choice(n, p=d2 / d2.sum())))
    return np.unique(chosen)


def test_kmeanspp_on_strings_uses_the_kernel_alone():
    rng = np.random.default_rng(3)
    distinct = ["".join(rng.choice(list("ACGT"), size=12)) for _ in range(8)]
    S = [distinct[i] for i in rng.permutation(np.repeat(np.arange(8), 4))]
    kernel = Spectrum(k=3).normalized()
    K = np.asarray(gram(kernel, S))
    idx = kmeanspp_centres(kernel, S, 8, random_state=5)
    # D^2 = 0 on copies of a chosen string: one centre per distinct string
    assert sorted(S[i] for i in idx) == sorted(distinct)
    np.testing.assert_array_equal(idx, _kmeanspp_numpy(K, 8, 5))
    # the precomputed Gram gives the same centres
    np.testing.assert_array_equal(kmeanspp_centres(Precomputed(), K, 8, random_state=5), idx)
    est = NystromFeatures(kernel, n_centers=8, centers="kmeans++", random_state=5).fit(S)
    Z = est.transform(S)
    np.testing.assert_allclose(Z @ Z.T, K, atol=1e-8)  # the 8 centres span every string


def test_kmeanspp_matches_numpy_oracle_on_vectors():
    X = _X(n=60)
    kernel = Gaussian(1.0)
    idx = kmeanspp_centres(kernel, X, 15, random_state=2)
    np.testing.assert_array_equal(idx, _kmeanspp_numpy(_gram(kernel, X), 15, 2))


# ---------------------------------------------------------------------- bases
def test_cholesky_basis_gives_the_nystrom_kernel():
    X, C = _X(n=20, seed=1), _X(n=8, seed=2)
    k = Gaussian(1.5)
    Kcc = gram(k, torch.as_tensor(C))
    Kxc = gram(k, torch.as_tensor(X), torch.as_tensor(C))
    F = cholesky_basis(Kcc).features(Kxc).numpy()
    ref = Kxc.numpy() @ np.linalg.solve(Kcc.numpy(), Kxc.numpy().T)
    np.testing.assert_allclose(F @ F.T, ref, rtol=1e-9, atol=1e-12)


# ---------------------------------------------------------------------- estimator contract
@pytest.mark.parametrize(
    "make", [lambda: 0, lambda: np.random.RandomState(0), lambda: np.random.default_rng(0)]
)
@pytest.mark.parametrize("method", ["uniform", "kmeans++", "kpca"])
def test_random_state_kinds_give_identical_fits(make, method):
    X = _X()
    a = NystromFeatures(n_centers=10, centers=method, random_state=make()).fit_transform(X)
    b = NystromFeatures(n_centers=10, centers=method, random_state=make()).fit_transform(X)
    np.testing.assert_array_equal(a, b)
    est = NystromFeatures(n_centers=10, centers=method, random_state=make())
    np.testing.assert_array_equal(clone(est).fit_transform(X), clone(est).fit_transform(X))


def test_output_follows_the_input_container():
    X = _X()
    t = torch.as_tensor(X, dtype=torch.float32)
    est = NystromFeatures(n_centers=10, random_state=0).fit(t)
    Z = est.transform(t)
    assert isinstance(Z, torch.Tensor) and Z.dtype == torch.float32
    assert isinstance(est.fit(X).transform(X), np.ndarray)


def test_nystrom_map_function_and_estimator_agree():
    X = _X()
    mp = nystrom_map(Gaussian(1.0), X, 10, method="kmeans++", random_state=4)
    est = NystromFeatures(Gaussian(1.0), 10, centers="kmeans++", random_state=4).fit(X)
    np.testing.assert_array_equal(mp.features(X).numpy(), est.transform(X))


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"centers": "random"}, "centers"),
        ({"n_centers": 0}, "n_centers"),
        ({"rank": 3}, "rank"),
        ({"centers": "kpca", "rank": 0}, "rank"),
        ({"jitter": -1.0}, "jitter"),
    ],
)
def test_bad_parameters_name_the_argument(params, match):
    with pytest.raises(InputError, match=match):
        NystromFeatures(**params).fit(_X())


def test_indefinite_centre_gram_is_refused_naming_it():
    K = torch.tensor([[1.0, 2.0], [2.0, 1.0]], dtype=torch.float64)  # eigenvalues 3, -1
    with pytest.raises(NotPSDError, match="K_cc: the centre"):
        cholesky_basis(K)
    with pytest.raises(NotPSDError, match="K_zz: the landmark Gram is not positive"):
        nystrom_basis(K)


@pytest.mark.parametrize("weights", [None, np.array([1.0, 2.0, 3.0, 0.0, 4.0])])
def test_uniform_centres_have_the_successive_sampling_law(weights):
    # uniform_centres (the row-position draw, draw_by_keys on the row numbers) is sampling
    # without replacement with probabilities proportional to the weights (uniform without);
    # oracle: the closed-form law of two successive draws, P({i, j}) =
    # w_i / W * w_j / (W - w_i) + w_j / W * w_i / (W - w_j), against 20000 seeded draws
    from itertools import combinations

    from kernelkit.gram._centres import uniform_centres

    n, trials = 5, 20000
    w = np.ones(n) if weights is None else weights
    total = w.sum()
    counts = dict.fromkeys(combinations(range(n), 2), 0)
    for seed in range(trials):
        counts[tuple(int(i) for i in uniform_centres(n, 2, seed, sample_weight=weights))] += 1
    for (i, j), count in counts.items():
        p = w[i] / total * w[j] / (total - w[i]) + w[j] / total * w[i] / (total - w[j])
        assert abs(count / trials - p) <= 5 * np.sqrt(p * (1 - p) / trials) + 1e-12, (i, j)
    # more centres than candidates: every row of positive weight, sorted
    np.testing.assert_array_equal(uniform_centres(n, 9, 0, sample_weight=weights), w.nonzero()[0])


def test_draw_by_keys_on_increasing_keys_equals_the_grouped_draw():
    # increasing keys (row numbers: the Dask draw) skip the grouping sort; oracle: the same
    # candidates under decreasing keys, which take the grouping path (uniform k goes to the
    # k-th smallest key, so row r of the reversed draw is row n - 1 - r of the direct one)
    from kernelkit.gram._centres import _largest, draw_by_keys

    rng = np.random.default_rng(0)
    n = 500
    keys = np.arange(n, dtype=np.uint64)
    w = rng.random(n)
    w[::4] = 0
    for weights in (None, w):
        reversed_w = None if weights is None else weights[::-1].copy()
        for m in (1, 37, 374, 600):
            fast = draw_by_keys(keys, m, weights, 3)
            grouped = draw_by_keys(keys[::-1].copy(), m, reversed_w, 3)
            np.testing.assert_array_equal(fast, np.sort(n - 1 - grouped))
    # the m largest scores by a partition: the set a stable sort takes, ties included
    for _ in range(50):
        score = rng.integers(0, 5, 40).astype(float)
        m = int(rng.integers(1, 45))
        assert set(_largest(score, m)) == set(np.argsort(-score, kind="stable")[:m])
