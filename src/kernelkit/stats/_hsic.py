r"""The Hilbert-Schmidt independence criterion and its permutation test.

HSIC is the MMD between the joint distribution :math:`P_{XY}` and the product of its
marginals :math:`P_X P_Y`, with the product kernel :math:`k \otimes l` (course part 3,
section 2, "MMD view of dependence"; Gretton, Fukumizu, Teo, Song, Schölkopf & Smola 2008,
"A kernel statistical test of independence", eq. 4):

.. math::
    \mathrm{HSIC}_b = \frac{1}{N^2} \operatorname{tr}(K H L H),\qquad H = I - \frac1N 1 1^T.

The unbiased estimator (Song, Smola, Gretton, Bedo & Borgwardt 2012, JMLR, eq. 5), with
:math:`\tilde K, \tilde L` the Grams with zero diagonals:

.. math::
    \mathrm{HSIC}_u = \frac{1}{N(N-3)}\Big[\operatorname{tr}(\tilde K \tilde L)
    + \frac{1^T\tilde K 1 \, 1^T\tilde L 1}{(N-1)(N-2)}
    - \frac{2}{N-2} 1^T \tilde K \tilde L 1\Big].

The test permutes the pairing of ``Y`` with ``X``: :math:`T_j = \frac{1}{N^2}\sum_{ab}
(HKH)_{ab} L_{\pi_j(a)\pi_j(b)}`, with the p-value of :func:`kernelkit.stats._nulls.pvalue`
(Gretton et al. 2008, section 4), evaluated in batches by :func:`hsic_permutation_null`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from kernelkit.gram import center_gram
from kernelkit.gram._tiling import n_workers, run_parallel
from kernelkit.kernels import Kernel
from kernelkit.solvers._eigen import symmetric_eigh
from kernelkit.stats._inputs import pooled_gram
from kernelkit.stats._mmd import prepare
from kernelkit.stats._nulls import order_batches, pvalue
from kernelkit.utils._errors import InputError
from kernelkit.utils._seeding import RandomStateLike, check_random_state
from kernelkit.utils._validation import check_int


@dataclass(frozen=True)
class IndependenceResult:
    """Result of :func:`independence_test`: :math:`\\mathrm{HSIC}_b`, its p-value, the ``J``
    permutation statistics and the two kernels."""

    statistic: float
    pvalue: float
    null_samples: np.ndarray
    kernel_x: Kernel
    kernel_y: Kernel


def _grams(
    X: Any, Y: Any, kernel_x: Any, kernel_y: Any
) -> tuple[torch.Tensor, torch.Tensor, Kernel, Kernel]:
    out = []
    for S, kernel in ((X, kernel_x), (Y, kernel_y)):
        samples, k = prepare(S, S, kernel)
        n = samples.n_x
        out.append((pooled_gram(k, samples)[:n, :n], k))
    (K, kx), (L, ky) = out
    if K.shape[0] != L.shape[0]:
        raise InputError(
            f"Y: expected one item per item of X ({K.shape[0]} paired observations), got "
            f"{L.shape[0]}"
        )
    return K, L, kx, ky


def hsic_from_grams(K: torch.Tensor, L: torch.Tensor, *, unbiased: bool = False) -> float:
    """HSIC of two Grams of the same paired observations (module docstring)."""
    N = K.shape[0]
    if not unbiased:
        return float((center_gram(K) * L).sum() / N**2)
    if N < 4:
        raise InputError(f"X: the unbiased HSIC needs at least 4 observations, got {N}")
    Kt = K - torch.diag(torch.diagonal(K))
    Lt = L - torch.diag(torch.diagonal(L))
    one_k, one_l = Kt.sum(1), Lt.sum(1)
    value = (
        (Kt * Lt).sum()
        + one_k.sum() * one_l.sum() / ((N - 1) * (N - 2))
        - 2.0 / (N - 2) * (one_k @ one_l)
    )
    return float(value / (N * (N - 3)))


def hsic(
    X: Any, Y: Any, *, kernel_x: Any = None, kernel_y: Any = None, estimator: str = "biased"
) -> float:
    """HSIC of paired samples ``(x_i, y_i)``; ``estimator`` ``"biased"`` or ``"unbiased"``.

    ``kernel_x`` and ``kernel_y`` are resolved as the ``kernel`` of
    :func:`kernelkit.stats.mmd` (``None``: the default of each input kind).
    """
    if estimator not in ("biased", "unbiased"):
        raise InputError(f"estimator: expected 'biased' or 'unbiased', got {estimator!r}")
    K, L, _, _ = _grams(X, Y, kernel_x, kernel_y)
    return hsic_from_grams(K, L, unbiased=estimator == "unbiased")


def independence_test(
    X: Any,
    Y: Any,
    *,
    kernel_x: Any = None,
    kernel_y: Any = None,
    n_permutations: int = 1000,
    random_state: RandomStateLike = None,
) -> IndependenceResult:
    """Permutation test of independence of paired samples by :math:`\\mathrm{HSIC}_b`.

    One centred Gram ``HKH`` serves every permutation; the permutations are evaluated in
    batches, through the eigendecompositions of the two Grams when that is cheaper
    (:func:`hsic_permutation_null`).
    """
    J = check_int(n_permutations, name="n_permutations")
    rng = check_random_state(random_state)
    K, L, kx, ky = _grams(X, Y, kernel_x, kernel_y)
    N = K.shape[0]
    Kc = center_gram(K)
    stat = float((Kc * L).sum() / N**2)
    null = hsic_permutation_null(Kc, L, J, rng)
    return IndependenceResult(stat, pvalue(stat, null), null, kx, ky)


def hsic_permutation_null(
    Kc: torch.Tensor,
    L: torch.Tensor,
    n_permutations: int,
    rng: np.random.Generator,
    *,
    batch: int = 4,
    method: str = "auto",
) -> np.ndarray:
    r"""``T_j = (1/N^2) sum_ab Kc_ab L_{pi_j(a) pi_j(b)}`` for random permutations ``pi_j``.

    The permutations come 256 at a time from :func:`kernelkit.stats._nulls.order_batches` (the
    draws of the MMD permutation test).  Two exact routes, ``method``:

    * ``"gather"``: each block of 256 is split over the worker threads of
      :func:`kernelkit.gram._tiling.run_parallel`, which take ``batch`` permutations at a time:
      the rows of ``L`` are gathered as ``L[pi_j]``, then their columns by ``pi_j``, and the
      ``batch`` statistics are one matrix-vector product with ``vec(Kc)``; ``O(N^2)`` memory
      traffic per permutation.
    * ``"spectral"``: with the eigendecompositions :math:`K_c = \sum_k \mu_k a_k a_k^T` and
      :math:`L = \sum_l \nu_l b_l b_l^T` (:func:`kernelkit.solvers.symmetric_eigh`),

      .. math::
          T_j = \frac{1}{N^2} \sum_{k,l} \mu_k \nu_l \big(a_k^T b_l[\pi_j]\big)^2,

      one GEMM :math:`A^T [B[\pi_1], \dots, B[\pi_b]]` per block, ``O(N r_K r_L)`` flops per
      permutation.  Eigenpairs are dropped from the smallest ``|eigenvalue|`` up while their
      summed ``|eigenvalue|`` stays under ``1e-14`` of the trace norm (round-off of the Gram
      itself), so every :math:`T_j` moves by at most
      :math:`10^{-14} (\|K_c\|_* \|L\|_2 + \|K_c\|_2 \|L\|_*) / N^2`.

    ``"auto"`` takes ``"spectral"`` when it is cheaper, i.e. when there are at least ``N / 16``
    permutations (the two eigendecompositions pay off) and the kept ranks satisfy
    ``r_K r_L <= 32 N`` (smooth kernels: Gaussian Grams of low-dimensional data, linear and
    polynomial kernels); otherwise ``"gather"``.
    """
    if method not in ("auto", "gather", "spectral"):
        raise InputError(f"method: expected 'auto', 'gather' or 'spectral', got {method!r}")
    N = Kc.shape[0]
    Kc, L = Kc.to(torch.float64), L.to(torch.float64)
    if method == "gather" or (method == "auto" and 16 * n_permutations < N):
        return _gather_null(Kc, L, n_permutations, rng, batch)
    mu, A = _spectral_factor(Kc)
    nu, B = _spectral_factor(L)
    if method == "auto" and A.shape[1] * B.shape[1] > 32 * N:
        return _gather_null(Kc, L, n_permutations, rng, batch)
    At, rl = A.T.contiguous(), B.shape[1]
    weights = mu[:, None, None] * nu[None, None, :] / N**2
    step = max(1, min(256, (1 << 22) // max(1, N * rl)))  # a 32 MB block of B[pi]
    out = torch.empty(n_permutations, dtype=torch.float64)
    done = 0
    for orders in order_batches(N, n_permutations, rng, batch=256):
        idx_all = torch.as_tensor(orders, device=L.device)
        for s in range(0, len(orders), step):
            idx = idx_all[s : s + step]
            b = idx.shape[0]
            G = (At @ B[idx.T].reshape(N, b * rl)).view(-1, b, rl)
            out[done + s : done + s + b] = (G * G * weights).sum((0, 2))
        done += len(orders)
    return out.cpu().numpy()


def _spectral_factor(M: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Eigenpairs of symmetric ``M`` whose dropped ``|eigenvalues|`` sum to at most ``1e-14``
    of its trace norm (see :func:`hsic_permutation_null`)."""
    eig = symmetric_eigh(M, signs=False, name="Gram")
    order = torch.argsort(eig.values.abs())
    mass = torch.cumsum(eig.values.abs()[order], 0)
    keep = order[int((mass <= 1e-14 * mass[-1]).sum()) :]
    return eig.values[keep], eig.vectors[:, keep]


