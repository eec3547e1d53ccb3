"""Table 2 of Ma et al. (ICML 2020, section 7.2): mixup on 10-class MNIST.

For each seed: ``n`` training and ``n`` test images drawn stratified from ``mnist5k``; ``p`` in
``{n, 2n, 4n}`` random pairs ``(i, j)`` of training images.  Both methods use the Gaussian
Nyström features whose landmarks are the whole training set (section 7.2), with sigma chosen
by 3-fold CV of a Gaussian SVM on the training split.

* **Vanilla** mixup (Zhang et al. 2018; eq. 32): for every pair a ``lambda ~ Beta(alpha,
  alpha)``, the mixed image ``lambda x_i + (1 - lambda) x_j`` with the soft label
  ``lambda y_i + (1 - lambda) y_j``; a multinomial logistic regression on the Nyström features
  of the mixed images (:func:`sip_common.soft_label_logistic`, exact soft-label cross-entropy).
  ``alpha`` and ``C`` by 3-fold CV (pairs drawn inside the fitting folds, clean images scored);
* **Embed** (section 5, eqs. 33-34): ``kernelkit.InvariantEmbedding`` with a
  ``MixupInvariance`` over the same ``p`` pairs, one ``d x m`` representation per
  ``(image, class)``, then a linear model ``f(x, y) = <W, iota(G_{x,y})>`` with a multinomial
  logistic loss; prediction ``argmax_y``.  Strength and C by 3-fold CV.

Usage::

    PYTHONPATH=src python examples/sip_table2_mixup.py             # n = 500, 5 seeds
    PYTHONPATH=src python examples/sip_table2_mixup.py --quick     # seconds: smoke run
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import numpy as np
import sip_common as common
import sip_methods as methods

PAPER = {  # MNIST rows of Table 2, n = 500 and n = 1000
    500: {"Vanilla": [90.16, 90.93, 91.40], "Embed": [91.36, 91.90, 92.11]},
    1000: {"Vanilla": [91.00, 92.01, 92.48], "Embed": [92.51, 92.79, 93.03]},
}
ALPHAS = (0.2, 1.0)
LOGISTIC_CS = (10.0, 100.0)


def draw_pairs(idx: np.ndarray, p: int, rng: np.random.Generator) -> np.ndarray:
    """``p`` ordered pairs of distinct indices drawn uniformly from ``idx``."""
    i = rng.choice(idx, size=p)
    j = rng.choice(idx, size=p)
    same = i == j
    while same.any():
        j[same] = rng.choice(idx, size=int(same.sum()))
        same = i == j
    return np.stack([i, j], axis=1)


def vanilla_fit(
    phi: Any, X: np.ndarray, Y: np.ndarray, pairs: np.ndarray, alpha: float, C: float, seed: int
) -> Any:
    """Soft-label logistic regression on the Nyström features of Beta-mixed pairs."""
    lam = np.random.default_rng(seed).beta(alpha, alpha, size=len(pairs))[:, None]
    Xmix = lam * X[pairs[:, 0]] + (1 - lam) * X[pairs[:, 1]]
    Ymix = lam * Y[pairs[:, 0]] + (1 - lam) * Y[pairs[:, 1]]
    return common.soft_label_logistic(phi(Xmix), Ymix, C, np.arange(Y.shape[1]))


def vanilla(
    phi: Any,
    Xtr: np.ndarray,
    ytr: np.ndarray,
    Fte: np.ndarray,
    yte: np.ndarray,
    p: int,
    *,
    seed: int,
    folds: int,
) -> tuple[dict[str, float], float]:
    """Vanilla mixup with ``(alpha, C)`` by CV; returns the chosen parameters and accuracy."""
    Y = np.eye(10)[ytr]
    Ftr = phi(Xtr)

    def score(params: dict[str, Any], a: np.ndarray, b: np.ndarray) -> float:
        pairs = draw_pairs(a, max(1, p * len(a) // len(ytr)), np.random.default_rng(seed))
        model = vanilla_fit(phi, Xtr, Y, pairs, params["alpha"], params["C"], seed)
        return float(model.score(Ftr[b], ytr[b]))

    best, _ = common.cv_select(
        common.grid(alpha=ALPHAS, C=LOGISTIC_CS), score, ytr, folds=folds, seed=seed
    )
    pairs = draw_pairs(np.arange(len(ytr)), p, np.random.default_rng(seed))
    model = vanilla_fit(phi, Xtr, Y, pairs, best["alpha"], best["C"], seed)
    return best, float(model.score(Fte, yte))


def clean_logistic(
    Xtr: np.ndarray, ytr: np.ndarray, Xte: np.ndarray, yte: np.ndarray, *, seed: int, folds: int
) -> tuple[float, float, float]:
    """Logistic regression on clean Nyström features; ``(sigma, C)`` by CV on the training split.

    The selected sigma is shared by Vanilla and Embed.  Returns sigma, C and test accuracy.
    """
    from sklearn.linear_model import LogisticRegression

    med = common.median_distance(Xtr, seed)
    feats = {f: common.nystrom_map(Xtr, f * med)(Xtr) for f in methods.SIGMA_FACTORS}

    def score(params: dict[str, Any], a: np.ndarray, b: np.ndarray) -> float:
        F = feats[params["sigma"]]
        model = LogisticRegression(C=params["C"], max_iter=2000).fit(F[a], ytr[a])
        return float(model.score(F[b], ytr[b]))

    best, _ = common.cv_select(
        common.grid(sigma=methods.SIGMA_FACTORS, C=LOGISTIC_CS),
        score,
        ytr,
        folds=folds,
        seed=seed,
    )
    sigma = best["sigma"] * med
    phi = common.nystrom_map(Xtr, sigma)
    model = LogisticRegression(C=best["C"], max_iter=2000).fit(phi(Xtr), ytr)
    return sigma, best["C"], float(model.score(phi(Xte), yte))


def embed_mixup(
    Xtr: np.ndarray,
    ytr: np.ndarray,
    Xte: np.ndarray,
    yte: np.ndarray,
    sigma: float,
    p: int,
    *,
    strengths: list[float],
    n_grid: int,
    seed: int,
    folds: int,
    aggregate: str = "max",
) -> tuple[dict[str, float], float]:
    """Embed (section 5) + a linear model over (image, class) rows; strength and C by CV.

    The mixup representers use the labels, so each CV fold refits the embedding on its
    fitting part (its own ``p * |fold| / n`` pairs) and embeds the held-out part: no label of
    a validation image enters its features.  The linear model is one ``LinearSVC`` on the rows
    ``iota(G_{x, l})`` with target ``[y = l]``; the class is ``argmax_l`` of its scores
    (:func:`kernelkit.invariance._joint.joint_scores`).
    """
    from sklearn.model_selection import StratifiedKFold

    from kernelkit import InvariantEmbedding
    from kernelkit.invariance import MixupInvariance
    from kernelkit.invariance._joint import joint_scores
    from kernelkit.kernels import Gaussian

    def features(a: np.ndarray, b: np.ndarray, Xb: np.ndarray, s: float) -> tuple:
        emb = InvariantEmbedding(
            Gaussian(sigma),
            [MixupInvariance(max(1, p * len(a) // len(ytr)), n_grid=n_grid, random_state=seed)],
            aggregate=aggregate,
            strength=s,
            tol=1e-4,
            max_iter=100,
            **common.RECORDED_SETTINGS,
        ).fit(Xtr[a], np.eye(10)[ytr[a]])
        train, held = emb.embed(Xtr[a]), emb.embed(Xb)
        gap = float(max(train.gap.max(), held.gap.max()))
        return train.features.numpy(), held.features.numpy(), gap

    def accuracy(Fa: np.ndarray, ya: np.ndarray, Fb: np.ndarray, yb: np.ndarray, C: float):
        D = Fa.shape[2]
        model = common.linear_classifier(C).fit(Fa.reshape(-1, D), np.eye(10)[ya].ravel())
        return float((joint_scores(Fb, model).argmax(1) == yb).mean())

    splits = list(StratifiedKFold(folds, shuffle=True, random_state=seed).split(ytr, ytr))
    scores: dict[tuple[float, float], list[float]] = {}
    for s in strengths:
        for a, b in splits:
            Fa, Fb, _ = features(a, b, Xtr[b], s)
            for C in methods.LINEAR_CS:
                scores.setdefault((s, C), []).append(accuracy(Fa, ytr[a], Fb, ytr[b], C))
    s, C = max(scores, key=lambda k: np.mean(scores[k]))
    everything = np.arange(len(ytr))
    Ftr, Fte, gap = features(everything, everything, Xte, s)
    return {"strength": s, "C": C, "max_rel_gap": gap}, accuracy(Ftr, ytr, Fte, yte, C)


def run_split(X: np.ndarray, y: np.ndarray, seed: int, args: argparse.Namespace) -> dict:
    tr, te = common.stratified_split(y, args.n, args.n, seed)
    Xtr, ytr, Xte, yte = X[tr], y[tr], X[te], y[te]
    sigma, C, clean_acc = clean_logistic(Xtr, ytr, Xte, yte, seed=seed, folds=args.folds)
    phi = common.nystrom_map(Xtr, sigma)
    Fte = phi(Xte)
    out: dict[str, Any] = {
        "seed": seed,
        "sigma": sigma,
        "clean_C": C,
        "clean_acc": clean_acc,
        "by_p": {},
    }
    for mult in args.p_multiples:
        p = mult * args.n
        row: dict[str, Any] = {"acc": {}, "params": {}, "seconds": {}}
        t0 = time.perf_counter()
        row["params"]["Vanilla"], row["acc"]["Vanilla"] = vanilla(
            phi, Xtr, ytr, Fte, yte, p, seed=seed, folds=args.folds
        )
        row["seconds"]["Vanilla"] = time.perf_counter() - t0
        if args.embed:
            t0 = time.perf_counter()
            name = "Embed" if args.aggregate == "max" else "Embed (sum)"
            row["params"][name], row["acc"][name] = embed_mixup(
                Xtr,
                ytr,
                Xte,
                yte,
                sigma,
                p,
                strengths=args.strengths,
                n_grid=args.n_grid,
                seed=seed,
                folds=args.embed_folds,
                aggregate=args.aggregate,
            )
            row["seconds"][name] = time.perf_counter() - t0
        out["by_p"][f"{mult}n"] = row
        print(
            f"  seed {seed} p={mult}n: "
            + ", ".join(f"{k} {100 * v:.1f}" for k, v in row["acc"].items()),
            flush=True,
        )
    return out


def report(runs: list[dict], args: argparse.Namespace) -> str:
    md = [
        f"# Table 2 (Ma et al. 2020, section 7.2): mixup on MNIST, n = {args.n}\n",
        f"Command: `PYTHONPATH=src python examples/sip_table2_mixup.py {args.cmdline}`  ",
        f"{len(runs)} seeds; n = {args.n} training and {args.n} test images per seed; "
        f"hyper-parameters by {args.folds}-fold CV on the training split.  "
        "Logistic regression on the clean Nyström features (no mixup), same splits: "
        f"{common.mean_sd([r['clean_acc'] for r in runs])} %.  "
        "Timings under load (2 shared cores).\n",
    ]
    rows = []
    for k, mult in enumerate(args.p_multiples):
        key = f"{mult}n"
        van = [r["by_p"][key]["acc"]["Vanilla"] for r in runs]
        for name in runs[0]["by_p"][key]["acc"]:
            accs = [r["by_p"][key]["acc"][name] for r in runs]
            paper = PAPER.get(args.n, {}).get(name.split(" ")[0], [""] * 3)
            rows.append(
                [
                    f"p = {key}",
                    name,
                    common.mean_sd(accs),
                    "" if name == "Vanilla" else common.paired(accs, van),
                    paper[k] if k < len(paper) else "",
                    f"{np.mean([r['by_p'][key]['seconds'][name] for r in runs]):.1f}",
                ]
            )
    md.append(
        common.markdown_table(
            [
                "pairs",
                "method",
                "accuracy % (mean ± sd)",
                "paired diff. to Vanilla, points (w/t/l)",
                "paper %",
                "seconds/split",
            ],
            rows,
        )
    )
    return "\n".join(md)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--p-multiples", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--strengths", type=float, nargs="+", default=[1.0, 10.0])
    parser.add_argument("--no-embed", dest="embed", action="store_false")
    parser.add_argument(
        "--aggregate",
        choices=("max", "sum"),
        default="max",
        help="Embed's aggregation over the lambda grid: the max of eq. (33), or the sum "
        "(quadratic, closed form; the only one that fits n = 500 on 2 cores)",
    )
    parser.add_argument("--n-grid", type=int, default=5, help="lambda grid of MixupInvariance")
    parser.add_argument(
        "--embed-folds", type=int, default=2, help="CV folds of Embed (each refits the embedding)"
    )
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one seed (smoke run)")
    parser.add_argument("--out", default="sip_table2_mixup")
    args = parser.parse_args()
    args.cmdline = " ".join(sys.argv[1:])
    args.folds = 3
    if args.quick:
        args.seeds, args.n, args.folds, args.p_multiples = 1, 40, 2, [1]
        args.strengths, args.n_grid, args.out = [1.0], 3, None
    X, y = common.load_mnist()
    runs = []
    for seed in range(args.seeds):
        runs.append(run_split(X, y, seed, args))
    payload = {"args": vars(args), "env": common.environment(), "paper": PAPER, "runs": runs}
    common.write_results(args.out, payload, report(runs, args))


if __name__ == "__main__":
    main()
