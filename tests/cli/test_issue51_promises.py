"""Issue 51 (real use): soft-masked sequences, overflows named in one line, and the promises
of the README about ``--overwrite``, constant Gram matrices and the early checks."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kernelkit.cli._output import record_path

SRC = Path(__file__).resolve().parents[2] / "src"
VECTORS = "a,b,y\n" + "".join(f"{i % 7},{(3 * i) % 5},{i * 0.5}\n" for i in range(12))


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _one_line(res, code: int, *fragments: str) -> None:
    assert res.code == code, res.err
    # every line but the stage lines ("... [HH:MM:SS]")
    lines = [ln for ln in res.err.splitlines() if not re.search(r"\[\d\d:\d\d:\d\d\]$", ln)]
    assert "Traceback" not in res.err and len(lines) == 1, res.err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


# ---------------------------------------------------------------------- item 1: case rule
def test_a_soft_masked_fasta_is_dna_and_the_command_says_how_letters_were_read(cli, tmp_path):
    soft = _write(tmp_path / "soft.fa", ">a\nacgtNNacgt\nTTGA\n>b\nACGTnnAC\n>c\nggatcc\n")
    upper = _write(tmp_path / "up.fa", ">a\nACGTNNACGTTTGA\n>b\nACGTNNAC\n>c\nGGATCC\n")
    res = cli("gram", soft, "--kernel", "spectrum:k=3", "--out", tmp_path / "K.npy")
    assert res.code == 0, res.err
    assert "alphabet='dna'" in res.out and "protein" not in res.out
    assert (
        "alphabet dna: 16 lower-case letters (soft-masking) read as upper case; "
        "4 unknown residues 'N' match nothing"
    ) in res.err
    assert cli("gram", upper, "--out", tmp_path / "U.npy", "--quiet").code == 0
    K, U = np.load(tmp_path / "K.npy"), np.load(tmp_path / "U.npy")
    np.testing.assert_array_equal(K, U)
    assert K[0, 0] == 2**2 + 2**2 + 4  # ACG, CGT twice; GTT TTT TTG TGA once (no N k-mer)
    # the second file of gram --against and two-sample: the same rule and the same line
    res = cli("gram", upper, "--against", soft, "--out", tmp_path / "C.npy")
    assert res.code == 0 and f"{soft}: alphabet dna: 16 lower-case letters" in res.err
    np.testing.assert_array_equal(np.load(tmp_path / "C.npy"), U)
    res = cli("two-sample", upper, soft, "--permutations", "20", "--out", tmp_path / "ts")
    assert res.code == 0, res.err
    assert f"{soft}: alphabet dna: 16 lower-case letters" in res.err


# ---------------------------------------------------------------------- item 2: errors
def test_a_huge_sigma_is_a_one_line_usage_error(cli, tmp_path):
    src = _write(tmp_path / "v.csv", VECTORS)
    for sigma in ("1e300", "1e155"):
        res = cli(
            "fit", src, "--model", "ridge", "--target", "y", "--kernel", f"gaussian:sigma={sigma}",
            "--out", tmp_path / "m.zip",
        )  # fmt: skip
        _one_line(res, 2, "--kernel", "too large", "sigma <= 1e154")
    assert not (tmp_path / "m.zip").exists()


@pytest.mark.parametrize("kernel", [None, "gaussian:sigma=1", "linear"])
def test_an_overflowing_cell_is_named_with_its_column_and_line(cli, tmp_path, kernel):
    src = _write(tmp_path / "big.csv", "x1,x2,y\n1,2,3\n4,5,6\n2,1e308,3\n3,4,5\n")
    extra = () if kernel is None else ("--kernel", kernel)
    res = cli("fit", src, "--model", "ridge", "--target", "y", *extra, "--out", tmp_path / "m.zip")
    _one_line(res, 1, "big.csv:4: column 'x2': '1e308' overflows", "1.3e+150")


@pytest.mark.parametrize("model", ["ridge", "gp"])
def test_an_overflowing_target_cell_is_named_with_its_line(cli, tmp_path, model):
    src = _write(tmp_path / "t.csv", "x1,x2,y\n1,2,3\n2,3,-1e200\n3,1,5\n4,4,1\n5,3,2\n")
    res = cli("fit", src, "--model", model, "--target", "y", "--out", tmp_path / "m.zip")
    _one_line(res, 1, "t.csv:3: y: '-1e200' overflows", "rescale the target")


def test_an_unexpected_error_is_one_line_without_a_traceback(cli, tmp_path, monkeypatch):
    import kernelkit.cli._commands as commands

    def boom(*args, **kwargs):
        raise OverflowError(34, "Numerical result out of range")

    monkeypatch.setattr(commands, "check_not_constant", boom)
    src = _write(tmp_path / "v.csv", VECTORS)
    res = cli("gram", src, "--out", tmp_path / "K.npy")
    _one_line(res, 1, "error: OverflowError:", "--debug shows the traceback")
    assert not (tmp_path / "K.npy").exists()


# ---------------------------------------------------------------------- item 3: promises
def test_overwrite_leaves_a_foreign_npy_untouched(cli, tmp_path):
    src = _write(tmp_path / "v.csv", VECTORS)
    foreign = tmp_path / "foreign.npy"
    np.save(foreign, np.arange(6.0))
    before = foreign.read_bytes()
    res = cli("gram", src, "--out", foreign, "--overwrite", "--quiet")
    _one_line(res, 2, "--out", "a file kernelkit did not write", ".foreign.npy.kernelkit")
    assert foreign.read_bytes() == before
    # kernelkit's own Gram is replaced, and recorded again
    mine = tmp_path / "K.npy"
    assert cli("gram", src, "--out", mine, "--quiet").code == 0
    assert record_path(mine).is_file()
    assert cli("gram", src, "--out", mine, "--overwrite", "--quiet").code == 0
    # a Gram changed since kernelkit wrote it is foreign again
    K = np.load(mine)
    np.save(mine, K + 1.0)
    changed = mine.read_bytes()
    res = cli("gram", src, "--out", mine, "--overwrite", "--quiet")
    assert res.code == 2 and "kernelkit did not write" in res.err
    assert mine.read_bytes() == changed


def test_a_header_only_csv_is_refused_before_the_heavy_imports(tmp_path):
    src = _write(tmp_path / "header.csv", "x1,x2,y\n\n")
    code = (
        "import sys\nfrom kernelkit.cli._main import main\n"
        f"rc = main(['fit', {str(src)!r}, '--model', 'ridge', '--target', 'y', '--out', "
        f"{str(tmp_path / 'm.zip')!r}])\n"
        "print(rc, sorted(m for m in ('torch', 'sklearn', 'numpy') if m in sys.modules))"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert res.stdout.strip().splitlines()[-1] == "1 []", res.stdout + res.stderr
    assert res.stderr.strip() == f"{src}:1: a header row but no records"


def test_a_headerless_one_record_csv_passes_the_early_check(cli, tmp_path):
    src = _write(tmp_path / "one.csv", "1,2,3\n")
    res = cli("gram", src, "--out", tmp_path / "K.npy", "--quiet", "--kernel", "linear")
    assert res.code == 0, res.err


def test_constant_grams_follow_the_readme(cli, tmp_path):
    """README: a constant Gram on distinct records is refused; graphs (no equality test)
    always; records all equal (vectors, or a precomputed Gram with equal rows) are a warning
    with fit, and autoencode refuses them."""
    src = _write(tmp_path / "v.csv", VECTORS)
    res = cli(
        "fit", src, "--model", "ridge", "--target", "y", "--kernel", "gaussian:sigma=1e12",
        "--out", tmp_path / "a.zip",
    )  # fmt: skip
    _one_line(res, 1, "v.csv:", "constant Gram matrix")
    pytest.importorskip("networkx")
    folder = tmp_path / "graphs"
    for i in range(3):
        _write(folder / f"g{i}.edges", "1 2\n2 3\n")
    labels = _write(tmp_path / "labels.txt", "1\n2\n3.5\n")
    res = cli(
        "fit", folder, "--model", "ridge", "--labels", labels, "--kernel", "wl:node_label=none",
        "--out", tmp_path / "g.zip",
    )  # fmt: skip
    _one_line(res, 1, "graphs (identical, or differing only in what it ignores)")
    gram = tmp_path / "C.npy"
    np.save(gram, np.ones((6, 6)))
    labels6 = _write(tmp_path / "labels6.txt", "1\n2\n3\n4\n5\n6.5\n")
    res = cli(
        "fit", gram, "--gram", "--model", "ridge", "--labels", labels6, "--out", tmp_path / "c.zip"
    )
    assert res.code == 0 and "all 6 records are equal" in res.err
    assert not (tmp_path / "a.zip").exists() and not (tmp_path / "g.zip").exists()
