"""Lazy imports of optional dependencies, with an install hint when one is missing."""

from __future__ import annotations

import importlib
from types import ModuleType

from kernelkit.utils._errors import MissingDependencyError

_EXTRAS = {
    "rdkit": "chem",
    "networkx": "graphs",
    "cvxopt": "graphs",
    "ot": "graphs",
    "matplotlib": "plot",
    "safetensors": "io",
    "pandas": "dev",
}


def require(module: str, *, purpose: str) -> ModuleType:
    """Import ``module`` or raise :class:`MissingDependencyError` naming the extra to install.

    Parameters
    ----------
    module : str
        Dotted module name, e.g. ``"rdkit.Chem"``.
    purpose : str
        What the caller needs it for, quoted in the error message.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        top = module.split(".")[0]
        extra = _EXTRAS.get(top)
        hint = f"pip install 'kernelkit[{extra}]'" if extra else f"pip install {top}"
        raise MissingDependencyError(
            f"{purpose} needs the optional package '{top}', which is not installed: {hint}"
        ) from exc


def pyplot(purpose: str = "Writing plots") -> ModuleType:
    """``matplotlib.pyplot`` on the non-interactive Agg backend (optional extra ``plot``)."""
    matplotlib = require("matplotlib", purpose=purpose)
    matplotlib.use("Agg")
    return require("matplotlib.pyplot", purpose=purpose)
