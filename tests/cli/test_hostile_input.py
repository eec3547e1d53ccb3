"""The hostile-input matrix of issue 7, through the command line.

Every case: the documented exit code, one line on stderr naming the file (and the line or
record where one applies) and the problem, and nothing left at ``--out`` (nor a temporary
sibling of it).

The suite grows: a new reader, command or option adds its hostile cases here or in
``test_real_use.py`` (issue 13's cases: outputs, signals, mismatched inputs, degenerate data).
"""

from __future__ import annotations

import json
import pickle
import shutil
import zipfile

import numpy as np
import pytest

from kernelkit.cli._main import main

VECTORS = "a,b,c\n" + "".join(f"{i},{(i * 7) % 5},{i % 3}\n" for i in range(30))


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """A ridge model saved as a folder and as a zip, and the vectors it was fitted on."""
    root = tmp_path_factory.mktemp("models")
    src = root / "train.csv"
    src.write_text(VECTORS)
    for name in ("ridge_dir", "ridge.zip"):
        code = main(
            [
                "fit",
                str(src),
                "--model",
                "ridge",
                "--target",
                "c",
                "--kernel",
                "gaussian:sigma=2",
                "--out",
                str(root / name),
                "--quiet",
            ]
        )
        assert code == 0
    return root


def _write(tmp_path, name, content):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


def _autoencode(path, *extra):
    return ["autoencode", str(path), *extra, "--max-iter", "2", "--dims", "2"]


def _solubility_with_bad_smiles(tmp_path, data_dir):
    """ESOL's first 16 SMILES, then the unclosed ring 'C1CC' on line 17."""
    lines = (data_dir / "esol" / "ESOL.csv").read_text().splitlines()[1:17]
    smiles = [line.rsplit(",", 1)[1] for line in lines]
    return _write(tmp_path, "molecules.smi", "\n".join([*smiles, "C1CC", "CCO"]) + "\n")


def _promoter_with_unknown_letter(tmp_path, data_dir):
    """The promoter FASTA with a 'J' in the sequence line of record 3 (line 6)."""
    lines = (data_dir / "promoter" / "promotergene.fasta").read_text().splitlines()
    lines[5] = lines[5][:10] + "j" + lines[5][11:]
    return _write(tmp_path, "promoter.fasta", "\n".join(lines) + "\n")


def _unlabelled_graphs(tmp_path):
    nx = pytest.importorskip("networkx")
    folder = tmp_path / "graphs"
    folder.mkdir()
    for i in range(12):
        nx.write_graphml(nx.path_graph(3 + i % 4), folder / f"g{i:02d}.graphml")
    return folder


def _ragged(tmp_path):
    lines = VECTORS.splitlines()
    lines[3] = "3,1"
    return _write(tmp_path, "ragged.csv", "\n".join(lines) + "\n")


def _with_value(tmp_path, value):
    lines = VECTORS.splitlines()
    lines[2] = f"2,{value},1"
    return _write(tmp_path, f"{value}.csv", "\n".join(lines) + "\n")


def _nan_gram(tmp_path):
    K = np.eye(12)
    K[3, 5] = np.nan
    path = tmp_path / "K.npy"
    np.save(path, K)
    return path


