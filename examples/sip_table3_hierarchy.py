"""Table 3 analogue of Ma et al. (ICML 2020, sections 6, 7.3, appendix E.2): label logic.

Two real hierarchies (:mod:`sip_labels`): RDKit functional groups on the 1282 solubility
molecules (groups present in at least 5 % of them, closed under parents: 18 labels, 14
implications child => parent, 15 sibling exclusions), and Reuters grain ⊃ corn (1 implication,
no siblings).  For each size ``n/n`` in ``{100, 200, 500}`` (the paper's) and each seed, a
random train/test draw (Reuters: train from the ModApte train file, test from the test file).

Inputs: Morgan fingerprints (radius 2, 1024 bits) of the molecules; TF-IDF vectors (fitted on
the training draw, 2000 terms, l2-normalised) of the stories.  Kernel: Gaussian with sigma =
the median distance of the training draw, shared by all methods.

* **ML-SVM**: one Gaussian SVM per label (``SVC(kernel="precomputed")``), C by 3-fold CV on
  the training draw per label; a label with fewer than 3 positives (or negatives) in the
  training draw is predicted constant;
* **Embed**: ``InvariantEmbedding`` with ``LabelLogicInvariance(implications, exclusions)``
  (hinge penalties (35)-(37), grouped per training point as in eq. 36), one representation per
  (x, label), then one linear SVM over all (x, label) rows with a bias per label; per-label
  sign at test time, no inference.  Strength and C by 3-fold CV on the training draw.

Reported: Hamming accuracy (the paper's "accuracy"), exact-match ratio, and the number of test
examples whose predicted label set breaks an implication / an exclusion (appendix E.2), next to
the same counts for the true labels.

Usage::

    PYTHONPATH=src python examples/sip_table3_hierarchy.py            # 5 seeds, 3 sizes
    PYTHONPATH=src python examples/sip_table3_hierarchy.py --quick    # seconds: smoke run
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import numpy as np
import sip_common as common
import sip_labels as labels

SVM_CS = (1.0, 10.0, 100.0)
LINEAR_CS = (0.1, 1.0, 10.0)
STRENGTHS = (0.1, 1.0, 10.0)
PAPER_REUTERS = {
    "Embed": [95.7, 97.2, 98.0],
    "ML-SVM": [94.2, 95.1, 95.2],
    "HR-SVM": [95.1, 97.3, 97.7],
}


def morgan_bits(smiles: list[str]) -> np.ndarray:
    """Morgan fingerprints (radius 2, 1024 bits) as a dense 0/1 float matrix."""
    from rdkit import Chem
    from rdkit.Chem import rdFingerprintGenerator

    gen = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=1024)
    return np.array([gen.GetFingerprintAsNumPy(Chem.MolFromSmiles(s)) for s in smiles], float)


def tfidf(train_texts: list[str], texts: list[str]) -> np.ndarray:
    """TF-IDF (2000 terms, l2 rows) fitted on ``train_texts``, applied to ``texts``."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    vec = TfidfVectorizer(max_features=2000, sublinear_tf=True).fit(train_texts)
    return vec.transform(texts).toarray()


def per_label_svm(
    K: np.ndarray, K_te: np.ndarray, Y: np.ndarray, *, seed: int, folds: int
) -> tuple[np.ndarray, list[Any]]:
    """ML-SVM: an SVC per label on a precomputed Gram; C by CV per label."""
    from sklearn.svm import SVC

    pred = np.zeros((len(K_te), Y.shape[1]), dtype=np.int64)
    chosen: list[Any] = []
    for lab in range(Y.shape[1]):
        y = Y[:, lab]
        if min(y.sum(), len(y) - y.sum()) < folds:
            pred[:, lab] = int(y.mean() > 0.5)
            chosen.append("constant")
            continue
        best, _ = common.cv_select(
            common.grid(gram=[0], C=SVM_CS),
            common.precomputed_svm_score({0: K}, y),
            y,
            folds=folds,
            seed=seed,
        )
        pred[:, lab] = SVC(kernel="precomputed", C=best["C"]).fit(K, y).predict(K_te)
        chosen.append(best["C"])
    return pred, chosen


def joint_rows(F: np.ndarray) -> np.ndarray:
    """Rows ``(x, l)`` of joint features ``(n, L, D)`` with a one-hot bias column per label."""
    n, L, D = F.shape
    bias = np.tile(np.eye(L), (n, 1))
    return np.hstack([F.reshape(n * L, D), bias])


