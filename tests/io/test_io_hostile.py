"""Hostile and broken model files are refused with a one-line ModelFileError; nothing from a
file is ever unpickled or imported; writes are atomic and never clobber by accident."""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from kernelkit import KernelRidge, KernelSVC
from kernelkit.io import ModelFileError, load, save
from kernelkit.kernels import Gaussian, Linear, ShortestPath, Spectrum, Tanimoto
from kernelkit.utils._errors import KernelkitError

safetensors_torch = pytest.importorskip("safetensors.torch")


@pytest.fixture
def model():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 3))
    return KernelRidge(Gaussian(sigma=1.5) + Linear(), lam=1e-2).fit(X, X[:, 0])


@pytest.fixture
def model_dir(model, tmp_path):
    return save(model, tmp_path / "model")


def _refused(path, match):
    """``load(path)`` raises a one-line ModelFileError naming the file and matching ``match``."""
    with pytest.raises(ModelFileError, match=match) as info:
        load(path)
    message = str(info.value)
    assert "\n" not in message and str(path) in message
    return message


def _write_manifest(model_dir: Path, data: bytes) -> None:
    """A crafted manifest whose sha256 is recorded in the arrays file, as save records it, so
    that the checks after the digest's are the ones tested."""
    (model_dir / "manifest.json").write_bytes(data)
    path = model_dir / "arrays.safetensors"
    arrays = safetensors_torch.load(path.read_bytes())
    digest = hashlib.sha256(data).hexdigest()
    metadata = {"format": "kernelkit-model", "manifest_sha256": digest}
    path.write_bytes(safetensors_torch.save(arrays, metadata=metadata))


def _edit_manifest(model_dir: Path, mutate) -> None:
    manifest = json.loads((model_dir / "manifest.json").read_text())
    mutate(manifest)
    _write_manifest(model_dir, json.dumps(manifest).encode())


def _edit_arrays(model_dir: Path, mutate) -> None:
    path = model_dir / "arrays.safetensors"
    arrays = safetensors_torch.load(path.read_bytes())
    mutate(arrays)
    path.write_bytes(safetensors_torch.save(arrays))


def _nested(depth):
    node = []
    for _ in range(depth):
        node = {"type": "tuple", "items": [node]}
    return node


def _entry(manifest, name):
    return next(e for e in manifest["arrays"] if e["name"] == name)


def test_error_type():
    assert issubclass(ModelFileError, KernelkitError) and issubclass(ModelFileError, ValueError)


