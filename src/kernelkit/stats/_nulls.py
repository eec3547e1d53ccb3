r"""Null distributions of the MMD from one pooled Gram: permutations and the Gram spectrum.

Permutations (course part 3, section 2, "merdogs"): relabel the pooled sample at random and
recompute the statistic.  A relabelling with indicator ``s`` (``s_i = 1`` for the ``n``
points called ``X``) has, with ``r = K 1``, ``t = 1^T K 1``, ``d = diag K`` and
``q = s^T K s``,

.. math::
    \mathrm{MMD}_u^2(s) = \frac{q - d^T s}{n(n-1)}
    + \frac{t - 2 r^T s + q - (1^T d - d^T s)}{m(m-1)} - \frac{2 (r^T s - q)}{nm},

so all ``J`` statistics come from ``K S`` for the ``N x J`` indicator matrix ``S`` (one
matrix product per batch of columns) instead of ``J`` recomputations.

Spectrum (Gretton, Fukumizu, Harchaoui & Sriperumbudur 2009, "A fast, consistent kernel
two-sample test", theorems 1-2): under :math:`H_0`,
:math:`\mathrm{MMD}_u^2 \to (\frac1n + \frac1m) \sum_l \lambda_l (z_l^2 - 1)` with
:math:`z_l \sim N(0, 1)` and :math:`\lambda_l` the eigenvalues of the centred kernel's
integral operator, estimated by :math:`\nu_l / N` with :math:`\nu_l` the eigenvalues of the
centred pooled Gram :math:`HKH` (for ``n = m`` this is the course's
:math:`n \mathrm{MMD}_u^2 \to 2\sum_l \lambda_l (z_l^2 - 1)`).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import torch

from kernelkit.gram import center_gram
from kernelkit.solvers import symmetric_eigh, top_eigenpairs


def random_orders(N: int, J: int, rng: np.random.Generator) -> np.ndarray:
    """``J x N`` array whose row ``j`` is a uniformly random permutation of ``0..N-1`` (the
    argsort of uniform draws: one vectorised call for all ``J``)."""
    return rng.random((J, N)).argsort(axis=1)


def order_batches(
    N: int, n_permutations: int, rng: np.random.Generator, *, batch: int = 256
) -> Iterator[np.ndarray]:
    """:func:`random_orders` of ``n_permutations`` permutations, ``batch`` rows at a time."""
    for start in range(0, n_permutations, batch):
        yield random_orders(N, min(batch, n_permutations - start), rng)


def _indicators(idx: np.ndarray, N: int) -> torch.Tensor:
    S = torch.zeros(idx.shape[0], N, dtype=torch.float64)
    S.scatter_(1, torch.as_tensor(idx), 1.0)
    return S.T.contiguous()


def permutation_indicators(N: int, n: int, J: int, rng: np.random.Generator) -> torch.Tensor:
    """``N x J`` float64 matrix whose column ``j`` marks the ``n`` points of a random split."""
    return _indicators(random_orders(N, J, rng)[:, :n], N)


def split_statistics(K: torch.Tensor, S: torch.Tensor, *, unbiased: bool = True) -> torch.Tensor:
    """MMD^2 of every split of the columns of ``S`` (see the module docstring), one product.

    ``S`` holds 0/1 indicators with the same count ``n`` in every column.
    """
    N = K.shape[0]
    n = round(float(S[:, 0].sum()))
    m = N - n
    r = K.sum(1)
    t = r.sum()
    q = (S * (K @ S)).sum(0)
    rs = r @ S
    xy = (rs - q) / (n * m)
    if not unbiased:
        return q / n**2 + (t - 2 * rs + q) / m**2 - 2 * xy
    d = torch.diagonal(K)
    ds = d @ S
    return (q - ds) / (n * (n - 1)) + (t - 2 * rs + q - (d.sum() - ds)) / (m * (m - 1)) - 2 * xy


def permutation_null(
    K: torch.Tensor,
    n: int,
    n_permutations: int,
    rng: np.random.Generator,
    *,
    unbiased: bool = True,
    batch: int = 256,
) -> np.ndarray:
    """``n_permutations`` statistics of random relabellings of the pooled sample of ``K``.

    Batches of ``batch`` permutations: one ``N x N`` by ``N x batch`` product each.
    """
    batches = permutation_batches(K.shape[0], n, n_permutations, rng, batch=batch)
    return torch.cat([split_statistics(K, S, unbiased=unbiased) for S in batches]).numpy()


def permutation_batches(
    N: int, n: int, n_permutations: int, rng: np.random.Generator, *, batch: int = 256
) -> Iterator[torch.Tensor]:
    """:func:`permutation_indicators` of ``n_permutations`` relabellings, ``batch`` columns at
    a time (the draws of :func:`permutation_null`)."""
    for idx in order_batches(N, n_permutations, rng, batch=batch):
        yield _indicators(idx[:, :n], N)


def centred_gram_eigenvalues(K: torch.Tensor, n_eigen: int | None = None) -> np.ndarray:
    """The largest eigenvalues of ``HKH`` (all for ``N <= 1000``, else the top ``n_eigen``,
    default 200), clipped at zero."""
    Kc = center_gram(K)
    N = K.shape[0]
    if n_eigen is None and N <= 1000:
        values = symmetric_eigh(Kc, signs=False).values
    else:
        k = min(N - 1, n_eigen or 200)
        values = top_eigenpairs(Kc, k).values
    return np.clip(values.numpy(), 0.0, None)


def spectral_null(
    K: torch.Tensor,
    n: int,
    n_samples: int,
    rng: np.random.Generator,
    *,
    n_eigen: int | None = None,
) -> np.ndarray:
    r"""``n_samples`` draws of :math:`(\frac1n + \frac1m)\sum_l \hat\lambda_l (z_l^2 - 1)`,
    :math:`\hat\lambda_l = \nu_l / N` (module docstring)."""
    N = K.shape[0]
    lam = centred_gram_eigenvalues(K, n_eigen) / N
    lam = lam[lam > 0]
    z = rng.standard_normal((n_samples, lam.size))
    return (1.0 / n + 1.0 / (N - n)) * ((z**2 - 1.0) @ lam)


def pvalue(statistic: float, null: np.ndarray) -> float:
    r""":math:`p = (1 + \#\{j : T_j \ge T_0\}) / (1 + J)` (course part 3, section 2)."""
    return float((1 + np.count_nonzero(null >= statistic)) / (1 + null.size))
