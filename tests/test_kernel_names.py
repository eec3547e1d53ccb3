"""One kernel string, one kernel: the estimators, ``kernelkit.stats`` and ``kernelkit gram``
resolve ``kernel=NAME`` through one resolver (:mod:`kernelkit.kernels._resolve`) and agree."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from kernelkit import KernelRidge
from kernelkit.cli._main import main
from kernelkit.kernels import Gaussian, Linear, Polynomial, TensorMatern
from kernelkit.kernels._resolve import kernel_on
from kernelkit.stats import mmd

NAMES = ["rbf", "laplacian", "polynomial", "linear", "gaussian:sigma=1.5"]


@pytest.fixture(scope="module")
def samples() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 4))
    Y = rng.normal(loc=0.3, size=(30, 4))
    return X, Y, X @ rng.normal(size=4)


def _biased_mmd2(K: np.ndarray, n: int) -> float:
    """The biased MMD^2 of the first ``n`` rows of a pooled Gram against the rest, by hand."""
    return K[:n, :n].mean() + K[n:, n:].mean() - 2 * K[:n, n:].mean()


@pytest.mark.parametrize("name", NAMES)
def test_estimator_stats_and_cli_give_one_kernel(name, samples, tmp_path, capsys):
    X, Y, y = samples
    fitted = KernelRidge(kernel=name).fit(X, y).kernel_
    pooled = np.vstack([X, Y])
    K_pooled = fitted(torch.as_tensor(pooled)).numpy()
    expected = _biased_mmd2(K_pooled, len(X))
    assert mmd(X, Y, kernel=name, estimator="biased") == pytest.approx(expected, abs=1e-8)

    src = tmp_path / "x.csv"
    header = ",".join(f"f{j}" for j in range(X.shape[1]))
    src.write_text(
        header + "\n" + "\n".join(",".join(repr(float(v)) for v in row) for row in X) + "\n"
    )
    out = tmp_path / "K.npy"
    assert main(["gram", str(src), "--kernel", name, "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    np.testing.assert_allclose(np.load(out), K_pooled[: len(X), : len(X)], atol=1e-8, rtol=0)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("rbf", Gaussian(sigma=np.sqrt(4 / 2))),  # gamma = 1 / n_features
        ("laplacian", TensorMatern(s=1.0, sigma=4.0)),  # exp(-||x - y||_1 / n_features)
        ("polynomial", Polynomial(degree=3, scale=0.25, offset=1.0)),
        ("linear", Linear()),
        ("gaussian:sigma=1.5", Gaussian(sigma=1.5)),
    ],
)
def test_each_name_is_scikit_learns_kernel_or_the_spec(name, expected, samples):
    X = torch.as_tensor(samples[0])
    np.testing.assert_allclose(kernel_on(name, X)(X), expected(X), rtol=1e-12, atol=0)


def test_a_kernel_of_another_kind_is_refused_by_name():
    with pytest.raises(ValueError, match="spectrum takes sequences, but the input holds vectors"):
        kernel_on("spectrum:k=3", np.zeros((3, 2)))
