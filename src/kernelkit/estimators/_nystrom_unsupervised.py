r"""Kernel PCA and kernel k-means in the Nyström feature space (``solver="nystrom"``).

Both work on the Nyström features ``phi(x) = L^{-1} k_C(x)`` of ``m`` centres ``C``
(``L L^T = K_CC + delta I``, the library's one regularisation; course part 3, slide
"Nyström"), whose Gram ``Phi Phi^T = K_nC (K_CC + delta I)^{-1} K_Cn`` is the Nyström
approximation of ``K`` (exact with every point a centre, up to ``delta``).  Nothing ``n x n``
is formed; the ``n x m`` block is streamed in row tiles (:mod:`kernelkit.gram.streaming`) by
the engine of the Nyström ridge solvers (:func:`kernelkit.models.falkon.nystrom_system`,
:func:`~kernelkit.models.falkon.nystrom_statistics`,
:func:`~kernelkit.models.falkon.nystrom_predict`).

*Kernel PCA* (course part 1, section 4.2, on the approximated Gram): with the mean
``mu = Phi^T 1 / n`` the centred Gram ``K~_c = (Phi - 1 mu^T)(Phi - 1 mu^T)^T`` has the same
non-zero eigenvalues ``Delta_i`` as the ``m x m`` scatter

.. math:: S = \Phi^T \Phi - n\, \mu \mu^T = V \Delta V^T,

and the unit-norm principal functions give the codes ``z_i(x) = (phi(x) - mu)^T v_i``: so
the training projections ``sqrt(Delta_i) u_i`` are ``(Phi - 1 mu^T) v_i``.  ``Phi^T Phi`` and
``Phi^T 1`` are formed in ONE streamed pass (float64 accumulation).  Cost: one kernel pass,
``n m^2`` flops, ``O(m^3)``; memory ``O(n d + m^2)`` besides the ``n x p`` codes.

*Kernel k-means* (Dhillon, Guan and Kulis, KDD 2004, on the approximated Gram): Lloyd's
algorithm on the explicit features ``Phi`` (``n x m``, float64), seeded by the library's
k-means++ (:func:`kernelkit.gram.nystrom.kmeanspp_seeds`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from kernelkit.gram.nystrom import CentreChoice, kmeanspp_seeds, uniform_centres
from kernelkit.kernels import Kernel
from kernelkit.kernels.base import Batch
from kernelkit.models.falkon import (
    nystrom_predict,
    nystrom_ridge_onepass,
    nystrom_statistics,
    nystrom_system,
)
from kernelkit.solvers import fix_signs, solve_triangular, symmetric_eigh
from kernelkit.utils.errors import InputError
from kernelkit.utils.numerics import eps
from kernelkit.utils.seeding import check_random_state


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


def nystrom_kpca(
    kernel: Kernel, Xb: Batch, choice: CentreChoice, n_components: int, *, block_size: Any = None
) -> NystromKPCA:
    """Kernel PCA of the Nyström-approximated, centred Gram (module docstring)."""
    system = nystrom_system(
        kernel, Xb, choice.indices, centres=choice.centres, block_size=block_size
    )
    n = system.n
    ones = torch.ones(n, dtype=torch.float64)
    stats = nystrom_statistics(system, ones)
    H = stats.H.reshape(stats.H.shape[-2], stats.H.shape[-1])
    mu = stats.r.reshape(-1) / n
    S = H - n * torch.outer(mu, mu)
    eig = symmetric_eigh((S + S.mT) / 2, signs=False, name="S")
    values, V = eig.values.flip(0), eig.vectors.flip(1)
    k = min(int(n_components), values.shape[0])
    values, V = values[:k], V[:, :k]
    top = float(values[0]) if k else 0.0
    keep = values > max(n, 1) * eps(values.dtype) * max(top, 0.0)
    values, V = values[keep], V[:, keep]
    L = stats.basis
    coef = _lower_inverse_t(L, torch.cat([V, mu[:, None]], dim=1))
    offset = torch.cat([mu @ V, mu.new_zeros(1)])
    codes = NystromLinearMap(kernel, system.op.centres, coef, offset)
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
    (:func:`kernelkit.models.falkon.nystrom_ridge_onepass`) with the codes of the KPCA
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


@dataclass(frozen=True)
class NystromKMeans:
    """Fitted Nyström kernel k-means.

    Attributes
    ----------
    labels : ndarray of int, shape (n,)
    inertia : float
        Sum of squared feature-space distances to the assigned centres.
    iterations : int
        Lloyd iterations of the kept run.
    scores : NystromLinearMap
        ``x -> -2 phi(x)^T c_l + ||c_l||^2`` (argmin: the nearest centre).
    centre_norms : torch.Tensor, shape (k,)
        ``||c_l||^2``.
    """

    labels: np.ndarray
    inertia: float
    iterations: int
    scores: NystromLinearMap
    centre_norms: torch.Tensor


def _lloyd(Phi: torch.Tensor, sq: torch.Tensor, start: np.ndarray, max_iter: int) -> tuple:
    """Lloyd iterations on the rows of ``Phi`` from the rows ``start``; returns labels,
    centres, inertia and iterations (the means by ``index_add_``, one read of ``Phi``)."""

    k = len(start)
    C = Phi[torch.as_tensor(start)]
    labels = None
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 - reported to the caller
        D = sq[:, None] - 2 * Phi @ C.mT + (C * C).sum(1)[None, :]
        new = fill_empty_clusters(D.argmin(1), D, k)
        if labels is not None and bool((new == labels).all()):
            break
        labels = new
        sums = Phi.new_zeros(k, Phi.shape[1]).index_add_(0, labels, Phi)
        C = sums / torch.bincount(labels, minlength=k).to(Phi.dtype)[:, None]
    D = sq[:, None] - 2 * Phi @ C.mT + (C * C).sum(1)[None, :]
    inertia = float(D.gather(1, labels[:, None]).clamp_min(0).sum())
    return labels, C, inertia, it


def fill_empty_clusters(labels: torch.Tensor, D: torch.Tensor, k: int) -> torch.Tensor:
    """Give each empty cluster the point farthest from its current centre (scikit-learn's
    relocation rule), taking points from clusters of two or more."""
    counts = torch.bincount(labels, minlength=k)
    if bool((counts > 0).all()):
        return labels
    labels = labels.clone()
    far = D.gather(1, labels[:, None])[:, 0].argsort(descending=True).tolist()
    for empty in torch.nonzero(counts == 0).flatten().tolist():
        for i in far:
            if counts[labels[i]] > 1:
                counts[labels[i]] -= 1
                labels[i] = empty
                counts[empty] = 1
                far.remove(i)
                break
    return labels


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
    k-means++ starts, the run of least inertia kept; or one run from the training points
    ``init``."""
    system = nystrom_system(kernel, Xb, choice.indices, centres=choice.centres)
    L = system.factor.L
    m = L.shape[0]
    Phi = system.op.matmat(_lower_inverse_t(L, torch.eye(m, dtype=torch.float64)))
    sq = (Phi * Phi).sum(1)
    rng = check_random_state(random_state)
    trials = 2 + int(math.log(n_clusters))
    best = None
    for _ in range(1 if init is not None else n_init):
        start = init
        if start is None:
            start = kmeanspp_seeds(sq, lambda i: Phi @ Phi[i].mT, n_clusters, rng, trials=trials)
        run = _lloyd(Phi, sq, start, max_iter)
        if best is None or run[2] < best[2]:
            best = run
    labels, C, inertia, iterations = best  # type: ignore[misc]
    norms = (C * C).sum(1)
    scores = NystromLinearMap(kernel, system.op.centres, -2 * _lower_inverse_t(L, C.mT), -norms)
    return NystromKMeans(labels.cpu().numpy(), inertia, iterations, scores, norms)


__all__ = [
    "NystromKMeans",
    "NystromKPCA",
    "NystromLinearMap",
    "PreImageMap",
    "fill_empty_clusters",
    "nystrom_kmeans",
    "nystrom_kpca",
    "pre_image_map",
    "signed_eigenvectors",
]
