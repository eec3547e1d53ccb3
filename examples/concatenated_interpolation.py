"""Bohn, Griebel, Rieger (2019), section 4.2.1 (figure 3) and section 4.3 (figure 6).

Two-layer interpolation (problem (Int)) with the outer tensor-product Matérn kernel ``s = 1``
and an inner polynomial kernel ``p = 1, 2`` (``K = k_poly diag(1, 1)``, eq. 20), against
single-layer interpolation with the same Matérn kernel on the inputs, for ``h1`` and ``h2``
(set-up in ``concatenated_common.py``).  (Int) is the paper's ``y^T Q^-1 y + N(c)``: ``mu = 1/N``
in kernelkit's scaling.  ``--restarts`` random initialisations (paper: 64) run as one batch.
Figure 6: an isotropic 21 x 21 grid of ``Omega`` and its image under the learned ``g``,
coloured by ``h``.

Writes ``results/concatenated_interpolation.png``, ``results/concatenated_inner_map.png`` and
``results/concatenated_interpolation.{md,json}``.
Run: ``python examples/concatenated_interpolation.py [--restarts 64] [--max-iter 300]``.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from concatenated_common import FUNCTIONS, RESULTS, error_maps, errors, grid, markdown_table, sample

from kernelkit.estimators._concatenated import ConcatenatedKernelRegressor
from kernelkit.estimators._ridge import KernelRidge
from kernelkit.kernels import Polynomial, TensorMatern
from kernelkit.utils._optional import require


def inner_map_figure(models: dict, path) -> None:
    plt = require("matplotlib.pyplot", purpose="figure 6")
    t = np.linspace(-1, 1, 21)
    P = np.stack([a.ravel() for a in np.meshgrid(t, t)], axis=1)
    fig, axes = plt.subplots(2, 3, figsize=(10, 6.4))
    for r, name in enumerate(FUNCTIONS):
        h = FUNCTIONS[name]
        axes[r, 0].scatter(P[:, 0], P[:, 1], c=h(P), s=6, cmap="jet")
        axes[r, 0].set_title(f"{name}: grid of Omega", fontsize=9)
        for c, p in enumerate((1, 2), start=1):
            Z = models[(name, p)].inner_transform(P)
            axes[r, c].scatter(Z[:, 0], Z[:, 1], c=h(P), s=6, cmap="jet")
            axes[r, c].set_title(f"{name}: g(grid), inner Poly p={p}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--restarts", type=int, default=64)
    ap.add_argument("--max-iter", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    G = grid()
    outer = TensorMatern(s=1.0)
    rows, table, models = {}, [], {}
    for name, h in FUNCTIONS.items():
        X, y = sample(h, seed=args.seed)
        n = len(y)
        single = KernelRidge(outer, lam=0.0).fit(X, y)
        pred = single.predict(G)
        rows[name] = [("single-layer Matérn", pred)]
        table.append(
            {"function": name, "model": "single-layer interpolation", **errors(pred, h, G)}
        )
        for p in (1, 2):
            t0 = time.perf_counter()
            model = ConcatenatedKernelRegressor(
                Polynomial(degree=p),
                outer,
                interpolate=True,
                mu=1.0 / n,
                n_restarts=args.restarts,
                max_iter=args.max_iter,
                random_state=args.seed,
            ).fit(X, y)
            secs = time.perf_counter() - t0
            pred = model.predict(G)
            models[(name, p)] = model
            rows[name].append((f"two-layer, inner Poly p={p}", pred))
            res = {
                "function": name,
                "model": f"two-layer (Int), inner Poly p={p}",
                **errors(pred, h, G),
            }
            res.update(objective=model.objective_, seconds=secs, iterations=model.n_iter_)
            table.append(res)
            print(res, flush=True)
    error_maps(
        rows,
        G,
        RESULTS / "concatenated_interpolation.png",
        "Figure 3: interpolation, outer TensorMatern s=1",
    )
    inner_map_figure(models, RESULTS / "concatenated_inner_map.png")
    cols = ["function", "model", "rmse", "max", "objective", "seconds", "iterations"]
    md = markdown_table(table, cols)
    (RESULTS / "concatenated_interpolation.md").write_text(
        f"restarts={args.restarts}, max_iter={args.max_iter}, seed={args.seed}\n\n{md}\n"
    )
    (RESULTS / "concatenated_interpolation.json").write_text(json.dumps(table, indent=1))
    print(md)


if __name__ == "__main__":
    main()
