r"""Choosing the kernel of a two-sample test by its estimated power.

Sutherland, Tung, Strathmann, De, Ramdas, Smola & Gretton (2017), "Generative models and
model criticism via optimized maximum mean discrepancy", section 3: for ``m`` points of
each sample, the power of the test is asymptotically increasing in
:math:`\mathrm{MMD}^2 / \sigma_{H_1}`, estimated on a held-out split by

.. math::
    \hat J = \frac{\mathrm{MMD}_u^2}{\sqrt{\hat\sigma_{H_1}^2 + \epsilon}},\qquad
    \hat\sigma_{H_1}^2 = \frac{4}{m^3}\sum_i \Big(\sum_j H_{ij}\Big)^2
    - \frac{4}{m^4}\Big(\sum_{ij} H_{ij}\Big)^2,

:math:`H_{ij} = k(x_i,x_j) + k(y_i,y_j) - k(x_i,y_j) - k(x_j,y_i)` (the variance estimate
in the form of Liu et al. 2020, eq. 5).  The test then runs on the other part of the data,
independent of the choice, so its level holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from kernelkit.kernels import CenteredKernel, Gaussian, Kernel, Linear, Polynomial
from kernelkit.kernels._specs import median_sigma
from kernelkit.stats._inputs import check_samples, pooled_gram, pooled_vectors
from kernelkit.stats._mmd import prepare
from kernelkit.utils._errors import InputError
from kernelkit.utils._kinds import InputKind
from kernelkit.utils._validation import check_int


@dataclass(frozen=True)
class KernelChoice:
    """The chosen kernel and the power criterion of every candidate (by ``repr``)."""

    kernel: Kernel
    scores: dict[str, float]


def power_criterion(K: torch.Tensor, m: int, *, eps: float = 1e-8) -> float:
    r""":math:`\hat J = \mathrm{MMD}_u^2 / \sqrt{\hat\sigma_{H_1}^2 + \epsilon}` of a pooled
    Gram of ``m`` points of each sample (module docstring)."""
    Kxx, Kyy, Kxy = K[:m, :m], K[m:, m:], K[:m, m:]
    H = Kxx + Kyy - Kxy - Kxy.T
    row = H.sum(1)
    total = row.sum()
    mmd2 = (total - torch.diagonal(H).sum()) / (m * (m - 1))
    var = 4.0 * (row**2).sum() / m**3 - 4.0 * total**2 / m**4
    return float(mmd2 / torch.sqrt(torch.clamp(var, min=0.0) + eps))


def _subset(S: Any, idx: np.ndarray) -> Any:
    if isinstance(S, torch.Tensor):
        return S[torch.as_tensor(idx)]
    return [S[i] for i in idx]


def split_samples(
    X: Any, Y: Any, fraction: float, rng: np.random.Generator
) -> tuple[tuple[Any, Any], tuple[Any, Any]]:
    """A random ``fraction`` of each sample (for the selection) and the rest (for the test)."""
    samples = check_samples(X, Y)
    parts = []
    for S, n, name in ((samples.X, samples.n_x, "X"), (samples.Y, samples.n_y, "Y")):
        k = round(fraction * n)
        if k < 2 or n - k < 2:
            raise InputError(
                f"{name}: choosing a kernel needs at least 2 points of each sample on both "
                f"sides of the split (selection_fraction={fraction}), got {n} points"
            )
        perm = rng.permutation(n)
        parts.append((_subset(S, perm[:k]), _subset(S, perm[k:])))
    return (parts[0][0], parts[1][0]), (parts[0][1], parts[1][1])


def select_kernel(X: Any, Y: Any, kernels: list[Any] | tuple[Any, ...]) -> KernelChoice:
    """The kernel of ``kernels`` with the largest power criterion on ``X`` and ``Y``.

    Each candidate is resolved as the ``kernel`` of :func:`kernelkit.stats.mmd` (kernels,
    specs, ``None``); the criterion uses the first ``min(n, m)`` points of each sample.
    """
    samples = check_samples(X, Y)
    m = min(samples.n_x, samples.n_y)
    Xm, Ym = samples.X[:m], samples.Y[:m]
    scores: dict[str, float] = {}
    resolved = []
    for candidate in kernels:
        part, k = prepare(Xm, Ym, candidate)
        scores[repr(k)] = power_criterion(pooled_gram(k, part), m)
        resolved.append(k)
    best = max(range(len(resolved)), key=lambda i: scores[repr(resolved[i])])
    return KernelChoice(resolved[best], scores)


def gaussian_width_grid(
    X: Any, Y: Any, factors: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 4.0)
) -> list[Kernel]:
    """Gaussian kernels of widths ``factor * sigma_med`` (median heuristic on the pooled
    vectors, :func:`kernelkit.kernels._specs.median_sigma`)."""
    return _width_grid(_pooled_vector_samples(X, Y, "a Gaussian width grid"), factors)


def _pooled_vector_samples(X: Any, Y: Any, what: str) -> torch.Tensor:
    """The pooled ``X`` and ``Y``, which must be vectors (``what`` names the caller)."""
    samples = check_samples(X, Y)
    if samples.kind is not InputKind.VECTOR:
        raise InputError(f"X: {what} needs vectors, got {samples.kind.plural}")
    return pooled_vectors(samples)


def _width_grid(pooled: torch.Tensor, factors: tuple[float, ...]) -> list[Kernel]:
    sigma = median_sigma(pooled)
    return [Gaussian(sigma=sigma * f) for f in factors]


def width_and_moment_grid(
    X: Any,
    Y: Any,
    factors: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 4.0),
    moments: tuple[int, ...] = (1, 2),
) -> list[Kernel]:
    r"""Gaussian widths and moment kernels: candidates of the aggregated two-sample test.

    The Gaussians of :func:`gaussian_width_grid` (widths ``factor * sigma_med``;
    characteristic, so the test stays consistent against every alternative), followed by
    one moment kernel per ``p`` of ``moments``:

    * ``p = 1``: :class:`~kernelkit.kernels.Linear`, ``<x, y>``, whose biased MMD^2 is
      :math:`\|\bar x - \bar y\|^2`: the mean-difference test;
    * ``p >= 2``: ``<x - c, y - c>^p`` (:class:`~kernelkit.kernels.CenteredKernel` of
      ``Polynomial(degree=p, offset=0)``) with ``c`` the pooled mean of ``X`` and ``Y``;
      its biased MMD^2 is the squared distance of the ``p``-th moment tensors about ``c``,
      for ``p = 2``
      :math:`\|\frac1n\sum_i (x_i-c)(x_i-c)^T - \frac1m\sum_j (y_j-c)(y_j-c)^T\|_F^2`,
      the covariance-difference test (for ``n = m`` exactly the squared Frobenius distance
      of the two biased sample covariances).

    Moment kernels are the classical parametric tests of mean shifts and scale changes
    (the MMD is the RKHS distance of the mean embeddings, Gretton, Borgwardt, Rasch,
    Schölkopf & Smola 2012, "A Kernel Two-Sample Test", JMLR 13, section 2.2, and the mean
    embedding under these kernels is the moment itself; course part 3, section 15: with the
    linear kernel the biased MMD^2 is :math:`\|\bar x - \bar y\|^2`; they are not
    characteristic).  Passed as ``kernel=`` to :func:`~kernelkit.stats.two_sample_test`,
    the list is tested by the max-standardised permutation test over all candidates
    (:mod:`kernelkit.stats._aggregate`; Schrab, Kim, Albert, Laurent, Guedj & Gretton 2023,
    "MMD Aggregated Two-Sample Test", JMLR 24(194), section 3).  The median width and the
    pooled mean are symmetric functions of the pooled sample, so every candidate is the
    same under every relabelling and the level stays exact.

    Parameters
    ----------
    X, Y : array-like of shape (n, d) and (m, d)
        The two samples (vectors).
    factors : tuple of float
        Multiples of the median-heuristic width.
    moments : tuple of int
        Distinct degrees ``p >= 1`` of the moment kernels.

    Returns
    -------
    list of Kernel
        The ``len(factors)`` Gaussians, then the ``len(moments)`` moment kernels.

    Raises
    ------
    InputError
        For samples that are not vectors, or moments that are not distinct integers >= 1.
    """
    pooled = _pooled_vector_samples(X, Y, "a width and moment grid")
    degrees = [check_int(p, name="moments") for p in moments]
    if len(set(degrees)) != len(degrees):
        raise InputError(f"moments: expected distinct degrees, got {tuple(moments)!r}")
    center = tuple(float(v) for v in pooled.to(torch.float64).mean(0))
    moment_kernels: list[Kernel] = [
        Linear() if p == 1 else CenteredKernel(Polynomial(degree=p, offset=0.0), center=center)
        for p in degrees
    ]
    return _width_grid(pooled, factors) + moment_kernels
