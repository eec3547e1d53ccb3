"""Minibatch training of the landmark KAE / K2AE (issue 15, item 4).

Oracles: the full-batch landmark objective and last layer of
:class:`kernelkit.models.KernelAutoencoderModel` (the streamed sums must give the same values),
full-batch Adam (one minibatch of all the data per epoch must follow the same path), and the
full-batch L-BFGS landmark fit (the minibatch fit must reach its objective).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import kernelkit.io as kio
from kernelkit.estimators import _autoencoder_minibatch as fit_module
from kernelkit.estimators._autoencoder import KernelAutoencoder
from kernelkit.kernels import Gaussian
from kernelkit.models._autoencoder import AutoencoderData
from kernelkit.models._autoencoder_minibatch import solve_head, train_minibatch
from kernelkit.utils._errors import InputError

pytestmark = [
    pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning"),
    pytest.mark.usefixtures("one_torch_thread"),
]


def _torus(n: int, seed: int = 0) -> np.ndarray:
    """Points near a 2-torus in R^5 (noise 0.05)."""
    rng = np.random.default_rng(seed)
    t = rng.uniform(0, 2 * np.pi, size=(n, 2))
    X = np.c_[
        np.cos(t[:, 0]), np.sin(t[:, 0]), np.cos(t[:, 1]), np.sin(t[:, 1]),
        0.3 * np.sin(t[:, 0] + t[:, 1]),
    ]  # fmt: skip
    return X + 0.05 * rng.normal(size=X.shape)


def _captured(monkeypatch, est, X):
    """Fit ``est`` with its training loop stopped after building: the model and its data."""
    seen = {}

    def capture(model, data, **options):
        seen["model"], seen["data"] = model, data
        return train_minibatch(model, data, **{**options, "max_iter": 1})

    monkeypatch.setattr(fit_module, "train_minibatch", capture)
    est.fit(X)
    return seen["model"], seen["data"]


@pytest.mark.parametrize("input_kernel", [None, Gaussian(2.0)])
def test_streamed_objective_and_head_equal_full_batch(monkeypatch, input_kernel):
    """Sums over tiles of 37 rows give the full-batch landmark objective and last layer (its
    outputs ``C Phi_L``: the coefficients of the ill-conditioned ridge agree to ~1e-5 only)."""
    X = _torus(200)
    est = KernelAutoencoder(
        (3,), input_kernel=input_kernel, lam=1e-3, n_centers=30, optimizer="adam",
        batch_size=50, random_state=0,
    )  # fmt: skip
    model, data = _captured(monkeypatch, est, X)
    K1, B = data.rows(np.arange(data.n))
    full = AutoencoderData(K1, B, data.out_trace, data.K1_support)
    head = solve_head(model, data, tile=37)
    with torch.no_grad():
        want = float(model.objective(full)[0])
        coef, supports = model.head_coefficients(full)
    assert head.objective == pytest.approx(want, rel=1e-10)
    torch.testing.assert_close(head.supports[-1], supports[-1], rtol=1e-12, atol=1e-12)
    with torch.no_grad():
        C = model.head_gram(
            model.chain.forward_train(K1, data.K1_support).outputs[-1], supports[-1]
        )
    torch.testing.assert_close(C @ head.coef, C @ coef, rtol=1e-7, atol=1e-8)


def test_one_batch_per_epoch_is_full_batch_adam():
    """``batch_size >= n``: every epoch is one full-batch Adam step; the exact objectives after
    each epoch are the full-batch Adam objectives (its history, one step later)."""
    X = _torus(150)
    kw = {"dims": (3,), "input_kernel": Gaussian(1.0), "lam": 1e-3, "n_centers": 25}
    kw["random_state"] = 0
    mb = KernelAutoencoder(**kw, optimizer="adam", batch_size=150, lr=1e-2, max_iter=8, tol=0)
    full = KernelAutoencoder(**kw, optimizer="adam", lr=1e-2, max_iter=9, tol=0)
    np.testing.assert_allclose(mb.fit(X).history_, full.fit(X).history_, rtol=1e-9)
    assert mb.n_iter_ == 8 and mb.n_eval_ == 8


@pytest.mark.slow
def test_minibatch_reaches_full_batch_objective():
    """1000 points, 30 landmarks, batches of 200, rate 3e-2: within 5% of the full-batch
    L-BFGS optimum (same landmarks, same KPCA start) after 20 epochs (measured 3.1%);
    codes_ equal transform(X)."""
    X = _torus(1000)
    kw = {"dims": (3,), "input_kernel": Gaussian(1.0), "lam": 1e-3, "n_centers": 30}
    kw["random_state"] = 0
    full = KernelAutoencoder(**kw).fit(X)
    mb = KernelAutoencoder(**kw, optimizer="adam", batch_size=200, lr=3e-2, max_iter=20)
    mb.fit(X)
    np.testing.assert_array_equal(mb.landmark_indices_, full.landmark_indices_)
    assert mb.history_[0] == pytest.approx(full.history_[0], rel=1e-10)
    assert mb.objective_ <= 1.05 * full.objective_
    assert mb.objective_ == min(mb.history_)
    np.testing.assert_allclose(mb.codes_, mb.transform(X), rtol=1e-10, atol=1e-12)
    err = mb.reconstruction_error(X)
    assert np.mean(err) <= mb.objective_  # the objective adds the penalties


def test_stopping_rule_and_io_round_trip(tmp_path):
    """tol large: stops after n_iter_no_change epochs without improvement, no warning; the
    fitted estimator saves and loads with the same codes."""
    X = _torus(120)
    est = KernelAutoencoder(
        (2,), n_centers=20, optimizer="adam", batch_size=40, tol=10.0, n_iter_no_change=2,
        random_state=0,
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est.fit(X)
    assert est.stopped_ == "converged" and est.n_iter_ == 2 and len(est.history_) == 3
    path = tmp_path / "kae.kk"
    kio.save(est, path)
    loaded = kio.load(path)
    np.testing.assert_allclose(loaded.transform(X), est.transform(X), rtol=0, atol=0)


def test_tiles_do_not_change_inference():
    """Tiles of 7 rows (a small memory budget) give the same codes and errors."""
    X = _torus(60)
    est = KernelAutoencoder((2,), n_centers=10, random_state=0, max_iter=5).fit(X)
    codes, err = est.transform(X), est.reconstruction_error(X)
    est.memory_budget = 4 * 8 * 10 * 7  # tiles of 7 rows
    np.testing.assert_allclose(est.transform(X), codes, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(est.reconstruction_error(X), err, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"n_centers": 10}, "optimizer='adam'"),
        ({"n_centers": 10, "optimizer": "adam", "algorithm": "alternating"}, "algorithm"),
        ({"n_centers": 10, "optimizer": "adam", "closed_form": False}, "closed_form"),
        ({"optimizer": "adam"}, "n_centers"),
        ({"n_centers": 500, "optimizer": "adam"}, "n_centers"),
    ],
)
def test_bad_settings_are_named(params, match):
    with pytest.raises(InputError, match=match):
        KernelAutoencoder((2,), batch_size=16, **params).fit(_torus(40))
