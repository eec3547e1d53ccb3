"""Centering identities of course part 1, section 2 (L1032-1050) and test-row centering."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sklearn.preprocessing import KernelCenterer

from kernelkit.gram import GramCenterer, center_gram
from kernelkit.kernels import Gaussian, Linear
from kernelkit.utils._errors import InputError

RNG = np.random.default_rng(2)
X = RNG.normal(size=(30, 4)) + 3.0
T = RNG.normal(size=(7, 4))


def test_equals_hkh_and_elementwise_formula():
    K = Gaussian(1.5)(X)
    n = K.shape[0]
    H = torch.eye(n, dtype=K.dtype) - 1.0 / n
    Kc = center_gram(K)
    torch.testing.assert_close(Kc, H @ K @ H, rtol=1e-12, atol=1e-12)
    Kn = K.numpy()
    elem = np.array(
        [
            [Kn[i, j] - (Kn[i].sum() + Kn[j].sum()) / n + Kn.sum() / n**2 for j in range(n)]
            for i in range(n)
        ]
    )
    np.testing.assert_allclose(Kc.numpy(), elem, atol=1e-12)


def test_rows_sum_to_zero():
    Kc = center_gram(Gaussian(0.8)(X))
    torch.testing.assert_close(
        Kc @ torch.ones(30, dtype=Kc.dtype), torch.zeros(30, dtype=Kc.dtype), atol=1e-12, rtol=0
    )


def test_linear_kernel_centres_the_data():
    Xc = X - X.mean(0)
    np.testing.assert_allclose(center_gram(Linear()(X)).numpy(), Xc @ Xc.T, atol=1e-10)


def test_test_rows_use_training_mean():
    c = GramCenterer().fit(Linear()(X))
    rows = c.transform(Linear()(T, X))
    mu = X.mean(0)
    np.testing.assert_allclose(rows.numpy(), (T - mu) @ (X - mu).T, atol=1e-10)


def test_matches_sklearn_kernel_centerer():
    k = Gaussian(1.0)
    sk = KernelCenterer().fit(k(X).numpy())
    c = GramCenterer().fit(k(X))
    np.testing.assert_allclose(
        c.transform(k(T, X)).numpy(), sk.transform(k(T, X).numpy()), atol=1e-12
    )
    np.testing.assert_allclose(
        c.fit_transform(k(X)).numpy(), sk.transform(k(X).numpy()), atol=1e-12
    )


def test_float32_preserved():
    K = Gaussian(1.0)(X).float()
    assert center_gram(K).dtype == torch.float32


def test_bad_inputs():
    with pytest.raises(InputError, match="square"):
        center_gram(np.ones((3, 4)))
    with pytest.raises(InputError, match="fit"):
        GramCenterer().transform(np.ones((3, 4)))
    c = GramCenterer().fit(np.eye(4))
    with pytest.raises(InputError, match="training points"):
        c.transform(np.ones((2, 3)))
    with pytest.raises(InputError, match="finite"):
        center_gram(np.full((2, 2), np.nan))
