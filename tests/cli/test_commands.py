"""Every subcommand on small slices of the real data of ``../shared/data``.

Oracles: the saved models reproduce the CLI's codes and the in-process estimators' predictions;
the blocked Gram written to ``.npy`` equals the kernel evaluated directly.
"""

from __future__ import annotations

import csv
import gzip
import json

import numpy as np
import pytest
from sklearn.ensemble import RandomForestRegressor
from sklearn.metrics import mean_squared_error, r2_score

from kernelkit import KernelRidge, KernelSVC
from kernelkit.cli._autoencode import verdict
from kernelkit.data.readers import read_data
from kernelkit.io import load
from kernelkit.kernels import Gaussian, Mismatch, Precomputed, Spectrum, Tanimoto, WeisfeilerLehman

pytest.importorskip("matplotlib")
pytest.importorskip("rdkit")

FAST = ("--dims", "2", "--max-iter", "3", "--trees", "10", "--quiet")


def _rows(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _solubility_slice(data_dir, tmp_path, n=60):
    """The first ``n`` molecules of the solubility set (SMILES, SOL, class) as a CSV."""
    lines = (data_dir / "solubility" / "solubility.csv").read_text().splitlines()
    path = tmp_path / "solubility.csv"
    path.write_text("\n".join(lines[: n + 1]) + "\n")
    return path


def _codes(path):
    rows = _rows(path)
    return np.array([[float(v) for k, v in r.items() if k.startswith("code_")] for r in rows])


def _check_autoencode_outputs(out, n):
    for name in ("report.md", "report.html", "results.json", "training_curve.png", "latent_2d.png"):
        assert (out / name).stat().st_size > 0, name
    html = (out / "report.html").read_text()
    assert 'src="latent_2d.png"' in html and 'href="codes_2d.csv"' in html
    results = json.loads((out / "results.json").read_text())
    assert results["n_records"] == n and results["n_train"] + results["n_test"] == n
    assert {r["method"] for r in results["results"]} == {"K2AE", "KPCA"}
    assert not [p for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.")]
    return results


def test_autoencode_molecules_csv_column(cli, data_dir, tmp_path):
    src = _solubility_slice(data_dir, tmp_path)
    out = tmp_path / "out"
    res = cli("autoencode", src, "--kind", "molecules", "--target", "SOL", "--out", out, *FAST)
    assert res.code == 0, res.err
    results = _check_autoencode_outputs(out, 60)
    assert results["kernel"].startswith("Tanimoto")
    assert results["verdict"] == verdict(results["results"], "SOL")
    assert results["verdict"] in (out / "report.md").read_text()
    # the forest's scores, recomputed by scikit-learn from the written codes and the target
    rows = _rows(out / "codes_2d.csv")
    Z = np.array([[float(r["code_1"]), float(r["code_2"])] for r in rows])
    y = np.array([float(r["SOL"]) for r in _rows(src)])
    train = np.array([r["split"] == "train" for r in rows])
    rf = RandomForestRegressor(n_estimators=10, max_features=1 / 3, random_state=0, n_jobs=1)
    pred = rf.fit(Z[train], y[train]).predict(Z[~train])
    k2ae = next(r for r in results["results"] if r["method"] == "K2AE" and r["dims"] == 2)
    assert k2ae["rf_r2"] == pytest.approx(r2_score(y[~train], pred), rel=1e-12)
    nmse = mean_squared_error(y[~train], pred) / np.var(y[~train])
    assert k2ae["rf_nmse"] == pytest.approx(nmse, rel=1e-12)
    # the saved model gives back the codes written by the command (ids from the ID column)
    model = load(out / "model_2d.zip")
    smiles = [r["smiles"] for r in _rows(src)]
    codes = _codes(out / "codes_2d.csv")
    np.testing.assert_allclose(np.asarray(model.transform(smiles)), codes, rtol=1e-6, atol=1e-7)
    assert [r["id"] for r in _rows(out / "codes_2d.csv")][:2] == ["1", "2"]


def test_autoencode_dna_fasta_with_header_target(cli, data_dir, tmp_path):
    out = tmp_path / "out"
    src = data_dir / "promoter" / "promotergene.fasta"
    res = cli(
        "autoencode", src, "--kernel", "spectrum:k=3", "--target", "class", "--out", out, *FAST
    )
    assert res.code == 0, res.err
    results = _check_autoencode_outputs(out, 106)
    assert "rf_accuracy" in results["results"][0]
    assert "alphabet='dna'" in results["kernel"]


def test_autoencode_and_gram_on_peptides(cli, data_dir, tmp_path):
    lines = (data_dir / "amp" / "AMPvsTMset.csv").read_text().splitlines()[1:]
    picked = lines[:30] + lines[-30:]  # both classes
    src = tmp_path / "peptides.csv"
    src.write_text("sequence,label\n" + "\n".join(picked) + "\n")
    out = tmp_path / "out"
    args = ("--kind", "sequences", "--column", "sequence", "--kernel", "mismatch:k=3,m=1")
    res = cli("autoencode", src, *args, "--target", "label", "--out", out, *FAST)
    assert res.code == 0, res.err
    _check_autoencode_outputs(out, 60)
    # blocked Gram (blocks of 7 rows) equals the kernel evaluated at once
    K_path = tmp_path / "K.npy"
    res = cli("gram", src, *args, "--block-size", 7, "--out", K_path, "--quiet")
    assert res.code == 0, res.err
    seqs = [line.split(",")[0] for line in picked]
    direct = Mismatch(k=3, m=1, alphabet="protein")(seqs).numpy()
    np.testing.assert_allclose(np.load(K_path), direct, rtol=1e-12)
    # the cross-Gram against a second file
    other = tmp_path / "other.csv"
    other.write_text("sequence,label\n" + "\n".join(picked[:9]) + "\n")
    res = cli("gram", other, *args, "--against", src, "--out", tmp_path / "C.npy", "--quiet")
    assert res.code == 0, res.err
    np.testing.assert_allclose(np.load(tmp_path / "C.npy"), direct[:9], rtol=1e-12)


def test_autoencode_vectors_and_fit_predict_ridge(cli, data_dir, tmp_path):
    with gzip.open(data_dir / "yeast" / "yeast.csv.gz", "rt") as fh:
        lines = [next(fh) for _ in range(81)]
    header = lines[0].strip().split(",")
    keep = [j for j, name in enumerate(header) if name.startswith("Att")][:20]
    target = header.index("Class1")
    rows = [line.strip().split(",") for line in lines]
    src = tmp_path / "yeast.tsv"
    src.write_text("\n".join("\t".join(r[j] for j in [*keep, target]) for r in rows) + "\n")
    out = tmp_path / "out"
    res = cli("autoencode", src, "--target", "Class1", "--out", out, *FAST)
    assert res.code == 0, res.err
    results = _check_autoencode_outputs(out, 80)
    assert results["kernel"].startswith("Gaussian")

    model_path = tmp_path / "ridge.zip"
    res = cli(
        "fit",
        src,
        "--model",
        "ridge",
        "--kernel",
        "gaussian:sigma=3",
        "--lam",
        "0.01",
        "--target",
        "Class1",
        "--out",
        model_path,
    )
    assert res.code == 0, res.err
    assert "training R²" in res.out
    preds = tmp_path / "preds.csv"
    res = cli(
        "predict",
        model_path,
        src,
        "--columns",
        ",".join(header[j] for j in keep),
        "--out",
        preds,
        "--quiet",
    )
    assert res.code == 0, res.err
    data = read_data(src, target="Class1")
    y = data.target("Class1", task="regression").values
    X = data.items
    expected = KernelRidge(Gaussian(3.0), lam=0.01).fit(X, y).predict(X)
    got = np.array([float(r["prediction"]) for r in _rows(preds)])
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-9)


def test_fit_predict_svc_on_dna(cli, data_dir, tmp_path):
    src = data_dir / "promoter" / "promotergene.fasta"
    model_path = tmp_path / "svc"
    res = cli(
        "fit",
        src,
        "--model",
        "svc",
        "--kernel",
        "spectrum:k=2",
        "--C",
        "1",
        "--target",
        "class",
        "--out",
        model_path,
        "--quiet",
    )
    assert res.code == 0, res.err
    preds = tmp_path / "preds.csv"
    res = cli("predict", model_path, src, "--out", preds, "--quiet")
    assert res.code == 0, res.err
    data = read_data(src)
    y = np.array(data.columns["class"])
    ref = KernelSVC(Spectrum(k=2, alphabet="dna"), C=1.0).fit(data.items, y)
    got = [r["prediction"] for r in _rows(preds)]
    assert got == list(ref.predict(data.items))
    assert [r["id"] for r in _rows(preds)][:2] == ["1", "2"]


def test_graphs_gram_then_precomputed_autoencode_fit_predict(cli, data_dir, tmp_path):
    nx = pytest.importorskip("networkx")
    from kernelkit.data._molecules import MoleculeBatch

    smiles = [r["smiles"] for r in _rows(_solubility_slice(data_dir, tmp_path, 40))]
    batch = MoleculeBatch.from_molecules(smiles).to_graphs()
    folder = tmp_path / "graphs"
    folder.mkdir()
    for i in range(len(batch)):
        nx.write_graphml(batch.to_networkx(i), folder / f"mol{i:03d}.graphml")
    K_path = tmp_path / "K.npy"
    res = cli("gram", folder, "--kernel", "wl:n_iter=2", "--block-size", 16, "--out", K_path)
    assert res.code == 0, res.err
    assert "40 x 40" in res.out
    # plain stage lines, no progress bar, when stderr is not a terminal
    assert "\r" not in res.err and res.err.count("\n") == 2
    assert all(line.startswith("kernelkit gram: ") for line in res.err.splitlines())
    direct = WeisfeilerLehman(2)(read_data(folder).items).numpy()
    K = np.load(K_path)
    np.testing.assert_allclose(K, direct, rtol=1e-12)

    # the Gram is the input of a K2AE, a ridge model and their predictions
    labels = tmp_path / "sol.txt"
    sol = [r["SOL"] for r in _rows(tmp_path / "solubility.csv")]
    labels.write_text("\n".join(sol) + "\n")
    out = tmp_path / "out"
    res = cli("autoencode", K_path, "--gram", "--labels", labels, "--out", out, *FAST)
    assert res.code == 0, res.err
    _check_autoencode_outputs(out, 40)
    model_path = tmp_path / "krr.zip"
    res = cli(
        "fit",
        K_path,
        "--gram",
        "--model",
        "ridge",
        "--lam",
        "1e-3",
        "--labels",
        labels,
        "--out",
        model_path,
        "--quiet",
    )
    assert res.code == 0, res.err
    cross = tmp_path / "cross.npy"
    np.save(cross, K[:7])
    preds = tmp_path / "preds.csv"
    res = cli("predict", model_path, cross, "--out", preds, "--quiet")
    assert res.code == 0, res.err
    y = np.array(sol, dtype=float)
    expected = KernelRidge(Precomputed(), lam=1e-3).fit(K, y).predict(K[:7])
    got = np.array([float(r["prediction"]) for r in _rows(preds)])
    np.testing.assert_allclose(got, expected, rtol=1e-8)
    # a K2AE on the Gram encodes new rows given their k(x, x) (--diag)
    model_path = tmp_path / "k2ae.zip"
    res = cli(
        "fit",
        K_path,
        "--gram",
        "--model",
        "autoencoder",
        "--dims",
        2,
        "--max-iter",
        3,
        "--out",
        model_path,
        "--quiet",
    )
    assert res.code == 0, res.err
    diag = tmp_path / "diag.npy"
    np.save(diag, np.diag(K)[:7])
    codes = tmp_path / "codes.csv"
    res = cli("predict", model_path, cross, "--diag", diag, "--out", codes, "--quiet")
    assert res.code == 0, res.err
    np.testing.assert_allclose(_codes(codes), np.asarray(load(model_path).codes_)[:7], rtol=1e-6)
    res = cli("predict", model_path, cross, "--out", tmp_path / "no_diag.csv", "--quiet")
    assert res.code == 1 and "cross.npy: " in res.err and "diag" in res.err


def test_fit_predict_autoencoder_on_smi(cli, data_dir, tmp_path):
    lines = (data_dir / "esol" / "ESOL.csv").read_text().splitlines()[1:41]
    src = tmp_path / "esol.smi"
    src.write_text("\n".join(f"{line.rsplit(',', 1)[1]} mol{i}" for i, line in enumerate(lines)))
    model_path = tmp_path / "k2ae.zip"
    res = cli(
        "fit",
        src,
        "--model",
        "autoencoder",
        "--dims",
        "3",
        "--max-iter",
        "3",
        "--out",
        model_path,
        "--quiet",
    )
    assert res.code == 0, res.err
    preds = tmp_path / "codes.csv"
    res = cli("predict", model_path, src, "--out", preds, "--quiet")
    assert res.code == 0, res.err
    rows = _rows(preds)
    assert rows[0]["id"] == "mol0" and len(rows) == 40
    model = load(model_path)
    smiles = [line.rsplit(",", 1)[1] for line in lines]
    np.testing.assert_allclose(_codes(preds), np.asarray(model.transform(smiles)), rtol=1e-6)
    assert isinstance(model.input_kernel_, Tanimoto)
