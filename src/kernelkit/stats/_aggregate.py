r"""Choosing among kernels without splitting: the max-standardised permutation test.

Schrab, Kim, Albert, Laurent, Guedj & Gretton (2023), "MMD Aggregated Two-Sample Test",
JMLR 24(194), section 3 (aggregating the MMD tests of a collection of kernels, calibrated
by one set of permutations); Kübler, Jitkrittum, Schölkopf & Muandet (2020), "Learning
Kernel Tests Without Data Splitting", NeurIPS (a kernel chosen on all the data keeps the
level when the test accounts for the choice).  For candidate kernels
:math:`k_1..k_L` and one set of relabellings :math:`\sigma_0 = \mathrm{id}, \sigma_1, ...,
\sigma_J` (i.i.d. uniform) of the pooled sample :math:`D`, let
:math:`T_{lj} = \mathrm{MMD}_u^2(k_l; D\sigma_j)` (all ``J`` of one kernel from its Gram
by one product per batch, :func:`~kernelkit.stats._nulls.split_statistics`), and

.. math::
    Z_{lj} = \frac{T_{lj} - \bar T_l}{s_l},\qquad
    \bar T_l = \frac{1}{J+1}\sum_{i=0}^{J} T_{li},\qquad
    s_l^2 = \frac{1}{J+1}\sum_{i=0}^{J} (T_{li} - \bar T_l)^2,\qquad
    M_j = \max_l Z_{lj},

(:math:`Z_{lj} = 0` where :math:`s_l = 0`) and
:math:`p = (1 + \#\{j \ge 1 : M_j \ge M_0\}) / (1 + J)`.

Level: under :math:`H_0` the pooled sample is exchangeable, so the ``J + 1`` relabelled
samples :math:`(D\sigma_0, ..., D\sigma_J)` are exchangeable (Hemerik & Goeman 2018, "Exact
testing with random permutations", TEST 27, section 3).  :math:`\bar T_l` and :math:`s_l`
are symmetric functions of those ``J + 1`` samples, so :math:`(M_0, ..., M_J)` is an
equivariant function of them and is exchangeable too: the rank of :math:`M_0` is uniform
(ties counted against it), hence :math:`P(p \le \alpha) \le \alpha` for every ``n``,
``J`` and set of kernels, the choice of the kernel (the maximum) included.  It is the
aggregated test of Schrab et al. with their quantile correction replaced by standardising
each kernel's statistic by the moments of its own permutation distribution, so that no
kernel's scale dominates the maximum; with one kernel it is the plain permutation test
(same permutations, same p-value).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import torch

from kernelkit.stats._nulls import permutation_batches, split_statistics


@dataclass(frozen=True)
class AggregatedNull:
    """Max-standardised statistics of :func:`aggregated_permutation_null`.

    Attributes
    ----------
    scores : numpy.ndarray
        ``Z_{l0}``: the standardised statistic of each kernel on the observed split.
    null : numpy.ndarray
        ``M_1..M_J``: the maximum over kernels on each relabelling.
    """

    scores: np.ndarray
    null: np.ndarray

    @property
    def statistic(self) -> float:
        """:math:`M_0 = \\max_l Z_{l0}`."""
        return float(self.scores.max())


def observed_and_permuted(
    N: int, n: int, n_permutations: int, rng: np.random.Generator, *, batch: int = 256
) -> torch.Tensor:
    """``N x (J + 1)`` indicators: column 0 the observed split (first ``n`` points), then
    the ``J`` random relabellings drawn as :func:`~kernelkit.stats._nulls.permutation_null`
    draws them (same ``rng`` calls, so the same permutations)."""
    first = torch.zeros(N, 1, dtype=torch.float64)
    first[:n] = 1.0
    return torch.cat([first, *permutation_batches(N, n, n_permutations, rng, batch=batch)], dim=1)


def standardise(T: torch.Tensor) -> torch.Tensor:
    """Rows of ``T`` (kernels x relabellings) minus their mean, over their standard
    deviation (``ddof = 0``); rows with zero spread become zero."""
    centred = T - T.mean(dim=1, keepdim=True)
    sd = centred.pow(2).mean(dim=1, keepdim=True).sqrt()
    return torch.where(sd > 0, centred / torch.where(sd > 0, sd, 1.0), 0.0)


def aggregated_permutation_null(
    grams: Iterable[torch.Tensor], N: int, n: int, n_permutations: int, rng: np.random.Generator
) -> AggregatedNull:
    """Standardised unbiased MMD^2 of every kernel on the observed split and
    ``n_permutations`` shared relabellings.

    ``grams`` yields the ``N x N`` pooled Gram of each kernel (first ``n`` points: ``X``);
    one is held at a time.
    """
    S = observed_and_permuted(N, n, n_permutations, rng)
    Z = standardise(torch.stack([split_statistics(K, S) for K in grams]))
    M = Z.max(dim=0).values
    return AggregatedNull(Z[:, 0].numpy(), M[1:].numpy())
