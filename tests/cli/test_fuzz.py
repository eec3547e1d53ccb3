"""Fuzz test of the command line: generated CSV, TSV, SMILES and FASTA files and ``--kernel``
specifications through :func:`kernelkit.cli._main.main`, in-process.

Every outcome must be a result (exit 0) or a named error: exit 1 (a data error) or 2 (a usage
error, also argparse's ``SystemExit(2)``) with one line on stderr and no traceback; any other
exception escaping ``main`` fails the test, with hypothesis's smallest failing input.  The
examples are derandomised (the same inputs on every run) and ``FUZZ_EXAMPLES`` per reader.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import string
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernelkit.cli._main import main

FUZZ_EXAMPLES = 2000

FUZZ = settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

NUMBERS = st.one_of(
    st.integers(-(10**6), 10**6).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["1e999", "-1e-400", "nan", "inf", "-inf", "0x1p3", "1_000", "1,5", "+", "-",
                     ".", "e", "1e", "٣", "１", "9" * 400, "1" + "0" * 5000]),
)  # fmt: skip
WORDS = st.text(alphabet=string.ascii_letters + string.digits + " _-.'\"\\#;:é中\x00\t", max_size=8)
CELLS = st.one_of(NUMBERS, NUMBERS, WORDS, st.just(""))
NEWLINES = st.sampled_from(["\n", "\r\n", "\r"])


def _table(sep: str) -> st.SearchStrategy[str]:
    width = st.integers(1, 4)

    @st.composite
    def build(draw: st.DrawFn) -> str:
        n = draw(width)
        header = [draw(WORDS) for _ in range(n)]
        rows = [
            [draw(CELLS) for _ in range(draw(st.integers(max(1, n - 1), n + 1)))]
            for _ in range(draw(st.integers(0, 6)))
        ]
        nl = draw(NEWLINES)
        text = nl.join(sep.join(r) for r in [header, *rows]) + draw(st.sampled_from(["", nl]))
        return draw(st.sampled_from(["", "\ufeff"])) + text

    return st.one_of(build(), st.text(max_size=60))


SMILES_ATOMS = ["C", "N", "O", "c", "n", "o", "Cl", "Br", "[NH4+]", "[Xx]", "(", ")", "=", "#",
                "1", "2", "%10", "/", "\\", ".", "@", "*", "[", "]", "+", "-", " "]  # fmt: skip


@st.composite
def _smiles_file(draw: st.DrawFn) -> str:
    lines = []
    for _ in range(draw(st.integers(0, 6))):
        smi = "".join(draw(st.lists(st.sampled_from(SMILES_ATOMS), max_size=12)))
        name = draw(
            st.one_of(st.just(""), WORDS.map(lambda w: " " + w), NUMBERS.map("\t{}".format))
        )
        lines.append(smi + name)
    header = draw(st.sampled_from(["", "smiles name\n", "SMILES\tactivity\n"]))
    return header + draw(NEWLINES).join(lines)


@st.composite
def _fasta_file(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(0, 5))):
        head = draw(st.sampled_from([">", ">", ";", ""])) + draw(WORDS)
        if draw(st.booleans()):
            head += " " + draw(WORDS) + "=" + draw(CELLS)
        seq = draw(st.text(alphabet="ACGTNacgtuRYKMSW*-X \t1>", max_size=30))
        parts.append(head + draw(NEWLINES) + seq)
    return "\n".join(parts)


def _run(*argv: str) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as exc:  # argparse: a usage error
            code = exc.code
    return code, err.getvalue()


def _check(code: int, err: str) -> None:
    assert code in (0, 1, 2), (code, err)
    assert "Traceback" not in err, err
    if code:
        assert err.strip(), "an error exit must say why on stderr"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A folder in memory (``/dev/shm``) where there is one: each example writes its input and
    the command's ``.npy`` output, and a disk's sync would dominate the run time."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        path = Path(tempfile.mkdtemp(prefix="kernelkit-fuzz-", dir=shm))
        yield path
        shutil.rmtree(path, ignore_errors=True)
    else:
        yield tmp_path_factory.mktemp("fuzz")


def _fuzz_file(folder: Path, name: str, content: str | bytes, *extra: str) -> None:
    path = folder / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8", errors="surrogatepass", newline="")
    out = folder / "gram.npy"
    _check(*_run("gram", str(path), "--out", str(out), "--overwrite", "--quiet", *extra))


@pytest.mark.slow
@FUZZ
@given(text=st.one_of(_table(","), st.binary(max_size=40)))
def test_csv_reader(folder, text):
    _fuzz_file(folder, "data.csv", text)


@pytest.mark.slow
@FUZZ
@given(text=_table("\t"))
def test_tsv_reader(folder, text):
    _fuzz_file(folder, "data.tsv", text)


@pytest.mark.slow
@FUZZ
@given(text=st.one_of(_smiles_file(), st.text(max_size=40)))
def test_smiles_reader(folder, text):
    pytest.importorskip("rdkit")
    _fuzz_file(folder, "mols.smi", text)


@pytest.mark.slow
@FUZZ
@given(text=st.one_of(_fasta_file(), st.text(max_size=40)))
def test_fasta_reader(folder, text):
    _fuzz_file(folder, "seqs.fasta", text)


KERNEL_NAMES = ["gaussian", "rbf", "laplacian", "linear", "poly", "polynomial", "matern",
                "cosine", "tanimoto", "minmax", "spectrum", "wl", "sigmoid", "", "Gaussian ",
                "gaussian:", "nope"]  # fmt: skip
PARAM_NAMES = ["sigma", "gamma", "degree", "coef0", "nu", "k", "n_iter", "x", "", "sigma "]


@st.composite
def _kernel_spec(draw: st.DrawFn) -> str:
    spec = draw(st.sampled_from(KERNEL_NAMES))
    params = [
        draw(st.sampled_from(PARAM_NAMES)) + draw(st.sampled_from(["=", "=", ":", ""]))
        + draw(st.one_of(NUMBERS, WORDS))
        for _ in range(draw(st.integers(0, 3)))
    ]  # fmt: skip
    if params or draw(st.booleans()):
        spec += ":" + draw(st.sampled_from([",", ";", ", "])).join(params)
    return spec


@pytest.mark.slow
@FUZZ
@given(spec=st.one_of(_kernel_spec(), st.text(max_size=30)))
def test_kernel_spec_parser(folder, spec):
    path = folder / "vectors.csv"
    if not path.exists():
        path.write_text("a,b\n0.1,1.5\n0.7,-2\n3,0.25\n")
    out = folder / "kernel.npy"
    _check(*_run("gram", str(path), "--out", str(out), "--overwrite", "--quiet", "--kernel", spec))
