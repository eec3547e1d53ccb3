"""Shared set-up of the Bohn, Griebel, Rieger (2019) section 4.2 reproductions.

Reading of the seed (section 4.2): domain ``Omega = [-1, 1]^2``; test functions
``h1(x, y) = (0.1 + |x - y|)^-1`` (kink along the diagonal, ``max h1 = 10``) and
``h2(x, y) = 1 if x y > 3/20 else 0`` (jumps along the two branches of the hyperbola
``x y = 0.15`` in the first and third quadrants); ``N = 100`` i.i.d. uniform points, targets
``h(x_i) + eps_i`` with ``eps_i ~ N(0, 0.01^2)``; errors on the ``101 x 101`` grid of mesh
width 1/50 over ``Omega``; error maps coloured from 0 to 10 % of ``||h||_inf`` (blue to red).
``D = d = 2`` and ``w = (1, 1)`` in eq. 20 unless a mixture is used.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("OMP_NUM_THREADS", "1")  # small batched problems: no thread spinning
import torch

torch.set_num_threads(1)

RESULTS = Path(__file__).resolve().parent / "results"


def h1(X: np.ndarray) -> np.ndarray:
    return 1.0 / (0.1 + np.abs(X[:, 0] - X[:, 1]))


def h2(X: np.ndarray) -> np.ndarray:
    return (X[:, 0] * X[:, 1] > 3.0 / 20.0).astype(float)


FUNCTIONS = {"h1": h1, "h2": h2}


def sample(h: Any, n: int = 100, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, size=(n, 2))
    return X, h(X) + 0.01 * rng.standard_normal(n)


def grid(m: int = 101) -> np.ndarray:
    t = np.linspace(-1.0, 1.0, m)
    xx, yy = np.meshgrid(t, t)
    return np.stack([xx.ravel(), yy.ravel()], axis=1)


def errors(pred: np.ndarray, h: Any, G: np.ndarray) -> dict[str, float]:
    e = np.abs(np.asarray(pred) - h(G))
    return {"rmse": float(np.sqrt(np.mean(e**2))), "max": float(e.max())}


def error_maps(
    rows: dict[str, list[tuple[str, np.ndarray]]], G: np.ndarray, path: Path, title: str
) -> None:
    """One row per test function, one panel per model: ``|prediction - h|`` on the grid."""
    from kernelkit.utils._optional import require

    plt = require("matplotlib.pyplot", purpose="the error maps")
    ncol = max(len(v) for v in rows.values())
    fig, axes = plt.subplots(len(rows), ncol, figsize=(3.6 * ncol, 3.4 * len(rows)), squeeze=False)
    m = round(np.sqrt(len(G)))
    for r, (name, panels) in enumerate(rows.items()):
        h = FUNCTIONS[name]
        vmax = 0.1 * np.abs(h(G)).max()
        for c, (label, pred) in enumerate(panels):
            ax = axes[r, c]
            err = np.abs(pred - h(G)).reshape(m, m)
            im = ax.imshow(
                err, origin="lower", extent=(-1, 1, -1, 1), cmap="jet", vmin=0, vmax=vmax
            )
            rmse = np.sqrt(np.mean(err**2))
            ax.set_title(f"{name}: {label}\nRMSE {rmse:.3g}, max {err.max():.3g}", fontsize=8)
            ax.set_xticks([-1, 0, 1])
            ax.set_yticks([-1, 0, 1])
        fig.colorbar(im, ax=axes[r, :].tolist(), shrink=0.8, label="|error| (clipped at 10 %)")
    fig.suptitle(title, fontsize=10)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def markdown_table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    out = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in rows:
        cells = []
        for c in columns:
            v = row.get(c, "")
            cells.append(f"{v:.4g}" if isinstance(v, float) else str(v))
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)
