r"""The ``lam`` path of Nyström kernel ridge regression from its one-pass statistics.

The Nyström estimator solves ``(H + n lam I) beta = r`` in the coordinates of the features
``Phi = K_nm L^{-T}`` (``H = Phi^T Phi``, ``r = Phi^T y``:
:func:`~kernelkit.models._falkon.nystrom_statistics`, one pass; Rudi, Camoriano and Rosasco,
"Less is more: Nyström computational regularization", NIPS 2015).  With ``H = V diag(s) V^T``
(one ``m x m`` eigendecomposition) and ``mu = n lam``, every ``lam`` costs ``O(m^2)``:

.. math:: \beta = V \frac{V^T r}{s + \mu}, \qquad
          \operatorname{tr} S_\mu = \sum_j \frac{s_j}{s_j + \mu}, \qquad
          \|y - \Phi\beta\|^2 = y^T y - \sum_j (V^T r)_j^2 \frac{s_j + 2\mu}{(s_j + \mu)^2},

``S_mu = Phi (H + mu I)^{-1} Phi^T`` the hat matrix, so generalised cross-validation
(Golub, Heath and Wahba 1979; course part 1, section 3.1)
``GCV(lam) = n ||y - Phi beta||^2 / (n - tr S_mu)^2`` needs no further pass.  The
leave-one-out residuals ``(y_i - f_i) / (1 - (S_mu)_ii)`` need the leverages
``(S_mu)_ii = sum_j Z_ij^2 / (s_j + mu)`` of ``Z = Phi V``: ONE more streamed pass scores the
whole grid (``O(n m (m + g))`` for ``g`` values).  The centres are fixed: this is the LOO of
the Nyström model with its centres, the criterion Rudi et al. select ``lam`` by.

With sample weights ``w`` (mean 1, so ``sum w = n``: the estimators' convention) the same
formulas hold for ``W^{1/2} Phi`` and ``W^{1/2} y``: ``H = Phi^T W Phi``, ``r = Phi^T W y``,
``y^T W y``, the weighted GCV ``n ||W^{1/2}(y - Phi beta)||^2 / (n - tr S_mu)^2`` and the
weighted leave-one-out error ``sum_i w_i r_i^2 / sum_i w_i``, ``r_i = (y_i - f_i) / (1 - w_i
z_i^T (s + mu)^{-1} z_i)`` (a zero weight: the plain residual, which counts for nothing).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from kernelkit.gram._centres import take
from kernelkit.kernels import Kernel
from kernelkit.kernels._base import Batch
from kernelkit.models._falkon import NystromSystem, nystrom_statistics
from kernelkit.models._gp_nystrom import row_tiles
from kernelkit.solvers import symmetric_eigh
from kernelkit.solvers._cholesky import solve_triangular

__all__ = ["NystromPath", "nystrom_path"]


@dataclass(frozen=True)
class NystromPath:
    """Eigendecomposition of the one-pass statistics; see the module docstring.

    Attributes
    ----------
    values : torch.Tensor, shape (m,)
        Eigenvalues ``s`` of ``H`` (clipped at 0).
    vectors : torch.Tensor, shape (m, m)
        Orthonormal eigenvectors ``V``.
    proj : torch.Tensor, shape (m, c)
        ``V^T r``.
    yy : torch.Tensor, shape (c,)
        ``y_j^T W y_j`` per output column (``W = I`` unweighted).
    basis : torch.Tensor, shape (m, m)
        ``L`` (``L L^T = K_mm + tau I``).
    n : int
        Number of training points.
    """

    values: torch.Tensor
    vectors: torch.Tensor
    proj: torch.Tensor
    yy: torch.Tensor
    basis: torch.Tensor
    n: int

    def _inverse(self, lams: torch.Tensor) -> torch.Tensor:
        """``1 / (s + n lam)``, shape ``(m, g)``."""
        return 1.0 / (self.values[:, None] + self.n * lams[None, :])

    def gcv(self, lams: Sequence[float] | torch.Tensor) -> torch.Tensor:
        """GCV mean squared error per ``lam`` (mean over outputs; differentiable in a tensor)."""
        lams = torch.as_tensor(lams, dtype=self.values.dtype, device=self.values.device)
        lams = lams.reshape(-1)
        D = self._inverse(lams)
        mu = self.n * lams
        shrink = (self.values[:, None] + 2 * mu) * D * D  # (m, g)
        rss = self.yy[:, None] - (self.proj**2).mT @ shrink  # (c, g)
        dof = (self.values[:, None] * D).sum(0)
        return self.n * rss.clamp_min(0).mean(0) / (self.n - dof) ** 2

    def coef(self, lam: float) -> torch.Tensor:
        """``alpha = L^{-T} beta``: the coefficients of ``k(., c_j)``, shape ``(m, c)``."""
        d = self._inverse(self.values.new_tensor([float(lam)]))
        beta = self.vectors @ (self.proj * d)
        return solve_triangular(self.basis.mT, beta, upper=True)

    def loo(
        self,
        lams: Sequence[float],
        kernel: Kernel,
        Xb: Batch,
        centres: Batch,
        Y: torch.Tensor,
        *,
        sample_weight: torch.Tensor | None = None,
    ) -> np.ndarray:
        """Leave-one-out mean squared error per ``lam`` in one streamed pass over ``Xb``
        (weighted: ``sum_i w_i r_i^2 / sum_i w_i``, ``w`` of mean 1)."""
        lam_t = self.values.new_tensor(np.asarray(lams, dtype=np.float64).reshape(-1))
        D = self._inverse(lam_t)  # (m, g)
        W = solve_triangular(self.basis.mT, self.vectors, upper=True)  # Z_b = K_b W
        Yc = (Y[:, None] if Y.ndim == 1 else Y).to(self.values)
        coef = self.proj[:, :, None] * D[:, None, :]  # (m, c, g)
        w = None if sample_weight is None else sample_weight.to(self.values)
        total = torch.zeros_like(lam_t)
        for i, j in row_tiles(self.n, len(self.values)):
            rows = Xb[i:j] if isinstance(Xb, torch.Tensor) else take(Xb, np.arange(i, j))
            Z = kernel.block(rows, centres).to(self.values) @ W  # (b, m)
            lev = (Z * Z) @ D  # (b, g)
            if w is not None:
                lev = lev * w[i:j, None]
            fitted = torch.einsum("bm,mcg->bcg", Z, coef)
            resid = (Yc[i:j, :, None] - fitted) / (1 - lev)[:, None, :]
            sq = resid**2 if w is None else resid**2 * w[i:j, None, None]
            total += sq.sum((0, 1))
        return (total / (self.n * Yc.shape[1])).cpu().numpy()


def nystrom_path(
    system: NystromSystem, Y: torch.Tensor, *, sample_weight: torch.Tensor | None = None
) -> NystromPath:
    """One pass for ``H`` and ``r`` (:func:`~kernelkit.models._falkon.nystrom_statistics`;
    weighted with ``sample_weight`` of mean 1), one ``m x m`` eigendecomposition."""
    stats = nystrom_statistics(system, Y, sample_weight=sample_weight)
    eig = symmetric_eigh(stats.H[0], signs=False, name="H")
    Yc = (Y[:, None] if Y.ndim == 1 else Y).to(torch.float64)
    Yw = Yc if sample_weight is None else Yc * sample_weight.to(torch.float64)[:, None]
    return NystromPath(
        eig.values.clamp_min(0),
        eig.vectors,
        eig.vectors.mT @ stats.r,
        (Yc * Yw).sum(0).to(stats.r.device),
        stats.basis,
        stats.n,
    )
