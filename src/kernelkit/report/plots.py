"""Plots written by the command line and the examples (matplotlib, optional extra ``plot``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from kernelkit.utils.optional import require


def _pyplot() -> Any:
    matplotlib = require("matplotlib", purpose="Writing plots")
    matplotlib.use("Agg")
    return require("matplotlib.pyplot", purpose="Writing plots")


def scatter_2d(
    codes: np.ndarray,
    colours: np.ndarray,
    path: str | Path,
    *,
    title: str,
    colour_label: str,
    categorical: bool = False,
) -> Path:
    """Scatter plot of 2-D codes coloured by a label or a measured property; returns the path."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 5.2), dpi=110)
    cmap = "tab10" if categorical else "viridis"
    points = ax.scatter(codes[:, 0], codes[:, 1], c=colours, s=9, cmap=cmap, alpha=0.85)
    bar = fig.colorbar(points, ax=ax)
    bar.set_label(colour_label)
    ax.set_xlabel("component 1")
    ax.set_ylabel("component 2")
    ax.set_title(title)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path)
    plt.close(fig)
    return path