def _gather_null(
    Kc: torch.Tensor, L: torch.Tensor, n_permutations: int, rng: np.random.Generator, batch: int
) -> np.ndarray:
    """The ``"gather"`` route of :func:`hsic_permutation_null` (float64 ``Kc`` and ``L``)."""
    N = Kc.shape[0]
    kv = Kc.reshape(-1)
    out = torch.empty(n_permutations, dtype=torch.float64)
    done = 0
    for orders in order_batches(N, n_permutations, rng, batch=256):
        idx_all = torch.as_tensor(orders, device=L.device)
        workers = n_workers(-(-len(orders) // batch))
        bounds = np.linspace(0, len(orders), workers + 1).astype(int)

        def work(chunk: tuple[int, int], idx_all: torch.Tensor = idx_all, off: int = done) -> None:
            rows = torch.empty(batch * N, N, dtype=L.dtype, device=L.device)
            cols = torch.empty(batch, N, N, dtype=L.dtype, device=L.device)
            for s in range(chunk[0], chunk[1], batch):
                idx = idx_all[s : min(s + batch, chunk[1])]
                b = idx.shape[0]
                r = torch.index_select(L, 0, idx.reshape(-1), out=rows[: b * N]).view(b, N, N)
                p = torch.gather(r, 2, idx[:, None, :].expand(-1, N, -1), out=cols[:b])
                out[off + s : off + s + b] = (p.view(b, -1) @ kv) / N**2

        chunks = [(int(a), int(b)) for a, b in itertools.pairwise(bounds)]
        run_parallel(work, chunks, parallel=True)
        done += len(orders)
    return out.cpu().numpy()
