"""The names of ``--kernel`` with the kind each takes and its parameters' defaults.

The tables of :data:`kernelkit.kernels._specs.KERNEL_SPECS` and of scikit-learn's names
(:data:`kernelkit.kernels._resolve.SKLEARN_KERNELS`) written out, so that the command line
checks a ``--kernel`` spec before importing torch (``tests/cli/test_fast_usage.py`` checks
that the tables agree).  Standard library only.
"""

from __future__ import annotations

from typing import Any

KERNEL_DEFAULTS: dict[str, tuple[str, dict[str, Any]]] = {
    "gaussian": ("vectors", {"sigma": 1.0}),
    "laplacian": ("vectors", {"sigma": 1.0}),
    "linear": ("vectors", {}),
    "matern": ("vectors", {"nu": 1.5, "sigma": 1.0}),
    "polynomial": ("vectors", {"degree": 2, "scale": 1.0, "offset": 1.0}),
    "arccos": ("vectors", {"order": 1}),
    "relu-ntk": ("vectors", {"args": None}),
    "sphere-exp": ("vectors", {"alpha": 1.0, "homogeneous": False}),
    "sphere-inverse-polynomial": ("vectors", {"homogeneous": False}),
    "sphere-polynomial": ("vectors", {"degree": 2, "offset": 1.0, "homogeneous": False}),
    "sphere-vovk": ("vectors", {"degree": 3, "homogeneous": False}),
    "tanimoto": (
        "molecules",
        {"radius": 2, "n_bits": 2048, "counts": False, "fingerprint": "morgan", "max_path": 7},
    ),
    "minmax": (
        "molecules",
        {"radius": 2, "n_bits": 2048, "counts": True, "fingerprint": "morgan", "max_path": 7},
    ),
    "spectrum": ("sequences", {"k": 3, "alphabet": None}),
    "mismatch": ("sequences", {"k": 3, "m": 1, "alphabet": None}),
    "subsequence": ("sequences", {"k": 2, "lam": 0.5, "alphabet": None}),
    "weighted-degree": ("sequences", {"degree": 3, "shift": 0, "alphabet": None}),
    "mutual-information": (
        "sequences",
        {"depth": 0, "prior": 0.5, "split": 0.5, "alphabet": "dna", "normalize": True},
    ),
    "physico-chemical": (
        "sequences",
        {"lags": 5, "properties": ("hydrophobicity", "polarity"), "sigma": None},
    ),
    "wl": (
        "graphs",
        {"n_iter": 3, "base_graph_kernel": None, "node_label": "label", "edge_label": None},
    ),
    "shortest-path": ("graphs", {"node_label": "label"}),
    "precomputed": ("gram", {}),
    "igv": ("bags", {"lam": 1.0, "kernel": None}),
}
"""Kernel name -> (plural name of the kind of input it takes, parameter -> default)."""

SKLEARN_NAMES: dict[str, str] = {
    "rbf": "vectors",
    "laplacian": "vectors",
    "poly": "vectors",
    "polynomial": "vectors",
    "linear": "vectors",
    "cosine": "vectors",
    "chi2": "vectors",
    "precomputed": "gram",
}
"""scikit-learn's kernel names, written alone -> the plural name of the kind they take."""
