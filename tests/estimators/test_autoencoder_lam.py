"""KernelAutoencoder: ``lam="auto"`` on a held-out split, and the default stopping rule."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from kernelkit.data.molecule_datasets import load_esol
from kernelkit.estimators._autoencoder_lam import LAM_GRID, held_out_split
from kernelkit.estimators.autoencoder import KernelAutoencoder
from kernelkit.kernels import Gaussian, Precomputed
from kernelkit.kernels.molecules import Tanimoto
from kernelkit.utils.errors import ConvergenceWarning, InputError

pytestmark = [
    pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning"),
    pytest.mark.usefixtures("one_torch_thread"),
]


def _X(n=40, d=4, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)) * np.linspace(2.0, 0.5, d)


def test_split_is_deterministic_and_partitions():
    fit, val = held_out_split(50, 0.2, seed=3)
    fit2, val2 = held_out_split(50, 0.2, seed=3)
    np.testing.assert_array_equal(fit, fit2)
    np.testing.assert_array_equal(val, val2)
    assert len(val) == 10 and len(fit) == 40
    np.testing.assert_array_equal(np.sort(np.concatenate([fit, val])), np.arange(50))
    _, val3 = held_out_split(50, 0.2, seed=4)
    assert not np.array_equal(val, val3)


def test_auto_lam_is_the_grid_minimum_of_brute_force_fits():
    X = _X()
    kw = {"dims": (2,), "max_iter": 15, "random_state": 0}
    auto = KernelAutoencoder(lam="auto", validation_fraction=0.25, **kw).fit(X)
    # oracle: the documented split, one fit per grid value, held-out mean error by hand
    val = np.sort(np.random.default_rng(0).permutation(40)[:10])
    fit = np.setdiff1d(np.arange(40), val)
    errors = []
    for lam in LAM_GRID:
        model = KernelAutoencoder(lam=lam, **kw).fit(X[fit])
        recon = model.inverse_transform(model.transform(X[val]))
        errors.append(float(np.mean(((X[val] - recon) ** 2).sum(1))))
    np.testing.assert_allclose([e for _, e in auto.lam_curve_], errors, rtol=1e-10)
    assert [lam for lam, _ in auto.lam_curve_] == list(LAM_GRID)
    best = LAM_GRID[int(np.argmin(errors))]
    assert auto.lam_ == best
    refit = KernelAutoencoder(lam=best, **kw).fit(X)
    np.testing.assert_allclose(auto.codes_, refit.codes_, rtol=1e-12, atol=1e-12)
    assert KernelAutoencoder(lam=1e-3, **kw).fit(X).lam_curve_ is None


def test_auto_lam_on_a_gram_matrix_equals_the_kernel_input():
    X = _X(n=30)
    kern = Gaussian(sigma=2.0)
    K = kern(torch.as_tensor(X), torch.as_tensor(X)).numpy()
    kw = {"dims": (3,), "lam": "auto", "max_iter": 10, "random_state": 1}
    by_kernel = KernelAutoencoder(input_kernel=kern, **kw).fit(X)
    by_gram = KernelAutoencoder(input_kernel=Precomputed(), **kw).fit(K)
    np.testing.assert_allclose(
        [e for _, e in by_gram.lam_curve_], [e for _, e in by_kernel.lam_curve_], rtol=1e-8
    )
    assert by_gram.lam_ == by_kernel.lam_


def test_auto_lam_from_generators_in_the_same_state_is_identical():
    X = _X(n=30)
    fits = [
        KernelAutoencoder(
            dims=(2,), lam="auto", max_iter=5, random_state=np.random.default_rng(7)
        ).fit(X)
        for _ in range(2)
    ]
    assert fits[0].lam_curve_ == fits[1].lam_curve_
    np.testing.assert_array_equal(fits[0].codes_, fits[1].codes_)


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
    assert ae.stopped_ == "converged"
    assert ae.n_iter_ < ae.max_iter
    h = np.asarray(ae.history_)
    # the stopping test: the last change of the objective is below tol * |J_0|
    assert abs(h[-1] - h[-2]) < ae.tol * abs(h[0])
