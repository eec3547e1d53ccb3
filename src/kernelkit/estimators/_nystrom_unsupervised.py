r"""Kernel PCA and kernel k-means in the Nyström feature space (``solver="nystrom"``).

Both work on the Nyström features ``phi(x) = L^{-1} k_C(x)`` of ``m`` centres ``C``
(``L L^T = K_CC + delta I``, the library's one regularisation; course part 3, slide
"Nyström"), whose Gram ``Phi Phi^T = K_nC (K_CC + delta I)^{-1} K_Cn`` is the Nyström
approximation of ``K`` (exact with every point a centre, up to ``delta``).  Nothing ``n x n``
is formed; the ``n x m`` block is streamed in row tiles (:mod:`kernelkit.gram._streaming`) by
the engine of the Nyström ridge solvers (:func:`kernelkit.models._falkon.nystrom_system`,
:meth:`~kernelkit.gram.NystromOperator.normal_equations`,
:func:`~kernelkit.models._falkon.nystrom_predict`).

*Kernel PCA* (course part 1, section 4.2, on the approximated Gram): with the mean
``mu = Phi^T 1 / n`` the centred Gram ``K~_c = (Phi - 1 mu^T)(Phi - 1 mu^T)^T`` has the same
non-zero eigenvalues ``Delta_i`` as the ``m x m`` scatter

.. math:: S = \Phi^T \Phi - n\, \mu \mu^T = V \Delta V^T,

and the unit-norm principal functions give the codes ``z_i(x) = (phi(x) - mu)^T v_i``: so
the training projections ``sqrt(Delta_i) u_i`` are ``(Phi - 1 mu^T) v_i``.  ``Phi^T Phi`` and
``Phi^T 1`` are formed in ONE streamed pass, each tile mapped to its features
``Phi_b = K_b L^{-T}`` (a triangular solve) and added by a symmetric rank-``b`` update,
summed in float64 (float32 data: the tile products in float32, half the time); the top ``p``
pairs of ``S`` come from a subset ``eigh``; the codes are one more pass (a GEMM with the
``m x (p + 1)`` matrix ``L^{-T} [V, mu]``).  Cost: two kernel passes, ``2 n m^2`` flops (the
solve and the update), ``O(m^3)``; memory ``O(n d + m^2)`` besides the ``n x p`` codes.

*Kernel k-means* (Dhillon, Guan and Kulis, KDD 2004, on the approximated Gram): Lloyd's
algorithm in the Nyström feature space, seeded by the library's k-means++
(:func:`kernelkit.solvers._kmeans.kmeanspp_seeds`).  The features are never held whole
(``n x m`` float64 is 16 GB at ``n = 10^6``, ``m = 2000``, and re-streaming them costs a kernel
pass per Lloyd iteration): the pass of the kernel PCA above gives ``S = V Delta V^T`` and
Lloyd runs on the codes ``Z_r = (Phi - 1 mu^T) V_r`` of the top ``r`` principal directions.
The k-means cost of any partition ``P`` splits over the orthogonal directions,
``cost(P) = cost_r(P) + cost_perp(P)`` with ``0 <= cost_perp(P) <= sum_{j > r} Delta_j`` (the
one-cluster cost of the discarded part), and the optimal cost is at least
``sum_{j >= k} Delta_j`` (``k`` centres span an affine subspace of dimension ``k - 1``;
Eckart-Young).  So with ``r`` the smallest rank whose tail is at most
``KMEANS_TAIL * sum_{j >= k} Delta_j`` every partition's reduced cost is within that
fraction of the optimum, and the minimiser of the reduced cost is a
``(1 + KMEANS_TAIL)``-approximate minimiser of the full one (the projection-cost
preserving sketch of Cohen, Elder, Musco, Musco and Persu, "Dimensionality reduction for
k-means clustering and low rank approximation", STOC 2015).  ``r`` is raised to as many
directions as ``KMEANS_FEATURE_BYTES`` of float64 codes hold (all of them, hence Lloyd on
the exact Nyström features up to a rotation, whenever they fit).  After Lloyd, one more
pass gives the clusters' feature sums ``Phi^T A`` (``A`` the assignment): the centres,
the inertia ``tr(Phi^T Phi) - sum_l ||s_l||^2 / n_l`` and ``predict`` are those of the full
Nyström features.  Cost: three kernel passes, ``2 n m^2`` flops, ``O(m^3)`` and
``n r k`` flops per Lloyd iteration; memory ``O(n (d + r) + m^2)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from kernelkit.gram._centres import uniform_centres
from kernelkit.gram._nystrom import CentreChoice
from kernelkit.gram._streaming import NystromOperator
from kernelkit.kernels import Kernel
from kernelkit.kernels._base import Batch
from kernelkit.models._falkon import (
    NystromSystem,
    nystrom_predict,
    nystrom_ridge_onepass,
    nystrom_system,
)
from kernelkit.solvers import top_eigenpairs
from kernelkit.solvers._cholesky import solve_triangular
from kernelkit.solvers._eigen import fix_signs
from kernelkit.solvers._kmeans import FeatureClusters, kmeanspp_seeds, lloyd
from kernelkit.solvers._spectra import symmetric_eigvalsh
from kernelkit.utils._errors import InputError
from kernelkit.utils._numerics import eps
from kernelkit.utils._seeding import check_random_state


@dataclass(frozen=True)
class NystromLinearMap:
    """``x -> k_C(x)^T coef - offset``, streamed in row tiles (codes, cluster scores).

    Attributes
    ----------
    kernel : Kernel
        The kernel.
    centres : batch
        The centres ``C``.
    coef : torch.Tensor, shape (m, p)
        ``L^{-T} W`` for the feature-space directions ``W``.
    offset : torch.Tensor, shape (p,)
        Subtracted from every row.
    """

    kernel: Kernel
    centres: Batch
    coef: torch.Tensor
    offset: torch.Tensor

    def __call__(self, Xb: Batch) -> torch.Tensor:
        """The ``(n, p)`` values for the prepared points ``Xb`` (float64)."""
        return nystrom_predict(self.kernel, Xb, self.centres, self.coef) - self.offset


@dataclass(frozen=True)
class NystromKPCA:
    """Fitted Nyström kernel PCA.

    Attributes
    ----------
    eigenvalues : torch.Tensor, shape (p,)
        ``Delta_i``, descending.
    codes : NystromLinearMap
        ``z(x)``, columns ``(phi(x) - mu)^T v_i``, and a last column ``phi(x)^T mu``.
    mean_norm : float
        ``||mu||^2``.
    """

    eigenvalues: torch.Tensor
    codes: NystromLinearMap
    mean_norm: float


def _lower_inverse_t(L: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    """``L^{-T} W`` (``L`` lower triangular)."""
    return solve_triangular(L.mT, W, upper=True)


@dataclass(frozen=True)
class CentredScatter:
    """The one-pass statistics of the Nyström features ``Phi = K_nC L^{-T}``.

    Attributes
    ----------
    system : NystromSystem
        The streamed ``K_nC`` and the factor ``L``.
    S : torch.Tensor, shape (m, m)
        ``Phi^T Phi - n mu mu^T`` (float64).
    mean : torch.Tensor, shape (m,)
        ``mu = Phi^T 1 / n``.
    trace : float
        ``tr(Phi^T Phi) = sum_i ||phi(x_i)||^2``.
    """

    system: NystromSystem
    S: torch.Tensor
    mean: torch.Tensor
    trace: float

    @property
    def L(self) -> torch.Tensor:
        """The lower factor ``L`` of ``K_CC + delta I``."""
        return self.system.factor.L


def centred_scatter(
    kernel: Kernel, Xb: Batch, choice: CentreChoice, *, block_size: Any = None
) -> CentredScatter:
    """``Phi^T Phi`` and ``Phi^T 1`` in ONE streamed pass of the engine's normal-equations
    tiles (:meth:`kernelkit.gram.NystromOperator.normal_equations` with the basis
    ``L``: a triangular solve and a symmetric rank-``b`` update per tile, summed in float64;
    float32 data: the tile products in float32, its ``fast`` mode) and the centred scatter
    ``S`` (module docstring)."""
    system = nystrom_system(  # one pass here, one more by k-means: nothing to keep
        kernel, Xb, choice.indices, centres=choice.centres, block_size=block_size, memory_budget=0
    )
    n = system.n
    op = system.op
    if not isinstance(op, NystromOperator):  # the estimators refuse distributed input first
        raise InputError(f"X: expected in-process rows, got {type(op).__name__}")
    ones = torch.ones(n, 1, dtype=torch.float64, device=op.device)
    H, r, _ = op.normal_equations(ones, basis=system.factor.L, fast=True)
    H = H.reshape(H.shape[-2], H.shape[-1])
    mu = r.reshape(-1) / n
    S = H - n * torch.outer(mu, mu)
    return CentredScatter(system, (S + S.mT) / 2, mu, float(H.diagonal().sum()))


def _principal_codes(
    scatter: CentredScatter, V: torch.Tensor, *, extra: torch.Tensor | None = None
) -> NystromLinearMap:
    """``x -> (phi(x) - mu)^T V`` (and ``phi(x)^T extra`` as further columns)."""
    mu = scatter.mean
    W = V if extra is None else torch.cat([V, extra], dim=1)
    coef = _lower_inverse_t(scatter.L, W)
    offset = mu @ V
    if extra is not None:
        offset = torch.cat([offset, mu.new_zeros(extra.shape[1])])
    return NystromLinearMap(scatter.system.op.kernel, scatter.system.op.centres, coef, offset)


def _kept(values: torch.Tensor, n: int) -> torch.Tensor:
    """The eigenvalues (descending) above round-off: ``Delta_i > n eps Delta_1``."""
    top = float(values[0]) if len(values) else 0.0
    return values > max(n, 1) * eps(values.dtype) * max(top, 0.0)


def nystrom_kpca(
    kernel: Kernel, Xb: Batch, choice: CentreChoice, n_components: int, *, block_size: Any = None
) -> NystromKPCA:
    """Kernel PCA of the Nyström-approximated, centred Gram (module docstring): the top
    ``n_components`` eigenpairs of ``S`` by the subset ``eigh`` of
    :func:`kernelkit.solvers.top_eigenpairs` (only the wanted pairs)."""
    scatter = centred_scatter(kernel, Xb, choice, block_size=block_size)
    k = min(int(n_components), scatter.S.shape[0])
    eig = top_eigenpairs(scatter.S, k, method="subset")
    keep = _kept(eig.values, scatter.system.n)
    values, V = eig.values[keep], eig.vectors[:, keep]
    mu = scatter.mean
    codes = _principal_codes(scatter, V, extra=mu[:, None])
    return NystromKPCA(values, codes, float(mu @ mu))


def signed_eigenvectors(model: NystromKPCA, Z: torch.Tensor) -> tuple[NystromKPCA, torch.Tensor]:
    """The unit eigenvectors ``u_i = Z_i / sqrt(Delta_i)`` of the training codes ``Z`` with
    the solvers' sign rule (:func:`kernelkit.solvers.fix_signs`), the model's directions
    flipped to match."""
    u = Z / model.eigenvalues.sqrt()
    signs = torch.sign((fix_signs(u) * u).sum(0))
    signs[signs == 0] = 1.0
    full = torch.cat([signs, signs.new_ones(1)])
    codes = model.codes
    flipped = NystromLinearMap(codes.kernel, codes.centres, codes.coef * full, codes.offset * full)
    return NystromKPCA(model.eigenvalues, flipped, model.mean_norm), u * signs


@dataclass(frozen=True)
class PreImageMap:
    """``g(z) = sum_j coef_j k(z, c_j)``: the Nyström pre-image map of the codes.

    Attributes
    ----------
    kernel : Kernel
        The kernel on the codes (the estimator's, as the exact map).
    centres : torch.Tensor, shape (m, p)
        The codes of the centres.
    coef : torch.Tensor, shape (m, n_features)
        The ridge coefficients.
    """

    kernel: Kernel
    centres: torch.Tensor
    coef: torch.Tensor

    def __call__(self, Z: torch.Tensor) -> torch.Tensor:
        """Pre-images of the codes ``Z``, streamed in row tiles."""
        return nystrom_predict(self.kernel, Z.to(torch.float64), self.centres, self.coef)


def pre_image_map(
    kernel: Kernel, Z: torch.Tensor, X: torch.Tensor, choice: CentreChoice, lam: float
) -> PreImageMap:
    r"""The pre-image map of Bakır, Weston and Schölkopf (NIPS 2004) by Nyström ridge regression.

    The exact map is the kernel ridge regression ``beta = (k(Z, Z) + n lam I)^{-1} X`` from
    the training codes to the inputs; here it is the one-pass Nyström ridge solution
    (:func:`kernelkit.models._falkon.nystrom_ridge_onepass`) with the codes of the KPCA
    centres as centres (a uniform draw of as many when the centres were given as points),
    equal to the exact map with every point a centre.
    """
    if not float(lam) > 0:
        raise InputError(
            f"inverse_lam: expected inverse_lam > 0 with solver='nystrom' (the Nyström ridge "
            f"system is regularised by it), got {lam!r}"
        )
    n = Z.shape[0]
    index = choice.indices
    if index is None:
        index = uniform_centres(n, min(len(choice.centres), n), 0)
    Z64 = Z.to(torch.float64)
    system = nystrom_system(kernel, Z64, index, lam=float(lam))
    result = nystrom_ridge_onepass(system, torch.as_tensor(X).to(torch.float64), float(lam))
    return PreImageMap(kernel, system.op.centres, result.coef)


KMEANS_TAIL = 1e-3
"""``epsilon`` of the rank rule of :func:`nystrom_kmeans`: the discarded variance is at most this
fraction of the lower bound ``sum_{j >= k} Delta_j`` on the optimal cost (module docstring)."""

KMEANS_FEATURE_BYTES = 32 << 20
"""Bytes of float64 codes Lloyd may hold: up to this, every principal direction is kept."""


@dataclass(frozen=True)
class NystromKMeans:
    """Fitted Nyström kernel k-means.

    Attributes
    ----------
    labels : ndarray of int, shape (n,)
    inertia : float
        Sum of squared Nyström feature-space distances to the assigned centres.
    iterations : int
        Lloyd iterations of the kept run.
    scores : NystromLinearMap
        ``x -> -2 phi(x)^T c_l + ||c_l||^2`` (argmin: the nearest centre).
    centre_norms : torch.Tensor, shape (k,)
        ``||c_l||^2``.
    rank : int
        Principal directions ``r`` Lloyd ran in.
    """

    labels: np.ndarray
    inertia: float
    iterations: int
    scores: NystromLinearMap
    centre_norms: torch.Tensor
    rank: int


def _best_lloyd(
    Z: torch.Tensor,
    k: int,
    n_init: int,
    max_iter: int,
    random_state: Any,
    init: np.ndarray | None,
) -> tuple[torch.Tensor, int]:
    """Labels and iterations of the least-inertia Lloyd run on the rows of ``Z``: ``n_init``
    greedy k-means++ starts, or one from the rows ``init``."""
    clusters = FeatureClusters(Z, k)
    rng = check_random_state(random_state)
    trials = 2 + int(math.log(k))
    best = None
    for _ in range(1 if init is not None else n_init):
        start = init
        if start is None:
            start = kmeanspp_seeds(clusters.sq, lambda i: Z @ Z[i].mT, k, rng, trials=trials)
        run = lloyd(clusters, start, max_iter)
        if best is None or run[2] < best[2]:
            best = run
    labels, iterations, _ = best  # type: ignore[misc]
    return labels, iterations


def kmeans_rank(values: torch.Tensor, n: int, k: int) -> int:
    r"""The rank ``r`` of :func:`nystrom_kmeans` for the eigenvalues ``Delta`` (descending).

    The smallest ``r >= k`` with ``sum_{j > r} Delta_j <= KMEANS_TAIL sum_{j >= k} Delta_j``,
    raised to ``KMEANS_FEATURE_BYTES / (8 n)`` directions, at most the eigenvalues above
    round-off.
    """
    values = values[_kept(values, n)].clamp_min(0)
    tails = values.flip(0).cumsum(0).flip(0)  # tails[j] = sum_{i >= j} (0-based)
    bound = float(tails[k - 1]) if len(values) >= k else 0.0
    small = torch.nonzero(tails <= KMEANS_TAIL * bound).flatten()
    r = int(small[0]) if len(small) else len(values)
    budget = KMEANS_FEATURE_BYTES // (8 * max(n, 1))
    return max(1, min(len(values), max(r, k, budget)))


def nystrom_kmeans(
    kernel: Kernel,
    Xb: Batch,
    choice: CentreChoice,
    n_clusters: int,
    *,
    n_init: int = 10,
    max_iter: int = 300,
    random_state: Any = None,
    init: np.ndarray | None = None,
) -> NystromKMeans:
    """Kernel k-means on the Nyström features (module docstring): ``n_init`` greedy
    k-means++ starts in the codes of the top ``r`` principal directions
    (:func:`kmeans_rank`), the run of least inertia kept, or one run from the training points
    ``init``; the centres of the kept assignment in the full features by one more pass."""
    scatter = centred_scatter(kernel, Xb, choice)
    n = scatter.system.n
    values = symmetric_eigvalsh(scatter.S).flip(0)
    r = kmeans_rank(values, n, n_clusters)
    V = top_eigenpairs(scatter.S, r, method="subset").vectors
    labels, iterations = _best_lloyd(
        _principal_codes(scatter, V)(Xb), n_clusters, n_init, max_iter, random_state, init
    )
    device = scatter.system.device
    A = torch.zeros(n, n_clusters, dtype=torch.float64, device=device)
    A[torch.arange(n, device=device), labels.to(device)] = 1.0
    sums = solve_triangular(scatter.L, scatter.system.op.rmatmat(A))  # Phi^T A
    counts = A.sum(0)
    inertia = scatter.trace - float(((sums * sums).sum(0) / counts).sum())
    C = (sums / counts).mT
    norms = (C * C).sum(1)
    coef = -2 * _lower_inverse_t(scatter.L, C.mT)
    scores = NystromLinearMap(kernel, scatter.system.op.centres, coef, -norms)
    return NystromKMeans(labels.cpu().numpy(), max(inertia, 0.0), iterations, scores, norms, r)


__all__ = [
    "KMEANS_FEATURE_BYTES",
    "KMEANS_TAIL",
    "CentredScatter",
    "NystromKMeans",
    "NystromKPCA",
    "NystromLinearMap",
    "PreImageMap",
    "centred_scatter",
    "kmeans_rank",
    "nystrom_kmeans",
    "nystrom_kpca",
    "pre_image_map",
    "signed_eigenvectors",
]
