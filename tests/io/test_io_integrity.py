"""The whole manifest is covered by the model file's integrity check, and save replaces only
a model kernelkit wrote."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

from kernelkit import KernelRidge
from kernelkit.io import ModelFileError, load, save
from kernelkit.io._files import is_model_path
from kernelkit.kernels import Gaussian


@pytest.fixture
def model():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(15, 3))
    return KernelRidge(Gaussian(sigma=1.5), lam=1e-2).fit(X, X[:, 0])


def _number_paths(node, path=()):
    """The path of every number (not bool) in a JSON value."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _number_paths(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _number_paths(v, (*path, i))
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        yield path


def _set(node, path, value):
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value


def test_editing_any_number_of_the_manifest_is_refused(model, tmp_path):
    folder = save(model, tmp_path / "model")
    original = (folder / "manifest.json").read_bytes()
    manifest = json.loads(original)
    paths = list(_number_paths(manifest))
    assert any("lam" in p for p in paths) and any("sigma" in p for p in paths)
    for path in paths:
        edited = json.loads(original)
        value = edited
        for key in path:
            value = value[key]
        _set(edited, path, value + 1 if isinstance(value, int) else value * 1.5 + 0.1)
        (folder / "manifest.json").write_text(json.dumps(edited, indent=1))
        with pytest.raises(ModelFileError, match=r"manifest\.json was edited or is corrupt"):
            load(folder)
    (folder / "manifest.json").write_bytes(original)
    X = np.random.default_rng(1).normal(size=(4, 3))
    np.testing.assert_array_equal(load(folder).predict(X), model.predict(X))


def test_an_edited_sigma_in_a_zip_is_refused(model, tmp_path):
    path = save(model, tmp_path / "model.zip")
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    text = members["manifest.json"].decode()
    assert "1.5" in text
    members["manifest.json"] = text.replace("1.5", "2.5", 1).encode()
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    with pytest.raises(ModelFileError, match=r"manifest\.json was edited"):
        load(path)


def test_save_replaces_only_a_saved_model(model, tmp_path):
    other = tmp_path / "notes.zip"
    with zipfile.ZipFile(other, "w") as archive:
        archive.writestr("notes.txt", "mine")
    with pytest.raises(ModelFileError, match="not a kernelkit model zip file"):
        save(model, other, overwrite=True)
    assert not is_model_path(other)
    mine = save(model, tmp_path / "m.zip")
    assert is_model_path(mine) and save(model, mine, overwrite=True) == mine
