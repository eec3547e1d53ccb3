"""KernelSVR: scikit-learn's SVR on the exact path, the Nyström and Dask fits, lam="auto"."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from sklearn.svm import SVR

from kernelkit import KernelSVR
from kernelkit.io import load, save
from kernelkit.kernels import Gaussian
from kernelkit.utils._errors import ConvergenceWarning, ParameterError


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 2))
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(60)
    y[:4] += 2.0
    return X, y, rng.standard_normal((25, 2))


@pytest.mark.parametrize("lam", [1e-2, 1e-4])
def test_equals_sklearn_svr_on_the_exact_path(data, lam):
    """Decision values of SVR(kernel="rbf", gamma=1/(2 sigma^2), C=1/(2 n lam)), tol 1e-8."""
    X, y, Xt = data
    est = KernelSVR(Gaussian(1.0), lam=lam, epsilon=0.2, tol=1e-8).fit(X, y)
    sk = SVR(gamma=0.5, C=1 / (2 * len(X) * lam), epsilon=0.2, tol=1e-8).fit(X, y)
    assert est.solver_ == "exact" and isinstance(est.n_iter_, int)
    assert np.abs(est.predict(Xt) - sk.predict(Xt)).max() < 1e-4
    assert abs(est.intercept_ - float(sk.intercept_[0])) < 1e-4


def test_precomputed_gram_equals_sklearn(data):
    X, y, Xt = data
    K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 2)
    Kt = np.exp(-((Xt[:, None] - X[None]) ** 2).sum(-1) / 2)
    est = KernelSVR("precomputed", lam=1e-3, tol=1e-8).fit(K, y)
    sk = SVR(kernel="precomputed", C=1 / (2 * 60 * 1e-3), tol=1e-8).fit(K, y)
    assert np.abs(est.predict(Kt) - sk.predict(Kt)).max() < 1e-4


def test_sample_weights_are_sklearns_and_repetition(data):
    X, y, Xt = data
    w = np.random.default_rng(1).integers(1, 4, len(X))
    est = KernelSVR(Gaussian(1.0), lam=1e-3, tol=1e-8).fit(X, y, sample_weight=w)
    # sklearn's C_i = C s_i with s = n w / sum w (the ERM's mean over the weighted sample)
    sk = SVR(gamma=0.5, C=1 / (2 * len(X) * 1e-3), tol=1e-8)
    sk.fit(X, y, sample_weight=w * len(X) / w.sum())
    assert np.abs(est.predict(Xt) - sk.predict(Xt)).max() < 1e-4
    rep = np.repeat(np.arange(len(X)), w)
    repeated = KernelSVR(Gaussian(1.0), lam=1e-3, tol=1e-8).fit(X[rep], y[rep])
    assert np.abs(est.predict(Xt) - repeated.predict(Xt)).max() < 1e-4


def test_nystrom_fits_and_equals_the_dask_fit_on_the_same_centres(data):
    da = pytest.importorskip("dask.array")
    X, y, Xt = data
    centres = X[::3]
    est = KernelSVR(Gaussian(1.0), lam=1e-3, solver="nystrom", centers=centres, tol=1e-8)
    local = est.fit(X, y).predict(Xt)
    assert est.solver_ == "nystrom" and len(est.dual_coef_) == len(centres)
    assert (est.center_indices_ == -1).all()
    drawn = KernelSVR(Gaussian(1.0), solver="nystrom", n_centers=12, random_state=0)
    assert len(drawn.fit(da.from_array(X, chunks=(17, 2)), y).center_indices_) == 12
    remote = est.fit(da.from_array(X, chunks=(17, 2)), da.from_array(y, chunks=17))
    assert np.abs(remote.predict(Xt) - local).max() < 1e-6
    lazy = remote.predict(da.from_array(Xt, chunks=(10, 2)))
    assert isinstance(lazy, da.Array)
    np.testing.assert_allclose(lazy.compute(), remote.predict(Xt), atol=1e-12)


def test_drawn_centres_and_exact_dask_refused(data):
    da = pytest.importorskip("dask.array")
    X, y, _ = data
    est = KernelSVR(Gaussian(1.0), solver="nystrom", n_centers=15, random_state=0).fit(X, y)
    assert len(est.center_indices_) == 15 and est.X_fit_.shape == (15, 2)
    with pytest.raises(ValueError, match="Dask input"):
        KernelSVR(solver="exact").fit(da.from_array(X, chunks=20), y)


def test_lam_auto_picks_a_grid_value(data):
    X, y, _ = data
    est = KernelSVR(Gaussian(1.0), lam="auto", random_state=0).fit(X, y)
    lams = est.cv_results_["param_lam"]
    assert isinstance(est.lam_, float) and np.isclose(lams, est.lam_).any()
    assert np.allclose(lams, np.logspace(-1, -9, 17)[: len(lams)])  # Gaussian: scale 1
    best = int(np.argmax(est.cv_results_["mean_test_score"]))
    assert est.cv_results_["params"][best] == {"lam": est.lam_}


def test_progress_max_iter_and_parameters(data):
    X, y, _ = data
    seen = []
    KernelSVR(Gaussian(1.0), tol=1e-8, verbose=lambda k, v: seen.append(k)).fit(X, y)
    assert seen and seen == sorted(seen)
    with pytest.warns(ConvergenceWarning, match="max_iter=5"):
        est = KernelSVR(Gaussian(1.0), tol=1e-8, max_iter=5).fit(X, y)
    assert est.n_iter_ == 5
    with pytest.raises(ParameterError, match=r"^epsilon"):
        KernelSVR(epsilon=-1.0).fit(X, y)
    with pytest.raises(ParameterError, match=r"^solver"):
        KernelSVR(solver="onepass").fit(X, y)


def test_torch_input_gives_torch_output(data):
    X, y, Xt = data
    est = KernelSVR(Gaussian(1.0)).fit(torch.as_tensor(X), torch.as_tensor(y))
    out = est.predict(torch.as_tensor(Xt))
    assert isinstance(out, torch.Tensor) and isinstance(est.dual_coef_, torch.Tensor)
    np.testing.assert_allclose(out.numpy(), KernelSVR(Gaussian(1.0)).fit(X, y).predict(Xt))


def test_save_load_roundtrip(data, tmp_path):
    X, y, Xt = data
    est = KernelSVR(Gaussian(1.0), solver="nystrom", n_centers=10, random_state=0).fit(X, y)
    save(est, tmp_path / "svr")
    np.testing.assert_array_equal(load(tmp_path / "svr").predict(Xt), est.predict(Xt))


def test_on_error_skips_invalid_smiles():
    pytest.importorskip("rdkit")
    smiles = ["CCO", "CCN", "c1ccccc1", "CC(=O)O", "CCCC", "C1CC(", "CCOC", "CCCl"]
    y = np.arange(8.0)
    keep = [i for i in range(8) if i != 5]
    with warnings.catch_warnings(), pytest.raises(ValueError, match="invalid SMILES"):
        warnings.simplefilter("ignore")
        KernelSVR().fit(smiles, y)
    with pytest.warns(UserWarning, match="left out 1 of 8"):
        skipped = KernelSVR(on_error="skip").fit(smiles, y)
    clean = KernelSVR().fit([smiles[i] for i in keep], y[keep])
    np.testing.assert_array_equal(skipped.predict(["CCO", "CCCO"]), clean.predict(["CCO", "CCCO"]))
