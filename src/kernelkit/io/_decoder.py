"""Decoding of the JSON nodes and named arrays of :mod:`kernelkit.io._codec` into objects.

Only registered classes are instantiated and no name read from a file is imported; every
malformed node is refused with a :class:`~kernelkit.io.ModelFileError`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn

from kernelkit.io._codec import (
    MAX_INLINE_BYTES,
    MODULE_INTERNALS,
    NUMPY_KINDS,
    TEXT_KINDS,
    TORCH_DTYPES,
)
from kernelkit.io._errors import ModelFileError
from kernelkit.io._registry import ClassEntry
from kernelkit.io._values import VALUE_CODECS

__all__ = ["Decoder"]


class Decoder:
    """Rebuilds values from JSON nodes and the arrays of a model file.

    Only registered classes are instantiated; every malformed node is refused with a
    :class:`ModelFileError` naming the file (``source``) and the attribute path.
    """

    def __init__(self, table: dict[str, ClassEntry], arrays: dict[str, torch.Tensor], source: str):
        self.table = table
        self.arrays = arrays
        self.source = source
        self.used: set[str] = set()
        self._objects: dict[int, Any] = {}
        self._decoded: dict[tuple[str, str], Any] = {}

    def refuse(self, path: str, reason: str) -> ModelFileError:
        """The error refusing the file because of the node at ``path``."""
        where = f"{path}: " if path else ""
        return ModelFileError(" ".join(f"{self.source}: {where}{reason}".split()))

    def field(
        self, node: dict[str, Any], key: str, kind: type | tuple[type, ...], path: str
    ) -> Any:
        """``node[key]``, which must exist and be of type ``kind``."""
        value = node.get(key)
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
            raise self.refuse(path, f"expected {key!r} in this node, got {value!r:.60}")
        return value

    def array(
        self, node: dict[str, Any], path: str, dtype: torch.dtype | None = None
    ) -> torch.Tensor:
        """The stored tensor named by ``node["array"]``."""
        name = self.field(node, "array", str, path)
        if name not in self.arrays:
            raise self.refuse(path, f"array {name!r} is missing from arrays.safetensors")
        tensor = self.arrays[name]
        if dtype is not None and tensor.dtype != dtype:
            raise self.refuse(path, f"array {name!r}: expected dtype {dtype}, got {tensor.dtype}")
        self.used.add(name)
        order = node.get("order")
        if order is None:
            return tensor
        if type(order) is not list or sorted(order) != list(range(tensor.ndim)):
            raise self.refuse(
                path, f"expected 'order' to be a permutation of the array's axes, got {order!r:.40}"
            )
        inverse = sorted(range(tensor.ndim), key=order.__getitem__)
        return tensor.permute(inverse)

    def decode(self, node: Any, path: str) -> Any:
        """The value of the JSON node found at ``path``."""
        if node is None or type(node) in (bool, int, str, float):
            return node
        if type(node) is list:
            return [self.decode(v, f"{path}.{i}") for i, v in enumerate(node)]
        if type(node) is not dict:
            raise self.refuse(path, f"expected a JSON value node, got {type(node).__name__}")
        tag = node.get("type")
        handler = _DECODE_TAG.get(tag) if isinstance(tag, str) else None
        if handler is not None:
            return handler(self, node, path)
        for codec in VALUE_CODECS:
            if codec.tag == tag:
                return codec.decode(node, self, path)
        raise self.refuse(path, f"unknown value type {tag!r:.60}")

    def decode_fields(self, node: dict[str, Any], key: str, path: str) -> dict[str, Any]:
        """The ``{name: value}`` mapping stored as ``node[key]``."""
        fields = self.field(node, key, dict, path)
        return {k: self.decode(v, f"{path}.{k}" if path else k) for k, v in fields.items()}

    def _memo(self, node: dict[str, Any], path: str, tag: str, build: Callable[[], Any]) -> Any:
        name = self.field(node, "array", str, path)
        if (tag, name) not in self._decoded:
            self._decoded[tag, name] = build()
        return self._decoded[tag, name]

    def _tensor(self, node: dict[str, Any], path: str) -> torch.Tensor:
        def build() -> torch.Tensor:
            tensor = self.array(node, path)
            grad = self.field(node, "requires_grad", bool, path)
            if node["type"] == "parameter":
                return nn.Parameter(tensor, requires_grad=grad)
            return tensor.requires_grad_(grad) if grad else tensor

        return self._memo(node, path, node["type"], build)

    def _ndarray(self, node: dict[str, Any], path: str) -> np.ndarray:
        def build() -> np.ndarray:
            tensor = self.array(node, path)
            if tensor.dtype == torch.bfloat16:
                raise self.refuse(path, "expected a NumPy dtype, got bfloat16")
            return tensor.numpy()

        return self._memo(node, path, "ndarray", build)

    def numpy_dtype(self, name: Any, path: str, kinds: str, count: int = 1) -> np.dtype:
        """A NumPy dtype from its ``dtype.str``, restricted to the dtype ``kinds``.

        ``count`` values of it must fit in :data:`MAX_INLINE_BYTES` (a hostile ``"<U999999999"``
        would otherwise allocate gigabytes for one short string).
        """
        try:
            dtype = np.dtype(name) if isinstance(name, str) else None
        except TypeError:
            dtype = None
        if dtype is None or dtype.kind not in kinds:
            raise self.refuse(path, f"expected a NumPy dtype of kind {kinds!r}, got {name!r:.40}")
        if dtype.itemsize * max(count, 1) > MAX_INLINE_BYTES:
            raise self.refuse(path, f"dtype {name} is too wide for {count} inline value(s)")
        return dtype

    def _ndarray_text(self, node: dict[str, Any], path: str) -> np.ndarray:
        items = self.field(node, "items", list, path)
        dtype = self.numpy_dtype(node.get("dtype"), path, TEXT_KINDS, len(items))
        if not all(type(v) is str for v in items):
            raise self.refuse(path, "expected strings as the items of a text array")
        return np.array(items, dtype=dtype).reshape(self._shape(node, path, len(items)))

    def _ndarray_object(self, node: dict[str, Any], path: str) -> np.ndarray:
        items = [
            self.decode(v, f"{path}.{i}")
            for i, v in enumerate(self.field(node, "items", list, path))
        ]
        array = np.empty(len(items), dtype=object)
        array[:] = items
        return array.reshape(self._shape(node, path, len(items)))

    def _shape(self, node: dict[str, Any], path: str, size: int) -> tuple[int, ...]:
        shape = self.field(node, "shape", list, path)
        if not all(type(d) is int and d >= 0 for d in shape) or math.prod(shape) != size:
            raise self.refuse(path, f"shape {shape!r:.40} does not match {size} items")
        return tuple(shape)

    def _object(self, node: dict[str, Any], path: str) -> Any:
        name = self.field(node, "class", str, path)
        entry = self.table.get(name)
        if entry is None:
            raise self.refuse(path, f"unknown class {name!r:.80}: not a registered kernelkit class")
        if node.get("kind") != entry.kind:
            raise self.refuse(
                path, f"class {name!r} is of kind {entry.kind!r}, got {node.get('kind')!r:.40}"
            )
        oid = self.field(node, "id", int, path)
        if oid in self._objects:
            raise self.refuse(path, f"object id {oid} is defined twice")
        try:
            value = _DECODE_KIND[entry.kind](self, entry.cls, node, path)
        except (ModelFileError, RecursionError):  # reported as such by load
            raise
        except Exception as exc:  # a constructor refusing the saved parameters
            raise self.refuse(path, f"cannot rebuild {name}: {type(exc).__name__}: {exc}") from exc
        reason = entry.check(value) if entry.check is not None else None
        if reason is not None:
            raise self.refuse(path, reason)
        self._objects[oid] = value
        return value

    def _ref(self, node: dict[str, Any], path: str) -> Any:
        oid = self.field(node, "id", int, path)
        if oid not in self._objects:
            raise self.refuse(path, f"reference to object id {oid}, which is not defined before it")
        return self._objects[oid]


def _decode_float(dec: Decoder, node: dict[str, Any], path: str) -> float:
    value = node.get("value")
    if value not in ("nan", "inf", "-inf"):
        raise dec.refuse(path, f"expected 'nan', 'inf' or '-inf', got {value!r:.40}")
    return float(value)


def _decode_items(dec: Decoder, node: dict[str, Any], path: str) -> list[Any]:
    return [
        dec.decode(v, f"{path}.{i}") for i, v in enumerate(dec.field(node, "items", list, path))
    ]


def _decode_dict(dec: Decoder, node: dict[str, Any], path: str) -> dict[Any, Any]:
    out = {}
    for pair in dec.field(node, "items", list, path):
        if type(pair) is not list or len(pair) != 2:
            raise dec.refuse(path, "expected [key, value] pairs in a dict node")
        key = dec.decode(pair[0], f"{path}.key")
        try:
            out[key] = dec.decode(pair[1], f"{path}.{key}")
        except TypeError as exc:  # an unhashable key
            raise dec.refuse(path, f"invalid dict key: {exc}") from exc
    return out


def _decode_numpy_scalar(dec: Decoder, node: dict[str, Any], path: str) -> np.generic:
    dtype = dec.numpy_dtype(node.get("dtype"), path, NUMPY_KINDS + TEXT_KINDS)
    value = dec.decode(node.get("value"), path)
    if type(value) not in (bool, int, float, str):
        raise dec.refuse(path, f"expected a scalar value, got {type(value).__name__}")
    return np.array(value, dtype=dtype)[()]


def _decode_torch_dtype(dec: Decoder, node: dict[str, Any], path: str) -> torch.dtype:
    name = node.get("name")
    if name not in TORCH_DTYPES:
        raise dec.refuse(
            path, f"expected a torch dtype in {sorted(TORCH_DTYPES)}, got {name!r:.40}"
        )
    return TORCH_DTYPES[name]


def _decode_torch_device(dec: Decoder, node: dict[str, Any], path: str) -> torch.device:
    try:
        return torch.device(dec.field(node, "name", str, path))
    except RuntimeError as exc:
        raise dec.refuse(path, f"invalid torch device: {exc}") from exc


_DECODE_TAG: dict[str, Callable[[Decoder, dict[str, Any], str], Any]] = {
    "float": _decode_float,
    "tuple": lambda dec, node, path: tuple(_decode_items(dec, node, path)),
    "dict": _decode_dict,
    "tensor": Decoder._tensor,
    "parameter": Decoder._tensor,
    "ndarray": Decoder._ndarray,
    "ndarray_text": Decoder._ndarray_text,
    "ndarray_object": Decoder._ndarray_object,
    "numpy_scalar": _decode_numpy_scalar,
    "numpy_dtype": lambda dec, node, path: dec.numpy_dtype(
        node.get("name"), path, NUMPY_KINDS + TEXT_KINDS
    ),
    "torch_dtype": _decode_torch_dtype,
    "torch_device": _decode_torch_device,
    "object": Decoder._object,
    "ref": Decoder._ref,
}


def _restore(dec: Decoder, value: Any, attributes: dict[str, Any], path: str) -> None:
    for key in attributes:
        if not key.isidentifier() or key in MODULE_INTERNALS or key.startswith("__"):
            raise dec.refuse(path, f"invalid attribute name {key!r:.40}")
    vars(value).update(attributes)


def _decode_estimator(dec: Decoder, cls: type, node: dict[str, Any], path: str) -> Any:
    value = cls(**dec.decode_fields(node, "parameters", path))
    _restore(dec, value, dec.decode_fields(node, "attributes", path), path)
    return value


def _decode_kernel(dec: Decoder, cls: type, node: dict[str, Any], path: str) -> Any:
    return cls(**dec.decode_fields(node, "parameters", path))


def _decode_module(dec: Decoder, cls: type, node: dict[str, Any], path: str) -> nn.Module:
    module = cls.__new__(cls)
    nn.Module.__init__(module)
    for name, param in dec.decode_fields(node, "parameters", path).items():
        if param is not None and not isinstance(param, nn.Parameter):
            raise dec.refuse(f"{path}.{name}", "expected a torch parameter")
        module.register_parameter(name, param)
    transient = set(dec.field(node, "non_persistent", list, path))
    for name, buffer in dec.decode_fields(node, "buffers", path).items():
        if buffer is not None and not isinstance(buffer, torch.Tensor):
            raise dec.refuse(f"{path}.{name}", "expected a tensor buffer")
        module.register_buffer(name, buffer, persistent=name not in transient)
    for name, sub in dec.decode_fields(node, "submodules", path).items():
        if sub is not None and not isinstance(sub, nn.Module):
            raise dec.refuse(f"{path}.{name}", "expected a torch module")
        module.add_module(name, sub)
    _restore(dec, module, dec.decode_fields(node, "attributes", path), path)
    module.training = dec.field(node, "training", bool, path)
    return module


def _decode_dataclass(dec: Decoder, cls: type, node: dict[str, Any], path: str) -> Any:
    values = dec.decode_fields(node, "fields", path)
    fields = dataclasses.fields(cls)
    if set(values) != {f.name for f in fields}:
        raise dec.refuse(
            path, f"expected the fields {sorted(f.name for f in fields)} of {cls.__name__}"
        )
    value = cls(**{f.name: values[f.name] for f in fields if f.init})
    for f in fields:
        if not f.init:
            object.__setattr__(value, f.name, values[f.name])
    return value


def _decode_state(dec: Decoder, cls: type, node: dict[str, Any], path: str) -> Any:
    value = cls.__new__(cls)
    _restore(dec, value, dec.decode_fields(node, "attributes", path), path)
    return value


_DECODE_KIND: dict[str, Callable[[Decoder, type, dict[str, Any], str], Any]] = {
    "estimator": _decode_estimator,
    "kernel": _decode_kernel,
    "module": _decode_module,
    "dataclass": _decode_dataclass,
    "state": _decode_state,
}