def embed_multilabel(
    Xtr: np.ndarray,
    Ytr: np.ndarray,
    Xte: np.ndarray,
    sigma: float,
    hierarchy: labels.Hierarchy,
    *,
    seed: int,
    folds: int,
    n_landmarks: int | None,
) -> tuple[np.ndarray, dict[str, Any]]:
    """InvariantEmbedding with the label logic + one joint linear SVM; strength, C by CV."""
    from sklearn.model_selection import KFold

    from kernelkit import InvariantEmbedding
    from kernelkit.invariance import LabelLogicInvariance
    from kernelkit.kernels import Gaussian

    feats, gaps = {}, {}
    for s in STRENGTHS:
        emb = InvariantEmbedding(
            Gaussian(sigma),
            [LabelLogicInvariance(hierarchy.implications, hierarchy.exclusions)],
            n_centers=n_landmarks,
            strength=s,
            tol=1e-6,
            max_iter=300,
            random_state=seed,
            **common.RECORDED_SETTINGS,
        ).fit(Xtr, Ytr)
        train, test = emb.embed(Xtr), emb.embed(Xte)
        feats[s] = (train.features.numpy(), test.features.numpy())
        gaps[s] = float(max(train.gap.max(), test.gap.max()))
    splits = list(KFold(folds, shuffle=True, random_state=seed).split(Xtr))

    def fit_predict(C: float, Fa: np.ndarray, Ya: np.ndarray, Fb: np.ndarray) -> np.ndarray:
        if np.unique(Ya).size < 2:  # a draw without any positive (or negative) label
            return np.full(Fb.shape[:2], Ya.flat[0])
        model = common.linear_classifier(C).fit(joint_rows(Fa), Ya.ravel())
        return model.predict(joint_rows(Fb)).reshape(Fb.shape[:2])

    def score(params: dict[str, Any]) -> float:
        F = feats[params["strength"]][0]
        accs = [
            float((fit_predict(params["C"], F[a], Ytr[a], F[b]) == Ytr[b]).mean())
            for a, b in splits
        ]
        return float(np.mean(accs))

    candidates = common.grid(strength=STRENGTHS, C=LINEAR_CS)
    best = candidates[int(np.argmax([score(c) for c in candidates]))]
    Ftr, Fte = feats[best["strength"]]
    pred = fit_predict(best["C"], Ftr, Ytr, Fte)
    return pred, {**best, "max_rel_gap": gaps[best["strength"]]}


def metrics(pred: np.ndarray, Y: np.ndarray, hierarchy: labels.Hierarchy) -> dict[str, Any]:
    return {
        "hamming_acc": float((pred == Y).mean()),
        "exact_match": float((pred == Y).all(1).mean()),
        "rows_violating": hierarchy.rows_violating(pred),
        "violations": {k: v.tolist() for k, v in hierarchy.violations(pred).items()},
    }


def run(dataset: str, n: int, seed: int, args: argparse.Namespace, data: dict) -> dict:
    rng = np.random.default_rng(seed)
    hierarchy: labels.Hierarchy = data["hierarchy"]
    if dataset == "reuters":
        tr = rng.choice(np.flatnonzero(data["split"] == "train"), n, replace=False)
        te = rng.choice(np.flatnonzero(data["split"] == "test"), n, replace=False)
        train_texts = [data["inputs"][i] for i in tr]
        X = tfidf(train_texts, [data["inputs"][i] for i in np.concatenate([tr, te])])
        Xtr, Xte = X[:n], X[n:]
    else:
        perm = rng.permutation(len(data["Y"]))
        tr, te = perm[:n], perm[n : 2 * n]
        Xtr, Xte = data["inputs"][tr], data["inputs"][te]
    Ytr, Yte = data["Y"][tr], data["Y"][te]
    sigma = common.median_distance(Xtr, seed)
    K = common.gaussian_gram(Xtr, Xtr, sigma)
    K_te = common.gaussian_gram(Xte, Xtr, sigma)
    out: dict[str, Any] = {"seed": seed, "sigma": sigma, "truth": metrics(Yte, Yte, hierarchy)}
    t0 = time.perf_counter()
    pred, chosen = per_label_svm(K, K_te, Ytr, seed=seed, folds=args.folds)
    out["ML-SVM"] = {
        **metrics(pred, Yte, hierarchy),
        "C": chosen,
        "seconds": time.perf_counter() - t0,
    }
    if args.embed:
        t0 = time.perf_counter()
        pred, params = embed_multilabel(
            Xtr,
            Ytr,
            Xte,
            sigma,
            hierarchy,
            seed=seed,
            folds=args.folds,
            n_landmarks=args.n_landmarks,
        )
        out["Embed"] = {
            **metrics(pred, Yte, hierarchy),
            **params,
            "seconds": time.perf_counter() - t0,
        }
    print(
        f"  {dataset} {n}/{n} seed {seed}: "
        + ", ".join(
            f"{m} {100 * out[m]['hamming_acc']:.1f}" for m in ("ML-SVM", "Embed") if m in out
        ),
        flush=True,
    )
    return out


