"""Decoding codes back to objects: ``inverse_transform(codes, candidates=...)`` of KernelPCA and
KernelAutoencoder against brute-force distances (NumPy PCA; decoded vectors; the model's own
reconstruction errors), and training items recovered from their own codes."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from kernelkit import KernelAutoencoder, KernelPCA, config_context
from kernelkit.kernels import Gaussian, Linear, Spectrum
from kernelkit.utils._errors import InputError, NotFittedError

# short fits: the pre-image search is checked on whatever the optimiser reached
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


@pytest.fixture(scope="module")
def vectors():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 5)) @ rng.normal(size=(5, 5))
    return X, rng.normal(size=(25, 5)) @ rng.normal(size=(5, 5))


def test_kpca_nearest_candidate_equals_numpy_pca_distances(vectors):
    X, C = vectors
    model = KernelPCA(Linear(), n_components=3).fit(X)
    Z = model.transform(X[:10])
    items, index, dist = model.inverse_transform(Z, C, return_index=True, return_distance=True)
    # independent oracle: principal axes from NumPy's SVD, signs matched to our codes
    mean = X.mean(0)
    _, _, Vt = np.linalg.svd(X - mean, full_matrices=False)
    V = Vt[:3].T
    V = V * np.sign(((X[:10] - mean) @ V * Z).sum(0))
    recon = mean + Z @ V.T  # hat phi(z) in R^5
    D = ((recon[:, None, :] - C[None, :, :]) ** 2).sum(-1)
    np.testing.assert_array_equal(index, D.argmin(1))
    np.testing.assert_allclose(dist, D.min(1), rtol=1e-8, atol=1e-10)
    np.testing.assert_array_equal(items, C[index])


def test_kpca_recovers_training_strings_from_their_codes():
    rng = np.random.default_rng(1)
    X = ["".join(rng.choice(list("ACGT"), size=int(rng.integers(8, 15)))) for _ in range(30)]
    model = KernelPCA(Spectrum(k=3), n_components=29).fit(X)  # full rank of the centred Gram
    pool = [*X, "ACGTACGTAC", "TTTTGGGGCC"]
    found = model.inverse_transform(model.transform(X), pool)
    assert found == X
    with config_context(preimage_tile_entries=7):  # one candidate per tile: same answer
        _, index = model.inverse_transform(model.transform(X), pool, return_index=True)
    np.testing.assert_array_equal(index, np.arange(30))


def test_kae_nearest_candidate_is_the_nearest_decoded_vector(vectors):
    X, C = vectors
    model = KernelAutoencoder(dims=(2,), lam=1e-3, max_iter=20, random_state=0).fit(X)
    Z = model.transform(X[:8])
    decoded = model.inverse_transform(Z)
    D = ((decoded[:, None, :] - C[None, :, :]) ** 2).sum(-1)
    items, dist = model.inverse_transform(Z, torch.as_tensor(C), return_distance=True)
    np.testing.assert_allclose(dist, D.min(1), rtol=1e-8, atol=1e-10)
    np.testing.assert_array_equal(items.numpy(), C[D.argmin(1)])


def test_k2ae_candidate_distances_are_its_reconstruction_errors():
    rng = np.random.default_rng(2)
    X = ["".join(rng.choice(list("ACGT"), size=int(rng.integers(8, 15)))) for _ in range(24)]
    model = KernelAutoencoder(
        dims=(3,), input_kernel=Spectrum(k=2), lam=1e-3, max_iter=20, random_state=0
    ).fit(X)
    Z = model.transform(X)
    # brute force: one candidate at a time; the distance of x_i to the decoding of its own
    # code is its reconstruction error (appendix B.7)
    D = np.column_stack([model.inverse_transform(Z, [c], return_distance=True)[1] for c in X])
    np.testing.assert_allclose(np.diag(D), model.reconstruction_error(X), rtol=1e-8, atol=1e-10)
    found, index = model.inverse_transform(Z, X, return_index=True)
    np.testing.assert_array_equal(index, D.argmin(1))
    assert found == [X[i] for i in index]
    with pytest.raises(InputError, match="pass candidates="):
        model.inverse_transform(Z)


def test_preimage_errors(vectors):
    X, C = vectors
    model = KernelPCA(Gaussian(2.0), n_components=2).fit(X)
    with pytest.raises(NotFittedError, match="candidates="):
        model.inverse_transform(model.transform(X))
    with pytest.raises(InputError, match="2 columns"):
        model.inverse_transform(np.zeros((3, 4)), C)
    with pytest.raises(InputError):
        model.inverse_transform(model.transform(X), C[:, :2])
