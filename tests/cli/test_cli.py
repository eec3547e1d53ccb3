"""The command line: the demo, info, usage errors (exit 2) and ``--debug``."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kernelkit.cli._kernels import KERNELS, build_kernel, parse_kernel
from kernelkit.cli._main import main
from kernelkit.kernels import Gaussian, Mismatch

DEMO_FILES = (
    "report.md",
    "report.html",
    "results.json",
    "codes_2d.csv",
    "codes_10d.csv",
    "latent_2d.png",
    "training_curve.png",
    "model_2d.zip",
    "model_10d.zip",
)


def _check_demo(out, n):
    for name in DEMO_FILES:
        assert (out / name).stat().st_size > 0, name
    results = json.loads((out / "results.json").read_text())
    assert results["n_records"] == n and results["kernel"].startswith("Tanimoto")
    assert sorted(r["dims"] for r in results["results"]) == [2, 2, 10, 10]
    md = (out / "report.md").read_text()
    assert "![" in md and "(latent_2d.png)" in md and "| K2AE | 10-D |" in md
    return results


def test_demo_on_a_subset_of_the_shipped_molecules(cli, tmp_path):
    pytest.importorskip("matplotlib")
    pytest.importorskip("rdkit")
    out = tmp_path / "demo"
    res = cli("demo", "--out", out, "--subset", 40, "--max-iter", 2, "--trees", 10, "--quiet")
    assert res.code == 0, res.err
    assert res.out == ""
    _check_demo(out, 40)
    # a second run needs --overwrite (a usage error otherwise, before any work)
    res = cli("demo", "--out", out, "--subset", 40, "--quiet")
    assert res.code == 2 and "--overwrite" in res.err


README = Path(__file__).resolve().parents[2] / "README.md"
DEMO_RESULTS = Path(__file__).resolve().parents[2] / "docs" / "demo_results.json"


def _readme_demo_table() -> str:
    text = README.read_text(encoding="utf-8")
    match = re.search(r"<!-- demo-numbers -->\n(.*?)<!-- /demo-numbers -->", text, re.S)
    assert match, "README.md has no <!-- demo-numbers --> block"
    return match.group(1)


# Cross-machine tolerance of the demo's numbers.  The K2AE is 50 L-BFGS iterations of a
# non-convex objective, stopped mid-descent: what differs between CPUs (the BLAS kernels MKL
# picks for AVX2 or AVX-512, the thread count, hence the summation order) is a last-bit change
# of the Gram and of every product, and 50 iterations amplify it.  Measured on the 2-core AMD
# EPYC machines (issue 25): one ulp added to half the off-diagonal entries of the training
# Gram moves the 2-D K2AE's held-out reconstruction error by 4.1e-4 relative (0.81374 ->
# 0.81407; its codes by up to 0.19) and the 10-D one by 1e-8; two CPUs gave 0.6018445 and
# 0.6018409 (6e-6).  A random forest on the codes turns that into up to 0.011 of R^2 (0.554 vs
# 0.543 on two CPUs, 0.223 vs 0.230 under the ulp).  Running the K2AE to its stopping test
# (300 iterations) did not make machines agree better (10-D: 2e-4 relative, R^2 0.542 vs 0.534)
# and cost 2.4x the time, so the demo keeps 50 iterations and the checks allow:
DEMO_RECONSTRUCTION_RTOL = 2e-3  # ~5x the largest measured spread (4.1e-4)
DEMO_FOREST_ATOL = 0.03  # ~3x the largest measured spread of R^2 / NMSE (0.011)
# Kernel PCA is a direct eigendecomposition: its numbers agree to 1e-12 and keep 1e-9.
DEMO_KPCA_RTOL = 1e-9

_README_ROW = re.compile(
    r"^\| (K2AE|kernel PCA) \| (\d+)-D \| ([0-9.]+) \| (-?[0-9.]+) \| ([0-9.]+) \|$", re.M
)


def _readme_demo_rows() -> dict[tuple[str, int], tuple[float, float, float]]:
    rows = {
        ("K2AE" if m == "K2AE" else "KPCA", int(d)): (float(e), float(r2), float(nmse))
        for m, d, e, r2, nmse in _README_ROW.findall(_readme_demo_table())
    }
    assert len(rows) == 4, _readme_demo_table()
    return rows


def _perturb_training_grams_by_one_ulp(monkeypatch) -> None:
    """Stand-in for another CPU's rounding: every square training Gram of the K2AE gets one
    ulp added to a fixed random half of its off-diagonal entries, symmetrically."""
    import torch

    from kernelkit.estimators._autoencoder import KernelAutoencoder

    original = KernelAutoencoder._gram

    def nudged(self, kernel, X, Y, dtype):
        K = original(self, kernel, X, Y, dtype)
        if Y is not None:
            return K
        g = torch.Generator().manual_seed(0)
        mask = torch.triu(torch.rand(K.shape, generator=g) < 0.5, 1)
        mask = mask | mask.T
        up = torch.nextafter(K, torch.full_like(K, float("inf")))
        assert torch.all(up[mask] > K[mask])
        return torch.where(mask, up, K)

    monkeypatch.setattr(KernelAutoencoder, "_gram", nudged)


@pytest.mark.slow
@pytest.mark.parametrize(
    "threads, ulp", [(1, False), (2, False), (2, True)], ids=["1-thread", "2-threads", "2-ulp"]
)
def test_full_demo(cli, tmp_path, monkeypatch, threads, ulp):
    """What ``make demo`` runs: all 1128 molecules, on one and two torch threads and with the
    training Gram perturbed by one ulp; the README's numbers hold to the tolerances above."""
    pytest.importorskip("matplotlib")
    pytest.importorskip("rdkit")
    if ulp:
        _perturb_training_grams_by_one_ulp(monkeypatch)
    res = cli("demo", "--out", tmp_path / "demo", "--quiet", "--threads", threads)
    assert res.code == 0, res.err
    results = _check_demo(tmp_path / "demo", 1128)
    best = {(r["method"], r["dims"]): r for r in results["results"]}
    # the K2AE reconstructs held-out molecules better than kernel PCA at the same width
    assert (
        best["K2AE", 10]["test_reconstruction_error"]
        < best["KPCA", 10]["test_reconstruction_error"]
    )
    half_unit = 5e-4  # the README prints 3 decimals: its rounding comes on top of a tolerance
    for key, (error, r2, nmse) in _readme_demo_rows().items():
        got = best[key]
        rtol = DEMO_RECONSTRUCTION_RTOL if key[0] == "K2AE" else DEMO_KPCA_RTOL
        assert abs(got["test_reconstruction_error"] - error) <= rtol * error + half_unit, key
        assert abs(got["rf_r2"] - r2) <= DEMO_FOREST_ATOL + half_unit, key
        assert abs(got["rf_nmse"] - nmse) <= DEMO_FOREST_ATOL + half_unit, key


