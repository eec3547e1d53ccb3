"""kernelkit: kernel methods and kernel-based representation learning for any data.

The estimators are importable from the top level (``from kernelkit import KernelRidge``);
they are loaded lazily on first access, so ``import kernelkit`` stays cheap.  The options
(the cost model of ``solver="auto"``, tile sizes and other tuning constants) are read and set
with :func:`get_config`, :func:`set_config` and :func:`config_context`
(``docs/configuration.md``).
"""

from __future__ import annotations

import importlib
from typing import Any

from kernelkit import _moved

_moved.install()

__version__ = "0.1.0"

_LAZY = {
    "KernelRidge": "kernelkit.estimators",
    "GaussianProcessRegressor": "kernelkit.estimators._gp",
    "KernelPCA": "kernelkit.estimators",
    "KernelSVC": "kernelkit.estimators",
    "KernelSVR": "kernelkit.estimators",
    "KernelHuberRegressor": "kernelkit.estimators",
    "KernelAutoencoder": "kernelkit.estimators._autoencoder",
    "ConcatenatedKernelRegressor": "kernelkit.estimators._concatenated",
    "InvariantEmbedding": "kernelkit.estimators._invariant",
    "NystromFeatures": "kernelkit.estimators",
    "RandomFourierFeatures": "kernelkit.estimators",
    "KernelLogisticRegression": "kernelkit.estimators",
    "BiasFreeSVC": "kernelkit.estimators",
    "KernelKMeans": "kernelkit.estimators",
    "SpectralClustering": "kernelkit.estimators",
    "SimpleMKL": "kernelkit.estimators",
    "KernelCCA": "kernelkit.estimators",
    "CKNFeatures": "kernelkit.estimators._ckn",
    "CKNClassifier": "kernelkit.estimators._ckn",
    "SequenceCKNFeatures": "kernelkit.estimators._ckn_seq",
    "SequenceCKNClassifier": "kernelkit.estimators._ckn_seq",
    "GraphCKNFeatures": "kernelkit.estimators._gckn",
    "GraphCKNClassifier": "kernelkit.estimators._gckn",
    "config_context": "kernelkit.utils._config",
    "get_config": "kernelkit.utils._config",
    "set_config": "kernelkit.utils._config",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'kernelkit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
