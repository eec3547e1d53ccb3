"""kernelkit.io without its optional dependency: a named error with the install hint."""

from __future__ import annotations

import sys

import pytest

from kernelkit import KernelRidge
from kernelkit.io import load, save
from kernelkit.utils._errors import MissingDependencyError


def test_missing_safetensors_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "safetensors.torch", None)  # import now fails
    with pytest.raises(MissingDependencyError, match=r"kernelkit\[io\]"):
        save(KernelRidge(), tmp_path / "model")
    assert not (tmp_path / "model").exists()
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "manifest.json").write_text(
        '{"format": "kernelkit-model", "format_version": 1, "arrays": []}'
    )
    (tmp_path / "m" / "arrays.safetensors").write_bytes(b"")
    with pytest.raises(MissingDependencyError, match=r"kernelkit\[io\]"):
        load(tmp_path / "m")