def test_readme_demo_numbers_are_the_demo_output():
    """The README's table is ``readme_table`` of the committed ``results.json`` of
    ``make demo`` (``docs/demo_results.json``; ``test_full_demo`` re-runs the demo)."""
    from kernelkit.cli._demo import readme_table

    summary = json.loads(DEMO_RESULTS.read_text(encoding="utf-8"))
    assert summary["command"] == "demo" and summary["n_records"] == 1128
    assert readme_table(summary) == _readme_demo_table()


def test_info_lists_versions(cli):
    res = cli("info")
    assert res.code == 0
    assert "kernelkit" in res.out and "torch" in res.out and "BLAS" in res.out
    assert "device: cpu" in res.out or "device: cuda" in res.out


def test_no_command_is_a_usage_error(cli):
    assert cli().code == 2


def test_unknown_option_exits_2_without_traceback():
    proc = subprocess.run(
        [sys.executable, "-m", "kernelkit.cli._main", "demo", "--bogus"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "--bogus" in proc.stderr


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("gausian", "unknown kernel 'gausian'; expected one of gaussian, laplacian"),
        ("gaussian:width=2", "unknown parameter 'width=2' of gaussian; valid parameters: sigma"),
        ("gaussian:sigma=big", "parameter 'sigma' of gaussian expects a float, got 'big'"),
        ("spectrum:k=3", "spectrum takes sequences, but the input holds vectors"),
    ],
)
def test_bad_kernel_specs_exit_2_listing_the_valid_ones(cli, tmp_path, spec, fragment):
    src = tmp_path / "v.csv"
    src.write_text("a,b\n" + "\n".join(f"{i},{i % 3}" for i in range(12)) + "\n")
    out = tmp_path / "out"
    res = cli("autoencode", src, "--kind", "vectors", "--kernel", spec, "--out", out, "--quiet")
    assert res.code == 2
    assert fragment in res.err and len(res.err.strip().splitlines()) == 1
    assert not out.exists()


