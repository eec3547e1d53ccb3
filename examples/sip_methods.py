"""The methods compared in the Table 1 reproduction (Ma et al. ICML 2020, section 7.1).

Every function selects its hyper-parameters by cross-validation on the training split
(:func:`sip_common.cv_select`) and touches the test split once, with the selected model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import sip_common as common

SIGMA_FACTORS = (0.35, 0.5, 0.7, 1.0)
SVM_CS = (1.0, 10.0, 100.0)
LINEAR_CS = (0.1, 1.0, 10.0)


def gaussian_svm(
    Xtr: np.ndarray, ytr: np.ndarray, Xte: np.ndarray, yte: np.ndarray, *, seed: int, folds: int
) -> tuple[float, float, float]:
    """Gaussian SVM; ``(sigma, C)`` by CV over median-heuristic multiples. Returns sigma, C, acc."""
    from sklearn.svm import SVC

    med = common.median_distance(Xtr, seed)
    grams = {f: common.gaussian_gram(Xtr, Xtr, f * med) for f in SIGMA_FACTORS}
    best, _ = common.cv_select(
        common.grid(gram=SIGMA_FACTORS, C=SVM_CS),
        common.precomputed_svm_score(grams, ytr),
        ytr,
        folds=folds,
        seed=seed,
    )
    sigma = best["gram"] * med
    model = SVC(kernel="precomputed", C=best["C"]).fit(grams[best["gram"]], ytr)
    acc = float(model.score(common.gaussian_gram(Xte, Xtr, sigma), yte))
    return sigma, best["C"], acc


def warping_svm(
    Xtr: np.ndarray,
    moved: Sequence[np.ndarray],
    ytr: np.ndarray,
    Xte: np.ndarray,
    yte: np.ndarray,
    sigma: float,
    *,
    strengths: Sequence[float],
    seed: int,
    folds: int,
    spectral: bool = False,
) -> tuple[dict[str, float], float]:
    """SVM on the exact warped kernel; ``(strength, C)`` by CV, sigma from the plain SVM."""
    from sklearn.svm import SVC

    pairs = common.warped_gaussian_grams(Xtr, moved, Xte, sigma, strengths, spectral=spectral)
    best, _ = common.cv_select(
        common.grid(gram=list(strengths), C=SVM_CS),
        common.precomputed_svm_score({s: K for s, (K, _) in pairs.items()}, ytr),
        ytr,
        folds=folds,
        seed=seed,
    )
    K, K_te = pairs[best["gram"]]
    acc = float(SVC(kernel="precomputed", C=best["C"]).fit(K, ytr).score(K_te, yte))
    return {"strength": best["gram"], "C": best["C"]}, acc


def select_features_and_C(
    features: dict[Any, tuple[np.ndarray, np.ndarray]],
    ytr: np.ndarray,
    yte: np.ndarray,
    *,
    seed: int,
    folds: int,
) -> tuple[Any, float, float]:
    """Pick a feature set (keyed by its parameter) and LinearSVC's C by CV; test once.

    Returns ``(key, C, test accuracy)``.
    """
    scorers = {key: common.linear_score(Ftr, ytr) for key, (Ftr, _) in features.items()}
    best, _ = common.cv_select(
        common.grid(features=list(features), C=LINEAR_CS),
        lambda p, a, b: scorers[p["features"]](p, a, b),
        ytr,
        folds=folds,
        seed=seed,
    )
    Ftr, Fte = features[best["features"]]
    acc = float(common.linear_classifier(best["C"]).fit(Ftr, ytr).score(Fte, yte))
    return best["features"], best["C"], acc


#: aggregation readings of section 7.1: label -> InvariantEmbedding keyword arguments
READINGS = {
    "a": {"aggregate": "max", "reading": "pairs"},
    "b": {"aggregate": "max", "reading": "transforms"},
    "c": {"aggregate": "max", "reading": "sum_of_max"},
    "sum": {"aggregate": "sum", "reading": "pairs"},
    "default": {"aggregate": "max", "reading": "pairs"},
    "plain": {"aggregate": "max", "reading": "pairs"},
}
#: strength grids per reading: the penalty ``s R(v)^2`` is a max over 4 n single terms for
#: (a), a max over 4 sums of n terms for (b), a sum of n maxima for (c) and a sum of 4 n terms
#: for the quadratic case, so comparable weights differ by about a factor n between them
STRENGTHS = {
    "a": (10.0, 100.0, 1000.0),
    "b": (0.01, 0.1, 1.0),
    "c": (0.01, 0.1, 1.0),
    "sum": (0.1, 1.0, 10.0),
    "default": (1.0,),
    "plain": (1.0,),
}
#: with ``strength_unit="spectral"`` strength 1 weighs the semi-norm like the RKHS norm in
#: its top direction (``sup_{||v||=1} R(v)^2 = 1``) for every reading; on the MNIST pairs
#: warping pays off at 10-1000 (the absolute 0.1 / 1 / 10 are about 8 / 85 / 850 there)
SPECTRAL_STRENGTHS = (10.0, 100.0, 1000.0)


def strength_grids(scale: float = 1.0, spectral: bool = False) -> dict[str, list[float]]:
    """Strength grid per reading, multiplied by ``scale``: :data:`STRENGTHS`, or with
    ``spectral`` :data:`SPECTRAL_STRENGTHS` for every reading but ``"default"``."""
    grids = {
        k: SPECTRAL_STRENGTHS if spectral and k != "default" else v for k, v in STRENGTHS.items()
    }
    return {k: [scale * s for s in v] for k, v in grids.items()}


def embed_variants(readings: str) -> dict[str, dict[str, Any]]:
    """``{"Embed (a)": {...}, ...}`` for a comma-separated list of reading labels."""
    out = {}
    for label in filter(None, readings.split(",")):
        if label not in READINGS:
            raise SystemExit(f"--readings: expected labels among {list(READINGS)}, got {label!r}")
        out[f"Embed ({label})"] = {"label": label, **READINGS[label]}
    return out


def embed_linear(
    Xtr: np.ndarray,
    ytr: np.ndarray,
    Xte: np.ndarray,
    yte: np.ndarray,
    sigma: float,
    variant: dict[str, Any],
    *,
    seed: int,
    folds: int,
    strength_scale: float = 1.0,
    strengths: list[float] | None = None,
    options: dict[str, str] | None = None,
) -> tuple[dict[str, float], float, dict[str, float]]:
    """InvariantEmbedding (section 7.1 invariances) + LinearSVC; strength and C by CV.

    The embedding is fitted on the training images (no labels); each strength of the grid
    (``strengths``, else :data:`STRENGTHS` of the reading) gives one feature set, and
    :func:`select_features_and_C` picks it with C by CV.  Returns the chosen parameters, the
    test accuracy, the worst certificates, ``gram_change``, the relative Frobenius
    distance ``||F F^T - K||_F / ||K||_F`` of the test features' Gram to the Gaussian Gram of
    the test images (how far the invariance moves the geometry a linear model sees; it
    includes the Nyström error of ``k`` between test images), and ``feature_change``,
    ``||F - F_0||_F / ||F_0||_F`` against the plain features ``F_0 = k~`` (``R = 0``) of the
    test images on the same basis (the invariance alone).
    ``options`` are further ``InvariantEmbedding`` keywords (``basis``, ``features``,
    ``strength_unit``).  The variant ``"default"`` ignores them, the grid and ``strength_scale``:
    ``InvariantEmbedding(Gaussian(sigma), [transforms])``, only C by CV; ``"plain"`` has no
    invariance (``R = 0``: Nyström features on the training images), only C by CV.
    """
    from kernelkit import InvariantEmbedding
    from kernelkit.kernels import Gaussian

    options = options or {}
    spectral = options.get("strength_unit") == "spectral"
    library_defaults = variant["label"] == "default"
    single = library_defaults or variant["label"] == "plain"
    grid_ = [1.0] if single else strengths or strength_grids(1.0, spectral)[variant["label"]]
    invariances = [] if variant["label"] == "plain" else [common.paper_transforms()]
    K_test = common.gaussian_gram(Xte, Xte, sigma)
    features, info = {}, {}
    for s in grid_:
        settings = {
            "aggregate": variant["aggregate"],
            "reading": variant["reading"],
            "strength": s * strength_scale,
            "tol": 1e-6,
            "max_iter": 300,
            **options,
        }
        # "default": every setting but the kernel and the invariances at the library default
        emb = InvariantEmbedding(
            Gaussian(sigma), invariances, **({} if library_defaults else settings)
        )
        train = emb.fit_transform(Xtr)  # fit embeds the training images once
        test = emb.embed(Xte)
        F_test = test.features.numpy()
        plain = np.asarray(emb.nystrom_features(Xte))  # R = 0 on the same basis
        features[s * strength_scale] = (np.asarray(train), F_test)
        info[s * strength_scale] = {
            "max_rel_gap": float(max(emb.certificates_.max(), test.gap.max())),
            "gram_change": float(
                np.linalg.norm(F_test @ F_test.T - K_test) / np.linalg.norm(K_test)
            ),
            "feature_change": float(np.linalg.norm(F_test - plain) / np.linalg.norm(plain)),
            "dim": emb.n_components_,
            "strength_": emb.strength_,
        }
    s, C, acc = select_features_and_C(features, ytr, yte, seed=seed, folds=folds)
    return {"strength": s, "C": C}, acc, info[s]


def dual_rrm(
    Xtr: np.ndarray,
    ytr: np.ndarray,
    Xte: np.ndarray,
    yte: np.ndarray,
    sigma: float,
    variant: dict[str, Any],
    *,
    seed: int,
    folds: int,
    strength_scale: float = 1.0,
    strengths: list[float] | None = None,
    options: dict[str, str] | None = None,
    max_iter: int = 50,
) -> tuple[dict[str, float], float, dict[str, Any]]:
    """Dual RRM of section 3 (Table 1 "Dual"): ``f* = sum_j c_j G*_{x_j}`` trained by L-BFGS.

    :func:`kernelkit.invariance.fit_dual_rrm` on the semi-norm of the ``InvariantEmbedding`` of
    ``variant`` (the same embedding, strength grid and options as :func:`embed_linear`, fitted
    on the training images), with the squared hinge loss of ``LinearSVC`` (its default), so
    that ``lam = 1 / (2 n C)`` makes ``(1/n) sum loss + lam ||f||_B^2`` the objective of a
    LinearSVC with ``C`` on the same ``n`` points (no intercept: ``f`` in ``B`` has none);
    strength and ``C`` from :data:`LINEAR_CS` by CV.  Returns the chosen parameters, the test
    accuracy and, for the chosen pair, whether L-BFGS converged within ``max_iter`` steps and
    its number of objective evaluations.
    """
    from kernelkit import InvariantEmbedding
    from kernelkit.invariance import fit_dual_rrm
    from kernelkit.kernels import Gaussian

    options = options or {}
    grid_ = strengths or strength_grids(1.0, options.get("strength_unit") == "spectral")[
        variant["label"]
    ]
    sign = np.where(ytr == ytr.max(), 1.0, -1.0)
    embeddings = {}
    for s in grid_:
        settings = {"aggregate": variant["aggregate"], "reading": variant["reading"]}
        embeddings[s * strength_scale] = InvariantEmbedding(
            Gaussian(sigma),
            [common.paper_transforms()],
            strength=s * strength_scale,
            tol=1e-6,
            max_iter=300,
            **settings,
            **options,
        ).fit(Xtr)

    def fit(strength: float, C: float, rows: np.ndarray) -> Any:
        lam = 1.0 / (2 * len(rows) * C)
        emb = embeddings[strength]
        return fit_dual_rrm(
            emb, Xtr[rows], sign[rows], lam=lam, loss="squared_hinge", max_iter=max_iter
        )

    def predict(strength: float, result: Any, X: np.ndarray) -> np.ndarray:
        scores = np.asarray(embeddings[strength].nystrom_features(X)) @ result.iota.numpy()
        return np.where(scores >= 0, ytr.max(), ytr.min())

    def score(p: dict[str, Any], a: np.ndarray, b: np.ndarray) -> float:
        result = fit(p["strength"], p["C"], a)
        return float(np.mean(predict(p["strength"], result, Xtr[b]) == ytr[b]))

    best, _ = common.cv_select(
        common.grid(strength=list(embeddings), C=LINEAR_CS), score, ytr, folds=folds, seed=seed
    )
    result = fit(best["strength"], best["C"], np.arange(len(ytr)))
    acc = float(np.mean(predict(best["strength"], result, Xte) == yte))
    info = {"converged": result.converged, "evaluations": len(result.objective)}
    return {"strength": best["strength"], "C": best["C"]}, acc, info
