"""``kernelkit two-sample A B``: SMILES, FASTA and CSV pairs, and hostile inputs.

Every hostile case: the documented exit code, one line on stderr naming the option or the
file and the problem, and nothing at ``--out``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

SMILES_A = ["CCO", "CCCO", "CCCCO", "CC(C)O", "OCCO", "CCOC", "CCCCCO", "OCC(O)CO"] * 2
SMILES_B = [
    "c1ccccc1",
    "Cc1ccccc1",
    "Clc1ccccc1",
    "c1ccc2ccccc2c1",
    "Oc1ccccc1",
    "CCc1ccccc1",
    "Brc1ccccc1",
    "c1ccncc1",
] * 2


def _write(path, text):
    path.write_text(text)
    return path


def _smiles(tmp_path):
    a = _write(tmp_path / "a.smi", "".join(f"{s} m{i}\n" for i, s in enumerate(SMILES_A)))
    b = _write(tmp_path / "b.smi", "".join(f"{s} n{i}\n" for i, s in enumerate(SMILES_B)))
    return a, b


def _fasta(tmp_path, data_dir):
    lines = (data_dir / "promoter" / "promotergene.fasta").read_text().splitlines()
    records = list(zip(lines[::2], lines[1::2], strict=True))
    a = [f"{h}\n{s}\n" for h, s in records if "class=+" in h]
    b = [f"{h}\n{s}\n" for h, s in records if "class=-" in h]
    return _write(tmp_path / "pos.fasta", "".join(a)), _write(tmp_path / "neg.fasta", "".join(b))


def _vectors(tmp_path, shift=1.5, columns="x,y"):
    rng = np.random.default_rng(0)
    rows_a = rng.normal(size=(30, 2))
    rows_b = rng.normal(size=(30, 2)) + shift
    a = _write(tmp_path / "a.csv", "x,y\n" + "".join(f"{u},{v}\n" for u, v in rows_a))
    b = _write(tmp_path / "b.csv", columns + "\n" + "".join(f"{u},{v}\n" for u, v in rows_b))
    return a, b


def _check_report(out, *, witness):
    assert (out / "report.md").is_file() and (out / "report.html").is_file()
    assert (out / "null_histogram.png").stat().st_size > 1000
    record = json.loads((out / "results.json").read_text())
    assert 0 < record["pvalue"] <= 1 and len(record["null_samples"]) == record["n_null"]
    assert bool(record["witness"]) == witness
    return record


def test_smiles_files(cli, tmp_path):
    a, b = _smiles(tmp_path)
    out = tmp_path / "out"
    res = cli("two-sample", a, b, "--permutations", 200, "--out", out, "--quiet")
    assert res.code == 0, res.err
    record = _check_report(out, witness=True)
    assert record["pvalue"] < 0.05 and record["kind"] == "molecules"
    top_a = [w["record"] for w in record["witness"] if w["file"] == "A"]
    assert set(top_a) <= set(SMILES_A)
    loud = cli("two-sample", a, b, "--permutations", 50, "--out", out, "--overwrite")
    assert loud.code == 0 and "p-value = " in loud.out


def test_fasta_files(cli, tmp_path, data_dir):
    a, b = _fasta(tmp_path, data_dir)
    out = tmp_path / "out"
    res = cli("two-sample", a, b, "--kernel", "spectrum:k=3", "--permutations", 200, "--out", out)
    assert res.code == 0, res.err
    assert "p-value = " in res.out and "53 vs 53 sequences" in res.out
    record = _check_report(out, witness=False)
    assert record["kernel"].startswith("Spectrum(")


@pytest.mark.parametrize("method", ["spectral", "linear", "block"])
def test_vector_methods(cli, tmp_path, method):
    a, b = _vectors(tmp_path)
    out = tmp_path / method
    res = cli("two-sample", a, b, "--method", method, "--out", out, "--quiet")
    assert res.code == 0, res.err
    record = _check_report(out, witness=method == "spectral")
    assert record["pvalue"] < 0.05 and record["method"] == method


def _one_line_error(res, code, text, out):
    assert res.code == code
    lines = res.err.strip().splitlines()
    assert len(lines) == 1 and text in lines[0], res.err
    assert not out.exists()


def test_hostile_inputs(cli, tmp_path):
    a, b = _vectors(tmp_path)
    out = tmp_path / "out"
    fasta = _write(tmp_path / "s.fasta", ">1\nACGT\n>2\nACGA\n")
    empty = _write(tmp_path / "empty.csv", "")
    nan = _write(tmp_path / "nan.csv", "x,y\n1,2\n3,nan\n")
    cases = [
        (["two-sample", a, tmp_path / "missing.csv"], 1, "missing.csv: no such file"),
        (["two-sample", a, empty], 1, "empty.csv: empty file"),
        (["two-sample", a, nan], 1, "nan.csv:3: column 'y': expected a finite number"),
        (["two-sample", a, fasta], 1, "s.fasta"),
        (["two-sample", a, b, "--kernel", "spectrum:k=3"], 1, "which column holds the sequences"),
        (
            ["two-sample", a, b, "--kernel", "spectrum:k=3", "--kind", "vectors"],
            2,
            "spectrum takes",
        ),
        (["two-sample", a, b, "--permutations", "0"], 2, "--permutations: expected >= 1"),
        (["two-sample", a, b, "--gram"], 2, "--gram: two-sample reads two files"),
    ]
    for args, code, text in cases:
        res = cli(*args, "--out", out, "--quiet")
        _one_line_error(res, code, text, out)


def test_mismatched_columns_and_existing_output(cli, tmp_path):
    a, b = _vectors(tmp_path, columns="u,v")
    out = tmp_path / "out"
    res = cli("two-sample", a, b, "--out", out, "--quiet")
    _one_line_error(res, 1, "b.csv", out)
    a, b = _vectors(tmp_path)
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    res = cli("two-sample", a, b, "--out", out, "--quiet")
    assert res.code == 2 and len(res.err.strip().splitlines()) == 1
    assert (out / "keep.txt").read_text() == "mine"


def test_graph_folders(cli, tmp_path):
    nx = pytest.importorskip("networkx")
    for folder, make in (("paths", nx.path_graph), ("cycles", nx.cycle_graph)):
        (tmp_path / folder).mkdir()
        for i in range(10):
            g = make(4 + i % 3)
            nx.set_node_attributes(g, "C", "label")
            nx.write_graphml(g, tmp_path / folder / f"g{i}.graphml")
    out = tmp_path / "out"
    res = cli(
        "two-sample",
        tmp_path / "paths",
        tmp_path / "cycles",
        "--permutations",
        200,
        "--out",
        out,
        "--quiet",
    )
    assert res.code == 0, res.err
    record = _check_report(out, witness=False)
    assert record["kind"] == "graphs" and record["pvalue"] < 0.05
