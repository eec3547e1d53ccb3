r"""Decoding codes to objects: the candidate nearest to a reconstruction in feature space.

Laforgue, Clémençon & d'Alché-Buc 2019, sections 2 and 4 (a K2AE reconstructs in the RKHS of
its input kernel, where "no pre-image is computed"), and the KPCA pre-image problem
(Schölkopf, Smola & Müller 1998; course part 1, section 2): for structured inputs (strings,
graphs, molecules) the pre-image of a code ``z`` is searched among ``candidates``,

.. math:: \hat x(z) = \arg\min_{c \in \text{candidates}} \|\phi(c) - \hat\phi(z)\|^2,

``hat phi(z)`` the model's reconstruction of the code in feature space.  The distances are
computed by tiles of candidates (``options().preimage_tile_entries`` distances per tile),
each tile's Gram rows through the Gram engine, keeping only the running best per code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from kernelkit.gram._centres import take
from kernelkit.kernels._base import Batch
from kernelkit.utils._config import options

__all__ = ["chosen", "nearest_candidates", "pick", "squared_code_distances"]


def squared_code_distances(Z: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    """``||z_i - w_j||^2`` for all pairs of rows, clipped at 0 against round-off."""
    d2 = (Z * Z).sum(1)[:, None] + (W * W).sum(1)[None, :] - 2 * Z @ W.T
    return d2.clamp_min(0.0)


def nearest_candidates(
    n_codes: int, candidates: Batch, distances: Callable[[Batch], torch.Tensor]
) -> tuple[np.ndarray, torch.Tensor]:
    """Index and squared distance of the nearest candidate of every code.

    Parameters
    ----------
    n_codes : int
        Number of codes.
    candidates : prepared batch
        The candidates (``len`` and item selection by index arrays).
    distances : callable
        ``distances(tile) -> (n_codes, len(tile))`` squared feature-space distances.

    Returns
    -------
    index : np.ndarray of int64, shape (n_codes,)
        Position of the nearest candidate (the first one on ties).
    distance : torch.Tensor, shape (n_codes,)
        Its squared distance.
    """
    m = len(candidates)
    per_tile = max(1, options().preimage_tile_entries // max(n_codes, 1))
    best_index = torch.zeros(n_codes, dtype=torch.long)
    best: torch.Tensor | None = None
    for start in range(0, m, per_tile):
        positions = np.arange(start, min(m, start + per_tile))
        tile = candidates if len(positions) == m else take(candidates, positions)
        D = distances(tile)
        value, arg = D.min(dim=1)
        value, arg = value.cpu(), arg.cpu() + start
        if best is None:
            best, best_index = value, arg
        else:
            better = value < best
            best = torch.where(better, value, best)
            best_index = torch.where(better, arg, best_index)
    assert best is not None
    return best_index.numpy().astype(np.int64), best


def pick(candidates: Any, index: np.ndarray) -> Any:
    """The candidates at ``index``, in the candidates' container: rows of an array, tensor or
    pandas object, else a list of items."""
    if hasattr(candidates, "iloc"):
        return candidates.iloc[index]
    if isinstance(candidates, torch.Tensor):
        return candidates[torch.as_tensor(index, device=candidates.device)]
    if isinstance(candidates, np.ndarray):
        return candidates[index]
    items = list(candidates) if not hasattr(candidates, "__getitem__") else candidates
    return [items[int(i)] for i in index]


def chosen(
    items: Any, index: np.ndarray, distance: torch.Tensor, return_index: bool, return_distance: bool
) -> Any:
    """``items``, followed by ``index`` and the squared distances (NumPy) when asked."""
    out = [items]
    if return_index:
        out.append(index)
    if return_distance:
        out.append(distance.numpy())
    return out[0] if len(out) == 1 else tuple(out)
