"""SimpleMKL: the objective and its gradient, the planted kernel, oracles for one kernel."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.kernel_ridge import KernelRidge as SkKernelRidge
from sklearn.svm import SVC

from kernelkit import SimpleMKL
from kernelkit.estimators._mkl import reduced_gradient_direction
from kernelkit.io import load, save
from kernelkit.kernels import Gaussian, Linear, Mismatch, Spectrum
from kernelkit.utils._errors import InputError, ParameterError


def planted(n=80, seed=0):
    """One informative Gaussian kernel (feature 0) among five on noise features."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 6))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.standard_normal(n)
    grams = [Gaussian(0.5)(X[:, [0]]).numpy()]
    grams += [Gaussian(1.0)(X[:, [j]]).numpy() for j in range(1, 6)]
    return grams, y


def _setup(loss, lam, y, grams):
    est = SimpleMKL("precomputed", lam=lam, loss=loss, tol=1e-12)
    G = est._fit_grams(grams)
    return est, G, est._targets(y, len(y))


@pytest.mark.parametrize(("loss", "tol"), [("squared", 1e-6), ("logistic", 1e-6)])
def test_gradient_matches_finite_differences(loss, tol, one_torch_thread):
    grams, y = planted(40)
    target = y if loss == "squared" else np.sign(y)
    est, G, Y = _setup(loss, 1e-2, target, grams)
    eta = np.random.default_rng(1).random(6)
    eta /= eta.sum()
    _, grad, _ = est.objective(G, eta, Y)
    h = 1e-5
    fd = [
        (est.objective(G, eta + h * e, Y)[0] - est.objective(G, eta - h * e, Y)[0]) / (2 * h)
        for e in np.eye(6)
    ]
    np.testing.assert_allclose(grad, fd, rtol=0, atol=tol)


def test_krr_objective_is_the_closed_form_and_the_primal_minimum(one_torch_thread):
    grams, y = planted(30)
    lam = 0.05
    est, G, Y = _setup("squared", lam, y, grams)
    eta = np.full(6, 1 / 6)
    value, _, _ = est.objective(G, eta, Y)
    K = np.einsum("m,mij->ij", eta, G.numpy())
    n = len(y)
    gamma = np.linalg.solve(K + n * lam * np.eye(n), y)
    assert value == pytest.approx(lam * y @ gamma, rel=1e-12)
    primal = np.mean((K @ gamma - y) ** 2) + lam * gamma @ K @ gamma
    assert value == pytest.approx(primal, rel=1e-10)


def test_planted_kernel_gets_the_weight_and_objective_decreases(one_torch_thread):
    grams, y = planted()
    est = SimpleMKL("precomputed", lam=1e-3).fit(grams, y)
    assert est.weights_[0] >= 0.9
    assert est.weights_.min() >= 0 and est.weights_.sum() == pytest.approx(1.0)
    assert np.all(np.diff(est.objective_history_) <= 0)
    uniform = SimpleMKL("precomputed", lam=1e-3, max_iter=1).objective(
        est._fit_grams(grams), np.full(6, 1 / 6), est._targets(y, len(y))
    )[0]
    assert est.objective_history_[-1] < uniform


def test_one_kernel_equals_sklearn_krr_and_svc(one_torch_thread):
    rng = np.random.default_rng(2)
    X = rng.standard_normal((50, 3))
    y = X[:, 0] - X[:, 1] ** 2
    lam = 0.01
    ours = SimpleMKL([Gaussian(1.5)], lam=lam, scale=None).fit(X, y)
    ref = SkKernelRidge(alpha=50 * lam, kernel="rbf", gamma=1 / (2 * 1.5**2)).fit(X, y)
    Xt = rng.standard_normal((10, 3))
    np.testing.assert_allclose(ours.predict(Xt), ref.predict(Xt), atol=1e-10)
    labels = np.where(y > np.median(y), "a", "b")
    svm = SimpleMKL([Gaussian(1.5)], lam=lam, loss="hinge", scale=None).fit(X, labels)
    svc = SVC(C=1 / (2 * 50 * lam), gamma=1 / (2 * 1.5**2), tol=1e-4).fit(X, labels)
    np.testing.assert_allclose(svm.decision_function(Xt), svc.decision_function(Xt), atol=1e-3)
    assert (svm.predict(Xt) == svc.predict(Xt)).all()


def test_reduced_gradient_direction_stays_on_the_simplex():
    eta = np.array([0.5, 0.3, 0.2, 0.0])
    grad = np.array([-1.0, -0.5, -2.0, 3.0])
    D = reduced_gradient_direction(eta, grad)
    assert D.sum() == pytest.approx(0.0) and D[3] == 0.0  # zero weight, uphill: stays 0
    assert grad @ D < 0  # a descent direction


