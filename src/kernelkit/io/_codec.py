"""The value codec of :mod:`kernelkit.io`: objects to JSON nodes plus named arrays, and back.

Every value of a fitted estimator becomes a JSON node:

* ``None``, ``bool``, ``int``, ``str`` and finite ``float`` are written as themselves, a
  ``list`` as a JSON array of nodes;
* everything else is a JSON object with a ``"type"`` key: ``float`` (non-finite),
  ``tuple``, ``dict``, ``tensor`` / ``parameter`` / ``ndarray`` (an ``"array"`` name in
  ``arrays.safetensors``), ``ndarray_text`` (string arrays, inline), ``ndarray_object``
  (object arrays, one node per item), ``numpy_scalar``, ``numpy_dtype``, ``torch_dtype``,
  ``torch_device``, the value codecs of :mod:`kernelkit.io._values` (``numpy_generator``,
  ``numpy_random_state``), and ``object`` / ``ref`` for instances of registered classes.

Array nodes name their array; an optional ``order`` (a permutation of the axes) says the
array was stored in the memory order of a transposed or Fortran-ordered original, which is
restored (``permute``) on loading so that computations on it are bit-for-bit the same.

An ``object`` node names its class by its *registry name* (``"KernelRidge"``,
``"Gaussian"``, ``"sklearn.svm.SVC"``), and a ``kind`` saying how it is rebuilt:

========== ==================================================================================
kind       written / rebuilt as
========== ==================================================================================
estimator  ``parameters`` (``get_params(deep=False)``) and ``attributes`` (the rest of the
           instance ``__dict__``: fitted ``attr_`` and private state); rebuilt by
           ``cls(**parameters)`` then the attributes are restored.
kernel     ``parameters`` (the ``__init__`` arguments); rebuilt by ``cls(**parameters)``, so
           the kernel's own validation and derived state run again.
module     a ``torch.nn.Module``: ``parameters``, ``buffers``, ``submodules``,
           ``attributes`` (its other instance state) and ``training``; rebuilt without
           calling ``__init__`` (``nn.Module.__init__`` then the saved state).
dataclass  ``fields``; rebuilt by ``cls(**init_fields)``.
state      ``attributes`` (the instance ``__dict__``); rebuilt without calling ``__init__``.
========== ==================================================================================

Each object node carries an ``id``; a later occurrence of the same object is a
``{"type": "ref", "id": ...}`` node, so shared kernels and arrays stay shared after loading.

Writing is :class:`~kernelkit.io._encoder.Encoder`'s, reading
:class:`~kernelkit.io._decoder.Decoder`'s; this module holds the format and the dtype tables
they share.  Adding a class or a value type: see :mod:`kernelkit.io._registry` and
:mod:`kernelkit.io._values`.
"""

from __future__ import annotations

import torch
from torch import nn

TORCH_DTYPES = {
    name: getattr(torch, name)
    for name in (
        "bool",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "int8",
        "int16",
        "int32",
        "int64",
        "float16",
        "bfloat16",
        "float32",
        "float64",
    )
    if isinstance(getattr(torch, name, None), torch.dtype)  # uint16-64: torch >= 2.3
}
"""Tensor dtypes a model file may hold (those of the safetensors format that torch knows)."""

NUMPY_KINDS = "biuf"
"""NumPy dtype kinds stored as arrays (bool, signed, unsigned, float)."""

TEXT_KINDS = "U"
"""NumPy dtype kinds stored inline as JSON strings (``bytes`` arrays are not supported)."""

MAX_INLINE_BYTES = 2**28
"""Largest NumPy data rebuilt from values inline in the manifest (text arrays, scalars)."""

MODULE_INTERNALS = frozenset(vars(nn.Module()))
"""Instance attributes every ``nn.Module`` has (hooks, parameter tables): not model state."""


def dtype_name(tensor: torch.Tensor) -> str:
    """The dtype of a tensor as written in manifests (``"float64"``)."""
    return str(tensor.dtype).removeprefix("torch.")
