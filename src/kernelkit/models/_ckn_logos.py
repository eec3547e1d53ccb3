r"""Motif logos of the first-layer filters of a sequence CKN: the pre-image of each filter.

Course part 3, section 10 ("logos are obtained from the pre-image of each filter"; Chen,
Jacob & Mairal 2019a, section 4).  A filter ``z = (z_1, ..., z_k)`` of
:class:`~kernelkit.models._ckn_seq.GappedKmerLayer` answers a contiguous k-mer of letters
``u = u_1 ... u_k`` (position vectors ``e(u_l)``: one-hot, BLOSUM62 rows) with

.. math:: \prod_{l=1}^k b_l(u_l), \qquad b_l(a) = \|e(a)\| \kappa(\langle z_l,
          e(a) / \|e(a)\| \rangle),

a product of one factor per position, so the response is proportional to the likelihood of
the position weight matrix ``P_l(a) = b_l(a) / sum_c b_l(c)``: the distribution over
k-mers whose density is the filter's response, its pre-image among letter sequences.  A logo
draws position ``l`` as a stack of letters of heights ``P_l(a) IC_l`` with the information
content ``IC_l = log2 |A| + sum_a P_l(a) log2 P_l(a)`` (Schneider & Stephens 1990).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from kernelkit.kernels._dot_product import unit_rows
from kernelkit.models._ckn_seq import GappedKmerLayer
from kernelkit.utils._optional import pyplot


def filter_pwms(layer: GappedKmerLayer, encodings: torch.Tensor) -> np.ndarray:
    """Position weight matrices ``P[j, l, a]`` of every filter, shape ``(q, k, |A|)``.

    ``encodings`` holds the position vector of each letter in its rows, ``(|A|, channels)``.
    """
    with torch.no_grad():
        unit, norms = unit_rows(encodings.to(layer.weight))
        cos = torch.einsum("qla,ca->qlc", layer.anchors(), unit).clamp(-1.0, 1.0)
        b = layer.kappa(cos) * norms
        return (b / b.sum(-1, keepdim=True).clamp_min(torch.finfo(b.dtype).tiny)).numpy()


def information_content(pwms: np.ndarray) -> np.ndarray:
    """``IC_l = log2 |A| + sum_a P_l(a) log2 P_l(a)`` over the last axis (letters)."""
    p = np.clip(pwms, 1e-300, 1.0)
    return math.log2(pwms.shape[-1]) + (pwms * np.log2(p)).sum(-1)


def draw_logos(panels: list[tuple[str, np.ndarray]], letters: Sequence[str]) -> Any:
    """A matplotlib figure with one logo per ``(title, pwm)`` panel (``pwm``: ``(k, |A|)``)."""
    plt = pyplot("Drawing logos")
    n = len(panels)
    cols = min(4, max(1, n))
    rows = max(1, math.ceil(n / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 1.8 * rows), squeeze=False)
    colours = plt.get_cmap("tab20")
    for ax, (title, pwm) in zip(axes.ravel(), panels, strict=False):
        ic = information_content(pwm)
        for pos in range(pwm.shape[0]):
            heights = pwm[pos] * ic[pos]
            bottom = 0.0
            for a in np.argsort(heights):
                h = float(heights[a])
                ax.bar(pos, h, bottom=bottom, width=0.9, color=colours(int(a) % 20))
                if h > 0.15:
                    ax.text(pos, bottom + h / 2, letters[a], ha="center", va="center",
                            fontsize=min(14.0, 6 + 8 * h), fontweight="bold")  # fmt: skip
                bottom += h
        ax.set_ylim(0, math.log2(len(letters)))
        ax.set_xticks(range(pwm.shape[0]))
        ax.set_title(title, fontsize=9)
    for ax in axes.ravel()[n:]:
        ax.axis("off")
    fig.tight_layout()
    return fig


__all__ = ["draw_logos", "filter_pwms", "information_content"]
