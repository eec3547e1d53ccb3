"""Laforgue et al. (2019), appendix C.1, figures 5-7: KAEs on toy 1-D and 2-D data.

* Figure 5: two Gaussian clusters in 1-D (std 0.1, means 0 and 2, 100 points each); 2-layer
  KAE with a 1-D code.  (a) the encoding function ``x -> f_1(x)`` and (b) the decoding
  function ``z -> f_2(z)`` along training (after 1, 3, 10 objective evaluations and at the
  end); (c) the 1-D code from another random initialisation; (d) a 2-D code.
* Figure 6: Gaussian clusters in 2-D (two clusters, then three), 1-D codes; points coloured
  by their code.
* Figure 7: two moons; (a)-(b) 1-D code, (c)-(d) 2-D re-representation.

All KAEs: Gaussian kernels on both layers (``sigma`` per data set, see ``FIGURES``),
``lam = 1e-4`` on both layers, closed-form last layer, random initialisation (the paper starts
from near-uniform weights), full-batch L-BFGS with at most ``--max-iter`` evaluations.  The
objective is non-convex: figures 5(d), 6 and 7 keep the fit of lowest final objective among
``--restarts`` random initialisations (seeds ``seed, seed + 1, ...``); figure 5(a)-(c) show
single initialisations (seed ``seed`` and ``seed + 1``).
Besides the PNGs, prints and writes (``kae_toy_figures.md`` / ``.json``) per data set: the
mean squared reconstruction error, the between-cluster share of the codes' variance, the
accuracy of the best threshold on a 1-D code for two clusters, and, for figure 5(d), the
correlation of the two code components.

Run: ``python examples/kae_toy_figures.py [--out DIR] [--max-iter 200]`` (needs matplotlib).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from sklearn.datasets import make_moons

from kernelkit.estimators._autoencoder import KernelAutoencoder
from kernelkit.kernels import Gaussian
from kernelkit.utils._optional import require

DEFAULT_OUT = Path(__file__).resolve().parent / "results"
LAM = (1e-4, 1e-4)
# (first-layer sigma, last-layer sigma on the codes) per data set
FIGURES = {"1d": (0.5, 0.3), "blobs": (1.0, 0.3), "moons": (0.3, 0.3)}


def separation(codes: np.ndarray, label: np.ndarray) -> float:
    """Between-cluster share of the codes' variance (1 = clusters collapsed to points)."""
    codes = codes.reshape(len(codes), -1)
    total = codes.var(axis=0).sum()
    centre = codes.mean(0)
    between = sum(
        (label == c).mean() * ((codes[label == c].mean(0) - centre) ** 2).sum()
        for c in np.unique(label)
    )
    return float(between / total)


def threshold_accuracy(code: np.ndarray, label: np.ndarray) -> float:
    """Accuracy of the best threshold rule ``code > t`` (either orientation), two classes."""
    order = np.argsort(code)
    lab = label[order]
    # predict class 1 above position i: correct = (#0 in lab[:i]) + (#1 in lab[i:])
    zeros_below = np.r_[0, np.cumsum(lab == 0)]
    ones_above = np.r_[np.cumsum((lab == 1)[::-1])[::-1], 0]
    acc = (zeros_below + ones_above) / len(lab)
    return float(max(acc.max(), 1 - acc.min()))


def fit_kae(
    X: np.ndarray, dim: int, sigmas: tuple[float, float], max_iter: int, seed: int
) -> KernelAutoencoder:
    return KernelAutoencoder(
        dims=(dim,),
        kernels=[Gaussian(sigmas[0]), Gaussian(sigmas[1])],
        lam=LAM,
        init="random",
        max_iter=max_iter,
        random_state=seed,
    ).fit(X)


def fit_best(
    X: np.ndarray, dim: int, sigmas: tuple[float, float], args: argparse.Namespace
) -> KernelAutoencoder:
    """Lowest final objective over ``args.restarts`` random initialisations (seeds seed, ...)."""
    fits = [fit_kae(X, dim, sigmas, args.max_iter, args.seed + r) for r in range(args.restarts)]
    return min(fits, key=lambda ae: ae.objective_)