def _object_npy(tmp_path):
    path = tmp_path / "objects.npy"
    np.save(path, np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    return path


DATA_CASES = {
    "nan": (
        lambda t, d: _autoencode(_with_value(t, "nan")),
        "nan.csv:3: column 'b': expected a finite number, got 'nan'",
    ),
    "inf": (
        lambda t, d: _autoencode(_with_value(t, "inf")),
        "inf.csv:3: column 'b': expected a finite number, got 'inf'",
    ),
    "ragged": (
        lambda t, d: _autoencode(_ragged(t)),
        "ragged.csv:4: expected 3 fields (as in the header), got 2",
    ),
    "empty": (lambda t, d: _autoencode(_write(t, "empty.csv", "")), "empty.csv: empty file"),
    "header-only": (
        lambda t, d: _autoencode(_write(t, "head.csv", "a,b,c\n")),
        "head.csv:1: a header row but no records",
    ),
    "blank": (lambda t, d: _autoencode(_write(t, "blank.smi", "\n  \n")), "blank.smi: empty file"),
    "binary": (
        lambda t, d: _autoencode(_write(t, "data.csv", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")),
        "data.csv: binary file (NUL byte at offset 8)",
    ),
    "latin1": (
        lambda t, d: _autoencode(_write(t, "v.csv", "a,b\n1,2\n3,\xe9\n".encode("latin-1"))),
        "v.csv:3: not UTF-8 text",
    ),
    "smiles": (
        lambda t, d: _autoencode(_solubility_with_bad_smiles(t, d)),
        "molecules.smi:17: invalid SMILES 'C1CC'",
    ),
    "fasta": (
        lambda t, d: _autoencode(_promoter_with_unknown_letter(t, d), "--alphabet", "dna"),
        "promoter.fasta:6: unknown letter 'J' in record '3' "
        "(alphabet dna: ACGT, unknown residue N)",
    ),
    "graph-labels": (
        lambda t, d: _autoencode(_unlabelled_graphs(t), "--kernel", "wl"),
        "graphs: graph 'g00': nodes have no attribute 'label', which the kernel "
        "WeisfeilerLehman needs",
    ),
    "nan-gram": (
        lambda t, d: _autoencode(_nan_gram(t), "--gram"),
        "K.npy: entry (3, 5) is nan; expected finite values",
    ),
    "pickled-npy": (
        lambda t, d: _autoencode(_object_npy(t), "--gram"),
        "objects.npy: not a plain .npy array",
    ),
    "not-psd": (
        lambda t, d: _autoencode(_save(t, "neg.npy", -np.eye(12)), "--gram"),
        "neg.npy: expected a positive semi-definite Gram matrix",
    ),
    "labels": (
        lambda t, d: _autoencode(
            _write(t, "v.csv", VECTORS), "--labels", _write(t, "y.txt", "1\n2\n")
        ),
        "y.txt: expected 30 labels (one per record), got 2",
    ),
}


def _save(tmp_path, name, array):
    path = tmp_path / name
    np.save(path, array)
    return path


def _assert_rejected(res, tmp_path, out, code, fragment):
    assert res.code == code, res.err
    lines = res.err.strip().splitlines()
    assert len(lines) == 1, res.err
    assert fragment in lines[0], lines[0]
    assert "Traceback" not in res.err
    assert not out.exists()
    leftovers = [p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.")]
    assert leftovers == []


@pytest.mark.parametrize("case", sorted(DATA_CASES))
def test_bad_data_files_exit_1_with_the_record(cli, tmp_path, request, case):
    data_dir = None
    if case in ("smiles", "fasta"):  # built from the real files of ../shared/data
        pytest.importorskip("rdkit")
        data_dir = request.getfixturevalue("data_dir")
    build, fragment = DATA_CASES[case]
    argv = build(tmp_path, data_dir)
    out = tmp_path / "out"
    res = cli(*argv, "--out", out, "--quiet")
    _assert_rejected(res, tmp_path, out, 1, fragment)


def _tamper(models, tmp_path, edit):
    model = tmp_path / "model"
    shutil.copytree(models / "ridge_dir", model)
    manifest = json.loads((model / "manifest.json").read_text())
    edit(manifest)
    (model / "manifest.json").write_text(json.dumps(manifest))
    return model


def _truncated(models, tmp_path):
    data = (models / "ridge.zip").read_bytes()
    return _write(tmp_path, "model.zip", data[: len(data) // 2])


def _pickle_bomb(models, tmp_path):
    """A pickle that would create a marker file if it were ever unpickled."""
    marker = tmp_path / "UNPICKLED"

    class Bomb:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    path = _write(tmp_path, "model.zip", pickle.dumps(Bomb()))
    return path


def _zip_with_pickle(models, tmp_path):
    path = tmp_path / "model.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("manifest.json", "{")
        zf.writestr("data.pkl", pickle.dumps({"a": 1}))
    return path


def _first_array(manifest):
    return manifest["arrays"][0]


MODEL_CASES = {
    "truncated": (_truncated, "model.zip: not a kernelkit model, or a truncated or corrupt one"),
    "pickle": (_pickle_bomb, "model.zip: not a kernelkit model"),
    "zip-with-pickle": (_zip_with_pickle, "model.zip: not a kernelkit model"),
    # an edited manifest is refused by its sha256, recorded with the arrays (the checks
    # behind it, on crafted files with a matching digest: tests/io/test_io_hostile.py)
    "unknown-class": (
        lambda m, t: _tamper(m, t, lambda d: d.update({"class": "os.system"})),
        "model: manifest.json was edited or is corrupt",
    ),
    "newer-version": (
        lambda m, t: _tamper(m, t, lambda d: d.update({"format_version": 999})),
        "model: manifest.json was edited or is corrupt",
    ),
    "tampered-shape": (
        lambda m, t: _tamper(m, t, lambda d: _first_array(d).update({"shape": [7, 7]})),
        "manifest.json was edited or is corrupt",
    ),
    "tampered-sha256": (
        lambda m, t: _tamper(m, t, lambda d: _first_array(d).update({"sha256": "0" * 64})),
        "manifest.json was edited or is corrupt",
    ),
    "edited-lam": (
        lambda m, t: _tamper(m, t, lambda d: d["parameters"].update({"lam": 0.5})),
        "manifest.json was edited or is corrupt",
    ),
}


@pytest.mark.parametrize("case", sorted(MODEL_CASES))
def test_refused_model_files_exit_1(cli, tmp_path, models, case):
    build, fragment = MODEL_CASES[case]
    model = build(models, tmp_path)
    src = _write(tmp_path, "new.csv", "a,b\n1,2\n3,4\n")
    out = tmp_path / "preds.csv"
    res = cli("predict", model, src, "--out", out, "--quiet")
    _assert_rejected(res, tmp_path, out, 1, fragment)
    assert not (tmp_path / "UNPICKLED").exists()


def test_predict_with_the_intact_model_works(cli, tmp_path, models):
    src = _write(tmp_path, "new.csv", "a,b\n1,2\n3,4\n")
    for model in ("ridge_dir", "ridge.zip"):
        out = tmp_path / f"{model}.csv"
        res = cli("predict", models / model, src, "--out", out, "--quiet")
        assert res.code == 0, res.err
        assert out.read_text().count("\n") == 3


def test_vectors_of_the_wrong_width_for_the_model(cli, tmp_path, models):
    src = _write(tmp_path, "wide.csv", "a,b,d\n1,2,3\n")
    out = tmp_path / "preds.csv"
    res = cli("predict", models / "ridge.zip", src, "--out", out, "--quiet")
    _assert_rejected(res, tmp_path, out, 1, "wide.csv:")
    assert "['d']" in res.err
    narrow = _write(tmp_path, "narrow.csv", "a\n1\n")
    res = cli("predict", models / "ridge.zip", narrow, "--out", out, "--quiet")
    _assert_rejected(res, tmp_path, out, 1, "narrow.csv:")
    assert "no column(s) ['b']" in res.err


@pytest.mark.parametrize("command", ["autoencode", "fit", "gram", "predict"])
def test_unwritable_output_exits_1_before_reading(cli, tmp_path, models, command):
    blocker = _write(tmp_path, "a_file", "not a folder")
    out = blocker / "out.npy"
    src = _write(tmp_path, "v.csv", VECTORS)
    argv = {
        "autoencode": ["autoencode", src],
        "fit": ["fit", src, "--model", "ridge", "--target", "c"],
        "gram": ["gram", src],
        "predict": ["predict", models / "ridge.zip", src],
    }[command]
    res = cli(*argv, "--out", out, "--quiet")
    assert res.code == 1
    assert res.err.strip() == (
        f"kernelkit {command}: error: --out: cannot write {str(out)!r}: {str(blocker)!r} is "
        "not a folder"
    )


def test_existing_output_is_a_usage_error_and_kept(cli, tmp_path):
    src = _write(tmp_path, "v.csv", VECTORS)
    out = tmp_path / "K.npy"
    out.write_bytes(b"precious")
    res = cli("gram", src, "--out", out, "--quiet")
    assert res.code == 2 and "--overwrite" in res.err
    assert out.read_bytes() == b"precious"
    res = cli("gram", src, "--out", out, "--quiet", "--overwrite")  # not an array kernelkit wrote
    assert res.code == 2 and "kernelkit did not write" in res.err
    assert out.read_bytes() == b"precious"
    np.save(out, np.zeros((2, 2)))  # an array, but not one kernelkit wrote (issue 51)
    res = cli("gram", src, "--out", out, "--quiet", "--overwrite")
    assert res.code == 2 and "kernelkit did not write" in res.err
    assert np.load(out).shape == (2, 2)
    out.unlink()
    assert cli("gram", src, "--out", out, "--quiet").code == 0
    res = cli("gram", src, "--out", out, "--quiet", "--overwrite")
    assert res.code == 0, res.err
    assert np.load(out).shape == (30, 30)
