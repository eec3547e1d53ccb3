"""Kernel k-means and spectral clustering against k-means on concentric circles and two moons.

Course part 1, sections 4.3-4.4: k-means cannot separate non-convex clusters; kernel k-means
(Lloyd in the feature space of a Gaussian kernel) and its spectral relaxation can.

Data: scikit-learn's ``make_circles(n, factor=0.4, noise=0.05)`` and
``make_moons(n, noise=0.06)``, n = 500, five data seeds (0-4).  Methods, all with
``n_clusters=2`` and ``random_state=0``:

* ``KMeans`` (scikit-learn, ``n_init=10``) on the raw 2-D points;
* ``KernelKMeans(2, Gaussian(sigma))`` (k-means++ in the feature space, ``n_init=10``);
* ``SpectralClustering(2, Gaussian(sigma), normalization=...)`` for the course's
  un-normalised relaxation (``"none"``), Ng-Jordan-Weiss (``"symmetric"``) and Shi-Malik
  (``"random_walk"``).

Every ``sigma`` of the grid {0.1, 0.2, 0.3, 0.5} is reported (no tuning on the labels).
Score: adjusted Rand index (ARI) against the generating labels, mean over the seeds.
Out-of-sample: each spectral model fitted on 400 of the 500 points labels the other 100 by the
Nyström formula (``predict``); reported is the share of those labels equal to a refit on all
500 points (clusters matched on the shared 400 points).

The figure (seed 0) shows each method at the ``sigma`` of its best mean ARI: an illustration
chosen with the labels; the table, with every ``sigma``, is the result.

Writes ``examples/results/clustering_circles_moons.{json,md,png}``.
Run: ``python examples/clustering_circles_moons.py`` (about a minute on 2 cores).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from sklearn.base import clone
from sklearn.cluster import KMeans
from sklearn.datasets import make_circles, make_moons
from sklearn.metrics import adjusted_rand_score

from kernelkit import KernelKMeans, SpectralClustering
from kernelkit.kernels import Gaussian

OUT = Path(__file__).resolve().parent / "results"
SIGMAS = (0.1, 0.2, 0.3, 0.5)
SEEDS = range(5)
N = 500
DATASETS = {
    "circles": lambda seed: make_circles(N, factor=0.4, noise=0.05, random_state=seed),
    "moons": lambda seed: make_moons(N, noise=0.06, random_state=seed),
}
SPECTRAL = ("none", "symmetric", "random_walk")


def methods(sigma: float) -> dict:
    """Method name -> unfitted clusterer at the kernel width ``sigma``."""
    out = {"kernel k-means": KernelKMeans(2, Gaussian(sigma), random_state=0)}
    for norm in SPECTRAL:
        out[f"spectral ({norm})"] = SpectralClustering(
            2, Gaussian(sigma), random_state=0, normalization=norm
        )
    return out


def out_of_sample_agreement(model: SpectralClustering, X: np.ndarray, seed: int) -> float:
    """Share of 100 held-out points whose Nyström label equals a refit's on all points."""
    perm = np.random.default_rng(seed).permutation(len(X))
    train, new = perm[:400], perm[400:]
    fitted = model.fit(X[train])
    train_labels = fitted.labels_.copy()
    predicted = fitted.predict(X[new])
    union = clone(model).fit(X).labels_
    names = {
        c: np.bincount(train_labels[union[train] == c], minlength=2).argmax()
        for c in np.unique(union)
    }
    return float(np.mean(predicted == np.array([names[c] for c in union[new]])))


def run(seeds=SEEDS) -> dict:
    rows = []
    for name, make in DATASETS.items():
        kmeans = [
            adjusted_rand_score(y, KMeans(2, n_init=10, random_state=0).fit_predict(X))
            for X, y in (make(s) for s in seeds)
        ]
        rows.append({"data": name, "method": "k-means", "sigma": None, "ari": np.mean(kmeans)})
        for sigma in SIGMAS:
            for label in methods(sigma):
                aris, agree = [], []
                for seed in seeds:
                    X, y = make(seed)
                    model = methods(sigma)[label]
                    aris.append(adjusted_rand_score(y, model.fit(X).labels_))
                    if isinstance(model, SpectralClustering):
                        agree.append(out_of_sample_agreement(model, X, seed))
                row = {"data": name, "method": label, "sigma": sigma, "ari": np.mean(aris)}
                if agree:
                    row["out_of_sample_agreement"] = float(np.mean(agree))
                rows.append(row)
    return {"n": N, "seeds": list(seeds), "rows": rows}


def table(result: dict) -> str:
    lines = [
        "| data | method | sigma | ARI (mean of seeds) | out-of-sample = refit |",
        "|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        agree = r.get("out_of_sample_agreement")
        lines.append(
            f"| {r['data']} | {r['method']} | {r['sigma'] if r['sigma'] else '-'} | "
            f"{r['ari']:.3f} | {'-' if agree is None else f'{agree:.3f}'} |"
        )
    return "\n".join(lines)


def best_sigma(result: dict, data: str, method: str) -> float:
    """The ``sigma`` of the grid with the best mean ARI of ``method`` on ``data``."""
    rows = [r for r in result["rows"] if r["data"] == data and r["method"] == method]
    return max(rows, key=lambda r: r["ari"])["sigma"]


def figure(path: Path, result: dict) -> None:
    """Seed-0 partitions, one row per dataset, each method at its best ``sigma``."""
    names = ["k-means", "kernel k-means", "spectral (none)", "spectral (symmetric)"]
    fig, axes = plt.subplots(2, len(names), figsize=(3.2 * len(names), 6.4))
    for row, (data, make) in enumerate(DATASETS.items()):
        X, y = make(0)
        for col, label in enumerate(names):
            if label == "k-means":
                model, width = KMeans(2, n_init=10, random_state=0), ""
            else:
                sigma = best_sigma(result, data, label)
                model, width = methods(sigma)[label], f", sigma={sigma}"
            labels = model.fit(X).labels_
            ax = axes[row, col]
            ax.scatter(X[:, 0], X[:, 1], c=labels, s=6, cmap="coolwarm")
            ax.set_title(f"{label}{width}\nARI {adjusted_rand_score(y, labels):.2f}", fontsize=9)
            ax.set_xticks([])
            ax.set_yticks([])
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one seed")
    args = parser.parse_args()
    result = run(range(1) if args.quick else SEEDS)
    OUT.mkdir(exist_ok=True)
    (OUT / "clustering_circles_moons.json").write_text(json.dumps(result, indent=1))
    md = table(result)
    (OUT / "clustering_circles_moons.md").write_text(md + "\n")
    figure(OUT / "clustering_circles_moons.png", result)
    print(md)


if __name__ == "__main__":
    main()