def summary(ae: KernelAutoencoder, X: np.ndarray, label: np.ndarray) -> dict[str, float]:
    codes = np.asarray(ae.codes_)
    out = {
        "reconstruction_error": float(np.mean(ae.reconstruction_error(X))),
        "data_variance": float(X.var(0).sum()),
        "between_cluster_share": separation(codes, label),
        "evaluations": ae.n_eval_,
    }
    if codes.shape[1] == 1 and len(np.unique(label)) == 2:
        out["threshold_accuracy"] = threshold_accuracy(codes[:, 0], label)
    return out


def figure5(plt: Any, args: argparse.Namespace, stats: dict[str, Any]) -> None:
    rng = np.random.default_rng(args.seed)
    label = np.repeat([0, 1], 100)
    X = (2.0 * label + 0.1 * rng.normal(size=200))[:, None]
    sig = FIGURES["1d"]
    grid = np.linspace(-0.5, 2.5, 300)[:, None]
    fig, ax = plt.subplots(1, 4, figsize=(18, 3.8))
    steps = (1, 3, 10, args.max_iter)
    colours = plt.cm.viridis_r(np.linspace(0.1, 1.0, len(steps)))
    for steps_i, colour in zip(steps, colours, strict=True):
        ae = fit_kae(X, 1, sig, steps_i, args.seed)
        name = f"{ae.n_eval_} eval." if steps_i < args.max_iter else f"final ({ae.n_eval_} eval.)"
        ax[0].plot(grid[:, 0], np.asarray(ae.transform(grid))[:, 0], color=colour, label=name)
        code = np.asarray(ae.codes_)[:, 0]
        zgrid = np.linspace(code.min(), code.max(), 300)[:, None]
        ax[1].plot(zgrid[:, 0], np.asarray(ae.inverse_transform(zgrid))[:, 0], color=colour)
    final = ae
    stats["fig5_1d_code"] = summary(final, X, label)
    ax[0].legend(fontsize=7)
    ax[0].scatter(X[:, 0], np.zeros(200), c=label, cmap="coolwarm", marker="x", s=12)
    ax[0].set(title="(a) encoding x -> f1(x) along training", xlabel="x", ylabel="code")
    code = np.asarray(final.codes_)[:, 0]
    ax[1].scatter(code, X[:, 0], c=label, cmap="coolwarm", marker="x", s=12)
    ax[1].set(title="(b) decoding z -> f2(z) (crosses: (code, x))", xlabel="code", ylabel="x")
    other = fit_kae(X, 1, sig, args.max_iter, args.seed + 1)
    stats["fig5_1d_code_other_init"] = summary(other, X, label)
    ax[2].scatter(X[:, 0], np.asarray(other.codes_)[:, 0], c=label, cmap="coolwarm", s=8)
    ax[2].set(title="(c) 1-D code, another initialisation", xlabel="x", ylabel="code")
    two = fit_best(X, 2, sig, args)
    c2 = np.asarray(two.codes_)
    stats["fig5_2d_code"] = summary(two, X, label)
    stats["fig5_2d_code"]["component_correlation"] = float(np.corrcoef(c2.T)[0, 1])
    ax[3].scatter(c2[:, 0], c2[:, 1], c=label, cmap="coolwarm", s=8)
    ax[3].set(title="(d) 2-D code", xlabel="component 1", ylabel="component 2")
    fig.savefig(args.out / "kae_fig5_1d_clusters.png", dpi=70, bbox_inches="tight")
    plt.close(fig)


def blobs(centres: np.ndarray, n: int, std: float, rng: np.random.Generator) -> tuple:
    label = np.repeat(np.arange(len(centres)), n)
    return centres[label] + std * rng.normal(size=(len(label), 2)), label