def test_string_kernels_multiclass_logistic_and_roundtrip(tmp_path, one_torch_thread):
    rng = np.random.default_rng(3)
    motifs = ["ACGTAC", "TTGACA", "GGCCGG"]
    seqs, labels = [], []
    for i in range(45):
        s = list(rng.choice(list("ACGT"), size=20))
        pos = int(rng.integers(0, 14))
        s[pos : pos + 6] = motifs[i % 3]
        seqs.append("".join(s))
        labels.append(i % 3)
    kernels = [Spectrum(3), Spectrum(5), Mismatch(4, 1, alphabet="dna")]
    est = SimpleMKL(kernels, lam=1e-2, loss="logistic").fit(seqs, labels)
    assert est.score(seqs, labels) == 1.0 and est.dual_coef_.shape == (45, 3)
    path = tmp_path / "mkl.kk"
    save(est, path)
    again = load(path)
    np.testing.assert_array_equal(again.decision_function(seqs), est.decision_function(seqs))
    np.testing.assert_array_equal(again.weights_, est.weights_)


def test_precomputed_predict_and_named_errors(one_torch_thread):
    grams, y = planted(30)
    est = SimpleMKL("precomputed", lam=1e-2).fit(grams, y)
    np.testing.assert_allclose(est.predict([G[:5] for G in grams]), est.predict(grams)[:5])
    with pytest.raises(InputError, match="kernels over different inputs"):
        SimpleMKL([Spectrum(3), Gaussian(1.0)]).fit(["ACGT", "ACGA"], [0.0, 1.0])
    with pytest.raises(InputError, match=r"X\[1\]: expected Gram matrices of the same shape"):
        SimpleMKL("precomputed").fit([grams[0], grams[1][:5, :5]], y)
    with pytest.raises(InputError, match="expected Gram matrices with 30 columns"):
        est.predict([G[:5, :4] for G in grams])
    with pytest.raises(InputError, match="list of Gram matrices"):
        SimpleMKL("precomputed").fit(grams[0], y)
    with pytest.raises(InputError, match="at least one kernel"):
        SimpleMKL([]).fit(np.eye(3), [1.0, 2.0, 3.0])
    with pytest.raises(ParameterError, match=r"^lam: "):
        SimpleMKL([Linear()], lam=0.0).fit(np.eye(3), [1.0, 2.0, 3.0])
    with pytest.raises(InputError, match="at least 2 classes"):
        SimpleMKL([Linear()], loss="hinge").fit(np.eye(3), [1, 1, 1])
    with pytest.raises(InputError, match="y: "):
        SimpleMKL([Linear()], loss="hinge").fit(np.eye(3), [0.5, 1.2, 3.3])


def test_torch_input_gives_torch_output(one_torch_thread):
    X = torch.randn(20, 2, dtype=torch.float64)
    y = X[:, 0].clone()
    est = SimpleMKL(lam=1e-2).fit(X, y)
    assert isinstance(est.predict(X), torch.Tensor) and len(est.weights_) == 3


def test_lam_auto_is_the_best_5_fold_score_of_the_grid_on_the_grams():
    """``lam="auto"``: a hand loop over the 5 folds (seed 0) of SimpleMKL on the sliced
    precomputed Grams gives the same scores and ``lam_``; the fit equals the fixed-``lam``
    fit at it, from kernels or from the Grams."""
    from sklearn.model_selection import KFold

    from kernelkit import SimpleMKL
    from kernelkit.kernels import Gaussian

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(40, 2))
    y = np.sin(3 * X[:, 0]) + 0.1 * rng.normal(size=40)
    kernels = [Gaussian(0.3), Gaussian(1.0)]
    grams = [k(torch.as_tensor(X)).numpy() for k in kernels]  # diagonal 1: no trace scaling
    grid = np.logspace(-1, -9, 17)
    scores = []
    for lam in grid:
        fold_scores = []
        for tr, te in KFold(5, shuffle=True, random_state=0).split(X):
            est = SimpleMKL("precomputed", lam=lam).fit([G[tr][:, tr] for G in grams], y[tr])
            fold_scores.append(est.score([G[te][:, tr] for G in grams], y[te]))
        scores.append(np.mean(fold_scores))
    model = SimpleMKL(kernels, lam="auto").fit(X, y)
    visited = len(model.cv_results_["params"])  # the path stops logistic_patience past the best
    np.testing.assert_allclose(model.cv_results_["mean_test_score"], scores[:visited], atol=1e-10)
    assert type(model.lam_) is float and model.lam_ == grid[int(np.argmax(scores[:visited]))]
    fixed = SimpleMKL(kernels, lam=model.lam_).fit(X, y)
    np.testing.assert_allclose(model.predict(X), fixed.predict(X), atol=1e-10)
    from_grams = SimpleMKL("precomputed", lam="auto").fit(grams, y)
    assert from_grams.lam_ == model.lam_
