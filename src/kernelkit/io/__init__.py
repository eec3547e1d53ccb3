"""Safe persistence of fitted models: ``save`` and ``load``.

>>> import tempfile
>>> from pathlib import Path
>>> import numpy as np
>>> from kernelkit import KernelRidge
>>> from kernelkit.io import load, save
>>> X = np.linspace(0, 1, 20)[:, None]
>>> model = KernelRidge(lam=1e-3).fit(X, np.sin(6 * X[:, 0]))
>>> path = save(model, Path(tempfile.mkdtemp()) / "model.zip")
>>> bool((load(path).predict(X) == model.predict(X)).all())
True

Format (version 1)
------------------
A model is a directory, or (for a path ending in ``.zip``) a zip archive of uncompressed
members, holding two files (a zip exactly these two; other files in a directory are
ignored):

``manifest.json``
    A UTF-8 JSON object::

        {
          "format": "kernelkit-model",       # identifies the file
          "format_version": 1,               # see the version policy below
          "kernelkit_version": "0.1.0",      # the kernelkit that wrote it (informative)
          "class": "KernelRidge",            # registry name of the saved object's class
          "kind": "estimator",               # how it is rebuilt (kernelkit.io._codec)
          "id": 3,                           # object id (shared objects are saved once)
          "parameters": {"kernel": {...}, "lam": 0.001},   # get_params(deep=False)
          "attributes": {"dual_coef_": {"type": "ndarray", "array": "dual_coef_"}, ...},
          "arrays": [{"name": "dual_coef_", "dtype": "float64", "shape": [50],
                      "sha256": "<hex digest of the raw little-endian bytes>"}, ...]
        }

    ``parameters`` and ``attributes`` hold value nodes, described in
    :mod:`kernelkit.io._codec`; nested objects (kernels, torch models, batches) are ``object``
    nodes of the same shape.

``arrays.safetensors``
    Every array, by name, in the `safetensors <https://huggingface.co/docs/safetensors>`_
    format (a JSON header and raw little-endian buffers: no code, no pickle).  Each array
    appears in the manifest's ``arrays`` list and is used by at least one value node.

Safety
------
``load`` never unpickles and never imports a name read from a file.  Classes are looked up
in an explicit registry (kernelkit's estimators, kernels including the kernel algebra,
models, batches, and scikit-learn's ``SVC`` used inside ``KernelSVC``); instances are
rebuilt by their constructor (estimators and kernels, with the saved parameters) or by
restoring saved data (torch modules, dataclasses).  Objects whose arrays reach compiled
code without bounds checks (libsvm's arrays inside ``KernelSVC``, graph, string and
fingerprint batches) are checked for consistency (:mod:`kernelkit.io._checks`), so that a
well-formed but crafted file cannot crash the interpreter later, at ``predict``.  A file is
refused with a one-line :class:`ModelFileError` naming it when: it is not a kernelkit
model (wrong format, a pickle, a ``torch.save`` archive), it is truncated or corrupt, its
``format_version`` is newer than this kernelkit's, it names an unknown class, an array is
missing, extra (in the file or unused by the model), or differs from the manifest in dtype,
shape or sha256, or a loaded object fails its structural check.

What comes back
---------------
The same object graph: parameters, fitted attributes, torch models; arrays with their
dtype, shape and memory layout (a transposed or Fortran-ordered array keeps its strides, so
outputs are bit-for-bit identical), ``requires_grad`` flags, and sharing (an array or kernel
referenced twice is one object after loading).  Tensors are loaded on the CPU; NumPy arrays
come back in native byte order.  Values that cannot be saved (functions, open files,
networkx graphs inside node kernels, ``bytes`` arrays) are refused by ``save`` with their
attribute path.

Version policy
--------------
``format_version`` changes only when a reader of the previous version could misread new
files.  A reader loads every version up to its own :data:`FORMAT_VERSION` and refuses newer
ones, asking to upgrade kernelkit.  ``kernelkit_version`` is recorded but not checked.

Integrity: the sha256 of ``manifest.json``'s bytes is recorded in the metadata of
``arrays.safetensors`` (``manifest_sha256``), and the arrays' digests in the manifest, so a
change to any byte of either file (an edited ``sigma`` or ``lam``) is refused on loading.

Writing is atomic: the model is written under a temporary name in the target's directory
and renamed into place.  An existing path is replaced only with ``overwrite=True`` (and only
if it is a kernelkit model: a zip archive or directory whose manifest declares the format).

Value nodes and object kinds: :mod:`kernelkit.io._codec`.  Adding a class:
:mod:`kernelkit.io._registry` (``register(cls, kind)``).
"""

from __future__ import annotations

import importlib
from typing import Any

from kernelkit.io._errors import ModelFileError

__all__ = ["FORMAT_VERSION", "ModelFileError", "load", "register", "save"]

_LAZY = {
    "FORMAT_VERSION": "kernelkit.io._storage",
    "load": "kernelkit.io._storage",
    "save": "kernelkit.io._storage",
    "register": "kernelkit.io._registry",
}


def __getattr__(name: str) -> Any:
    """``load``, ``save``, ``register`` and ``FORMAT_VERSION``, imported on first use (they
    import torch; :mod:`kernelkit.io._files` does not)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
