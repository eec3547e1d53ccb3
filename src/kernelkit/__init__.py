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

__version__ = "0.1.0"

_LAZY = {
    "KernelRidge": "kernelkit.estimators",
    "GaussianProcessRegressor": "kernelkit.estimators.gp",
    "KernelPCA": "kernelkit.estimators",
    "KernelSVC": "kernelkit.estimators",
    "KernelSVR": "kernelkit.estimators",
    "KernelHuberRegressor": "kernelkit.estimators",
    "KernelAutoencoder": "kernelkit.estimators.autoencoder",
    "ConcatenatedKernelRegressor": "kernelkit.estimators.concatenated",
    "InvariantEmbedding": "kernelkit.estimators.invariant",
    "NystromFeatures": "kernelkit.estimators",
    "RandomFourierFeatures": "kernelkit.estimators",
    "KernelLogisticRegression": "kernelkit.estimators",
    "BiasFreeSVC": "kernelkit.estimators",
    "KernelKMeans": "kernelkit.estimators",
    "SpectralClustering": "kernelkit.estimators",
    "SimpleMKL": "kernelkit.estimators",
    "KernelCCA": "kernelkit.estimators",
    "CKNFeatures": "kernelkit.estimators.ckn",
    "CKNClassifier": "kernelkit.estimators.ckn",
    "SequenceCKNFeatures": "kernelkit.estimators.ckn_seq",
    "SequenceCKNClassifier": "kernelkit.estimators.ckn_seq",
    "GraphCKNFeatures": "kernelkit.estimators.gckn",
    "GraphCKNClassifier": "kernelkit.estimators.gckn",
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
