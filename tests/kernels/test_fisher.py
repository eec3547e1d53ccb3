"""Fisher kernels against finite-difference gradients of the log-likelihood; the marginalised
count kernel against the sum over hidden paths."""

from __future__ import annotations

import collections
import itertools

import numpy as np
import pytest
import torch
from scipy.special import logsumexp, softmax
from sklearn.mixture import GaussianMixture

from kernelkit.io import load, save
from kernelkit.kernels import FisherVector, HMMFisher, HMMMarginalized
from kernelkit.testing import check_kernel
from kernelkit.utils._errors import InputError

hmm = pytest.importorskip("hmmlearn.hmm")


def gmm_loglik(x, pi, mu, sd):
    """log sum_j pi_j N(x; mu_j, diag(sd_j^2)), written out."""
    comp = -0.5 * (((x - mu) / sd) ** 2 + np.log(2 * np.pi * sd**2)).sum(1)
    return logsumexp(comp + np.log(pi))


def gmm_fd_fisher_vector(x, pi, mu, sd, h=1e-6):
    """Central differences in mu and sd, scaled by sd/sqrt(pi) and sd/sqrt(2 pi)."""
    g_mu, g_sd = np.zeros_like(mu), np.zeros_like(sd)
    for idx in np.ndindex(mu.shape):
        e = np.zeros_like(mu)
        e[idx] = h
        g_mu[idx] = (gmm_loglik(x, pi, mu + e, sd) - gmm_loglik(x, pi, mu - e, sd)) / (2 * h)
        g_sd[idx] = (gmm_loglik(x, pi, mu, sd + e) - gmm_loglik(x, pi, mu, sd - e)) / (2 * h)
    phi_mu = g_mu * sd / np.sqrt(pi)[:, None]
    phi_sd = g_sd * sd / np.sqrt(2 * pi)[:, None]
    return np.concatenate([phi_mu.ravel(), phi_sd.ravel()])


def test_gmm_fisher_kernel_equals_finite_difference_fisher_vectors(one_torch_thread):
    rng = np.random.default_rng(0)
    data = np.vstack([rng.normal(0, 1, (100, 3)), rng.normal(3, 0.5, (100, 3))])
    gmm = GaussianMixture(3, covariance_type="diag", random_state=0).fit(data)
    kernel = FisherVector.from_mixture(gmm)
    X, Y = rng.normal(1, 1.5, (6, 3)), rng.normal(1, 1.5, (4, 3))
    pi, mu, sd = gmm.weights_, gmm.means_, np.sqrt(gmm.covariances_)
    FX = np.array([gmm_fd_fisher_vector(x, pi, mu, sd) for x in X])
    FY = np.array([gmm_fd_fisher_vector(y, pi, mu, sd) for y in Y])
    np.testing.assert_allclose(kernel.features(torch.as_tensor(X)).numpy(), FX, atol=1e-7)
    np.testing.assert_allclose(kernel(X, Y).numpy(), FX @ FY.T, atol=1e-6)


def hmm_loglik(model, seq_codes, logits):
    model.emissionprob_ = softmax(logits, axis=1)
    return model.score(seq_codes.reshape(-1, 1))


def test_hmm_fisher_kernel_equals_finite_difference_scores(one_torch_thread):
    rng = np.random.default_rng(1)
    alphabet = "ACGT"
    train = [
        "".join(rng.choice(list(alphabet), size=30, p=[0.4, 0.1, 0.1, 0.4])) for _ in range(10)
    ]
    train += [
        "".join(rng.choice(list(alphabet), size=30, p=[0.1, 0.4, 0.4, 0.1])) for _ in range(10)
    ]
    codes = np.concatenate([[alphabet.index(c) for c in s] for s in train]).reshape(-1, 1)
    model = hmm.CategoricalHMM(2, random_state=0, n_iter=20).fit(codes, [30] * 20)
    kernel = HMMFisher.from_hmm(model, alphabet)
    seqs = ["GATTACA", "ACGTTGCA", "TTTT", "GCGCGCGCAT", "C"]
    logits = np.log(model.emissionprob_)
    oracle = hmm.CategoricalHMM(2, init_params="", params="")
    oracle.n_features = 4
    oracle.startprob_, oracle.transmat_ = model.startprob_, model.transmat_
    h = 1e-6
    fd = []
    for s in seqs:
        c = np.array([alphabet.index(ch) for ch in s])
        grad = np.zeros_like(logits)
        for idx in np.ndindex(logits.shape):
            e = np.zeros_like(logits)
            e[idx] = h
            grad[idx] = (hmm_loglik(oracle, c, logits + e) - hmm_loglik(oracle, c, logits - e)) / (
                2 * h
            )
        fd.append(grad.ravel())
    fd = np.array(fd)
    np.testing.assert_allclose(kernel.features(kernel.prepare(seqs)).numpy(), fd, atol=1e-7)
    np.testing.assert_allclose(kernel(seqs).numpy(), fd @ fd.T, atol=1e-6)
    check_kernel(kernel, seqs, ["ACGA", "TT"])


