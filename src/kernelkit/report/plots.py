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


def latent_panels(
    panels: list[tuple[str, np.ndarray]],
    colours: np.ndarray | None,
    path: str | Path,
    *,
    colour_label: str,
    categorical: bool = False,
) -> Path:
    """Side-by-side scatter plots of 2-D codes (one panel per method), shared colouring."""
    plt = _pyplot()
    fig, axes = plt.subplots(
        1, len(panels), figsize=(5.6 * len(panels), 4.6), dpi=110, layout="constrained"
    )
    axes = np.atleast_1d(axes)
    cmap = "tab10" if categorical else "viridis"
    points = None
    for ax, (title, codes) in zip(axes, panels, strict=False):
        points = ax.scatter(
            codes[:, 0],
            codes[:, 1],
            c=colours,
            s=8,
            cmap=cmap if colours is not None else None,
            alpha=0.85,
        )
        ax.set_xlabel("code 1")
        ax.set_ylabel("code 2")
        ax.set_title(title)
    if colours is not None and points is not None:
        bar = fig.colorbar(points, ax=list(axes))
        bar.set_label(colour_label)
    path = Path(path)
    fig.savefig(path, bbox_inches="tight")
    plt.close(fig)
    return path


def training_curves(curves: list[tuple[str, list[float]]], path: str | Path) -> Path:
    """Objective against iteration, one line per model (log scale when positive)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.0, 4.2), dpi=110)
    for label, values in curves:
        ax.plot(np.arange(1, len(values) + 1), values, label=label)
    if all(v > 0 for _, values in curves for v in values):
        ax.set_yscale("log")
    ax.set_xlabel("objective evaluation")
    ax.set_ylabel("training objective")
    ax.set_title("K2AE training")
    ax.legend()
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path)
    plt.close(fig)
    return path
