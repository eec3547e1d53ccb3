"""The class registry of kernelkit.io enrols itself, and the value codec is exact for every
supported value type."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
import torch
from sklearn.base import is_classifier, is_regressor

import kernelkit
import kernelkit.kernels as kernels_module
from kernelkit.io import _registry as registry
from kernelkit.io import load, register, save
from kernelkit.kernels import Kernel
from kernelkit.utils._errors import InputError

pytest.importorskip("safetensors", reason="kernelkit.io needs the io extra")

TOP_LEVEL_ESTIMATORS = [n for n in kernelkit.__all__ if n[0].isupper()]
FAST = {"max_iter": 3, "n_restarts": 2}
VECTOR_INPUT = {
    name: {"patch_sizes": (1, 1), "subsamplings": (1, 1), "n_filters": (4, 6)}
    for name in ("CKNFeatures", "CKNClassifier")
}
"""Image CKNs read the 3-column test data as 1 x 1 images: 1 x 1 patches, no pooling."""


@pytest.fixture(autouse=True)
def _one_thread(one_torch_thread):
    """Tiny problems: one torch thread."""


@pytest.mark.parametrize("name", TOP_LEVEL_ESTIMATORS)
def test_every_top_level_estimator_is_enrolled_and_roundtrips(name, tmp_path):
    cls = getattr(kernelkit, name)
    entry = registry.class_table()[name]
    assert entry.cls is cls and entry.kind == "estimator"
    model = cls()
    params = model.get_params()
    model.set_params(**{k: v for k, v in FAST.items() if k in params and params[k] > 0})
    model.set_params(**VECTOR_INPUT.get(name, {}))
    rng = np.random.default_rng(1)
    X, X_new = rng.normal(size=(20, 3)), rng.normal(size=(5, 3))
    if is_classifier(model):
        model.fit(X, np.where(X[:, 0] > 0, "a", "b"))
    elif is_regressor(model):
        model.fit(X, X[:, 0] ** 2)
    elif model.__sklearn_tags__().target_tags.required:  # two views (KernelCCA)
        model.fit(X, X[:, :2] ** 2)
    else:
        model.fit(X)
    loaded = load(save(model, tmp_path / "model.zip"))
    for method in ("predict", "transform", "decision_function"):
        if hasattr(model, method):
            assert np.array_equal(getattr(model, method)(X_new), getattr(loaded, method)(X_new))


def _default_kernels():
    for _, cls in inspect.getmembers(kernels_module, inspect.isclass):
        if issubclass(cls, Kernel) and not inspect.isabstract(cls):
            try:
                yield cls()
            except TypeError:  # needs arguments (composites, node kernels on a graph)
                continue


@pytest.mark.parametrize("kernel", list(_default_kernels()), ids=repr)
def test_every_default_kernel_roundtrips(kernel, tmp_path):
    assert registry.class_table()[type(kernel).__name__].kind == "kernel"
    loaded = load(save(kernel, tmp_path / "kernel"))
    assert type(loaded) is type(kernel) and repr(loaded) == repr(kernel)


def test_node_kernel_on_a_networkx_graph_is_refused_at_save(tmp_path):
    nx = pytest.importorskip("networkx")
    from kernelkit.kernels import Diffusion

    with pytest.raises(kernelkit.io.ModelFileError, match="cannot save graph: values of type"):
        save(Diffusion(nx.path_graph(4)), tmp_path / "k")
    assert not (tmp_path / "k").exists()


class _Holder:
    """A plain object holding one value of every supported type."""


def _every_value():
    rng = np.random.default_rng(0)
    fortran = np.asfortranarray(rng.normal(size=(3, 4)))
    tensor = torch.arange(12.0).reshape(3, 4)
    return {
        "none": None,
        "flags": [True, False],
        "int": -(2**40),
        "float": 0.1,
        "specials": (math.inf, -math.inf),
        "text": "naïve ✓",
        "nested": {"a": [1, (2, 3)], 4: "int key", (5, 6): "tuple key"},
        "int32": np.arange(5, dtype=np.int32),
        "bool_array": np.array([[True, False]]),
        "uint8": np.arange(256, dtype=np.uint8),
        "float16": np.linspace(0, 1, 7, dtype=np.float16),
        "big_endian": np.arange(4, dtype=">f8"),
        "fortran": fortran,
        "reversed": np.arange(6)[::-1],
        "empty": np.zeros((0, 3)),
        "strings": np.array([["ab", "c"], ["", "dé"]]),
        "objects": np.array([1, "two", None], dtype=object),
        "scalar_f32": np.float32(1.5),
        "scalar_i64": np.int64(-7),
        "scalar_str": np.str_("x"),
        "dtype": np.dtype(np.float32),
        "torch_dtype": torch.bfloat16,
        "device": torch.device("cpu"),
        "tensor": tensor,
        "transposed": tensor.T,
        "same_tensor_again": tensor,
        "bf16": torch.ones(3, dtype=torch.bfloat16),
        "grad": torch.ones(2, requires_grad=True),
        "parameter": torch.nn.Parameter(torch.zeros(2, 2)),
        "scalar_tensor": torch.tensor(3.0),
        "generator": np.random.default_rng(5),
        "mt_generator": np.random.Generator(np.random.MT19937(2)),
        "random_state": np.random.RandomState(3),
    }


def test_every_value_type_roundtrips_exactly(tmp_path, monkeypatch, same_state):
    monkeypatch.setattr(registry, "_EXTRA", {})
    register(_Holder, "state")
    holder = _Holder()
    values = _every_value()
    vars(holder).update(values)
    for rng in (values["generator"], values["mt_generator"], values["random_state"]):
        rng.random(3)  # save a state other than the seed's
    loaded = load(save(holder, tmp_path / "holder.zip"))
    same_state(holder, loaded)
    assert loaded.tensor is loaded.same_tensor_again
    assert loaded.generator.random() == holder.generator.random()


def test_register_validates(monkeypatch):
    monkeypatch.setattr(registry, "_EXTRA", {})
    with pytest.raises(InputError, match="kind: expected one of"):
        register(_Holder, "pickle")
    with pytest.raises(InputError, match="'KernelRidge' is already registered"):
        register(_Holder, "state", name="KernelRidge")
    assert register(_Holder, "state", name="Holder") is _Holder
    assert registry.class_table()["Holder"].cls is _Holder


def test_unregistered_class_is_refused_at_save(tmp_path):
    with pytest.raises(kernelkit.io.ModelFileError, match="register the class"):
        save(_Holder(), tmp_path / "h")


def test_cycles_are_refused_at_save(tmp_path, monkeypatch):
    monkeypatch.setattr(registry, "_EXTRA", {})
    register(_Holder, "state")
    holder = _Holder()
    holder.me = holder
    with pytest.raises(kernelkit.io.ModelFileError, match="cycle"):
        save(holder, tmp_path / "h")
