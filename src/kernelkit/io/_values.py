"""Codecs of values that are not instances of registered classes (NumPy random generators,
masked arrays).

A :class:`ValueCodec` turns a value into the fields of a JSON node (arrays go through the
encoder's ``store``) and back; :data:`VALUE_CODECS` lists them, tried in order before the
class registry.  Decoding builds values only from data: no name read from a file is imported.
The codecs see the encoder and decoder through the two protocols below, so this module
imports neither (:mod:`kernelkit.io._encoder` and :mod:`kernelkit.io._decoder` import it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np


class Encoder(Protocol):
    """What a value codec needs of :class:`kernelkit.io._encoder.Encoder`."""

    def encode(self, value: Any, path: str) -> Any: ...


class Decoder(Protocol):
    """What a value codec needs of :class:`kernelkit.io._decoder.Decoder`."""

    def decode(self, node: Any, path: str) -> Any: ...

    def refuse(self, path: str, reason: str) -> Exception: ...


@dataclass(frozen=True)
class ValueCodec:
    """Encoding of a value type that is not a registered class (e.g. NumPy generators).

    ``accepts(value)`` says whether the codec applies; ``encode(value, encoder, path)`` returns
    the node's fields (without ``type``); ``decode(node, decoder, path)`` rebuilds the value.
    """

    tag: str
    accepts: Callable[[Any], bool]
    encode: Callable[[Any, Encoder, str], dict[str, Any]]
    decode: Callable[[dict[str, Any], Decoder, str], Any]


_BIT_GENERATORS = {
    cls.__name__: cls
    for cls in (np.random.PCG64, np.random.PCG64DXSM, np.random.MT19937, np.random.Philox,
                np.random.SFC64)
}  # fmt: skip
"""NumPy bit generators a saved ``Generator`` may use (their state is plain numbers)."""


def _encode_generator(rng: np.random.Generator, encoder: Encoder, path: str) -> dict[str, Any]:
    return {"state": encoder.encode(rng.bit_generator.state, f"{path}.state")}


def _decode_generator(node: dict[str, Any], decoder: Decoder, path: str) -> np.random.Generator:
    state = decoder.decode(node.get("state"), f"{path}.state")
    name = state.get("bit_generator") if isinstance(state, dict) else None
    if name not in _BIT_GENERATORS:
        raise decoder.refuse(path, f"expected a bit generator in {sorted(_BIT_GENERATORS)}")
    bit_generator = _BIT_GENERATORS[name]()
    try:
        bit_generator.state = state
    except (TypeError, ValueError, KeyError) as exc:
        raise decoder.refuse(path, f"invalid {name} state ({exc})") from exc
    return np.random.Generator(bit_generator)


def _encode_random_state(rs: np.random.RandomState, encoder: Encoder, path: str) -> dict[str, Any]:
    return {"state": encoder.encode(rs.get_state(legacy=False), f"{path}.state")}


def _decode_random_state(
    node: dict[str, Any], decoder: Decoder, path: str
) -> np.random.RandomState:
    state = decoder.decode(node.get("state"), f"{path}.state")
    rs = np.random.RandomState()
    try:
        rs.set_state(state)
    except (TypeError, ValueError, KeyError) as exc:
        raise decoder.refuse(path, f"invalid RandomState state ({exc})") from exc
    return rs


def _encode_masked(array: np.ma.MaskedArray, encoder: Encoder, path: str) -> dict[str, Any]:
    return {
        "data": encoder.encode(np.asarray(array.data), f"{path}.data"),
        "mask": encoder.encode(np.ma.getmaskarray(array), f"{path}.mask"),
    }


def _decode_masked(node: dict[str, Any], decoder: Decoder, path: str) -> np.ma.MaskedArray:
    data = decoder.decode(node.get("data"), f"{path}.data")
    mask = decoder.decode(node.get("mask"), f"{path}.mask")
    if not (isinstance(data, np.ndarray) and isinstance(mask, np.ndarray)):
        raise decoder.refuse(path, "expected arrays as the data and mask of a masked array")
    if mask.dtype != np.bool_ or mask.shape != data.shape:
        raise decoder.refuse(path, f"expected a boolean mask of shape {data.shape}")
    return np.ma.MaskedArray(data, mask=mask)


VALUE_CODECS: list[ValueCodec] = [
    ValueCodec(
        "numpy_generator",
        lambda value: type(value) is np.random.Generator,
        _encode_generator,
        _decode_generator,
    ),
    ValueCodec(
        "numpy_random_state",
        lambda value: type(value) is np.random.RandomState,
        _encode_random_state,
        _decode_random_state,
    ),
    ValueCodec(
        "numpy_masked_array",
        lambda value: isinstance(value, np.ma.MaskedArray),
        _encode_masked,
        _decode_masked,
    ),
]
"""Codecs of value types that are not registered classes, tried in order."""
