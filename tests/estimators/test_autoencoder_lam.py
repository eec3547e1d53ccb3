"""KernelAutoencoder: ``lam="auto"`` (the default) on a held-out split, its small-sample
fallback, and the default stopping rule."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
import torch

import kernelkit.io as kio
from kernelkit.data._molecule_datasets import load_esol
from kernelkit.estimators._autoencoder import KernelAutoencoder
from kernelkit.estimators._autoencoder_lam import (
    AUTO_FALLBACK_LAM,
    AUTO_MIN_VALIDATION,
    ae_lam_grid,
    grid_rows,
    held_out_split,
)
from kernelkit.kernels import Gaussian, Precomputed
from kernelkit.kernels._molecules import Tanimoto
from kernelkit.utils._config import config_context
from kernelkit.utils._errors import ConvergenceWarning, InputError

pytestmark = [
    pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning"),
    pytest.mark.usefixtures("one_torch_thread"),
]


def _X(n=40, d=4, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)) * np.linspace(2.0, 0.5, d)


def _held_out_error(model, X):
    """Mean squared error of the reconstructions in the input space (finite KAE)."""
    recon = model.inverse_transform(model.transform(X))
    return float(np.mean(((X - recon) ** 2).sum(1)))


def test_auto_is_the_default():
    assert KernelAutoencoder().lam == "auto"


def test_split_is_deterministic_and_partitions():
    fit, val = held_out_split(50, 0.2, seed=3)
    fit2, val2 = held_out_split(50, 0.2, seed=3)
    np.testing.assert_array_equal(fit, fit2)
    np.testing.assert_array_equal(val, val2)
    assert len(val) == 10 and len(fit) == 40
    np.testing.assert_array_equal(np.sort(np.concatenate([fit, val])), np.arange(50))
    _, val3 = held_out_split(50, 0.2, seed=4)
    assert not np.array_equal(val, val3)


@pytest.mark.parametrize("fraction", [0.1, 0.2])
def test_too_few_held_out_points_fall_back_to_the_fixed_lam(fraction):
    """Below AUTO_MIN_VALIDATION held-out points "auto" is the fit with AUTO_FALLBACK_LAM."""
    n = int(np.ceil((AUTO_MIN_VALIDATION - 0.5) / fraction)) - 1  # rounds to 9 held out
    X = _X(n=n)
    kw = {"dims": (2,), "max_iter": 5, "random_state": 0, "validation_fraction": fraction}
    auto = KernelAutoencoder(**kw).fit(X)
    fixed = KernelAutoencoder(lam=AUTO_FALLBACK_LAM, **kw).fit(X)
    assert auto.lam_ == AUTO_FALLBACK_LAM and auto.lam_curve_ is None
    np.testing.assert_array_equal(auto.codes_, fixed.codes_)
    # one point more holds out AUTO_MIN_VALIDATION points: validated
    assert KernelAutoencoder(**kw).fit(_X(n=n + 1)).lam_curve_ is not None


def test_auto_walks_the_grid_down_and_stops_at_the_first_rise():
    """Largest lam first; the first point is a plain fit on the fit part (oracle: the public
    estimator on those rows, error by inverse_transform); the walk stops after the first
    value above the best; lam_ is the best."""
    X = _X()
    kw = {"dims": (2,), "max_iter": 15, "random_state": 0}
    auto = KernelAutoencoder(validation_fraction=0.25, **kw).fit(X)
    fit, val = held_out_split(40, 0.25, seed=0)
    lams = [lam for lam, _ in auto.lam_curve_]
    errors = [e for _, e in auto.lam_curve_]
    assert lams == sorted(ae_lam_grid(), reverse=True)[: len(lams)]
    first = KernelAutoencoder(lam=lams[0], **kw).fit(X[fit])
    assert errors[0] == pytest.approx(_held_out_error(first, X[val]), rel=1e-8)
    assert all(b < a for a, b in itertools.pairwise(errors[:-1]))
    assert len(lams) == len(ae_lam_grid()) or errors[-1] >= min(errors[:-1])
    assert auto.lam_ == lams[int(np.argmin(errors))]
    assert KernelAutoencoder(lam=1e-3, **kw).fit(X).lam_curve_ is None


def test_auto_refits_the_best_fit_on_all_the_data_from_its_functions():
    """The refit starts from the plain fit on the fit part at lam_ (oracle: the public
    estimator on those rows), its first layer unchanged and its last layer solved on all n
    points: the first objective of the refit is, by NumPy,
    lam (||f_1||^2 + tr(X^T (C + n lam I)^-1 X)) with C the last kernel on the codes of all
    points (the closed-form profile of objective (4))."""
    X = _X(n=60)
    kw = {"dims": (2,), "max_iter": 15, "random_state": 0}
    auto = KernelAutoencoder(validation_fraction=0.2, **kw).fit(X)
    fit, _ = held_out_split(60, 0.2, seed=0)
    plain = KernelAutoencoder(lam=auto.lam_, **kw).fit(X[fit])
    lam, Xf = auto.lam_, X[fit]
    s1, sL = plain.kernels_[0].sigma, plain.kernels_[-1].sigma
    assert auto.kernels_[0].sigma == s1 and auto.kernels_[-1].sigma == sL

    def gauss(A, B, s):
        return np.exp(-((A[:, None, :] - B[None, :, :]) ** 2).sum(-1) / (2 * s**2))

    Phi = plain.model_.chain.layers[0].coef.detach().numpy()
    norm1 = np.trace(Phi.T @ gauss(Xf, Xf, s1) @ Phi)
    Z = plain.transform(X)
    C = gauss(Z, Z, sL)
    start = lam * (norm1 + np.trace(X.T @ np.linalg.solve(C + 60 * lam * np.eye(60), X)))
    assert auto.history_[0] == pytest.approx(start, rel=1e-8)
    assert auto.objective_ <= auto.history_[0]
    np.testing.assert_allclose(auto.codes_, auto.transform(X), rtol=1e-10, atol=1e-12)


def test_auto_lam_on_a_gram_matrix_equals_the_kernel_input():
    X = _X(n=30)
    kern = Gaussian(sigma=2.0)
    K = kern(torch.as_tensor(X), torch.as_tensor(X)).numpy()
    kw = {"dims": (3,), "max_iter": 10, "random_state": 1, "validation_fraction": 1 / 3}
    by_kernel = KernelAutoencoder(input_kernel=kern, **kw).fit(X)
    by_gram = KernelAutoencoder(input_kernel=Precomputed(), **kw).fit(K)
    assert by_kernel.lam_curve_ is not None
    np.testing.assert_allclose(
        [e for _, e in by_gram.lam_curve_], [e for _, e in by_kernel.lam_curve_], rtol=1e-8
    )
    assert by_gram.lam_ == by_kernel.lam_
    np.testing.assert_allclose(by_gram.codes_, by_kernel.codes_, rtol=1e-6, atol=1e-8)


def test_auto_lam_from_generators_in_the_same_state_is_identical():
    X = _X(n=30)
    fits = [
        KernelAutoencoder(
            dims=(2,), max_iter=5, validation_fraction=1 / 3, random_state=np.random.default_rng(7)
        ).fit(X)
        for _ in range(2)
    ]
    assert fits[0].lam_curve_ is not None and fits[0].lam_curve_ == fits[1].lam_curve_
    np.testing.assert_array_equal(fits[0].codes_, fits[1].codes_)


def test_auto_landmarks_are_drawn_from_the_fit_part():
    X = _X(n=60)
    ae = KernelAutoencoder(
        dims=(2,), n_centers=15, max_iter=10, validation_fraction=0.2, random_state=0
    ).fit(X)
    fit, _ = held_out_split(60, 0.2, seed=0)
    assert ae.lam_curve_ is not None and len(ae.landmark_indices_) == 15
    assert set(ae.landmark_indices_.tolist()) <= set(fit.tolist())
    np.testing.assert_allclose(ae.transform(X), ae.codes_, rtol=1e-10, atol=1e-12)


def test_auto_with_minibatches_fits_every_grid_value_and_refits():
    X = _X(n=40)
    kw = {"dims": (2,), "landmarks": 10, "optimizer": "adam", "batch_size": 16, "max_iter": 2}
    ae = KernelAutoencoder(validation_fraction=0.25, random_state=0, **kw).fit(X)
    fit, val = held_out_split(40, 0.25, seed=0)
    assert [lam for lam, _ in ae.lam_curve_] == list(ae_lam_grid())
    one = KernelAutoencoder(lam=ae_lam_grid()[1], random_state=0, **kw).fit(X[fit])
    assert ae.lam_curve_[1][1] == pytest.approx(_held_out_error(one, X[val]), rel=1e-10)
    assert ae.lam_ == min(ae.lam_curve_, key=lambda point: point[1])[0]
    refit = KernelAutoencoder(lam=ae.lam_, random_state=0, **kw).fit(X)
    np.testing.assert_array_equal(ae.codes_, refit.codes_)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"lam": "best"}, "lam"),
        ({"lam": "auto", "validation_fraction": 1.5}, "validation_fraction"),
        ({"lam": "auto", "validation_fraction": 0.99}, "validation_fraction"),
    ],
)
def test_bad_auto_parameters_are_named(params, match):
    with pytest.raises((InputError, ValueError), match=match):
        KernelAutoencoder(dims=(2,), max_iter=3, **params).fit(_X(n=20))


def test_default_k2ae_converges_on_esol_without_warning():
    smiles = load_esol().smiles[:150]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        ae = KernelAutoencoder(dims=(10,), input_kernel=Tanimoto(), random_state=0).fit(smiles)
    assert ae.lam_curve_ is not None
    assert ae.stopped_ == "converged"
    assert ae.n_iter_ < ae.max_iter
    h = np.asarray(ae.history_)
    # the stopping test: the last change of the objective is below tol * |J_0|; history_ holds
    # the line search's trial values too, and the previous iterate is the lowest earlier one
    assert abs(h[-1] - h[:-1].min()) < ae.tol * abs(h[0])


def test_auto_fit_round_trips_through_io(tmp_path):
    X = _X(n=60)
    ae = KernelAutoencoder(dims=(2,), max_iter=10, validation_fraction=0.2, random_state=0).fit(X)
    loaded = kio.load(kio.save(ae, tmp_path / "kae.zip"))
    assert loaded.lam == "auto" and loaded.lam_ == ae.lam_
    assert [tuple(p) for p in loaded.lam_curve_] == ae.lam_curve_
    np.testing.assert_array_equal(loaded.transform(X), ae.transform(X))
    np.testing.assert_array_equal(loaded.reconstruction_error(X), ae.reconstruction_error(X))


def _gauss(A, B, s):
    return np.exp(-((A[:, None, :] - B[None, :, :]) ** 2).sum(-1) / (2 * s**2))


def test_grid_fits_take_a_uniform_subsample_of_the_fit_part():
    fit, _ = held_out_split(200, 0.1, seed=3)
    with config_context(autoencoder_grid_rows=50):
        rows = grid_rows(fit, 3)
    assert len(rows) == 50 and set(rows.tolist()) <= set(fit.tolist())
    np.testing.assert_array_equal(rows, np.sort(rows))
    np.testing.assert_array_equal(rows, np.sort(np.random.default_rng(3).permutation(fit)[:50]))
    with config_context(autoencoder_grid_rows=len(fit)):
        np.testing.assert_array_equal(grid_rows(fit, 3), fit)


def test_auto_grid_fits_on_the_subsample_and_refits_on_all_the_data():
    """Beyond autoencoder_grid_rows fit rows, each grid fit is a plain fit on the subsample
    (oracle: the public estimator on those rows, held-out error by inverse_transform), and
    the refit starts from the best one's functions on all n points (its first objective by
    NumPy, as in the test above)."""
    X = _X(n=80)
    kw = {"dims": (2,), "kernels": Gaussian(sigma=2.0), "max_iter": 15, "random_state": 0}
    with config_context(autoencoder_grid_rows=30):
        auto = KernelAutoencoder(validation_fraction=0.2, **kw).fit(X)
        rows = grid_rows(held_out_split(80, 0.2, seed=0)[0], 0)
    _, val = held_out_split(80, 0.2, seed=0)
    assert len(rows) == 30
    for lam, err in auto.lam_curve_:
        plain = KernelAutoencoder(lam=lam, **kw).fit(X[rows])
        assert err == pytest.approx(_held_out_error(plain, X[val]), rel=1e-8)
    lam = auto.lam_
    plain = KernelAutoencoder(lam=lam, **kw).fit(X[rows])
    Phi = plain.model_.chain.layers[0].coef.detach().numpy()
    norm1 = np.trace(Phi.T @ _gauss(X[rows], X[rows], 2.0) @ Phi)
    Z = plain.transform(X)
    C = _gauss(Z, Z, 2.0)
    start = lam * (norm1 + np.trace(X.T @ np.linalg.solve(C + 80 * lam * np.eye(80), X)))
    assert auto.history_[0] == pytest.approx(start, rel=1e-8)
    assert auto.objective_ <= auto.history_[0]
