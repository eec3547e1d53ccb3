"""Real use, round three (issue 32): no silent switch of kernel or columns, chemistry files as
chemists keep them, tuning and splits on the command line, and outputs --overwrite may not
replace.  Each case checks the exit code, the message and what was (not) written."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from kernelkit.data import load_esol

pytest.importorskip("rdkit")

VECTORS = "a,b,c,y\n" + "".join(
    f"{i},{(i * 7) % 5},{(i * i) % 11 + 0.5},{i % 3 + 0.1 * i}\n" for i in range(40)
)


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _rows(path: Path) -> list[list[str]]:
    with path.open(newline="") as fh:
        return list(csv.reader(fh))


def _molblock(smiles: str, title: str) -> str:
    from rdkit import Chem

    return Chem.MolToMolBlock(Chem.MolFromSmiles(smiles)).replace("\n", f"{title}\n", 1)


@pytest.fixture(scope="module")
def esol():
    data = load_esol()
    return data.smiles[:60], data.target[:60], data.names[:60]


def test_autoencode_model_matches_columns_by_name(cli, tmp_path):
    src = _write(tmp_path / "v.csv", VECTORS)
    out = tmp_path / "ae"
    res = cli(
        "autoencode",
        src,
        "--target",
        "y",
        "--dims",
        2,
        "--max-iter",
        3,
        "--trees",
        3,
        "--out",
        out,
        "--quiet",
    )
    assert res.code == 0, res.err
    table = _rows(src)
    order = [3, 2, 0, 1]  # y, c, a, b: reordered, with the target
    moved = _write(
        tmp_path / "moved.csv", "".join(",".join(r[j] for j in order) + "\n" for r in table)
    )
    codes = []
    for i, f in enumerate((src, moved)):
        res = cli("predict", out / "model_2d.zip", f, "--out", tmp_path / f"c{i}.csv", "--quiet")
        assert res.code == 0, res.err
        codes.append(_rows(tmp_path / f"c{i}.csv"))
    assert codes[0] == codes[1] and codes[0][0] == ["id", "code_1", "code_2"]
    missing = _write(tmp_path / "nob.csv", "a,c\n1,2\n")
    res = cli("predict", out / "model_2d.zip", missing, "--out", tmp_path / "x.csv")
    assert res.code == 1 and "nob.csv: no column(s) ['b']" in res.err
    assert not (tmp_path / "x.csv").exists()


def test_sdf_runs_through_fit_predict_with_ids_and_autoencode(cli, tmp_path, esol):
    smiles, logs, _ = esol
    sdf = tmp_path / "mols.sdf"
    sdf.write_text(
        "".join(
            _molblock(s, f"CPD-{i}") + f"> <logS>\n{v}\n\n$$$$\n"
            for i, (s, v) in enumerate(zip(smiles, logs, strict=True))
        )
    )
    model = tmp_path / "m.zip"
    res = cli("fit", sdf, "--model", "ridge", "--target", "logS", "--out", model, "--quiet")
    assert res.code == 0, res.err
    res = cli("predict", model, sdf, "--out", tmp_path / "p.csv", "--quiet")
    assert res.code == 0, res.err
    rows = _rows(tmp_path / "p.csv")
    assert rows[0] == ["id", "prediction"] and [r[0] for r in rows[1:4]] == [
        "CPD-0",
        "CPD-1",
        "CPD-2",
    ]
    res = cli(
        "autoencode",
        sdf,
        "--target",
        "logS",
        "--dims",
        2,
        "--max-iter",
        2,
        "--trees",
        3,
        "--out",
        tmp_path / "ae",
        "--quiet",
    )
    assert res.code == 0, res.err


def test_predict_carries_compound_ids_of_a_smiles_csv(cli, tmp_path, esol):
    smiles, logs, names = esol
    src = _write(
        tmp_path / "m.csv",
        "Compound ID,smiles,logS\n"
        + "".join(
            f"{n.replace(',', ' ')},{s},{v}\n" for n, s, v in zip(names, smiles, logs, strict=True)
        ),
    )
    model = tmp_path / "m.zip"
    assert (
        cli(
            "fit",
            src,
            "--model",
            "ridge",
            "--kind",
            "molecules",
            "--target",
            "logS",
            "--out",
            model,
            "--quiet",
        ).code
        == 0
    )
    assert cli("predict", model, src, "--out", tmp_path / "p.csv", "--quiet").code == 0
    assert [r[0] for r in _rows(tmp_path / "p.csv")[1:3]] == [
        n.replace(",", " ") for n in names[:2]
    ]


def test_smi_with_a_bad_record_names_it_or_skips_it(cli, tmp_path, esol):
    smiles, logs, _ = esol
    lines = [f"{s} m{i}" for i, s in enumerate(smiles[:30])]
    lines.insert(10, "C1CC( broken")
    smi = _write(tmp_path / "m.smi", "SMILES Name\n" + "\n".join(lines) + "\n")
    labels = _write(tmp_path / "y.txt", "\n".join(f"{v}" for v in logs[:30]) + "\n")
    res = cli("fit", smi, "--model", "ridge", "--labels", labels, "--out", tmp_path / "m.zip")
    assert res.code == 1 and "m.smi:12: invalid SMILES 'C1CC(' (1 of 31 records)" in res.err
    res = cli(
        "fit",
        smi,
        "--model",
        "ridge",
        "--labels",
        labels,
        "--out",
        tmp_path / "m.zip",
        "--skip-invalid",
    )
    assert res.code == 0, res.err
    assert "left out 1 records that did not parse (lines 12)" in res.err


def test_cv_grid_picks_the_best_cell_and_reports_the_scores(cli, tmp_path):
    rng = np.random.default_rng(0)
    seqs = ["".join(rng.choice(list("ACGT"), 24)) for _ in range(60)]
    y = [s[:8].count("G") + 0.1 * rng.normal() for s in seqs]
    src = _write(
        tmp_path / "seqs.csv",
        "seq,y\n" + "".join(f"{s},{v}\n" for s, v in zip(seqs, y, strict=True)),
    )
    res = cli(
        "fit",
        src,
        "--model",
        "ridge",
        "--kind",
        "sequences",
        "--column",
        "seq",
        "--target",
        "y",
        "--cv",
        3,
        "--kernel",
        "weighted-degree:degree=3,5",
        "--lam",
        "1e-4,1e-2",
        "--out",
        tmp_path / "m.zip",
    )
    assert res.code == 0, res.err
    lines = [line for line in res.out.splitlines() if "lam=" in line and "folds" in line]
    assert len(lines) == 4 and sum(line.startswith("* ") for line in lines) == 1
    best = next(line for line in lines if line.startswith("* "))
    means = [float(line.split("R² ")[1].split(" ")[0]) for line in lines]
    assert float(best.split("R² ")[1].split(" ")[0]) == max(means)
    assert "best of 4 cells: cross-validated R²" in res.out


def test_split_column_fits_on_train_and_scores_on_test(cli, tmp_path):
    rows = VECTORS.splitlines()
    text = (
        rows[0]
        + ",part\n"
        + "".join(f"{r},{'test' if i % 4 == 0 else 'train'}\n" for i, r in enumerate(rows[1:]))
    )
    src = _write(tmp_path / "v.csv", text)
    options = ["--model", "ridge", "--target", "y", "--columns", "a,b,c", "--split", "part"]
    res = cli("fit", src, *options, "--out", tmp_path / "m.zip")
    assert res.code == 0, res.err
    assert (
        "on 30 records" in res.out and "test R²" in res.out and "10 records marked test" in res.out
    )
    bad = _write(tmp_path / "bad.csv", text.replace("test", "tset", 1))
    res = cli("fit", bad, *options, "--out", tmp_path / "m2.zip")
    assert (
        res.code == 1 and "bad.csv:2: --split column 'part': expected 'train' or 'test'" in res.err
    )


def test_degenerate_kernels_and_costs_are_named_errors(cli, tmp_path):
    rng = np.random.default_rng(1)
    seqs = ["".join(rng.choice(list("ACGT"), 30)) for _ in range(40)]
    src = _write(
        tmp_path / "s.csv", "seq,y\n" + "".join(f"{s},{i % 5}\n" for i, s in enumerate(seqs))
    )
    base = [
        "fit",
        src,
        "--model",
        "ridge",
        "--kind",
        "sequences",
        "--column",
        "seq",
        "--target",
        "y",
        "--task",
        "regression",
        "--quiet",
    ]
    res = cli(*base, "--kernel", "spectrum:k=100", "--out", tmp_path / "a.zip")
    assert res.code == 1 and "every sequence is shorter than k=100" in res.err
    res = cli(*base, "--kernel", "mismatch:k=12,m=6", "--out", tmp_path / "b.zip")
    assert res.code == 1 and "above the memory budget" in res.err and "GiB" in res.err
    vec = _write(tmp_path / "v.csv", VECTORS)
    res = cli(
        "fit",
        vec,
        "--model",
        "ridge",
        "--target",
        "y",
        "--kernel",
        "gaussian:sigma=1e12",
        "--out",
        tmp_path / "c.zip",
        "--quiet",
    )
    assert res.code == 1 and "constant Gram matrix" in res.err
    assert not any(p.suffix == ".zip" for p in tmp_path.iterdir())


def test_overwrite_replaces_only_what_kernelkit_wrote(cli, tmp_path):
    src = _write(tmp_path / "v.csv", VECTORS)
    model = tmp_path / "m.zip"
    assert cli("fit", src, "--model", "ridge", "--target", "y", "--out", model, "--quiet").code == 0
    out = tmp_path / "p.csv"
    assert cli("predict", model, src, "--out", out, "--quiet").code == 0
    assert cli("predict", model, src, "--out", out, "--overwrite", "--quiet").code == 0
    mine = _write(tmp_path / "mine.csv", "important,numbers\n1,2\n")
    res = cli("predict", model, src, "--out", mine, "--overwrite")
    assert res.code == 2 and "a file kernelkit did not write" in res.err
    assert mine.read_text() == "important,numbers\n1,2\n"


def test_a_huge_cell_and_a_tiny_sigma_end_in_named_errors(cli, tmp_path):
    src = _write(tmp_path / "h.csv", "a,b,y\n" + "1" * 300_000 + ",2,3\n" + "1,2,3\n4,5,6\n")
    res = cli("fit", src, "--model", "ridge", "--target", "y", "--out", tmp_path / "m.zip")
    assert res.code == 1 and "(300000 characters)" in res.err and len(res.err) < 400
    res = cli(
        "fit",
        src,
        "--model",
        "ridge",
        "--target",
        "y",
        "--kernel",
        "gaussian:sigma=1e-300",
        "--out",
        tmp_path / "m.zip",
    )
    assert res.code == 2 and "sigma=1e-300 is too small" in res.err


def test_semicolons_and_utf16_are_read(cli, tmp_path):
    semi = _write(tmp_path / "s.csv", VECTORS.replace(",", ";"))
    u16 = tmp_path / "u.csv"
    u16.write_text(VECTORS, encoding="utf-16")
    for src in (semi, u16):
        res = cli(
            "fit",
            src,
            "--model",
            "ridge",
            "--target",
            "y",
            "--out",
            tmp_path / f"{src.stem}.zip",
            "--quiet",
        )
        assert res.code == 0, res.err


def test_a_standardised_model_standardises_what_it_predicts(cli, tmp_path, esol):
    smiles, logs, _ = esol
    src = _write(tmp_path / "m.smi", "".join(f"{s} m{i}\n" for i, s in enumerate(smiles[:30])))
    labels = _write(tmp_path / "y.txt", "".join(f"{v}\n" for v in logs[:30]))
    model = tmp_path / "m.zip"
    res = cli(
        "fit",
        src,
        "--model",
        "ridge",
        "--labels",
        labels,
        "--standardize",
        "--out",
        model,
        "--quiet",
    )
    assert res.code == 0, res.err
    new = _write(tmp_path / "new.smi", "CC(=O)O acid\nCC(=O)[O-].[Na+] salt\n")
    assert cli("predict", model, new, "--out", tmp_path / "p.csv", "--quiet").code == 0
    (acid, salt) = [r[1] for r in _rows(tmp_path / "p.csv")[1:]]
    assert float(acid) == pytest.approx(float(salt), rel=1e-12)  # one fingerprint, one row