def report(results: dict[str, dict[int, list[dict]]], args: argparse.Namespace) -> str:
    md = [
        "# Table 3 analogue (Ma et al. 2020, section 7.3): hierarchical multilabel\n",
        f"Command: `PYTHONPATH=src python examples/sip_table3_hierarchy.py {args.cmdline}`  ",
        f"{args.seeds} seeds per size; hyper-parameters by {args.folds}-fold CV on the training "
        "draw.  Hamming accuracy in %, mean ± sd; paired difference of Embed to ML-SVM; test "
        "rows (out of n) breaking at least one implication / exclusion, mean over seeds.  "
        "Timings under load (2 shared cores).\n",
    ]
    for dataset, by_n in results.items():
        md.append(f"\n## {dataset}\n")
        rows = []
        for n, runs in by_n.items():
            base = [r["ML-SVM"]["hamming_acc"] for r in runs]
            for method in ("truth", "ML-SVM", "Embed"):
                if method not in runs[0]:
                    continue
                accs = [r[method]["hamming_acc"] for r in runs]
                exact = [r[method]["exact_match"] for r in runs]
                imp = np.mean([r[method]["rows_violating"]["implication"] for r in runs])
                exc = np.mean([r[method]["rows_violating"]["exclusion"] for r in runs])
                rows.append(
                    [
                        f"{n}/{n}",
                        "true labels" if method == "truth" else method,
                        "" if method == "truth" else common.mean_sd(accs),
                        "" if method != "Embed" else common.paired(accs, base),
                        "" if method == "truth" else common.mean_sd(exact),
                        f"{imp:.1f}",
                        f"{exc:.1f}",
                        ""
                        if method == "truth"
                        else f"{np.mean([r[method]['seconds'] for r in runs]):.1f}",
                    ]
                )
        md.append(
            common.markdown_table(
                [
                    "n/n",
                    "method",
                    "Hamming acc. %",
                    "paired diff. to ML-SVM (w/t/l)",
                    "exact match %",
                    "rows breaking an implication",
                    "rows breaking an exclusion",
                    "seconds",
                ],
                rows,
            )
        )
    md.append(
        f"\nPaper, Reuters (its own label set), Hamming accuracy at 100/200/500: {PAPER_REUTERS}.\n"
    )
    return "\n".join(md)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 200, 500])
    parser.add_argument("--datasets", default="functional_groups,reuters")
    parser.add_argument("--n-landmarks", type=int, default=None)
    parser.add_argument("--no-embed", dest="embed", action="store_false")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one seed (smoke run)")
    parser.add_argument("--out", default="sip_table3_hierarchy")
    args = parser.parse_args()
    args.cmdline = " ".join(sys.argv[1:])
    args.folds = 3
    if args.quick:
        args.seeds, args.sizes, args.out, args.datasets = 1, [40], None, "reuters"
    data: dict[str, dict] = {}
    for name in args.datasets.split(","):
        if name == "functional_groups":
            smiles, hierarchy, Y = labels.functional_group_labels(min_frequency=0.05)
            data[name] = {"inputs": morgan_bits(smiles), "hierarchy": hierarchy, "Y": Y}
        elif name == "reuters":
            texts, hierarchy, Y, split = labels.reuters_labels()
            data[name] = {"inputs": texts, "hierarchy": hierarchy, "Y": Y, "split": split}
        else:
            raise SystemExit(f"--datasets: expected functional_groups and/or reuters, got {name!r}")
    results = {
        name: {n: [run(name, n, s, args, d) for s in range(args.seeds)] for n in args.sizes}
        for name, d in data.items()
    }
    payload = {
        "args": vars(args),
        "env": common.environment(),
        "paper_reuters": PAPER_REUTERS,
        "hierarchies": {k: vars(d["hierarchy"]) for k, d in data.items()},
        "results": results,
    }
    common.write_results(args.out, payload, report(results, args))


if __name__ == "__main__":
    main()
