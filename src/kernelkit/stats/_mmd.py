r"""Kernel mean embeddings, the maximum mean discrepancy and its witness function.

Course part 3, section 1-2 (``spec/course_part3.md``).  With the pooled Gram
``K = [[K_XX, K_XY], [K_YX, K_YY]]`` of ``x_1..x_n`` and ``y_1..y_m``:

* biased (V-statistic) :math:`\mathrm{MMD}_b^2 = \frac{1}{n^2}\sum_{ij} k(x_i,x_j)
  + \frac{1}{m^2}\sum_{ij} k(y_i,y_j) - \frac{2}{nm}\sum_{ij} k(x_i,y_j) = a^T K a`,
  :math:`a = (1_n/n, -1_m/m)`;
* unbiased (U-statistic) :math:`\mathrm{MMD}_u^2`: the within-sample sums over
  :math:`i \ne j` divided by :math:`n(n-1)` and :math:`m(m-1)`;
* linear-time (Gretton et al. 2012, JMLR, section 6, eq. 7-8):
  :math:`\mathrm{MMD}_l^2 = \frac{1}{p}\sum_{i=1}^{p} h(z_{2i-1}, z_{2i})` with
  :math:`h((x,y),(x',y')) = k(x,x') + k(y,y') - k(x,y') - k(x',y)`, ``p = min(n, m) // 2``;
* block (incomplete U-statistic, Zaremba, Gretton & Blaschko 2013, "B-test", section 3):
  the mean of :math:`\mathrm{MMD}_u^2` over disjoint blocks of ``B`` points of each sample.

The empirical mean embedding is :math:`\hat\mu_X(t) = \frac{1}{n}\sum_i k(x_i, t)` and the
witness function :math:`f^*(t) = (\hat\mu_X(t) - \hat\mu_Y(t)) / \|\hat\mu_X - \hat\mu_Y\|`
(course part 3, section 2, IPM view).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from kernelkit.gram._engine import gram_tensor
from kernelkit.kernels import Kernel
from kernelkit.stats._inputs import (
    TwoSamples,
    check_kernel_kind,
    check_samples,
    paired_values,
    pooled_gram,
    resolve_kernel,
)
from kernelkit.utils._errors import InputError
from kernelkit.utils._kinds import InputKind
from kernelkit.utils._validation import check_finite, check_int, to_tensor

ESTIMATORS = ("biased", "unbiased", "linear", "block")


def check_unbiased_sizes(n: int, m: int) -> None:
    """Raise :class:`InputError` unless both samples have the 2 points ``MMD^2_u`` needs."""
    if n < 2 or m < 2:
        raise InputError(
            f"X, Y: the unbiased MMD needs at least 2 points per sample, got {n} and {m}"
        )


def mmd2_tensor(K: torch.Tensor, n: int, *, unbiased: bool = True) -> torch.Tensor:
    r"""MMD^2 of the first ``n`` points against the rest, from the pooled Gram ``K``, as a
    (differentiable) tensor.

    ``unbiased``: :math:`\mathrm{MMD}_u^2` (needs ``n, m >= 2``); else
    :math:`\mathrm{MMD}_b^2 = a^T K a`.
    """
    m = K.shape[0] - n
    sxx, syy, sxy = K[:n, :n].sum(), K[n:, n:].sum(), K[:n, n:].sum()
    if not unbiased:
        return sxx / n**2 + syy / m**2 - 2 * sxy / (n * m)
    check_unbiased_sizes(n, m)
    d = torch.diagonal(K)
    sxx, syy = sxx - d[:n].sum(), syy - d[n:].sum()
    return sxx / (n * (n - 1)) + syy / (m * (m - 1)) - 2 * sxy / (n * m)


def mmd2_from_gram(K: torch.Tensor, n: int, *, unbiased: bool = True) -> float:
    """:func:`mmd2_tensor` as a float."""
    return float(mmd2_tensor(K, n, unbiased=unbiased))


def _check_estimator(estimator: Any) -> str:
    if estimator not in ESTIMATORS:
        raise InputError(f"estimator: expected one of {', '.join(ESTIMATORS)}, got {estimator!r}")
    return str(estimator)


def prepare(
    X: Any, Y: Any, kernel: Any, *, kind: InputKind | None = None, stream: bool = False
) -> tuple[TwoSamples, Kernel]:
    """Validated samples and their resolved kernel (:mod:`kernelkit.stats._inputs`)."""
    samples = check_samples(X, Y, kernel, kind=kind, stream=stream)
    k = resolve_kernel(kernel, samples)
    check_kernel_kind(k, samples)
    return samples, k


def mmd(
    X: Any,
    Y: Any,
    *,
    kernel: Any = None,
    estimator: str = "unbiased",
    block_size: int | None = None,
    chunk_size: int = 32_768,
) -> float:
    r"""An estimate of :math:`\mathrm{MMD}^2(P, Q)` from samples ``X ~ P`` and ``Y ~ Q``.

    Parameters
    ----------
    X, Y : samples of one kind
        Vectors (arrays, tensors; a 1-D array is a sample of scalars), sequences, graphs or
        molecules; with ``kernel="precomputed"``, ``X`` is the Gram of the pooled sample
        ``(x_1..x_n, y_1..y_m)`` and ``Y`` the size ``n`` of the first sample.
    kernel : Kernel, str or None
        A kernelkit kernel, a spec (``"gaussian:sigma=2"``), ``"precomputed"``, or ``None``
        for the default kernel of the input kind (median heuristic for vectors).
    estimator : {"biased", "unbiased", "linear", "block"}
        The estimators of the module docstring.
    block_size : int, optional
        Points of each sample per block of ``"block"`` (default ``sqrt(min(n, m))``).
    chunk_size : int
        Pairs per chunk of the streaming ``"linear"`` estimator.

    Returns
    -------
    float
        The estimate (the unbiased, linear and block estimates can be negative).
    """
    estimator = _check_estimator(estimator)
    samples, k = prepare(X, Y, kernel, stream=estimator == "linear")
    if estimator == "linear":
        return linear_statistics(k, samples, chunk_size=chunk_size).mean
    if estimator == "block":
        return float(block_statistics(k, samples, block_size).mean())
    return mmd2_from_gram(pooled_gram(k, samples), samples.n_x, unbiased=estimator == "unbiased")


@dataclass(frozen=True)
class LinearStatistics:
    """Sums of the linear-time terms ``h_i``: their count, mean and variance."""

    count: int
    mean: float
    variance: float


def linear_statistics(
    kernel: Kernel, samples: TwoSamples, *, chunk_size: int = 32_768
) -> LinearStatistics:
    r"""The ``p = min(n, m) // 2`` terms :math:`h_i` of :math:`\mathrm{MMD}_l^2`, streamed.

    ``h_i = k(x_{2i-1}, x_{2i}) + k(y_{2i-1}, y_{2i}) - k(x_{2i-1}, y_{2i}) -
    k(x_{2i}, y_{2i-1})`` (Gretton et al. 2012, eq. 7), ``chunk_size`` pairs at a time, so
    memory stays O(chunk) for arrays of any length (NumPy memory maps included); only the
    sum and the sum of squares of the centred terms are kept (shifted by the first chunk's
    mean, in float64).
    """
    chunk_size = check_int(chunk_size, name="chunk_size")
    p = min(samples.n_x, samples.n_y) // 2
    if p < 2:
        raise InputError(
            f"X, Y: the linear-time MMD needs at least 4 points per sample, got "
            f"{samples.n_x} and {samples.n_y}"
        )
    if samples.kind is InputKind.GRAM:
        K, n = samples.X, samples.n_x
        i = torch.arange(p)
        x1, x2, y1, y2 = 2 * i, 2 * i + 1, n + 2 * i, n + 2 * i + 1
        h = K[x1, x2] + K[y1, y2] - K[x1, y2] - K[x2, y1]
        return LinearStatistics(p, float(h.mean()), float(h.var()))
    shift, total, squares = None, 0.0, 0.0
    for start in range(0, p, chunk_size):
        stop = min(p, start + chunk_size)
        x1, x2, y1, y2 = (
            _rows(S, 2 * start + o, 2 * stop + o, name)
            for S, name in ((samples.X, "X"), (samples.Y, "Y"))
            for o in (0, 1)
        )
        h = (
            paired_values(kernel, x1, x2)
            + paired_values(kernel, y1, y2)
            - paired_values(kernel, x1, y2)
            - paired_values(kernel, x2, y1)
        ).to(torch.float64)
        shift = float(h.mean()) if shift is None else shift
        total += float((h - shift).sum())
        squares += float(((h - shift) ** 2).sum())
    mean = total / p
    return LinearStatistics(p, shift + mean, (squares - p * mean**2) / (p - 1))


def _rows(S: Any, start: int, stop: int, name: str) -> Any:
    """Every second item of ``S[start:stop]`` (a float64 tensor for vectors, checked finite;
    else a list)."""
    part = S[start:stop:2]
    if isinstance(part, np.ndarray):
        part = torch.as_tensor(np.ascontiguousarray(part))
    if isinstance(part, torch.Tensor):
        part = part.to(torch.float64)
        if not bool(torch.isfinite(part.sum())):  # NaN/inf, or a finite sum that overflows
            check_finite(part, name=name)
    return part


def block_statistics(
    kernel: Kernel, samples: TwoSamples, block_size: int | None = None
) -> np.ndarray:
    r""":math:`\mathrm{MMD}_u^2` of each block of ``B`` points of ``X`` and ``B`` of ``Y``.

    Blocks are consecutive and disjoint (``min(n, m) // B`` of them; the B-test of Zaremba
    et al. 2013 averages them and uses their sample variance for a Gaussian null).
    """
    n_min = min(samples.n_x, samples.n_y)
    B = (
        max(2, int(np.sqrt(n_min)))
        if block_size is None
        else check_int(block_size, name="block_size", minimum=2)
    )
    n_blocks = n_min // B
    if n_blocks < 2:
        raise InputError(
            f"block_size: expected at most {n_min // 2} (two blocks of each sample), got {B}"
        )
    if samples.kind is InputKind.GRAM:
        K, n = samples.X, samples.n_x
        out = []
        for b in range(n_blocks):
            idx = torch.cat([torch.arange(b * B, b * B + B), n + torch.arange(b * B, b * B + B)])
            out.append(mmd2_from_gram(K[idx][:, idx], B))
        return np.array(out)
    stats = []
    for b in range(n_blocks):
        part = TwoSamples(
            samples.X[b * B : b * B + B], samples.Y[b * B : b * B + B], B, B, samples.kind
        )
        stats.append(mmd2_from_gram(pooled_gram(kernel, part), B))
    return np.array(stats)


class MeanEmbedding:
    r"""The empirical kernel mean embedding :math:`\hat\mu_X = \frac1n\sum_i k(x_i, \cdot)`.

    Course part 3, section 1: :math:`\hat\mu_X(t) = \frac1n\sum_i k(x_i, t)` and
    :math:`\langle\hat\mu_X, \hat\mu_Y\rangle_H = \frac{1}{nm}\sum_{ij} k(x_i, y_j)`.

    Parameters
    ----------
    X : sample
        Vectors, sequences, graphs or molecules.
    kernel : Kernel, str or None
        As in :func:`mmd` (``None``: the default kernel of the kind, median heuristic on
        ``X`` for vectors).
    """

    def __init__(self, X: Any, kernel: Any = None):
        samples, self.kernel = prepare(X, X, kernel)
        if samples.kind is InputKind.GRAM:
            raise InputError("kernel: a mean embedding needs the points, not a Gram matrix")
        self.X = samples.X
        self.n = samples.n_x

    def __call__(self, points: Any) -> torch.Tensor:
        r""":math:`\hat\mu_X(t)` at each point ``t`` of ``points`` (one value per point)."""
        if isinstance(self.X, torch.Tensor):
            points = to_tensor(points, name="points", ndim=None, dtype=self.X.dtype)
            points = points[:, None] if points.ndim == 1 else points
        return gram_tensor(self.kernel, points, self.X).mean(1)

    def inner(self, other: MeanEmbedding) -> float:
        r""":math:`\langle\hat\mu_X, \hat\mu_Y\rangle_H = \frac{1}{nm}\sum_{ij} k(x_i, y_j)`."""
        return float(gram_tensor(self.kernel, self.X, other.X).mean())

    def squared_norm(self) -> float:
        r""":math:`\|\hat\mu_X\|_H^2 = \frac{1}{n^2}\sum_{ij} k(x_i, x_j)`."""
        return self.inner(self)


def witness(
    X: Any, Y: Any, points: Any = None, *, kernel: Any = None, normalize: bool = True
) -> torch.Tensor:
    r"""The witness function :math:`f^*(t) = (\hat\mu_X(t) - \hat\mu_Y(t)) / \|\hat\mu_X -
    \hat\mu_Y\|_H` at ``points`` (default: the pooled sample, ``X`` then ``Y``).

    Course part 3, section 2: the unit-norm function of the RKHS on which the two means
    differ most; :math:`\mathrm{MMD}_b = \frac1n\sum_i f^*(x_i) - \frac1m\sum_j f^*(y_j)`.
    Large positive values mark where ``X`` is denser than ``Y``, negative where ``Y`` is.
    ``normalize=False`` leaves out the division by :math:`\|\hat\mu_X - \hat\mu_Y\|_H =
    \mathrm{MMD}_b` (the mean-embedding difference itself).
    """
    samples, k = prepare(X, Y, kernel)
    if samples.kind is InputKind.GRAM:
        raise InputError("kernel: the witness at new points needs the points, not a Gram")
    if points is None:
        return witness_from_gram(pooled_gram(k, samples), samples.n_x, normalize=normalize)
    mx, my = MeanEmbedding(samples.X, k), MeanEmbedding(samples.Y, k)
    values = mx(points) - my(points)
    norm2 = mx.squared_norm() + my.squared_norm() - 2 * mx.inner(my)
    return values / max(norm2, 1e-300) ** 0.5 if normalize else values


def witness_from_gram(K: torch.Tensor, n: int, *, normalize: bool = True) -> torch.Tensor:
    """The witness of :func:`witness` at the points of a pooled Gram (first ``n``: ``X``)."""
    values = K[:, :n].mean(1) - K[:, n:].mean(1)
    if normalize:
        values = values / max(mmd2_from_gram(K, n, unbiased=False), 1e-300) ** 0.5
    return values
