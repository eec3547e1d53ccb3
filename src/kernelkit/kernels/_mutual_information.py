r"""The mutual-information kernel of a Dirichlet-multinomial model, and its context trees.

Course part 2, section 2 ("Kernels from probabilistic models"): the mutual-information
kernel of Seeger (2002) integrates the likelihoods of both strings under one model against
a prior,

.. math:: K(x, x') = \int P_\theta(x) P_\theta(x')\, w(d\theta)
          = \langle (P_\theta(x))_\theta, (P_\theta(x'))_\theta \rangle_{L^2(w)},

p.d. as an inner product.  For i.i.d. letters with ``theta ~ Dirichlet(alpha, ..., alpha)``
over the alphabet ``A`` the product ``P_theta(x) P_theta(x')`` is the likelihood of the pooled
letter counts ``n = n(x) + n(x')``, so (the Dirichlet integral)

.. math:: K(x, x') = P_e(n) = \frac{\Gamma(|A| \alpha)}{\Gamma(|A| \alpha + \sum_a n_a)}
          \prod_a \frac{\Gamma(\alpha + n_a)}{\Gamma(\alpha)};

the course's coin toss (``x = 001``, ``x' = 1010``, uniform prior ``alpha = 1``) gives
``3! 4! / 8! = 1/280``.

Context trees (``depth = D >= 1``; Cuturi & Vert 2005, the context-tree kernel of the
course's string-kernel table): a suffix tree ``S`` of depth at most ``D`` predicts each
letter from the leaf ``s`` its past ends with, ``theta_s ~ Dirichlet(alpha)``, and the
kernel sums over trees with the prior ``pi(S) = prod_{internal} (1 - beta) prod_{leaves of
depth < D} beta`` (each node of depth ``< D`` is a leaf with probability ``beta``):

.. math:: K(x, x') = \sum_S \pi(S) \prod_{s \in \mathrm{leaves}(S)} P_e(n_s),

with ``n_s`` the pooled counts of the letters whose past ends with ``s``.  The sum over trees
is the context-tree weighting recursion (Willems, Shtarkov & Tjalkens 1995), bottom-up on
log scale: ``P_w(s) = P_e(n_s)`` at depth ``D``, else
``P_w(s) = beta P_e(n_s) + (1 - beta) prod_a P_w(a s)``, and ``K = P_w(root)``; its cost is
``O(|A|^D)`` per pair on dense count tables.  The letters at positions ``i >= D`` are
predicted (the first ``D`` only condition), as a model with a known past; a letter or a
context holding the unknown residue (``N`` / ``X`` of a named alphabet) is not counted, so it
matches nothing (the case rule of :mod:`kernelkit.data._strings`).

The values are products of probabilities and fall fast with the lengths; ``normalize=True``
returns ``K(x, x') / sqrt(K(x, x) K(x', x'))`` computed on log scale (no underflow).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from kernelkit.data._strings import StringBatch, resolve_alphabet
from kernelkit.kernels._base import Kernel
from kernelkit.kernels._strings_base import _DNA_X, _DNA_Y, _PROT_X, _PROT_Y, _StringKernel
from kernelkit.utils._errors import InputError
from kernelkit.utils._validation import check_int, check_positive

_CHUNK_CELLS = 4_000_000
"""Target number of (pair x node x letter) cells per chunk of pooled count tables."""


def context_counts(batch: StringBatch, depth: int, size: int) -> torch.Tensor:
    """Dense count tables ``C[n, node, a]``: how often letter ``a`` follows each context.

    The contexts of depth ``d = 0..depth`` are stacked (offset ``sum_{e < d} size^e``); a
    context ``x_{i-d} .. x_{i-1}`` has code ``sum_{j=1}^{d} x_{i-j} size^{j-1}`` (the older
    letter more significant), so the children ``a s`` of a node ``s`` of depth ``d`` are
    ``s + a size^d``.  Positions ``i >= depth`` with no unknown letter in ``x_{i-depth} ..
    x_i`` are counted.
    """
    n_nodes = sum(size**d for d in range(depth + 1))
    counts = np.zeros((len(batch), n_nodes, size))
    codes, starts = batch.codes.astype(np.int64), batch.offsets
    rows = np.repeat(np.arange(len(batch)), batch.lengths)
    pos = np.arange(len(codes))
    ok = pos - starts[rows] >= depth
    unknown = np.concatenate(([0], np.cumsum(codes >= size)))
    ok[ok] &= unknown[pos[ok] + 1] == unknown[pos[ok] - depth]
    pos, rows = pos[ok], rows[ok]
    context = np.zeros(len(pos), dtype=np.int64)
    offset = 0
    for d in range(depth + 1):
        np.add.at(counts, (rows, offset + context, codes[pos]), 1.0)
        if d < depth:
            context = context + codes[pos - d - 1] * size**d
        offset += size**d
    return torch.from_numpy(counts)


def log_context_tree(counts: torch.Tensor, depth: int, prior: float, split: float) -> torch.Tensor:
    """``log P_w(root)`` of pooled count tables ``(..., nodes, size)`` (module docstring)."""
    size = counts.shape[-1]
    log_pe = (
        torch.lgamma(counts + prior).sum(-1)
        - torch.lgamma(counts.sum(-1) + size * prior)
        + (math.lgamma(size * prior) - size * math.lgamma(prior))
    )
    offsets = np.cumsum([0] + [size**d for d in range(depth + 1)])
    log_pw = log_pe[..., offsets[depth] : offsets[depth + 1]]
    for d in range(depth - 1, -1, -1):
        children = log_pw.reshape(*log_pw.shape[:-1], size, size**d).sum(-2)
        own = log_pe[..., offsets[d] : offsets[d + 1]]
        if split >= 1.0:
            log_pw = own
        else:
            log_pw = torch.logaddexp(own + math.log(split), children + math.log1p(-split))
    return log_pw[..., 0]


class MutualInformation(_StringKernel):
    r"""Mutual-information kernel of a Dirichlet-multinomial (context-tree) model.

    ``K(x, x') = int P_theta(x) P_theta(x') w(d theta)`` (Seeger 2002): with ``depth=0``
    i.i.d. letters under a symmetric Dirichlet prior (the course's coin toss gives 1/280),
    with ``depth=D >= 1`` the context-tree kernel of Cuturi & Vert (2005), a mixture over
    suffix trees of depth at most ``D`` computed by context-tree weighting (module
    docstring; course part 2, sections 2 and 3).  p.d. (an inner product in ``L^2(w)``).

    Parameters
    ----------
    depth : int, default 0
        Largest context length ``D``; 0 is the i.i.d. (order-0) model.
    prior : float, default 0.5
        Dirichlet parameter ``alpha`` of every letter (0.5: Krichevsky-Trofimov; 1: uniform).
    split : float in (0, 1], default 0.5
        ``beta``: prior probability that a node of depth ``< D`` is a leaf (1: only the
        root, the order-0 model).
    alphabet : "dna", "rna", "protein" or str, default "dna"
        The letters of the multinomials (``|A|`` enters the prior); lower case is read as
        upper case and ``N`` / ``X`` of a named alphabet are not counted.
    normalize : bool, default True
        ``K(x, x') / sqrt(K(x, x) K(x', x'))`` on log scale; False: the raw integral.
    """

    def __init__(
        self,
        depth: int = 0,
        prior: float = 0.5,
        split: float = 0.5,
        alphabet: str = "dna",
        normalize: bool = True,
    ):
        super().__init__()
        self.depth = check_int(depth, name="depth", minimum=0)
        self.prior = check_positive(prior, name="prior")
        if not 0.0 < float(split) <= 1.0:
            raise InputError(f"split: expected a probability in (0, 1], got {split!r}")
        self.split = float(split)
        if alphabet is None:
            raise InputError("alphabet: expected a named alphabet or its letters, got None")
        resolve_alphabet(alphabet)
        self.alphabet = alphabet
        self.normalize = bool(normalize)
        size = len(self._alphabet_chars() or "")
        if size ** (self.depth + 1) > 10_000_000:
            raise InputError(
                f"depth: {size}^{self.depth + 1} count cells per string exceed 1e7; "
                f"use depth <= {int(math.log(1e7) / math.log(size)) - 1}"
            )

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        return [
            (cls(2), _DNA_X, _DNA_Y),
            (cls(1, prior=1.0, alphabet="protein", normalize=False), _PROT_X[:4], _PROT_Y[:2]),
        ]

    def _log_gram(self, X: StringBatch, Y: StringBatch) -> torch.Tensor:
        size = len(X.alphabet)
        CX = context_counts(self._encoded(X), self.depth, size)
        CY = CX if Y is X else context_counts(self._encoded(Y), self.depth, size)
        cells = max(1, CY.shape[0] * CY.shape[1] * size)
        step = max(1, _CHUNK_CELLS // cells)
        rows = [
            log_context_tree(CX[lo : lo + step, None] + CY[None], self.depth, self.prior,
                             self.split)
            for lo in range(0, CX.shape[0], step)
        ]  # fmt: skip
        return torch.cat(rows) if rows else torch.zeros(0, len(Y), dtype=torch.float64)

    def _log_diag(self, X: StringBatch) -> torch.Tensor:
        C = context_counts(self._encoded(X), self.depth, len(X.alphabet))
        return log_context_tree(2 * C, self.depth, self.prior, self.split)

    def block(self, X: StringBatch, Y: StringBatch) -> torch.Tensor:
        log_k = self._log_gram(X, Y)
        if self.normalize:
            dx = self._log_diag(X)
            dy = dx if Y is X else self._log_diag(Y)
            log_k = log_k - 0.5 * (dx[:, None] + dy[None, :])
        return torch.exp(log_k)

    def block_diag(self, X: StringBatch) -> torch.Tensor:
        if self.normalize:
            return torch.ones(len(X), dtype=torch.float64)
        return torch.exp(self._log_diag(X))


__all__ = ["MutualInformation", "context_counts", "log_context_tree"]
