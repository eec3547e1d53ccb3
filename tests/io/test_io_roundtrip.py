"""Every estimator round-trips through kernelkit.io with bit-identical outputs.

The oracle is the fitted estimator itself: after ``load(save(model))`` every output method
(predict, transform, decision_function, inverse_transform, reconstruction_error,
inner_transform) must return exactly the same array, on every input kind: vectors, a
precomputed Gram, strings, graphs (networkx) and SMILES (RDKit).
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from kernelkit import (
    ConcatenatedKernelRegressor,
    InvariantEmbedding,
    KernelAutoencoder,
    KernelHuberRegressor,
    KernelPCA,
    KernelRidge,
    KernelSVC,
    KernelSVR,
    NystromFeatures,
    RandomFourierFeatures,
)
from kernelkit.invariance import (
    ImageTransformInvariance,
    LabelLogicInvariance,
    MixupInvariance,
    TransformInvariance,
)
from kernelkit.io import ModelFileError, load, save
from kernelkit.kernels import (
    FeatureSpaceGaussian,
    Gaussian,
    Laplacian,
    Linear,
    Matern,
    MinMax,
    Polynomial,
    Precomputed,
    PrecomputedBatch,
    Spectrum,
    Tanimoto,
    WeisfeilerLehman,
)
from kernelkit.models._concatenated import Mixture

pytest.importorskip("safetensors", reason="kernelkit.io needs the io extra")

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
OUTPUT_METHODS = (
    "predict",
    "decision_function",
    "transform",
    "inverse_transform",
    "reconstruction_error",
    "inner_transform",
)
SMILES = [
    "CCO", "CCCO", "c1ccccc1O", "c1ccccc1N", "CC(=O)Oc1ccccc1C(=O)O", "OCC(O)CO", "C1CCCCC1",
    "CCN(CC)CC", "ClC(Cl)(Cl)Cl", "CC#N", "CCOC(=O)C", "c1ccncc1", "NCCN", "CCS", "CC(C)CO",
    "OC(=O)CCC(=O)O", "Cc1ccccc1", "CCCCCl", "COc1ccccc1", "CC(N)C(=O)O",
]  # fmt: skip


@pytest.fixture(autouse=True)
def _one_thread(one_torch_thread):
    """Tiny problems: one torch thread."""


def _outputs(model, X_new):
    """Every output method the model has, on ``X_new`` (a refusal counts as an output)."""
    out = {}
    for name in OUTPUT_METHODS:
        if hasattr(model, name):
            try:
                out[name] = getattr(model, name)(X_new)
            except ValueError as exc:  # e.g. a K2AE's inverse_transform: refused the same way
                out[name] = f"{type(exc).__name__}: {exc}"
    return out


def _assert_identical(before, after):
    assert before.keys() == after.keys()
    for name, a in before.items():
        b = after[name]
        assert type(a) is type(b), name
        if isinstance(a, str):
            assert a == b, name
        elif isinstance(a, torch.Tensor):
            assert a.dtype == b.dtype and a.device == b.device, name
            assert torch.equal(a, b), name
        else:
            assert a.dtype == b.dtype, name
            assert np.array_equal(a, b), name


@pytest.fixture
def roundtrip(tmp_path, same_state, monkeypatch):
    """``roundtrip(model, X_new, suffix)``: see :func:`_roundtrip`."""

    def run(model, X_new, suffix=""):
        return _roundtrip(model, X_new, tmp_path, suffix, same_state, monkeypatch)

    return run


def _forbidden(*args, **kwargs):
    raise AssertionError("kernelkit.io.load must never unpickle")


def _roundtrip(model, X_new, tmp_path, suffix, same_state, monkeypatch):
    """Save, load (with every unpickler disabled), and check that the outputs and the whole
    fitted state are identical."""
    before = _outputs(model, X_new)
    path = save(model, tmp_path / f"model{suffix}")
    with monkeypatch.context() as patch:
        for module, name in [
            (pickle, "load"),
            (pickle, "loads"),
            (pickle, "Unpickler"),
            (torch, "load"),
        ]:
            patch.setattr(module, name, _forbidden)
        loaded = load(path)
    assert type(loaded) is type(model)
    assert repr(loaded) == repr(model)
    _assert_identical(before, _outputs(loaded, X_new))
    same_state(model, loaded)
    return loaded


# ---------------------------------------------------------------------- data
def _vectors(n=24, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, np.sin(X[:, 0]) + 0.3 * X[:, 1], rng.normal(size=(7, d))


def _gram():
    X, y, Xt = _vectors()
    k = Gaussian(sigma=1.3)
    return k(X).numpy(), y, k(Xt, X).numpy()


def _strings():
    rng = np.random.default_rng(3)
    X = ["".join(rng.choice(list("ACGT"), size=int(rng.integers(8, 16)))) for _ in range(29)]
    return X[:24], np.array([s.count("A") - s.count("T") for s in X[:24]], float), X[24:]


def _graphs():
    nx = pytest.importorskip("networkx")
    graphs = []
    for i in range(24):
        g = nx.gnp_random_graph(7, 0.4, seed=i)
        nx.set_node_attributes(g, {v: int(v % 3) for v in g}, "label")
        graphs.append(g)
    y = np.array([g.number_of_edges() for g in graphs], float)
    return graphs[:20], y[:20], graphs[20:]


def _molecules():
    pytest.importorskip("rdkit")
    smiles = SMILES
    if (DATA / "esol" / "ESOL.csv").is_file():
        from kernelkit.data._molecule_datasets import load_esol

        smiles = list(load_esol(DATA).smiles[:30])
    y = np.array([len(s) for s in smiles], float)
    return smiles[:-5], y[:-5], smiles[-5:]


def _fingerprint_matrix():
    rng = np.random.default_rng(5)
    counts = rng.poisson(0.6, size=(29, 40)).astype(float)
    return sp.csr_matrix(counts[:24]), counts[:24].sum(1), sp.csr_matrix(counts[24:])


DATA_KINDS = {
    "vector": _vectors,
    "gram": _gram,
    "string": _strings,
    "graph": _graphs,
    "molecule": _molecules,
    "fingerprint_matrix": _fingerprint_matrix,
}

INPUT_KERNELS = {
    "vector": lambda: Gaussian(sigma=0.9) + 0.5 * Polynomial(degree=2) ** 2,
    "gram": lambda: Precomputed(),
    "string": lambda: Spectrum(k=2).normalized(),
    "graph": lambda: WeisfeilerLehman(n_iter=2),
    "molecule": lambda: Tanimoto(radius=2, n_bits=1024),
    "fingerprint_matrix": lambda: MinMax(),
}


def _labels(y):
    return np.where(y > np.median(y), "high", "low")


ESTIMATORS = {
    "ridge": lambda k: KernelRidge(k, lam=1e-2),
    "pca": lambda k: KernelPCA(k, n_components=3),
    "svc": lambda k: KernelSVC(k, C=2.0),
    "svr": lambda k: KernelSVR(k, lam=1e-2),
    "huber": lambda k: KernelHuberRegressor(k, lam=1e-2, epsilon=0.5),
    "k2ae": lambda k: KernelAutoencoder((3, 2), input_kernel=k, max_iter=4, random_state=0),
    "k2ae_landmarks": lambda k: KernelAutoencoder(
        (2,), input_kernel=k, n_centers=8, max_iter=4, random_state=0
    ),
    "nystrom_kmeans": lambda k: NystromFeatures(k, 6, centers="kmeans++", random_state=0),
    "nystrom_greedy": lambda k: NystromFeatures(k, 6, centers="greedy"),
    "concatenated": lambda k: ConcatenatedKernelRegressor(
        inner_kernel=k, inner_dim=2, n_restarts=2, max_iter=3, random_state=0
    ),
}


@pytest.mark.parametrize("suffix", ["", ".zip"])
@pytest.mark.parametrize("kind", list(DATA_KINDS))
@pytest.mark.parametrize("estimator", list(ESTIMATORS))
def test_estimator_roundtrips_on_every_input_kind(estimator, kind, suffix, roundtrip):
    X, y, X_new = DATA_KINDS[kind]()
    model = ESTIMATORS[estimator](INPUT_KERNELS[kind]())
    target = _labels(y) if estimator == "svc" else y
    unsupervised = estimator.startswith(("k2ae", "nystrom")) or estimator == "pca"
    model.fit(X, None if unsupervised else target)
    roundtrip(model, X_new, suffix)


@pytest.mark.parametrize(
    "make",
    [
        lambda: NystromFeatures(Matern(nu=2.5), 10, random_state=3),
        lambda: NystromFeatures(n_centers=10, centers="kpca", rank=4, random_state=0),
        lambda: RandomFourierFeatures(Gaussian(sigma=2.0), 16, random_state=0),
        lambda: RandomFourierFeatures(Laplacian(), 16, random_state=1),
        lambda: RandomFourierFeatures(Matern(nu=0.7), 16, random_state=2),
    ],
    ids=["nystrom-uniform", "nystrom-kpca", "rff-gaussian", "rff-laplacian", "rff-matern"],
)
@pytest.mark.parametrize("tensor", [False, True])
def test_feature_maps_roundtrip(make, tensor, roundtrip):
    X, _, X_new = _vectors()
    if tensor:  # float32 tensors: the state and outputs stay float32 tensors
        X, X_new = (torch.as_tensor(a, dtype=torch.float32) for a in (X, X_new))
    roundtrip(make().fit(X), X_new, ".zip")


@pytest.mark.parametrize(
    "make",
    [
        lambda: KernelAutoencoder((4, 2, 4), max_iter=4, random_state=0),
        lambda: KernelAutoencoder((2,), kernels=Laplacian(sigma=2.0), max_iter=4, random_state=0),
        lambda: KernelAutoencoder(
            (3,), n_centers=10, centers="kmeans++", optimizer="adam", random_state=1
        ),
        lambda: KernelAutoencoder((2,), closed_form=False, max_iter=4, random_state=0),
        lambda: KernelAutoencoder((3, 2), algorithm="alternating", max_iter=2, random_state=0),
    ],
    ids=["kae-deep", "kae-laplacian", "kae-landmarks-kmeans-adam", "kae-trained-head", "kae-alt"],
)
def test_finite_kae_roundtrips(make, roundtrip):
    X, _, X_new = _vectors()
    loaded = roundtrip(make().fit(X), X_new, ".zip")
    assert loaded.history_ == make().fit(X).history_


@pytest.mark.parametrize(
    "make",
    [
        lambda: ConcatenatedKernelRegressor(n_restarts=3, max_iter=5, random_state=0),
        lambda: ConcatenatedKernelRegressor(
            inner_kernel=[Matern(nu=1.5), Gaussian(sigma=2.0)],
            inner_dim=[2, 2],
            n_restarts=2,
            max_iter=5,
            random_state=0,
        ),
        lambda: ConcatenatedKernelRegressor(
            inner_kernel=Mixture([Gaussian(sigma=1.0), Linear()]),
            weights=np.array([1.0, 0.5]),
            n_restarts=2,
            max_iter=5,
            random_state=0,
        ),
    ],
    ids=["scalar", "two-layer", "mixture"],
)
def test_concatenated_roundtrips(make, roundtrip):
    X, y, X_new = _vectors()
    loaded = roundtrip(make().fit(X, y), X_new, "")
    assert isinstance(loaded.restart_objectives_, np.ndarray)


def test_torch_float32_input_stays_torch_float32(roundtrip):
    X, y, X_new = (torch.as_tensor(a, dtype=torch.float32) for a in _vectors())
    model = KernelRidge(Gaussian(sigma=1.0), lam=1e-2).fit(X, y)
    loaded = roundtrip(model, X_new, ".zip")
    assert loaded.X_fit_.dtype == torch.float32 and isinstance(loaded.dual_coef_, torch.Tensor)


def test_feature_space_gaussian_on_a_precomputed_gram(roundtrip):
    K, y, Kt = _gram()
    diag = np.ones(len(Kt))  # Gaussian Gram: k(x, x) = 1
    model = KernelRidge(FeatureSpaceGaussian(Precomputed(), sigma=0.8), lam=1e-2).fit(K, y)
    test = PrecomputedBatch(torch.as_tensor(Kt), torch.as_tensor(diag))
    roundtrip(model, test, "")


def test_unfitted_estimator_and_bare_kernel_roundtrip(tmp_path):
    model = KernelSVC(Spectrum(k=3, alphabet="dna") * Spectrum(k=1), C=0.3, class_weight={"a": 2.0})
    assert repr(load(save(model, tmp_path / "unfitted"))) == repr(model)
    kernel = (Gaussian(sigma=0.5) + Linear()).normalized() ** 3
    X, _, _ = _vectors()
    assert torch.equal(load(save(kernel, tmp_path / "kernel.zip"))(X), kernel(X))


def test_shared_objects_stay_shared(tmp_path):
    X, _, _ = _vectors()
    model = KernelAutoencoder((2,), max_iter=2, random_state=0).fit(X)
    # the landmark batch is the training batch (ref_ is its copy in the input's container)
    assert model._ref is model.X_fit_ and model.kernels_[-1] is model.model_.head_kernel
    loaded = load(save(model, tmp_path / "kae"))
    assert loaded._ref is loaded.X_fit_
    assert loaded.kernels_[-1] is loaded.model_.head_kernel


def test_manifest_schema(tmp_path):
    X, y, _ = _vectors()
    save(KernelRidge(Gaussian(sigma=2.0), lam=0.1).fit(X, y), tmp_path / "m")
    manifest = json.loads((tmp_path / "m" / "manifest.json").read_text())
    assert manifest["format"] == "kernelkit-model" and manifest["format_version"] == 1
    assert manifest["class"] == "KernelRidge"
    assert manifest["parameters"]["lam"] == 0.1
    assert manifest["parameters"]["kernel"]["class"] == "Gaussian"
    arrays = {entry["name"]: entry for entry in manifest["arrays"]}
    assert arrays["dual_coef_"]["shape"] == [len(X)] and arrays["dual_coef_"]["dtype"] == "float64"
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == [
        "arrays.safetensors",
        "manifest.json",
    ]


@pytest.mark.parametrize(
    ("make", "target"),
    [
        (lambda: KernelPCA(Gaussian(sigma=2.0), n_components=3, fit_inverse_transform=True), None),
        (lambda: KernelSVC(Laplacian(sigma=1.0), C=3.0), "three classes"),
        (lambda: KernelRidge(Matern(nu=2.5), lam=1e-3), "two outputs"),
    ],
    ids=["pca-inverse", "svc-multiclass", "ridge-multioutput"],
)
def test_more_vector_estimators(make, target, roundtrip):
    X, y, X_new = _vectors()
    if target == "three classes":
        y = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
    elif target == "two outputs":
        y = np.column_stack([y, -2 * y])
    model = make().fit(X) if target is None else make().fit(X, y)
    roundtrip(model, X_new, ".zip")


def test_pandas_input_keeps_feature_names(roundtrip):
    pd = pytest.importorskip("pandas")
    X, y, X_new = _vectors()
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    model = KernelRidge(Gaussian(sigma=1.0)).fit(frame, y)
    loaded = roundtrip(model, pd.DataFrame(X_new, columns=["a", "b", "c"]), "")
    assert list(loaded.feature_names_in_) == ["a", "b", "c"]
    # lam="auto" (the default): cv_results_ keeps scikit-learn's masked param_lam
    assert isinstance(loaded.cv_results_["param_lam"], np.ma.MaskedArray)
    np.testing.assert_array_equal(loaded.cv_results_["param_lam"], model.cv_results_["param_lam"])


@pytest.mark.slow  # a new interpreter imports torch: ~8 s under load
def test_load_in_a_fresh_interpreter(tmp_path):
    """Loading imports what it needs itself (the CLI loads models in a new process)."""
    X, y, X_new = _vectors()
    model = ConcatenatedKernelRegressor(n_restarts=2, max_iter=3, random_state=0).fit(X, y)
    path = save(model, tmp_path / "model.zip")
    np.save(tmp_path / "X_new.npy", X_new)
    code = (
        "import sys, numpy as np; from kernelkit.io import load; "
        "m = load(sys.argv[1]); np.save(sys.argv[2], m.predict(np.load(sys.argv[3])))"
    )
    src = Path(__file__).resolve().parents[2] / "src"
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            str(path),
            str(tmp_path / "out.npy"),
            str(tmp_path / "X_new.npy"),
        ],
        check=True,
        env=env,
        timeout=120,
    )
    assert np.array_equal(np.load(tmp_path / "out.npy"), model.predict(X_new))


@pytest.mark.parametrize(
    "make",
    [
        lambda: InvariantEmbedding(
            Gaussian(sigma=2.0), [ImageTransformInvariance(shape=(4, 4))], aggregate="sum"
        ),
        lambda: InvariantEmbedding(
            Gaussian(sigma=2.0),
            [ImageTransformInvariance(shape=(4, 4), n_points=5, random_state=0)],
            aggregate="max",
            reading="sum_of_max",
        ),
        lambda: InvariantEmbedding(
            Gaussian(sigma=2.0),
            [LabelLogicInvariance(implications=[(0, 2)], exclusions=[(0, 1)])],
        ),
        lambda: InvariantEmbedding(
            Gaussian(sigma=2.0), [MixupInvariance(n_pairs=4, n_grid=3, random_state=1)]
        ),
    ],
    ids=["image-sum", "image-max", "label-logic", "mixup"],
)
def test_invariant_embedding_roundtrips(make, roundtrip):
    rng = np.random.default_rng(0)
    X, X_new = rng.normal(size=(9, 16)), rng.normal(size=(4, 16))
    labels = np.array([0, 1, 2, 0, 1, 2, 0, 1, 2])
    model = make()
    joint = model.invariances[0].joint
    y = np.eye(3)[labels] if isinstance(model.invariances[0], LabelLogicInvariance) else labels
    loaded = roundtrip(model.fit(X, y if joint else None), X_new, ".zip")
    assert np.array_equal(loaded.certificates_, model.certificates_)


def test_invariant_embedding_with_python_callables_is_refused(tmp_path):
    X = np.random.default_rng(0).normal(size=(6, 3))
    model = InvariantEmbedding(Gaussian(sigma=1.0), [TransformInvariance([np.flip])]).fit(X)
    with pytest.raises(ModelFileError, match="transforms"):
        save(model, tmp_path / "model")
    assert not (tmp_path / "model").exists()