def figure6(plt: Any, args: argparse.Namespace, stats: dict[str, Any]) -> None:
    rng = np.random.default_rng(args.seed)
    fig, ax = plt.subplots(1, 4, figsize=(18, 3.8))
    two = np.array([[0.0, 0.0], [3.0, 3.0]])
    three = np.array([[0.0, 0.0], [3.0, 0.0], [1.5, 2.6]])
    for k, centres in enumerate((two, three)):
        X, label = blobs(centres, 100, 0.6, rng)
        ae = fit_best(X, 1, FIGURES["blobs"], args)
        code = np.asarray(ae.codes_)[:, 0]
        stats[f"fig6_{len(centres)}_clusters"] = summary(ae, X, label)
        if k == 0:  # does the code order points along the direction between the clusters?
            proj = X @ (centres[1] - centres[0])
            stats["fig6_2_clusters"]["within_cluster_corr_code_vs_axis"] = [
                float(np.corrcoef(code[label == c], proj[label == c])[0, 1]) for c in (0, 1)
            ]
        a, b = ax[2 * k], ax[2 * k + 1]
        a.scatter(X[:, 0], X[:, 1], c=code, cmap="coolwarm", s=8)
        a.set(title=f"({'ac'[k]}) {len(centres)} clusters, coloured by code", aspect="equal")
        b.scatter(code, label + 0.1 * rng.normal(size=len(label)), c=code, cmap="coolwarm", s=8)
        b.set(title=f"({'bd'[k]}) 1-D code (y: cluster + jitter)", xlabel="code")
    fig.savefig(args.out / "kae_fig6_gaussian_clusters.png", dpi=70, bbox_inches="tight")
    plt.close(fig)


def figure7(plt: Any, args: argparse.Namespace, stats: dict[str, Any]) -> None:
    X, label = make_moons(300, noise=0.05, random_state=args.seed)
    fig, ax = plt.subplots(1, 4, figsize=(18, 3.8))
    ae = fit_best(X, 1, FIGURES["moons"], args)
    code = np.asarray(ae.codes_)[:, 0]
    stats["fig7_1d_code"] = summary(ae, X, label)
    ax[0].scatter(X[:, 0], X[:, 1], c=code, cmap="coolwarm", s=8)
    ax[0].set(title="(a) coloured by the 1-D code", aspect="equal")
    ax[1].scatter(
        code, label + 0.1 * np.random.default_rng(0).normal(size=300), c=code, s=8, cmap="coolwarm"
    )
    ax[1].set(title="(b) 1-D code (y: moon + jitter)", xlabel="code")
    two = fit_best(X, 2, FIGURES["moons"], args)
    c2 = np.asarray(two.codes_)
    stats["fig7_2d_code"] = summary(two, X, label)
    angle = np.arctan2(c2[:, 1] - c2[:, 1].mean(), c2[:, 0] - c2[:, 0].mean())
    ax[2].scatter(X[:, 0], X[:, 1], c=angle, cmap="twilight", s=8)
    ax[2].set(title="(c) coloured by the 2-D code's angle", aspect="equal")
    ax[3].scatter(c2[:, 0], c2[:, 1], c=angle, cmap="twilight", s=8)
    ax[3].set(title="(d) 2-D re-representation", xlabel="component 1", ylabel="component 2")
    fig.savefig(args.out / "kae_fig7_two_moons.png", dpi=70, bbox_inches="tight")
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--max-iter", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--restarts", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    matplotlib = require("matplotlib", purpose="plotting")
    matplotlib.use("Agg")
    plt = require("matplotlib.pyplot", purpose="plotting")
    args.out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    stats: dict[str, Any] = {}
    figure5(plt, args, stats)
    figure6(plt, args, stats)
    figure7(plt, args, stats)
    keys = ("reconstruction_error", "data_variance", "between_cluster_share", "threshold_accuracy")
    lines = [
        "| experiment | " + " | ".join(keys) + " | evaluations |",
        "|---" * (len(keys) + 2) + "|",
    ]
    for name, s in stats.items():
        cells = [f"{s[k]:.4g}" if k in s else "-" for k in keys]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {s['evaluations']} |")
    lines.append(
        f"\nfigure 5(d): correlation of the two code components "
        f"{stats['fig5_2d_code']['component_correlation']:.3f}"
    )
    lines.append(
        "figure 6(a)-(b): within-cluster correlation of the code with the projection on the "
        "axis between the centres: "
        + ", ".join(
            f"{v:.3f}" for v in stats["fig6_2_clusters"]["within_cluster_corr_code_vs_axis"]
        )
    )
    lines.append(f"wall time {time.perf_counter() - start:.0f} s")
    text = "\n".join(lines)
    print(text)
    (args.out / "kae_toy_figures.md").write_text(text + "\n")
    (args.out / "kae_toy_figures.json").write_text(json.dumps(stats, indent=1))


if __name__ == "__main__":
    main()