def test_kernel_specs_build_the_named_kernels():
    assert set(KERNELS) >= {"gaussian", "tanimoto", "spectrum", "mismatch", "wl", "precomputed"}
    assert parse_kernel("mismatch:k=4,m=2") == ("mismatch", {"k": 4, "m": 2})
    k = build_kernel("mismatch:k=4,m=2", "sequences", alphabet="dna")
    assert isinstance(k, Mismatch) and (k.k, k.m, k.alphabet) == (4, 2, "dna")
    # gaussian without sigma on vectors: the median pairwise distance (here of 0, 3 and 4)
    k = build_kernel(None, "vectors", sigma_from=[[0.0, 0.0], [3.0, 0.0], [0.0, 4.0]])
    assert isinstance(k, Gaussian) and k.sigma == pytest.approx(4.0)


def test_debug_shows_the_traceback(tmp_path):
    src = tmp_path / "empty.csv"
    src.write_text("")
    with pytest.raises(ValueError, match="empty file"):
        main(["--debug", "autoencode", str(src), "--out", str(tmp_path / "out")])


def test_missing_matplotlib_says_what_to_install(cli, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    out = tmp_path / "demo"
    res = cli("demo", "--out", out, "--quiet")
    assert res.code == 1
    assert "pip install 'kernelkit[plot]'" in res.err and len(res.err.strip().splitlines()) == 1
    assert not out.exists()


def test_training_progress_bar_and_the_saved_model(cli, tmp_path, monkeypatch):
    """With a progress bar (a terminal), the bar moves and the model still saves."""
    import io as _io

    import kernelkit.cli._autoencode as job
    from kernelkit.io import load
    from kernelkit.utils._progress import Progress

    sink = _io.StringIO()
    monkeypatch.setattr(
        job,
        "progress_bar",
        lambda total, desc, quiet: Progress(desc, total, stream=sink, terminal=True),
    )
    src = tmp_path / "v.csv"
    src.write_text("a,b,y\n" + "".join(f"{i % 7},{(i * 3) % 5},{i % 2}\n" for i in range(30)))
    out = tmp_path / "out"
    res = cli(
        "autoencode", src, "--target", "y", "--dims", 2, "--max-iter", 3, "--trees", 5, "--out", out
    )
    assert res.code == 0, res.err
    assert "K2AE 2-D" in sink.getvalue() and "objective=" in sink.getvalue()
    assert load(out / "model_2d.zip").verbose == 0


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["fit", "--model", "autoencoder", "--dims", "2", "10"], "--dims: a fitted autoencoder"),
        (["fit", "--model", "ridge"], "--target or --labels: a ridge model needs targets"),
        (["autoencode", "--test-size", "1.5"], "--test-size: expected a fraction in (0, 1)"),
        (["autoencode", "--dims", "0"], "--dims: expected positive code widths"),
        (["gram", "--kind", "vectors"], "--out: expected a .npy file name"),
        (["autoencode", "--threads", "0"], "--threads: expected >= 1, got 0"),
    ],
)
def test_bad_option_values_exit_2(cli, tmp_path, argv, fragment):
    src = tmp_path / "v.csv"
    src.write_text("a,b\n" + "".join(f"{i},{i % 3}\n" for i in range(12)))
    out = tmp_path / "out"
    res = cli(argv[0], src, *argv[1:], "--out", out, "--quiet")
    assert res.code == 2, res.err
    assert fragment in res.err and len(res.err.strip().splitlines()) == 1
    assert not out.exists()
