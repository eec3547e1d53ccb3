"""Encoding of fitted objects into the JSON nodes and named arrays of :mod:`kernelkit.io._codec`."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn

from kernelkit.io._codec import MODULE_INTERNALS, NUMPY_KINDS, TEXT_KINDS, TORCH_DTYPES, dtype_name
from kernelkit.io._errors import ModelFileError
from kernelkit.io._registry import ClassEntry
from kernelkit.io._values import VALUE_CODECS
from kernelkit.kernels import Kernel

__all__ = ["Encoder"]


class Encoder:
    """Walks a value, returning its JSON node and collecting its arrays in :attr:`arrays`."""

    def __init__(self, table: dict[str, ClassEntry]):
        self.names = {entry.cls: name for name, entry in table.items()}
        self.table = table
        self.arrays: dict[str, torch.Tensor] = {}
        self._array_fields: dict[int, dict[str, Any]] = {}
        self._object_ids: dict[int, int] = {}
        self._active: set[int] = set()
        self._keep: list[Any] = []  # keeps every memoised object alive (ids stay unique)

    def store(self, tensor: torch.Tensor, path: str, key: Any = None) -> dict[str, Any]:
        """Add a tensor under the name ``path`` (once per ``key`` object).

        Returns the node fields ``{"array": name}``, plus ``"order"`` when the tensor's memory
        layout is a permutation of the dimensions other than the row-major one (a transposed
        or Fortran-ordered array): the array is stored in memory order and permuted back on
        loading, so that results computed from it are bit-for-bit the same.
        """
        memo = id(tensor if key is None else key)
        if memo in self._array_fields:
            return self._array_fields[memo]
        if tensor.layout != torch.strided or dtype_name(tensor) not in TORCH_DTYPES:
            raise ModelFileError(
                f"cannot save {path}: expected a dense tensor with a dtype in "
                f"{sorted(TORCH_DTYPES)}, got {tensor.layout} {tensor.dtype}"
            )
        name, copy = path, 1
        while name in self.arrays:  # e.g. dict keys 1 and "1" at the same path
            copy += 1
            name = f"{path}#{copy}"
        order = sorted(range(tensor.ndim), key=lambda d: (-tensor.stride(d), d))
        permuted = tensor.detach().permute(order)
        fields: dict[str, Any] = {"array": name}
        if order != sorted(order) and permuted.is_contiguous():
            fields["order"] = order
        else:
            permuted = tensor.detach()
        self.arrays[name] = torch.empty(permuted.shape, dtype=tensor.dtype).copy_(permuted)
        self._array_fields[memo] = fields
        self._keep.append(tensor if key is None else key)
        return fields

    def encode(self, value: Any, path: str) -> Any:
        """The JSON node of ``value`` found at ``path`` (dotted attribute path)."""
        kind = type(value)
        if value is None or kind in (bool, int, str):
            return value
        if kind is float:
            return value if math.isfinite(value) else {"type": "float", "value": repr(value)}
        if kind is list:
            return [self.encode(v, f"{path}.{i}") for i, v in enumerate(value)]
        if kind is tuple:
            return {
                "type": "tuple",
                "items": [self.encode(v, f"{path}.{i}") for i, v in enumerate(value)],
            }
        if kind is dict:
            return {
                "type": "dict",
                "items": [
                    [self.encode(k, f"{path}.key"), self.encode(v, f"{path}.{k}")]
                    for k, v in value.items()
                ],
            }
        if isinstance(value, torch.Tensor):
            tag = "parameter" if isinstance(value, nn.Parameter) else "tensor"
            fields = self.store(value, path)
            return {"type": tag, **fields, "requires_grad": bool(value.requires_grad)}
        if isinstance(value, np.ndarray) and not isinstance(value, np.ma.MaskedArray):
            return self._ndarray(value, path)
        if isinstance(value, np.generic):
            return {
                "type": "numpy_scalar",
                "dtype": self._numpy_dtype(value.dtype, path),
                "value": self.encode(value.item(), path),
            }
        if isinstance(value, np.dtype):
            return {"type": "numpy_dtype", "name": self._numpy_dtype(value, path)}
        if isinstance(value, torch.dtype):
            return {"type": "torch_dtype", "name": str(value).removeprefix("torch.")}
        if isinstance(value, torch.device):
            return {"type": "torch_device", "name": str(value)}
        for codec in VALUE_CODECS:
            if codec.accepts(value):
                return {"type": codec.tag, **codec.encode(value, self, path)}
        if kind in self.names:
            return self._object(value, path)
        raise ModelFileError(
            f"cannot save {path}: values of type {kind.__module__}.{kind.__qualname__} are not "
            "supported; register the class with kernelkit.io.register(cls, kind)"
        )

    @staticmethod
    def _numpy_dtype(dtype: np.dtype, path: str) -> str:
        if dtype.kind not in NUMPY_KINDS + TEXT_KINDS:
            raise ModelFileError(f"cannot save {path}: NumPy dtype {dtype} is not supported")
        return dtype.str

    def _ndarray(self, array: np.ndarray, path: str) -> dict[str, Any]:
        shape = list(array.shape)
        if array.dtype.kind in TEXT_KINDS:
            items = array.ravel().tolist()
            return {
                "type": "ndarray_text",
                "dtype": array.dtype.str,
                "shape": shape,
                "items": items,
            }
        if array.dtype.kind == "O":
            items = [self.encode(v, f"{path}.{i}") for i, v in enumerate(array.ravel())]
            return {"type": "ndarray_object", "shape": shape, "items": items}
        self._numpy_dtype(array.dtype, path)
        native = array.astype(array.dtype.newbyteorder("="), copy=False)  # keeps the layout
        if any(stride < 0 for stride in native.strides):  # torch takes no negative strides
            native = native.copy()
        return {"type": "ndarray", **self.store(torch.from_numpy(native), path, key=array)}

    def _object(self, value: Any, path: str) -> dict[str, Any]:
        memo = id(value)
        if memo in self._object_ids:
            return {"type": "ref", "id": self._object_ids[memo]}
        if memo in self._active:
            raise ModelFileError(f"cannot save {path}: the object refers back to itself (a cycle)")
        name = self.names[type(value)]
        kind = self.table[name].kind
        self._active.add(memo)
        fields = _ENCODE_KIND[kind](self, value, path)
        self._active.discard(memo)
        self._object_ids[memo] = len(self._object_ids)
        self._keep.append(value)
        return {
            "type": "object",
            "class": name,
            "kind": kind,
            "id": self._object_ids[memo],
            **fields,
        }

    def encode_fields(self, values: dict[str, Any], path: str) -> dict[str, Any]:
        """A ``{name: node}`` JSON object of string-keyed values."""
        return {k: self.encode(v, f"{path}.{k}" if path else k) for k, v in values.items()}


def _encode_estimator(enc: Encoder, value: Any, path: str) -> dict[str, Any]:
    params = value.get_params(deep=False)
    attributes = {k: v for k, v in vars(value).items() if k not in params}
    return {
        "parameters": enc.encode_fields(params, path),
        "attributes": enc.encode_fields(attributes, path),
    }


def _encode_kernel(enc: Encoder, value: Kernel, path: str) -> dict[str, Any]:
    if value._parameters or value._buffers:
        raise ModelFileError(
            f"cannot save {path}: kernel {type(value).__name__} holds torch parameters or buffers "
            "beyond its __init__ arguments; register it with kind 'module'"
        )
    return {"parameters": enc.encode_fields(value.get_params(deep=False), path)}


def _encode_module(enc: Encoder, value: nn.Module, path: str) -> dict[str, Any]:
    attributes = {k: v for k, v in vars(value).items() if k not in MODULE_INTERNALS}
    return {
        "training": bool(value.training),
        "parameters": enc.encode_fields(dict(value._parameters), path),
        "buffers": enc.encode_fields(dict(value._buffers), path),
        "non_persistent": sorted(value._non_persistent_buffers_set),
        "submodules": enc.encode_fields(dict(value._modules), path),
        "attributes": enc.encode_fields(attributes, path),
    }


def _encode_dataclass(enc: Encoder, value: Any, path: str) -> dict[str, Any]:
    fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    return {"fields": enc.encode_fields(fields, path)}


def _encode_state(enc: Encoder, value: Any, path: str) -> dict[str, Any]:
    return {"attributes": enc.encode_fields(vars(value), path)}


_ENCODE_KIND: dict[str, Callable[[Encoder, Any, str], dict[str, Any]]] = {
    "estimator": _encode_estimator,
    "kernel": _encode_kernel,
    "module": _encode_module,
    "dataclass": _encode_dataclass,
    "state": _encode_state,
}
