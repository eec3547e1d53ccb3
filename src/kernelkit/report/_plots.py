"""Plots written by the command line and the examples (matplotlib, optional extra ``plot``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kernelkit.utils._optional import pyplot as _pyplot


def _two_columns(codes: np.ndarray) -> np.ndarray:
    """The first two columns of ``codes``; zeros stand in for missing ones (a kernel PCA of
    data with fewer than two directions of variance)."""
    codes = np.asarray(codes, dtype=float).reshape(len(codes), -1)[:, :2]
    if codes.shape[1] < 2:
        codes = np.hstack([codes, np.zeros((len(codes), 2 - codes.shape[1]))])
    return codes


def latent_panels(
    panels: list[tuple[str, np.ndarray]],
    colours: np.ndarray | None,
    path: str | Path,
    *,
    colour_label: str,
    classes: list[str] | None = None,
) -> Path:
    """Side-by-side scatter plots of 2-D codes (one panel per method), shared colouring.

    ``classes``: ``colours`` are indices into these class names; each class gets its own
    colour and a legend entry (otherwise ``colours`` are numbers shown with a colour bar).
    """
    plt = _pyplot()
    fig, axes = plt.subplots(
        1, len(panels), figsize=(5.6 * len(panels), 4.6), dpi=110, layout="constrained"
    )
    axes = np.atleast_1d(axes)
    points = None
    for ax, (title, codes) in zip(axes, panels, strict=False):
        xy = _two_columns(codes)
        if colours is not None and classes is not None:
            cmap = plt.get_cmap("tab10" if len(classes) <= 10 else "tab20")
            for k, name in enumerate(classes):
                mask = np.asarray(colours) == k
                ax.scatter(
                    xy[mask, 0], xy[mask, 1], s=8, alpha=0.85, color=cmap(k % cmap.N), label=name
                )
        else:
            points = ax.scatter(
                xy[:, 0],
                xy[:, 1],
                c=colours,
                s=8,
                cmap="viridis" if colours is not None else None,
                alpha=0.85,
            )
        ax.set_xlabel("code 1")
        ax.set_ylabel("code 2")
        ax.set_title(title)
    if colours is not None and classes is not None:
        axes[-1].legend(title=colour_label, fontsize="small", markerscale=2)
    elif colours is not None and points is not None:
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


def null_histogram(
    null: np.ndarray, statistic: float, path: str | Path, *, xlabel: str, title: str
) -> Path:
    """Histogram of null samples with the observed statistic as a vertical line."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.0, 4.2), dpi=110)
    ax.hist(null, bins=40, color="0.7", edgecolor="0.4", label="null samples")
    ax.axvline(statistic, color="C3", linewidth=2, label=f"observed {statistic:.4g}")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("count")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path)
    plt.close(fig)
    return path
