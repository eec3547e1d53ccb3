r"""Multi-output GP regression by the intrinsic coregionalisation model (ICM), with missing entries.

The ``p`` outputs share one kernel ``k`` and a task covariance ``B`` (Bonilla, Chai and
Williams, "Multi-task Gaussian process prediction", NIPS 2007; Álvarez, Rosasco and Lawrence,
"Kernels for vector-valued functions: a review", 2012, section 4.2):

.. math:: \mathrm{Cov}[f_j(x), f_{j'}(x')] = B_{jj'}\, k(x, x'), \qquad
          B = W W^T + \mathrm{diag}(v),

``W`` of shape ``p x r`` (rank ``r``), ``v > 0``; observations ``y_{ij} = f_j(x_i) + eps``,
``eps ~ N(0, s2)``.  Only the observed entries ``(i, j)`` (``y_{ij}`` not NaN) enter: their
covariance is ``Sigma = (K[rows, rows] * B[tasks, tasks]) + s2 I`` (an elementwise product;
with every entry observed, a permutation of ``B (x) K``), and the posterior of
:mod:`kernelkit.models._gp` (Rasmussen and Williams 2006, Algorithm 2.1) runs on it: cost
``O(N^3)`` for ``N`` observed entries.  With ``B = I`` the tasks decouple and each column is
the GP fitted on its observed rows.  A constant mean per task is profiled out by generalised
least squares with the task indicators as design (:func:`kernelkit.models._gp.gp_fit`).
"""

from __future__ import annotations

import torch

from kernelkit.models._gp import GPFit, gp_fit
from kernelkit.solvers._cholesky import solve_triangular


def task_covariance(W: torch.Tensor, log_v: torch.Tensor) -> torch.Tensor:
    """``B = W W^T + diag(exp(log_v))``."""
    return W @ W.mT + torch.diag(torch.exp(log_v))


def observed_entries(Y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Row and task (column) indices of the entries of ``Y`` that are not NaN, row-major."""
    rows, tasks = torch.nonzero(~torch.isnan(Y), as_tuple=True)
    return rows, tasks


def icm_fit(
    K: torch.Tensor,
    B: torch.Tensor,
    Y: torch.Tensor,
    rows: torch.Tensor,
    tasks: torch.Tensor,
    noise: float | torch.Tensor,
    constant_mean: bool = False,
) -> GPFit:
    """The exact posterior on the observed entries (module formulas; differentiable in ``K``,
    ``B`` and ``noise``).  ``K`` includes the amplitude; ``fit.mean`` holds the ``p`` task
    means when ``constant_mean``."""
    Sigma = K[rows][:, rows] * B[tasks][:, tasks]
    design = None
    if constant_mean:
        design = torch.nn.functional.one_hot(tasks, B.shape[0]).to(K.dtype)
    return gp_fit(Sigma, Y[rows, tasks], noise, design)


def icm_predict(
    fit: GPFit,
    B: torch.Tensor,
    Ks: torch.Tensor,
    rows: torch.Tensor,
    tasks: torch.Tensor,
    prior_diag: torch.Tensor | None = None,
    prior_cov: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Posterior mean ``(m, p)`` of every task at test points (cross-Gram ``Ks``, ``m x n``,
    amplitude included) and its variances ``(m, p)`` or covariances ``(m, m, p)`` (each
    task's covariance over the test points)."""
    p = B.shape[0]
    beta = fit.mean if fit.mean is not None else torch.zeros(p, dtype=Ks.dtype)
    Kr = Ks[:, rows]
    means, spreads = [], []
    for j in range(p):
        C = Kr * B[j, tasks]
        means.append(C @ fit.coef + beta[j])
        if prior_diag is None and prior_cov is None:
            continue
        V = solve_triangular(fit.factor, C.mT, upper=False)
        if prior_cov is not None:
            spreads.append(B[j, j] * prior_cov - V.mT @ V)
        else:
            spreads.append((B[j, j] * prior_diag - (V * V).sum(0)).clamp_min(0.0))
    mean = torch.stack(means, 1)
    if not spreads:
        return mean, None
    return mean, torch.stack(spreads, -1)