def test_check_examples_roundtrip_and_errors(tmp_path):
    for cls in (FisherVector, HMMFisher, HMMMarginalized):
        examples = cls._check_example()
        for i, (kernel, X, Y) in enumerate(examples if isinstance(examples, list) else [examples]):
            check_kernel(kernel, X, Y)
            path = tmp_path / f"{cls.__name__}-{i}.kk"
            save(kernel, path)
            np.testing.assert_array_equal(load(path)(X, Y).numpy(), kernel(X, Y).numpy())
    with pytest.raises(InputError, match="weights: expected non-negative probabilities"):
        FisherVector([0.5, 0.6], [[0.0], [1.0]], [[1.0], [1.0]])
    with pytest.raises(InputError, match="variances: expected positive values"):
        FisherVector([0.5, 0.5], [[0.0], [1.0]], [[1.0], [0.0]])
    with pytest.raises(InputError, match=r"emissionprob: expected shape \(1, 4\)"):
        HMMFisher([1.0], [[1.0]], [[0.5, 0.5]], alphabet="dna")
    with pytest.raises(InputError, match="covariance_type='diag'"):
        FisherVector.from_mixture(GaussianMixture(2))


def brute_marginalized(x, y, start, trans, emit, alphabet):
    """Tsuda et al. (2002): sum over all hidden paths of P(h|x) P(h'|y) K_Z, by enumeration."""

    def posterior_paths(s):
        codes = [alphabet.index(c) for c in s]
        paths = list(itertools.product(range(len(start)), repeat=len(s)))
        joint = []
        for h in paths:
            p = start[h[0]] * emit[h[0], codes[0]]
            for t in range(1, len(s)):
                p *= trans[h[t - 1], h[t]] * emit[h[t], codes[t]]
            joint.append(p)
        joint = np.array(joint)
        return paths, joint / joint.sum(), codes

    def pair_counts(codes, paths):  # c_{a,s}(x, h) for every hidden path h, one row each
        out = np.zeros((len(paths), len(start) * len(alphabet)))
        for i, h in enumerate(paths):
            for key, n in collections.Counter(zip(h, codes, strict=True)).items():
                out[i, key[0] * len(alphabet) + key[1]] = n
        return out

    paths_x, post_x, cx = posterior_paths(x)
    paths_y, post_y, cy = posterior_paths(y)
    K_Z = pair_counts(cx, paths_x) @ pair_counts(cy, paths_y).T  # count kernel of all path pairs
    return float(post_x @ K_Z @ post_y)


def test_hmm_marginalized_equals_sum_over_hidden_paths():
    start = np.array([0.6, 0.3, 0.1])
    trans = np.array([[0.7, 0.2, 0.1], [0.3, 0.5, 0.2], [0.25, 0.25, 0.5]])
    emit = np.array([[0.4, 0.1, 0.1, 0.4], [0.1, 0.2, 0.6, 0.1], [0.25, 0.25, 0.25, 0.25]])
    kernel = HMMMarginalized(start, trans, emit, alphabet="dna")
    X = ["GATTAC", "ACG", "TTTTT", "C"]
    Y = ["CAGT", "GGGA"]
    ref = np.array([[brute_marginalized(x, y, start, trans, emit, "ACGT") for y in Y] for x in X])
    np.testing.assert_allclose(kernel(X, Y).numpy(), ref, rtol=1e-12, atol=1e-14)
    # the features are expected counts: each string's entries sum to its length
    F = kernel.features(kernel.prepare(X)).numpy()
    np.testing.assert_allclose(F.sum(1), [len(x) for x in X], rtol=1e-12)
    check_kernel(kernel, X, Y)


def test_second_order_marginalized_count_kernel_by_enumerating_hidden_paths():
    """``order=2``: ``Phi_{(a,s),(b,u)} = sum_t 1[x_t x_{t+1} = a b] P(y_t y_{t+1} = s u | x)``
    with the posterior of every hidden path ``P(h | x) ∝ pi(h_1) prod T prod B`` enumerated
    (itertools), against the scaled forward-backward."""

    start = np.array([0.6, 0.4])
    trans = np.array([[0.9, 0.1], [0.2, 0.8]])
    emit = np.array([[0.4, 0.1, 0.1, 0.4], [0.1, 0.1, 0.1, 0.7]])
    kernel = HMMMarginalized(start, trans, emit, order=2)
    seqs = ["GATTACA", "ACGT", "TT", "A"]
    S, A = 2, 4
    expected = np.zeros((len(seqs), S, A, S, A))
    for i, s in enumerate(seqs):
        x = ["ACGT".index(c) for c in s]
        paths = list(itertools.product(range(S), repeat=len(x)))
        weights = np.array([
            start[h[0]] * emit[h[0], x[0]]
            * np.prod([trans[h[t - 1], h[t]] * emit[h[t], x[t]] for t in range(1, len(x))])
            for h in paths
        ])  # fmt: skip
        weights /= weights.sum()
        for w, h in zip(weights, paths, strict=True):
            for t in range(len(x) - 1):
                expected[i, h[t], x[t], h[t + 1], x[t + 1]] += w
    F = expected.reshape(len(seqs), -1)
    np.testing.assert_allclose(kernel(seqs).numpy(), F @ F.T, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(kernel(["gattaca"], seqs).numpy(), F[:1] @ F.T, rtol=1e-10)
    check_kernel(kernel, seqs, ["TTAG", "GGG"])
    with pytest.raises(InputError, match="order"):
        HMMMarginalized(start, trans, emit, order=3)
