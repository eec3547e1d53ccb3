"""The ``kernel`` parameter: scikit-learn names, specs, ``"precomputed"``, the default per input
kind, and ``sample_weight``; each against scikit-learn or the same model with an explicit kernel."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import torch
from sklearn.kernel_ridge import KernelRidge as SkKernelRidge
from sklearn.metrics.pairwise import laplacian_kernel, rbf_kernel
from sklearn.svm import SVC

from kernelkit import KernelAutoencoder, KernelPCA, KernelRidge, KernelSVC
from kernelkit.gram import gram
from kernelkit.kernels import (
    Gaussian,
    Laplacian,
    Linear,
    PrecomputedBatch,
    Spectrum,
    Tanimoto,
    WeisfeilerLehman,
)
from kernelkit.kernels._specs import KernelSpecError, default_kernel, median_sigma
from kernelkit.utils._errors import InputError

RNG = np.random.default_rng(11)
X = RNG.standard_normal((40, 3))
Y = np.sin(X[:, 0]) + 0.5 * X[:, 1] + 0.05 * RNG.standard_normal(40)
LAM = 1e-2
N = len(X)


# ---------------------------------------------------------------------- scikit-learn's names
@pytest.mark.parametrize(
    ("kernel", "params"),
    [
        ("rbf", {"gamma": 0.1}),
        ("rbf", {}),
        ("laplacian", {"gamma": 0.3}),
        ("laplacian", {}),
        ("poly", {"gamma": 0.2, "degree": 2, "coef0": 1.5}),
        ("poly", {}),
        ("polynomial", {"degree": 4}),
        ("linear", {}),
        ("cosine", {}),
    ],
)
def test_sklearn_names_equal_sklearn_kernel_ridge(kernel, params):
    ours = KernelRidge(kernel=kernel, lam=LAM, **params).fit(X, Y)
    ref = SkKernelRidge(kernel=kernel, alpha=N * LAM, **params).fit(X, Y)
    np.testing.assert_allclose(ours.dual_coef_, ref.dual_coef_, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(ours.predict(X[:7]), ref.predict(X[:7]), rtol=1e-8, atol=1e-12)


def test_rbf_maps_to_gaussian_and_sklearn_laplacian_is_the_l1_kernel():
    assert KernelRidge(kernel="rbf", gamma=0.125).fit(X, Y).kernel_.sigma == pytest.approx(2.0)
    lap = KernelRidge(kernel="laplacian", gamma=0.7).fit(X, Y).kernel_
    np.testing.assert_allclose(gram(lap, X), laplacian_kernel(X, gamma=0.7), rtol=1e-12)
    # kernelkit's spec "laplacian:sigma=..." keeps the Euclidean (L2) Laplacian
    l2 = KernelRidge(kernel="laplacian:sigma=2").fit(X, Y).kernel_
    assert isinstance(l2, Laplacian) and l2.sigma == 2.0
    d2 = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    np.testing.assert_allclose(gram(l2, X), np.exp(-d2 / 2.0), rtol=1e-12)


def test_specs_build_the_named_kernel():
    model = KernelRidge(kernel="gaussian:sigma=2", lam=LAM).fit(X, Y)
    assert isinstance(model.kernel_, Gaussian) and model.kernel_.sigma == 2.0
    ref = SkKernelRidge(kernel="rbf", gamma=1 / 8, alpha=N * LAM).fit(X, Y)
    np.testing.assert_allclose(model.predict(X), ref.predict(X), rtol=1e-10)
    bare = KernelRidge(kernel="gaussian").fit(X, Y).kernel_  # sigma by the median heuristic
    assert bare.sigma == pytest.approx(median_sigma(X), rel=1e-12)


@pytest.mark.parametrize("cls", [KernelRidge, KernelSVC, KernelPCA])
def test_precomputed_equals_the_model_on_its_gram(cls):
    labels = (Y > 0).astype(int)
    K, Kt = rbf_kernel(X, gamma=0.1), rbf_kernel(X[:9], X, gamma=0.1)
    on_gram = cls(kernel="precomputed")
    on_data = cls(kernel="rbf", gamma=0.1)
    if cls is KernelPCA:
        np.testing.assert_allclose(on_gram.fit(K).transform(Kt), on_data.fit(X).transform(X[:9]))
        return
    on_gram.fit(K, labels if cls is KernelSVC else Y)
    on_data.fit(X, labels if cls is KernelSVC else Y)
    np.testing.assert_allclose(on_gram.predict(Kt), on_data.predict(X[:9]), rtol=1e-10)
    np.testing.assert_allclose(on_gram.dual_coef_, on_data.dual_coef_, rtol=1e-10, atol=1e-12)


def test_kernel_parameter_errors_name_the_argument():
    with pytest.raises(InputError, match=r"^gamma: only used with scikit-learn's kernel names"):
        KernelRidge(Gaussian(1.0), gamma=0.1).fit(X, Y)
    with pytest.raises(InputError, match=r"^degree: only used .*'poly'"):
        KernelRidge(kernel="rbf", degree=3).fit(X, Y)
    with pytest.raises(InputError, match=r"^coef0: .*got coef0=1.0 with kernel='gaussian:sigma=2'"):
        KernelRidge(kernel="gaussian:sigma=2", coef0=1.0).fit(X, Y)
    with pytest.raises(InputError, match=r"^kernel: scikit-learn's 'sigmoid' kernel is not supp"):
        KernelRidge(kernel="sigmoid").fit(X, Y)
    # scikit-learn's sentence (Nystroem's) for the kernels that read no gamma/degree/coef0
    with pytest.raises(InputError, match=r"^gamma: Don't pass gamma, coef0 or degree to KernelR"):
        KernelRidge(kernel="precomputed", gamma=0.1).fit(X @ X.T, Y)
    with pytest.raises(InputError, match=r"^degree: Don't pass .* to KernelPCA if using a call"):
        KernelPCA(kernel=lambda x, y: float(x @ y), degree=2).fit(X)
    with pytest.raises(KernelSpecError, match=r"^kernel: unknown kernel 'rbff'; expected one of"):
        KernelRidge(kernel="rbff").fit(X, Y)
    with pytest.raises(KernelSpecError, match=r"^kernel: unknown parameter 'width=2' of gaussian"):
        KernelRidge(kernel="gaussian:width=2").fit(X, Y)


# ---------------------------------------------------------------------- sample_weight
@pytest.mark.parametrize("multi", [False, True])
def test_weighted_kernel_ridge_equals_sklearn(multi):
    w = RNG.uniform(0.0, 3.0, N)
    w[[2, 17]] = 0.0
    y = np.c_[Y, Y**2] if multi else Y
    ours = KernelRidge(kernel="rbf", gamma=0.3, lam=LAM).fit(X, y, sample_weight=w)
    # (1 / sum w) sum w_i loss_i + lam ||f||^2: scikit-learn's alpha is sum(w) lam
    ref = SkKernelRidge(kernel="rbf", gamma=0.3, alpha=w.sum() * LAM).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(ours.dual_coef_, ref.dual_coef_, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(ours.predict(X), ref.predict(X), rtol=1e-8, atol=1e-12)
    # course part 1, section 3.2, normaliser sum(w):
    # alpha = W^1/2 (W^1/2 K W^1/2 + sum(w) lam I)^-1 W^1/2 y
    K, r = rbf_kernel(X, gamma=0.3), np.sqrt(w)
    beta = np.linalg.solve(r[:, None] * K * r + w.sum() * LAM * np.eye(N), (r * y.T).T)
    closed = (r * beta.T).T
    np.testing.assert_allclose(ours.dual_coef_, closed, rtol=1e-8, atol=1e-12)
    unit = KernelRidge(kernel="rbf", gamma=0.3, lam=LAM).fit(X, y, sample_weight=np.ones(N))
    plain = KernelRidge(kernel="rbf", gamma=0.3, lam=LAM).fit(X, y)
    np.testing.assert_allclose(unit.dual_coef_, plain.dual_coef_, rtol=1e-12)


@pytest.mark.parametrize("zeros", [False, True])
def test_weighted_svc_equals_sklearn(zeros):
    labels = (X[:, 0] + 0.4 * RNG.standard_normal(N) > 0).astype(int)
    w = RNG.uniform(0.1, 3.0, N)
    if zeros:  # scikit-learn's precomputed SVC mixes up rows after dropping these
        w[[1, 5, 6, 30]] = 0.0
    ours = KernelSVC(kernel="rbf", gamma=0.2, C=2.0).fit(X, labels, sample_weight=w)
    ref = SVC(kernel="rbf", gamma=0.2, C=2.0).fit(X, labels, sample_weight=w)
    # scikit-learn numbers the support vectors among the rows of positive weight
    np.testing.assert_array_equal(ours.support_, np.flatnonzero(w > 0)[ref.support_])
    np.testing.assert_allclose(ours.dual_coef_, ref.dual_coef_, atol=1e-6)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    unweighted = KernelSVC(kernel="rbf", gamma=0.2, C=2.0).fit(X, labels)
    assert not np.array_equal(unweighted.support_, ours.support_)  # the weights matter here


@pytest.mark.parametrize("kernel", [Gaussian(1.5), None, "rbf"], ids=["fixed", "median", "scale"])
def test_integer_weights_are_repetitions(kernel):
    """Weight ``w_i`` equals ``w_i`` copies of row ``i`` (weight 0: the row dropped), for a
    fixed kernel and for the data-dependent defaults (the median-heuristic width, SVC's
    ``gamma="scale"``), which count row ``i`` ``w_i`` times; the rows are shuffled apart."""
    w = RNG.integers(0, 4, N)
    w[0] = 2
    Xr, Yr = np.repeat(X, w, axis=0), np.repeat(Y, w)
    perm = RNG.permutation(len(Xr))
    Xr, Yr = Xr[perm], Yr[perm]
    labels, labels_r = (Y > 0).astype(int), (Yr > 0).astype(int)
    weighted = KernelSVC(kernel, tol=1e-10).fit(X, labels, sample_weight=w)
    repeated = KernelSVC(kernel, tol=1e-10).fit(Xr, labels_r)
    np.testing.assert_allclose(
        weighted.decision_function(X), repeated.decision_function(X), atol=1e-6
    )
    if kernel != "rbf":
        ridge_w = KernelRidge(kernel, lam=LAM).fit(X, Y, sample_weight=w)
        ridge_r = KernelRidge(kernel, lam=LAM).fit(Xr, Yr)
        assert ridge_w.kernel_.sigma == pytest.approx(ridge_r.kernel_.sigma, rel=1e-12)
        np.testing.assert_allclose(ridge_w.predict(X), ridge_r.predict(X), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("method", ["onepass", "pcg"])
def test_integer_weights_are_repetitions_with_nystrom_centres(method):
    """The Nyström solvers draw their centres among distinct points by weight, so integer
    weights and repeated (shuffled) rows give the same centres and the same fit."""
    w = RNG.integers(0, 4, N)
    Xr, Yr = np.repeat(X, w, axis=0), np.repeat(Y, w)
    perm = RNG.permutation(len(Xr))
    kw = dict(
        lam=LAM, solver="nystrom", nystrom_method=method, n_centers=15, random_state=3, tol=1e-12
    )
    ridge_w = KernelRidge(**kw).fit(X, Y, sample_weight=w)
    ridge_r = KernelRidge(**kw).fit(Xr[perm], Yr[perm])
    centres_w = ridge_w.X_fit_.numpy()
    centres_r = ridge_r.X_fit_.numpy()
    np.testing.assert_array_equal(np.unique(centres_w, axis=0), np.unique(centres_r, axis=0))
    assert set(ridge_w.center_indices_) <= set(np.flatnonzero(w > 0))
    np.testing.assert_allclose(ridge_w.predict(X), ridge_r.predict(X), rtol=1e-8, atol=1e-10)


ALL_DROPPED = "sample_weight: Invalid input - all samples have zero or negative weights"


@pytest.mark.parametrize(
    ("cls", "weights", "message"),
    [
        (KernelRidge, np.ones(5), r"sample_weight: .*\(40,\)"),
        (KernelSVC, np.ones(5), r"sample_weight: .*\(40,\)"),
        (KernelRidge, -np.ones(40), "sample_weight: expected finite non-negative weights"),
        (KernelRidge, np.zeros(40), "sample_weight: .*(non-zero|not all zero)"),
        # KernelSVC leaves out the samples of weight <= 0, as libsvm (scikit-learn's text)
        (KernelSVC, -np.ones(40), ALL_DROPPED),
        (KernelSVC, np.zeros(40), ALL_DROPPED),
        (KernelSVC, np.full(40, np.nan), "sample_weight: expected finite"),
    ],
)
def test_bad_sample_weight_is_named(cls, weights, message):
    with pytest.raises(InputError, match=message):
        cls().fit(X, (Y > 0).astype(int), sample_weight=weights)


# ---------------------------------------------------------------------- default kernel per kind
SMILES = ["CCO", "CCN", "c1ccccc1", "CC(=O)O", "CCCC", "OCCO", "c1ccncc1", "CC(C)O", "CCOC", "CN"]
SEQUENCES = ["ACGTACGTAC", "AACCGGTTAAG", "ACGGGTAC", "TTTTACGACG", "GATTACAGATC", "CCCGGGAAAT"]
"""Sequences of several lengths (unaligned: ``Spectrum(k=3)``); one length takes
``WeightedDegree(8)``, tested in ``tests/estimators/test_default_kernels.py``."""


def _graphs():
    graphs = []
    for i in range(8):
        g = nx.cycle_graph(3 + i % 4) if i % 2 else nx.path_graph(3 + i % 3)
        nx.set_node_attributes(g, {v: "C" if v % 2 else "O" for v in g}, "label")
        graphs.append(g)
    return graphs


def test_default_kernel_on_vectors_is_the_median_gaussian():
    model = KernelRidge(lam=LAM).fit(X, Y)
    assert model.kernel_.sigma == default_kernel("vectors", X).sigma == median_sigma(X)
    explicit = KernelRidge(Gaussian(median_sigma(X)), lam=LAM).fit(X, Y)
    np.testing.assert_array_equal(model.predict(X), explicit.predict(X))


def test_kernel_ridge_on_smiles_uses_tanimoto():
    y = np.arange(len(SMILES), dtype=float)
    model = KernelRidge(lam=LAM).fit(SMILES, y)
    assert isinstance(model.kernel_, Tanimoto)
    explicit = KernelRidge(default_kernel("molecules"), lam=LAM).fit(SMILES, y)
    np.testing.assert_array_equal(model.predict(SMILES[:4]), explicit.predict(SMILES[:4]))
    np.testing.assert_array_equal(model.dual_coef_, explicit.dual_coef_)


def test_autoencoder_on_sequences_uses_spectrum_3():
    model = KernelAutoencoder(dims=(2,), max_iter=20, random_state=0).fit(SEQUENCES)
    assert isinstance(model.input_kernel_, Spectrum) and model.input_kernel_.k == 3
    explicit = KernelAutoencoder(dims=(2,), max_iter=20, random_state=0, input_kernel=Spectrum(k=3))
    explicit.fit(SEQUENCES)
    np.testing.assert_array_equal(model.transform(SEQUENCES), explicit.transform(SEQUENCES))
    assert model.objective_ == explicit.objective_


def test_svc_on_graphs_uses_weisfeiler_lehman():
    graphs = _graphs()
    labels = np.array([i % 2 for i in range(len(graphs))])
    model = KernelSVC().fit(graphs, labels)
    assert isinstance(model.kernel_, WeisfeilerLehman)
    explicit = KernelSVC(WeisfeilerLehman()).fit(graphs, labels)
    np.testing.assert_array_equal(
        model.decision_function(graphs), explicit.decision_function(graphs)
    )


def test_structured_input_with_a_vector_kernel_is_named():
    with pytest.raises(InputError, match="X: "):
        KernelRidge(kernel="rbf").fit(SMILES, np.arange(10.0))


# ---------------------------------------------------------------------- cross-Gram width
def _gram_models():
    K = rbf_kernel(X[:20], gamma=0.2)
    labels = (Y[:20] > 0).astype(int)
    return K, [
        KernelRidge("precomputed").fit(K, Y[:20]),
        KernelSVC("precomputed").fit(K, labels),
        KernelPCA("precomputed").fit(K),
        # a Linear() first layer reads K_in itself (a Gaussian one also needs k(x, x))
        KernelAutoencoder((2,), [Linear(), None], "precomputed", max_iter=5).fit(K),
        KernelAutoencoder((2,), [Linear(), None], "precomputed", n_centers=8, max_iter=5).fit(K),
    ]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("index", range(5))
@pytest.mark.parametrize("extra", [3, -2])
def test_cross_gram_width_is_checked(index, extra):
    _, models = _gram_models()
    model = models[index]
    rows = rbf_kernel(X[20:25], X[: 20 + extra] if extra > 0 else X[:18], gamma=0.2)
    method = model.predict if hasattr(model, "predict") else model.transform
    expected = r"X: expected precomputed Gram rows against the 20 training points"
    with pytest.raises(InputError, match=expected):
        method(rows)
    with pytest.raises(InputError, match=expected):
        method(PrecomputedBatch(torch.as_tensor(rows)))
    assert np.asarray(method(rbf_kernel(X[20:25], X[:20], gamma=0.2))).shape[0] == 5
