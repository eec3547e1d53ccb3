"""Old module paths of kernelkit, kept importable for one release with a ``FutureWarning``.

Release 0.2 made the implementation modules private: ``kernelkit/gram/nystrom.py`` became
``kernelkit/gram/_nystrom.py``, and users import from the packages (``kernelkit.gram``,
``kernelkit.kernels``, ...).  Code that still imports an old path
(``from kernelkit.gram.nystrom import nystrom_features``) gets the private module, with a
``FutureWarning`` naming the public package to import from instead.  The finder answers only
for ``kernelkit.PACKAGE.NAME`` where ``PACKAGE/_NAME.py`` exists, so it never shadows a real
module.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from types import ModuleType
from typing import Any


class _AliasLoader(importlib.abc.Loader):
    """Loads an old path by importing its private module and putting it under both names."""

    def __init__(self, private_name: str) -> None:
        self.private_name = private_name

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return None  # the import system's blank module; exec_module swaps it out

    def exec_module(self, module: ModuleType) -> None:
        old_name = module.__name__
        package = old_name.rsplit(".", 1)[0]
        warnings.warn(
            f"{old_name} is a private module since kernelkit 0.2 ({self.private_name}); "
            f"import the names you need from {package} instead",
            FutureWarning,
            stacklevel=2,
        )
        # The import system returns whatever sys.modules holds under the old name.
        sys.modules[old_name] = importlib.import_module(self.private_name)


class _MovedModuleFinder(importlib.abc.MetaPathFinder):
    """Finds ``kernelkit.PACKAGE.NAME`` when only ``kernelkit.PACKAGE._NAME`` exists."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        package, _, name = fullname.rpartition(".")
        if not package.startswith("kernelkit") or not name or name.startswith("_"):
            return None
        private_name = f"{package}._{name}"
        # Last on sys.meta_path: asked only when no finder found a real module of that name.
        if importlib.machinery.PathFinder.find_spec(private_name, path) is None:
            return None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(private_name))


def install() -> None:
    """Put the finder at the end of ``sys.meta_path`` (once per process)."""
    if not any(isinstance(finder, _MovedModuleFinder) for finder in sys.meta_path):
        sys.meta_path.append(_MovedModuleFinder())


def moved_names(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for names that left ``package``'s public surface in 0.2.

    ``homes`` maps each name to the private module that defines it; reading one of them
    still works for one release, with a ``FutureWarning``.
    """

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        warnings.warn(
            f"{package}.{name} is private since kernelkit 0.2 ({home}.{name}); "
            "it will be removed from this package in the next release",
            FutureWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(home), name)

    return __getattr__
