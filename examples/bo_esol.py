"""Bayesian optimisation over a molecule library: expected improvement against random search.

The library is ESOL (Delaney 2004; ``../shared/data/esol/ESOL.csv``, 1128 molecules, the
GAUCHE copy); the "experiment" is looking up a molecule's measured log solubility, and the
goal is the most soluble molecule (the largest target, 1.58).  Each run starts from
``--n-init`` random molecules; every iteration fits
``GaussianProcessRegressor(Tanimoto(), normalize_y=True)`` on the fragprints (the default
molecule representation: Morgan radius 2, 2048 bits, and RDKit's 85 fragment counts, computed
once as a matrix; ``--morgan``: the Morgan bits alone); amplitude and noise learned, by the
one-eigendecomposition path)
on the molecules measured so far and measures ``kernelkit.bo.suggest(gp, library, n=--batch,
acquisition="ei", exclude=measured)``.  Random search measures ``--batch`` unmeasured molecules
per iteration.  Both share the initial molecules of a seed; ``--seeds`` seeds.

Reported per iteration: the best value found (mean and standard deviation over the seeds),
and the number of runs that have found one of the top 1% molecules.  Writes
``examples/results/NAME.json`` and ``NAME.png`` (matplotlib, when installed), ``NAME`` from
``--name`` (default ``bo_esol``; ``--data`` another library in ESOL's format, e.g. the
held-out subset ``benchmarks/gauche_esol.py --held-out --write-data`` saves).
Run: ``python examples/bo_esol.py`` (about a minute on one core).
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from pathlib import Path

import numpy as np
import torch

from kernelkit import GaussianProcessRegressor
from kernelkit.bo import suggest
from kernelkit.data._molecules import as_molecule_batch
from kernelkit.kernels import Tanimoto

ROOT = Path(__file__).resolve().parent
DATA = ROOT.parents[1] / "shared" / "data" / "esol" / "ESOL.csv"
RESULTS = ROOT / "results"
TARGET = "measured log solubility in mols per litre"


def load(path: Path) -> tuple[list[str], np.ndarray]:
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    return [r["smiles"] for r in rows], np.array([float(r[TARGET]) for r in rows])


def bo_run(F, y: np.ndarray, start: np.ndarray, iters: int, batch: int) -> list[float]:
    measured = list(start)
    best = [float(y[measured].max())]
    for _ in range(iters):
        gp = GaussianProcessRegressor(Tanimoto(), normalize_y=True).fit(F[measured], y[measured])
        picks = suggest(gp, F, n=batch, acquisition="ei", exclude=measured)
        measured += picks.tolist()
        best.append(float(y[measured].max()))
    return best


def random_run(y: np.ndarray, start: np.ndarray, iters: int, batch: int, rng) -> list[float]:
    rest = rng.permutation(np.setdiff1d(np.arange(len(y)), start))
    measured = list(start)
    best = [float(y[measured].max())]
    for i in range(iters):
        measured += rest[i * batch : (i + 1) * batch].tolist()
        best.append(float(y[measured].max()))
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--n-init", type=int, default=10)
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--morgan", action="store_true", help="Morgan bits without the fragments")
    ap.add_argument("--name", default="bo_esol", help="stem of the result files")
    args = ap.parse_args()
    torch.set_num_threads(1)
    smiles, y = load(args.data)
    kind = "morgan" if args.morgan else "fragprints"
    F = as_molecule_batch(smiles).fingerprint_matrix(radius=2, n_bits=2048, kind=kind)
    top1 = np.quantile(y, 0.99)
    curves: dict[str, list[list[float]]] = {"ei": [], "random": []}
    t0 = time.perf_counter()
    for seed in range(args.seeds):
        rng = np.random.default_rng(seed)
        start = rng.choice(len(y), size=args.n_init, replace=False)
        curves["ei"].append(bo_run(F, y, start, args.iters, args.batch))
        curves["random"].append(random_run(y, start, args.iters, args.batch, rng))
        print(
            f"seed {seed}: EI best {curves['ei'][-1][-1]:.2f}, "
            f"random best {curves['random'][-1][-1]:.2f}"
        )
    seconds = time.perf_counter() - t0
    summary = {}
    print(
        f"\n{'iter':>4} {'measured':>8} {'EI best':>14} {'random best':>14} {'EI top1%':>8} "
        f"{'rand top1%':>10}"
    )
    for name, runs in curves.items():
        arr = np.array(runs)
        summary[name] = {
            "mean": arr.mean(0).tolist(),
            "std": arr.std(0).tolist(),
            "runs_in_top1pct": (arr >= top1).sum(0).tolist(),
        }
    for i in range(0, args.iters + 1, 5):
        e, r = summary["ei"], summary["random"]
        print(
            f"{i:>4} {args.n_init + i * args.batch:>8} {e['mean'][i]:>8.2f}±{e['std'][i]:<5.2f}"
            f"{r['mean'][i]:>8.2f}±{r['std'][i]:<5.2f} {e['runs_in_top1pct'][i]:>8} "
            f"{r['runs_in_top1pct'][i]:>10}"
        )
    out = {
        "data": f"{args.data.name} ({len(y)} molecules)",
        "goal": f"maximise measured log solubility (largest {y.max():.2f}; top 1% >= {top1:.2f})",
        "model": "GaussianProcessRegressor(Tanimoto(), normalize_y=True) on "
        + ("Morgan r=2, 2048 bits" if args.morgan else "fragprints (Morgan r=2, 2048 bits + 85)"),
        "acquisition": "expected improvement, kernelkit.bo.suggest",
        "seeds": args.seeds,
        "n_init": args.n_init,
        "iters": args.iters,
        "batch": args.batch,
        "global_max": float(y.max()),
        "curves": summary,
        "seconds_total": round(seconds, 1),
        "torch_threads": 1,
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(out, indent=1) + "\n")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(figsize=(5, 3.5))
    x = args.n_init + np.arange(args.iters + 1) * args.batch
    for name, label in (("ei", "expected improvement (GP, Tanimoto)"), ("random", "random")):
        m, s = np.array(summary[name]["mean"]), np.array(summary[name]["std"])
        ax.plot(x, m, label=label)
        ax.fill_between(x, m - s, m + s, alpha=0.2)
    ax.axhline(y.max(), color="k", lw=0.8, ls="--", label="best in library")
    ax.set_xlabel("molecules measured")
    ax.set_ylabel("best log solubility found")
    ax.set_title(f"{args.name}: {len(y)} molecules, {args.seeds} seeds")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(RESULTS / f"{args.name}.png", dpi=120)


if __name__ == "__main__":
    main()
