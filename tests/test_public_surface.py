"""The public surface: what users import, its size, and the old paths kept for one release."""

from __future__ import annotations

import importlib
import pkgutil
import sys
import warnings
from pathlib import Path

import pytest

import kernelkit

SOURCE = Path(kernelkit.__file__).parent


def public_modules() -> list[str]:
    """kernelkit and its modules with no ``_``-prefixed part in their dotted name."""
    names = ["kernelkit"]
    for info in pkgutil.walk_packages(kernelkit.__path__, "kernelkit."):
        if not any(part.startswith("_") for part in info.name.split(".")[1:]):
            names.append(info.name)
    return names


def public_names() -> set[str]:
    names: set[str] = set()
    for module in public_modules():
        names.update(getattr(importlib.import_module(module), "__all__", ()))
    return names


def test_every_public_module_is_a_package():
    """Implementation modules are private: every public dotted name is a package."""
    files = [
        p.relative_to(SOURCE).as_posix()
        for p in SOURCE.rglob("*.py")
        if p.name != "__init__.py" and not p.name.startswith("_")
    ]
    assert files == []
    for module in public_modules():
        assert hasattr(importlib.import_module(module), "__path__"), module


def test_the_public_surface_is_small():
    names = public_names()
    constants = sorted(n for n in names if n.isupper() and len(n) > 1)
    assert len(names) <= 200, len(names)
    assert len(constants) <= 5, constants


def test_every_listed_name_exists():
    for module in public_modules():
        mod = importlib.import_module(module)
        for name in getattr(mod, "__all__", ()):
            assert getattr(mod, name, None) is not None, f"{module}.{name}"


@pytest.mark.parametrize(
    ("old", "private", "name"),
    [
        ("kernelkit.gram.nystrom", "kernelkit.gram._nystrom", "nystrom_map"),
        ("kernelkit.estimators.ridge", "kernelkit.estimators._ridge", "KernelRidge"),
        ("kernelkit.stats.mmd", "kernelkit.stats._mmd", "mmd"),
    ],
)
def test_an_old_module_path_imports_the_private_module_with_a_warning(old, private, name):
    sys.modules.pop(old, None)
    with pytest.warns(FutureWarning, match=f"{old} is a private module"):
        module = importlib.import_module(old)
    assert module is importlib.import_module(private)
    assert getattr(module, name) is getattr(importlib.import_module(private), name)


def test_a_name_that_left_a_package_still_reads_with_a_warning():
    from kernelkit.solvers._cg import CGResult

    with pytest.warns(FutureWarning, match="kernelkit.solvers.CGResult is private"):
        old = importlib.import_module("kernelkit.solvers").CGResult
    assert old is CGResult


def test_the_finder_never_invents_a_module():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module("kernelkit.gram.no_such_module")
