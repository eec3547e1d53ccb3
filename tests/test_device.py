"""The engine on an accelerator: a CUDA input is fitted, kept and answered on its device.

The device under test is ``KERNELKIT_TEST_DEVICE`` (default ``"cuda"``); without it the module
skips ("needs CUDA"), which CI allows (a GPU-only check, see ``tests/conftest.py``).  Setting
``KERNELKIT_TEST_DEVICE=cpu`` runs the same checks on the CPU, to check the checks.

Each test compares the device against the CPU fit of the same data and seed (the oracle):

* **Contract**: every estimator of :data:`tests.test_contract.CASES` fitted on device tensors
  keeps every floating fitted array and returns every output on that device, and its outputs
  equal the CPU fit's to ``1e-6`` relative (float64: the devices differ only in the order of
  their sums, which a few iterations of an iterative fit carry forward; the feature maps of
  :data:`FEATURE_MAPS` through their Gram).
* **Gram engine**: every vector kernel, float32 and float64, against the CPU Gram.
* **Nyström solvers**: ``KernelRidge`` with the one-pass (per-tile feature map, and the
  unmapped sums of a loose ``tol``), PCG and ``"auto"`` solvers,
  ``KernelLogisticRegression``, ``KernelPCA`` and ``KernelKMeans`` with ``solver="nystrom"``
  at ``n = 20 000``, float32 and float64, against the CPU fit.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
import torch
from sklearn.metrics import adjusted_rand_score

import kernelkit
from kernelkit.kernels import Gaussian, Laplacian, Matern, Polynomial, TensorMatern
from kernelkit.models import _falkon as falkon
from kernelkit.solvers._nystrom_normal import to_features
from test_contract import CASES, ESTIMATORS, RANDOM, _data, _fit, _fitted_arrays, _returned_outputs

DEVICE = os.environ.get("KERNELKIT_TEST_DEVICE", "cuda")
AVAILABLE = DEVICE == "cpu" or (DEVICE.startswith("cuda") and torch.cuda.is_available())
pytestmark = pytest.mark.skipif(not AVAILABLE, reason=f"needs CUDA ({DEVICE} not available)")

FEATURE_MAPS = {"NystromFeatures", "InvariantEmbedding"}
"""Features defined up to an orthogonal map (the eigenvectors of ``K_mm``, whose signs the
eigensolvers of the two devices choose apart): compared through their Gram ``Z Z^T``."""


def _host(value) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    return np.asarray(value)


def _close(device_value, cpu_value, rtol: float, what: str) -> None:
    a, b = _host(device_value).astype(float), _host(cpu_value).astype(float)
    scale = max(float(np.abs(b).max(initial=0.0)), 1e-300)
    err = float(np.abs(a - b).max(initial=0.0)) / scale
    assert err <= rtol, f"{what}: device differs from CPU by {err:.2e} (max-norm relative)"


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_every_estimator_fits_and_answers_on_the_input_device(cls):
    X, y = _data()
    seed = {"random_state": 0} if cls in RANDOM else {}
    fits = {}
    for device in ("cpu", DEVICE):
        data = torch.as_tensor(X, device=device)
        labels = torch.as_tensor(y, device=device)
        est = _fit(CASES[cls.__name__]().set_params(**seed), data, labels)
        outputs = _returned_outputs(est, data)
        for name, value in {**_fitted_arrays(est), **outputs}.items():
            if isinstance(value, torch.Tensor):
                assert value.device.type == data.device.type, f"{cls.__name__}.{name}"
            elif np.issubdtype(np.asarray(value).dtype, np.floating):
                raise AssertionError(f"{cls.__name__}.{name}: NumPy floats on a torch input")
        fits[device] = outputs
    for key, value in fits[DEVICE].items():
        want = fits["cpu"][key]
        if cls.__name__ in FEATURE_MAPS and key.startswith("transform"):
            value, want = (_host(Z) @ _host(Z).T for Z in (value, want))
        _close(value, want, 1e-6, f"{cls.__name__}.{key}")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize(
    "kernel",
    [
        Gaussian(0.9),
        Laplacian(1.1),
        Matern(0.7, 0.8),
        Matern(2.5),
        Polynomial(3),
        TensorMatern(1.5),
    ],
    ids=repr,
)
def test_gram_on_the_device_equals_the_cpu_gram(kernel, dtype):
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((700, 5)), rng.standard_normal((300, 5))
    for args in ((X,), (X, Y)):
        on_device = kernel(*(torch.as_tensor(a, dtype=dtype, device=DEVICE) for a in args))
        on_cpu = kernel(*(torch.as_tensor(a, dtype=dtype) for a in args))
        assert on_device.device.type == torch.device(DEVICE).type and on_device.dtype == dtype
        _close(on_device, on_cpu, 1e-4 if dtype == torch.float32 else 1e-12, repr(kernel))


def _regression(n: int, dtype: torch.dtype) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    X = rng.standard_normal((n, 6))
    y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(n)
    return X.astype(torch.empty(0, dtype=dtype).numpy().dtype), y


TOLERANCE = {torch.float32: 1e-3, torch.float64: 1e-7}
"""Device against CPU, relative: float32 tiles sum ``n`` products in another order."""


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("method", ["onepass", "pcg", "auto"])
def test_nystrom_ridge_on_the_device_equals_the_cpu_fit(method, dtype):
    X, y = _regression(20_000, dtype)
    preds = {}
    for device in ("cpu", DEVICE):
        est = kernelkit.KernelRidge(
            Gaussian(2.0),
            lam=1e-5,
            solver="auto" if method == "auto" else "nystrom",
            nystrom_method="auto" if method == "auto" else method,
            n_centers=800,
            random_state=0,
            tol=1e-8,
        )
        data = torch.as_tensor(X, device=device)
        est.fit(data, torch.as_tensor(y, device=device))
        pred = est.predict(data)
        assert pred.device.type == data.device.type and est.dual_coef_.device == data.device
        preds[device] = (pred, getattr(est, "nystrom_method_", est.solver_))
    assert preds[DEVICE][1] == preds["cpu"][1], "auto chose by the device"
    _close(preds[DEVICE][0], preds["cpu"][0], TOLERANCE[dtype], f"KernelRidge[{method}]")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_unmapped_one_pass_on_the_device_equals_the_cpu_fit(dtype, monkeypatch):
    # lam = 1e-3, tol = 1e-4: unmapped_error_bound is 2.6e-6, so both devices sum the tiles'
    # unmapped products and map them once (models.falkon.to_features, counted)
    X, y = _regression(20_000, dtype)
    calls = []
    monkeypatch.setattr(falkon, "to_features", lambda *a: calls.append(1) or to_features(*a))
    preds = {}
    for device in ("cpu", DEVICE):
        est = kernelkit.KernelRidge(
            Gaussian(2.0),
            lam=1e-3,
            solver="nystrom",
            nystrom_method="onepass",
            n_centers=300,
            random_state=0,
            tol=1e-4,
        )
        data = torch.as_tensor(X, device=device)
        preds[device] = est.fit(data, torch.as_tensor(y, device=device)).predict(data)
        assert preds[device].device.type == data.device.type
    assert calls == [1, 1]
    _close(preds[DEVICE], preds["cpu"], TOLERANCE[dtype], "KernelRidge[onepass, unmapped]")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_nystrom_logistic_regression_on_the_device_equals_the_cpu_fit(dtype):
    X, y = _regression(20_000, dtype)
    labels = (y > 0).astype(np.int64)
    values = {}
    for device in ("cpu", DEVICE):
        est = kernelkit.KernelLogisticRegression(
            Gaussian(2.0),
            lam=1e-5,
            solver="nystrom",
            nystrom_method="pcg",
            n_centers=800,
            random_state=0,
            tol=1e-8,
        )
        data = torch.as_tensor(X, device=device)
        est.fit(data, torch.as_tensor(labels, device=device))
        values[device] = est.decision_function(data)
        assert values[device].device.type == data.device.type
    _close(values[DEVICE], values["cpu"], 10 * TOLERANCE[dtype], "KernelLogisticRegression")


def test_nystrom_kernel_pca_and_kmeans_on_the_device_equal_the_cpu_fit():
    rng = np.random.default_rng(2)
    n = 20_000
    angle = rng.uniform(0, 2 * np.pi, n)
    radius = np.where(rng.random(n) < 0.5, 1.0, 3.0)
    X = np.c_[radius * np.cos(angle), radius * np.sin(angle)] + 0.05 * rng.standard_normal((n, 2))
    truth = (radius > 2).astype(int)
    results = {}
    for device in ("cpu", DEVICE):
        data = torch.as_tensor(X, device=device)
        pca = kernelkit.KernelPCA(
            Gaussian(1.0), n_components=4, solver="nystrom", n_centers=500, random_state=0
        )
        scores = pca.fit_transform(data)
        km = kernelkit.KernelKMeans(
            2, Gaussian(1.0), solver="nystrom", n_centers=500, random_state=0, n_init=1
        )
        labels = km.fit_predict(data)
        assert scores.device.type == data.device.type
        results[device] = (scores, _host(labels))
    _close(results[DEVICE][0].abs(), results["cpu"][0].abs(), 1e-7, "KernelPCA[nystrom]")
    assert adjusted_rand_score(results[DEVICE][1], results["cpu"][1]) == 1.0
    assert adjusted_rand_score(truth, results[DEVICE][1]) >= 0.99