# ---------------------------------------------------------------------- truncated, corrupt
def test_truncated_zip(model, tmp_path):
    path = save(model, tmp_path / "model.zip")
    data = path.read_bytes()
    for cut in (len(data) // 2, len(data) - 30, 10):
        path.write_bytes(data[:cut])
        _refused(path, "truncated or corrupt|not a kernelkit model")


def test_truncated_arrays_file(model_dir):
    path = model_dir / "arrays.safetensors"
    path.write_bytes(path.read_bytes()[:-17])
    _refused(model_dir, r"arrays.safetensors is truncated or corrupt")


def test_manifest_nested_beyond_the_json_parser(model_dir):
    _write_manifest(model_dir, b"[" * 100_000 + b"]" * 100_000)
    _refused(model_dir, "nested too deeply|not a kernelkit model")


def test_truncated_manifest(model_dir):
    _write_manifest(model_dir, (model_dir / "manifest.json").read_bytes()[:100])
    _refused(model_dir, "manifest.json is not valid JSON")


def test_corrupt_zip_member(model, tmp_path):
    path = save(model, tmp_path / "model.zip")
    data = bytearray(path.read_bytes())
    at = data.index(b"kernelkit-model") + 3  # inside the stored manifest: the CRC no longer matches
    data[at] ^= 0xFF
    path.write_bytes(bytes(data))
    _refused(path, "truncated or corrupt")


# ---------------------------------------------------------------------- manifest vs arrays
def test_tampered_checksum(model_dir):
    _edit_manifest(model_dir, lambda m: _entry(m, "dual_coef_").update(sha256="0" * 64))
    _refused(model_dir, "'dual_coef_': sha256 checksum mismatch")


def test_tampered_array_data(model_dir):
    _edit_arrays(model_dir, lambda a: a["dual_coef_"].mul_(2.0))
    _refused(model_dir, "'dual_coef_': sha256 checksum mismatch")


def test_shape_mismatch(model_dir):
    _edit_manifest(model_dir, lambda m: _entry(m, "X_fit_").update(shape=[3, 12]))
    _refused(model_dir, r"'X_fit_': shape mismatch, manifest says \[3, 12\], file has \[12, 3\]")


def test_dtype_mismatch(model_dir):
    _edit_manifest(model_dir, lambda m: _entry(m, "X_fit_").update(dtype="float32"))
    _refused(model_dir, "'X_fit_': dtype mismatch, manifest says float32, file has float64")


def test_missing_array_in_file(model_dir):
    _edit_arrays(model_dir, lambda a: a.pop("dual_coef_"))
    _refused(model_dir, r"\['dual_coef_'\] listed in manifest.json are missing")


def test_extra_array_in_file(model_dir):
    _edit_arrays(model_dir, lambda a: a.update(payload=torch.zeros(3)))
    _refused(model_dir, r"extra array\(s\) \['payload'\] in arrays.safetensors not listed")


def test_array_listed_but_unused(model_dir):
    extra = torch.arange(4.0, dtype=torch.float64)
    _edit_arrays(model_dir, lambda a: a.update(payload=extra))

    def add_entry(m):
        entry = dict(_entry(m, "dual_coef_"), name="payload", shape=[4])
        entry["sha256"] = hashlib.sha256(extra.numpy().tobytes()).hexdigest()
        m["arrays"].append(entry)

    _edit_manifest(model_dir, add_entry)
    _refused(model_dir, r"extra array\(s\) \['payload'\] not used by the model")


def test_node_naming_a_missing_array(model_dir):
    _edit_manifest(model_dir, lambda m: m["attributes"]["dual_coef_"].update(array="nowhere"))
    _refused(model_dir, "dual_coef_: array 'nowhere' is missing from arrays.safetensors")


# ---------------------------------------------------------------------- classes and versions
@pytest.mark.parametrize("name", ["os.system", "subprocess.Popen", "builtins.eval", "Evil"])
def test_unknown_class_is_refused_without_importing_it(model_dir, name, monkeypatch):
    imported = []
    real_import = importlib.import_module

    def recording_import(module, package=None):
        imported.append(module)
        return real_import(module, package)

    monkeypatch.setattr(importlib, "import_module", recording_import)
    _edit_manifest(model_dir, lambda m: m.update({"class": name}))
    _refused(model_dir, f"unknown class '{name}'")
    assert not any(module.split(".")[0] in ("os", "subprocess", "builtins") for module in imported)


def test_unknown_nested_class(model_dir):
    _edit_manifest(model_dir, lambda m: m["parameters"]["kernel"].update({"class": "os.system"}))
    _refused(model_dir, "kernel: unknown class 'os.system'")


def test_newer_format_version(model_dir):
    _edit_manifest(model_dir, lambda m: m.update(format_version=2))
    _refused(model_dir, "format version 2, newer than this kernelkit reads .1.; upgrade")


@pytest.mark.parametrize(
    ("mutate", "match"),
    [
        (lambda m: m.update(format="pickle"), "not a kernelkit model"),
        (lambda m: m.update(format_version="1"), "format_version"),
        (lambda m: m.update(kind="state"), "is of kind 'estimator', got 'state'"),
        (lambda m: m.update(arrays="all"), "expected an 'arrays' list"),
        (lambda m: m["arrays"][0].update(dtype="object"), "malformed array entry"),
        (lambda m: m["arrays"].append(m["arrays"][0]), "listed twice"),
        (lambda m: m["attributes"].update(__class__=1), "invalid attribute name '__class__'"),
        (lambda m: m["attributes"].update(x={"type": "exec"}), "unknown value type 'exec'"),
        (lambda m: m["attributes"].update(x={"type": "ref", "id": 99}), "not defined before it"),
        (
            lambda m: m["attributes"].update(x={"type": "numpy_dtype", "name": "O"}),
            "expected a NumPy dtype",
        ),
        (
            lambda m: m["attributes"].update(
                x={"type": "ndarray_text", "dtype": "<U99999999", "shape": [9], "items": [""] * 9}
            ),
            "too wide",
        ),
        (lambda m: m["attributes"].update(x=_nested(400)), "nested too deeply"),
        (
            lambda m: m["attributes"]["X_fit_"].update(order=[0, 0]),
            "'order' to be a permutation",
        ),
        (
            lambda m: m["parameters"]["kernel"]["parameters"]["k1"]["parameters"].update(
                sigma=-1.0
            ),
            "cannot rebuild Gaussian: InputError: sigma",
        ),
        (
            lambda m: m["parameters"]["kernel"]["parameters"]["k1"]["parameters"].update(
                shell="rm -rf /"
            ),
            "cannot rebuild Gaussian: TypeError",
        ),
    ],
    ids=[
        "format",
        "version-type",
        "kind",
        "arrays-type",
        "array-dtype",
        "duplicate-array",
        "dunder-attribute",
        "unknown-type",
        "dangling-ref",
        "object-dtype",
        "wide-text-dtype",
        "deep-nesting",
        "bad-order",
        "invalid-parameter",
        "unexpected-parameter",
    ],
)
def test_malformed_manifest(model_dir, mutate, match):
    _edit_manifest(model_dir, mutate)
    _refused(model_dir, match)


# ---------------------------------------------------------------------- not a model
def test_not_a_model_paths(tmp_path):
    _refused(tmp_path / "absent.zip", "no such model file or directory")
    _refused(tmp_path, "not a kernelkit model: the directory has no manifest.json")
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    _refused(text, "not a kernelkit model")
    other = tmp_path / "other.zip"
    with zipfile.ZipFile(other, "w") as archive:
        archive.writestr("manifest.json", "{}")
        archive.writestr("arrays.safetensors", b"")
        archive.writestr("extra.py", "print('hi')")
    _refused(other, "expected a zip of manifest.json and arrays.safetensors")


def test_compressed_zip_members_are_refused(model_dir, tmp_path):
    bomb = tmp_path / "deflated.zip"
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name in ("manifest.json", "arrays.safetensors"):
            archive.write(model_dir / name, name)
    _refused(bomb, "expected uncompressed zip members")


def test_model_directory_without_arrays(model_dir):
    (model_dir / "arrays.safetensors").unlink()
    _refused(model_dir, "arrays.safetensors is missing")


# ---------------------------------------------------------------------- never unpickled
class _TouchOnUnpickle:
    """Unpickling this object creates ``marker``: a stand-in for arbitrary code execution."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def test_pickle_payload_is_live(tmp_path):
    """Oracle for the tests below: the payload does run code when unpickled."""
    marker = tmp_path / "proof"
    pickle.loads(pickle.dumps(_TouchOnUnpickle(marker)))
    assert marker.exists()


def _hostile_files(tmp_path: Path, marker: Path) -> dict[str, bytes]:
    payload = _TouchOnUnpickle(marker)
    torch_file = tmp_path / "torch_payload.pt"
    torch.save({"dual_coef_": payload}, torch_file)
    return {"pickle": pickle.dumps(payload), "torch.save": torch_file.read_bytes()}


@pytest.mark.parametrize("flavour", ["pickle", "torch.save"])
@pytest.mark.parametrize("place", ["model.zip", "model.pt", "arrays.safetensors", "manifest.json"])
def test_load_never_unpickles(model, tmp_path, flavour, place):
    marker = tmp_path / "marker"
    data = _hostile_files(tmp_path, marker)[flavour]
    if place in ("arrays.safetensors", "manifest.json"):
        target = save(model, tmp_path / "model")
        (target / place).write_bytes(data)
    else:
        target = tmp_path / place
        target.write_bytes(data)
    with pytest.raises(ModelFileError):
        load(target)
    assert not marker.exists()


def test_pickle_inside_a_zip_member(model, tmp_path):
    marker = tmp_path / "marker"
    target = save(model, tmp_path / "model.zip")
    with zipfile.ZipFile(target) as archive:
        manifest = archive.read("manifest.json")
    with zipfile.ZipFile(target, "w") as archive:
        archive.writestr("manifest.json", manifest)
        archive.writestr("arrays.safetensors", _hostile_files(tmp_path, marker)["pickle"])
    _refused(target, "arrays.safetensors is truncated or corrupt")
    assert not marker.exists()


# ---------------------------------------------------------------------- writing
def test_existing_path_needs_overwrite(model, model_dir):
    with pytest.raises(ModelFileError, match="exists; pass overwrite=True") as info:
        save(model, model_dir)
    assert str(model_dir) in str(info.value)
    refit = KernelRidge(Gaussian(sigma=0.5), lam=1.0).fit(model.X_fit_, model.X_fit_[:, 1])
    assert save(refit, model_dir, overwrite=True) == model_dir
    assert load(model_dir).lam == 1.0
    zipped = save(model, model_dir.parent / "m.zip")
    with pytest.raises(ModelFileError, match="exists"):
        save(refit, zipped)
    save(refit, zipped, overwrite=True)
    assert load(zipped).lam == 1.0
    assert sorted(p.name for p in model_dir.parent.iterdir()) == ["m.zip", "model"]


def test_overwrite_refuses_a_directory_that_is_not_a_model(model, tmp_path):
    precious = tmp_path / "data"
    precious.mkdir()
    (precious / "keep.txt").write_text("important")
    with pytest.raises(ModelFileError, match="not a kernelkit model directory"):
        save(model, precious, overwrite=True)
    assert (precious / "keep.txt").read_text() == "important"
    (tmp_path / "dir.zip").mkdir()
    with pytest.raises(ModelFileError, match="expected a file to replace"):
        save(model, tmp_path / "dir.zip", overwrite=True)


def test_output_path_not_writable(model, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("a file, not a directory")
    with pytest.raises(ModelFileError, match="cannot write the model") as info:
        save(model, blocker / "model.zip")
    assert str(blocker / "model.zip") in str(info.value)
    if Path("/sys").is_dir():  # sysfs refuses new files even to root
        with pytest.raises(ModelFileError, match="cannot write the model"):
            save(model, "/sys/kernelkit-model.zip")
    if os.name == "posix" and os.geteuid() != 0:  # root writes through permissions
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        with pytest.raises(ModelFileError, match="cannot write the model"):
            save(model, locked / "model")
        assert list(locked.iterdir()) == []


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
def test_written_files_get_the_usual_permissions(model, tmp_path):
    umask = os.umask(0o022)
    os.umask(umask)
    zipped = save(model, tmp_path / "m.zip")
    directory = save(model, tmp_path / "m")
    assert zipped.stat().st_mode & 0o777 == 0o666 & ~umask
    assert directory.stat().st_mode & 0o777 == 0o777 & ~umask
    assert (directory / "manifest.json").stat().st_mode & 0o777 == 0o666 & ~umask


def test_failed_write_leaves_old_model_and_no_temporaries(model, model_dir, monkeypatch):
    from kernelkit.io import _storage as storage

    before = sorted(p.name for p in model_dir.parent.iterdir())

    def failing_write(path, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(storage, "_write_file", failing_write)
    with pytest.raises(ModelFileError, match="No space left on device"):
        save(KernelRidge(lam=5.0), model_dir, overwrite=True)
    assert sorted(p.name for p in model_dir.parent.iterdir()) == before
    assert load(model_dir).lam == model.lam


def test_unsupported_value_is_named(tmp_path):
    model = KernelRidge(lam=0.1)
    model.callback_ = print
    with pytest.raises(ModelFileError, match="cannot save callback_: values of type builtins"):
        save(model, tmp_path / "m")
    assert not (tmp_path / "m").exists()
    with pytest.raises(ModelFileError, match="expected a kernelkit estimator"):
        save(42, tmp_path / "n")


# ---------------------------------------------------------------------- well-formed but hostile
def _fitted(kind):
    rng = np.random.default_rng(2)
    if kind == "svc":
        X = rng.normal(size=(16, 2))
        return KernelSVC(Gaussian(sigma=1.0)).fit(X, X[:, 0] > 0)
    if kind == "graphs":
        nx = pytest.importorskip("networkx")
        graphs = [nx.cycle_graph(n) for n in (3, 4, 5, 6)]
        for g in graphs:
            nx.set_node_attributes(g, 0, "label")
        return KernelRidge(ShortestPath(), lam=0.1).fit(graphs, [1.0, 2.0, 3.0, 4.0])
    if kind == "fingerprint_matrix":
        return KernelRidge(Tanimoto(), lam=0.1).fit(np.eye(3, 5), [1.0, 2.0, 3.0])
    if kind == "molecules":
        pytest.importorskip("rdkit")
        return KernelRidge(Tanimoto(), lam=0.1).fit(["CCO", "CCN", "c1ccccc1"], [1.0, 2.0, 3.0])
    strings = ["ACGT", "GATTACA", "CCGG", "TTAG"]
    return KernelRidge(Spectrum(k=2), lam=0.1).fit(strings, [1.0, 2.0, 3.0, 4.0])


def _break_svc(model):
    model.svc_.support_ = model.svc_.support_.copy()
    model.svc_.support_[0] = 10**6  # libsvm would read far out of bounds at predict time


def _break_graph_index(model):
    model.X_fit_.adj_idx[0] = 10**6


def _break_graph_crossing(model):
    model.X_fit_.adj_idx[0] = model.X_fit_.node_ptr[-2]  # an edge into the last graph


def _break_fingerprint_pointers(model):
    model.X_fit_.indptr[-1] += 5  # rows past the stored keys


def _break_fingerprint_columns(model):
    model.X_fit_.indices[0] = 10**6  # a column past n_features: SciPy reads out of bounds


def _break_string_codes(model):
    model.X_fit_.codes[0] = 99  # past the alphabet


@pytest.mark.parametrize(
    ("kind", "corrupt", "match"),
    [
        ("svc", _break_svc, "SVC: the libsvm arrays do not agree"),
        ("graphs", _break_graph_index, "GraphBatch: inconsistent"),
        ("graphs", _break_graph_crossing, "GraphBatch: inconsistent"),
        ("strings", _break_string_codes, "StringBatch: inconsistent"),
        ("molecules", _break_fingerprint_pointers, "SparseFeatures: inconsistent"),
        ("fingerprint_matrix", _break_fingerprint_columns, "FingerprintMatrix: inconsistent"),
    ],
    ids=[
        "svc-support",
        "graph-index",
        "graph-crossing-edge",
        "string-code",
        "fingerprints",
        "fingerprint-matrix-column",
    ],
)
def test_consistent_checksums_but_inconsistent_arrays(kind, corrupt, match, tmp_path):
    model = _fitted(kind)
    corrupt(model)
    path = save(model, tmp_path / "model.zip")  # checksums match the hostile arrays
    _refused(path, match)
