r"""The kernel two-sample test: is ``X ~ P`` and ``Y ~ Q`` with ``P = Q``?

Course part 3, section 2 (statistic, permutation null and p-value), with the null
distributions of :mod:`kernelkit.stats._nulls`.  Methods:

* ``"permutation"``: :math:`T_0 = \mathrm{MMD}_u^2`, ``J`` random relabellings of the pooled
  sample from one Gram (:func:`~kernelkit.stats._nulls.permutation_null`),
  :math:`p = (1 + \#\{T_j \ge T_0\}) / (1 + J)`;
* ``"spectral"``: :math:`T_0 = \mathrm{MMD}_u^2`, ``J`` draws of the Gram-spectrum
  approximation of the null of Gretton et al. (2009), same p-value formula;
* ``"linear"``: :math:`T_0 = \mathrm{MMD}_l^2` (Gretton et al. 2012, section 6), O(n) time
  and memory, streamed; under :math:`H_0` it is asymptotically
  :math:`N(0, \hat\sigma_h^2 / p)` (``p`` pairs, :math:`\hat\sigma_h^2` the sample
  variance of the terms ``h``), :math:`p = 1 - \Phi(T_0 / (\hat\sigma_h/\sqrt p))`;
* ``"block"``: :math:`T_0` the mean of :math:`\mathrm{MMD}_u^2` over ``b`` blocks (the
  B-test of Zaremba et al. 2013), Gaussian null with the blocks' sample variance over ``b``.

For the Gaussian nulls, ``null_samples`` holds ``J`` draws of that Gaussian (for
histograms); the p-value is the exact normal tail.

A list of kernels (or :func:`gaussian_width_grid`) with the permutation method is, by default
(``selection="aggregate"``), the max-standardised permutation test over all the candidates
on all the data (:mod:`kernelkit.stats._aggregate`: Schrab et al. 2023; Kübler et al. 2020),
whose level is exact; ``selection="split"`` chooses the kernel on a held-out part of each
sample by the estimated test power (:mod:`kernelkit.stats._selection`) and tests on the
rest, so the level holds (Sutherland et al. 2017, section 3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import torch

from kernelkit.kernels import Kernel
from kernelkit.stats._aggregate import aggregated_permutation_null
from kernelkit.stats._inputs import is_precomputed, pooled_gram
from kernelkit.stats._mmd import (
    block_statistics,
    check_unbiased_sizes,
    linear_statistics,
    mmd2_from_gram,
    prepare,
)
from kernelkit.stats._nulls import permutation_null, pvalue, spectral_null
from kernelkit.stats._selection import select_kernel, split_samples
from kernelkit.utils._errors import InputError
from kernelkit.utils._seeding import RandomStateLike, check_random_state
from kernelkit.utils._validation import check_int

METHODS = ("permutation", "spectral", "linear", "block")
SELECTIONS = ("aggregate", "split")


@dataclass(frozen=True)
class TwoSampleResult:
    """Result of :func:`two_sample_test`.

    Attributes
    ----------
    statistic : float
        :math:`T_0`: the unbiased MMD^2 (permutation, spectral), the linear-time MMD^2
        (linear), the mean block MMD^2 (block), or with ``selection="aggregate"`` the
        largest standardised MMD^2_u over the kernels, :math:`M_0`
        (:mod:`kernelkit.stats._aggregate`).
    pvalue : float
        The p-value of :math:`H_0: P = Q`.
    null_samples : numpy.ndarray
        ``J`` samples of the null distribution of the statistic, in its units.
    kernel : Kernel
        The kernel used: with a list, the one chosen on the selection split, or with
        ``selection="aggregate"`` the one whose standardised statistic is the largest.
    method : str
        The method of the null distribution.
    n_x, n_y : int
        Sizes of the samples the test ran on (after the selection split, if any).
    selection : dict
        With a list of kernels: ``{repr(kernel): score}``, the power criterion on the
        selection split, or with ``selection="aggregate"`` the standardised statistic
        :math:`Z_{l0}` of each kernel.
    """

    statistic: float
    pvalue: float
    null_samples: np.ndarray
    kernel: Kernel
    method: str
    n_x: int
    n_y: int
    selection: dict[str, float] = field(default_factory=dict)

    def reject(self, alpha: float = 0.05) -> bool:
        """Whether :math:`H_0` is rejected at level ``alpha`` (``pvalue <= alpha``)."""
        return self.pvalue <= alpha


def _gaussian_null(
    statistic: float, variance: float, count: int, J: int, rng: np.random.Generator
) -> tuple[float, np.ndarray]:
    sd = math.sqrt(max(variance, 0.0) / count)
    p = 0.5 * math.erfc(statistic / (sd * math.sqrt(2))) if sd > 0 else float(statistic <= 0)
    return p, rng.normal(0.0, sd, J) if sd > 0 else np.zeros(J)


def gram_test(
    K: torch.Tensor,
    n: int,
    kernel: Kernel,
    *,
    method: str = "permutation",
    n_permutations: int = 1000,
    random_state: RandomStateLike = None,
    n_eigen: int | None = None,
) -> TwoSampleResult:
    """The permutation or spectral test from the pooled Gram ``K`` of a kernel (first ``n``
    points: ``X``), computed once and shared by the statistic and the null."""
    if method not in ("permutation", "spectral"):
        raise InputError(f"method: expected 'permutation' or 'spectral', got {method!r}")
    J = check_int(n_permutations, name="n_permutations")
    rng = check_random_state(random_state)
    stat = mmd2_from_gram(K, n)
    if method == "permutation":
        null = permutation_null(K, n, J, rng)
    else:
        null = spectral_null(K, n, J, rng, n_eigen=n_eigen)
    return TwoSampleResult(stat, pvalue(stat, null), null, kernel, method, n, K.shape[0] - n)


def aggregated_test(
    X: Any, Y: Any, kernels: list[Any] | tuple[Any, ...], *, n_permutations: int, rng: Any
) -> TwoSampleResult:
    """The max-standardised permutation test over ``kernels`` on all of ``X`` and ``Y``
    (:func:`~kernelkit.stats._aggregate.aggregated_permutation_null`)."""
    prepared = [prepare(X, Y, k) for k in kernels]
    samples, resolved = prepared[0][0], [k for _, k in prepared]
    check_unbiased_sizes(samples.n_x, samples.n_y)
    agg = aggregated_permutation_null(
        (pooled_gram(k, part) for part, k in prepared),
        samples.n_x + samples.n_y,
        samples.n_x,
        n_permutations,
        rng,
    )
    best = int(np.argmax(agg.scores))
    return TwoSampleResult(
        agg.statistic,
        pvalue(agg.statistic, agg.null),
        agg.null,
        resolved[best],
        "permutation",
        samples.n_x,
        samples.n_y,
        {repr(k): float(z) for k, z in zip(resolved, agg.scores, strict=True)},
    )


def _check_candidates(kernels: list[Any] | tuple[Any, ...]) -> None:
    if not kernels:
        raise InputError("kernel: expected at least one candidate kernel, got an empty list")
    if any(is_precomputed(k) for k in kernels):
        raise InputError("kernel: choosing among kernels needs the samples, not a precomputed Gram")


def _selection_route(selection: str | None, method: str) -> str:
    if selection is None:
        return "aggregate" if method == "permutation" else "split"
    if selection not in SELECTIONS:
        raise InputError(
            f"selection: expected one of {', '.join(SELECTIONS)} or None, got {selection!r}"
        )
    if selection == "aggregate" and method != "permutation":
        raise InputError(
            f"selection: 'aggregate' needs method='permutation', got method={method!r}"
        )
    return selection


def two_sample_test(
    X: Any,
    Y: Any,
    *,
    kernel: Any = None,
    method: str = "permutation",
    n_permutations: int = 1000,
    random_state: RandomStateLike = None,
    selection: str | None = None,
    selection_fraction: float = 0.5,
    n_eigen: int | None = None,
    block_size: int | None = None,
    chunk_size: int = 32_768,
) -> TwoSampleResult:
    r"""Kernel two-sample test of :math:`H_0: P = Q` from ``X ~ P`` and ``Y ~ Q``.

    Parameters
    ----------
    X, Y : samples of one kind
        As in :func:`kernelkit.stats.mmd` (vectors, sequences, graphs, molecules, or with
        ``kernel="precomputed"`` the pooled Gram and the size of the first sample).
    kernel : Kernel, str, None, or a list of them
        As in :func:`kernelkit.stats.mmd`; a list or tuple of candidates (e.g.
        :func:`gaussian_width_grid`) is tested as ``selection`` says.
    method : {"permutation", "spectral", "linear", "block"}
        The null distribution (module docstring).
    n_permutations : int
        ``J``: permutations, or draws of the spectral or Gaussian null.
    random_state : int, Generator or None
        Seeds the permutations, the null draws and the selection split.
    selection : {"aggregate", "split"} or None
        How a list of kernels is tested: ``"aggregate"`` (the default with the permutation
        method) runs the max-standardised permutation test over all the candidates on all
        the data (:mod:`kernelkit.stats._aggregate`); ``"split"`` (the default of the other
        methods) chooses the kernel with the largest power criterion on a random
        ``selection_fraction`` of each sample and tests on the rest.  Unused for one
        kernel.
    selection_fraction : float
        Fraction of each sample used to choose among a list of kernels, in (0, 1).
    n_eigen : int, optional
        Eigenvalues of the spectral null (default: all for ``N <= 1000``, else 200).
    block_size : int, optional
        Points per sample in each block of ``"block"`` (default ``sqrt(min(n, m))``).
    chunk_size : int
        Pairs per chunk of the streamed ``"linear"`` test.

    Returns
    -------
    TwoSampleResult

    Raises
    ------
    InputError
        For an empty sample, samples of different kinds, an unknown method or selection, or a
        kernel that takes another kind of input.
    """
    if method not in METHODS:
        raise InputError(f"method: expected one of {', '.join(METHODS)}, got {method!r}")
    J = check_int(n_permutations, name="n_permutations")
    rng = check_random_state(random_state)
    route = _selection_route(selection, method)
    scores: dict[str, float] = {}
    if isinstance(kernel, (list, tuple)):
        _check_candidates(kernel)
        if route == "aggregate":
            return aggregated_test(X, Y, kernel, n_permutations=J, rng=rng)
        if not 0 < selection_fraction < 1:
            raise InputError(
                f"selection_fraction: expected a fraction in (0, 1), got {selection_fraction!r}"
            )
        (Xs, Ys), (X, Y) = split_samples(X, Y, selection_fraction, rng)
        chosen = select_kernel(Xs, Ys, kernel)
        scores, kernel = chosen.scores, chosen.kernel
    samples, k = prepare(X, Y, kernel, stream=method == "linear")
    if method in ("permutation", "spectral"):
        res = gram_test(
            pooled_gram(k, samples),
            samples.n_x,
            k,
            method=method,
            n_permutations=J,
            random_state=rng,
            n_eigen=n_eigen,
        )
        return replace(res, selection=scores)
    if method == "linear":
        lin = linear_statistics(k, samples, chunk_size=chunk_size)
        stat, variance, count = lin.mean, lin.variance, lin.count
    else:
        blocks = block_statistics(k, samples, block_size)
        stat, variance, count = float(blocks.mean()), float(blocks.var(ddof=1)), blocks.size
    p, null = _gaussian_null(stat, variance, count, J, rng)
    return TwoSampleResult(stat, p, null, k, method, samples.n_x, samples.n_y, scores)
