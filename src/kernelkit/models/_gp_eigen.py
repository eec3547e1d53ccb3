r"""The exact GP log marginal likelihood in the amplitude and the noise from one eigendecomposition.

With the kernel fixed, ``K = U diag(s) U^T`` once (``O(n^3)``); the rotated targets
``r = U^T y`` then give, for every amplitude ``a`` and noise variance ``s2`` (Rasmussen and
Williams 2006, eq. 2.30, with ``K_y = U diag(a s + s2) U^T``)

.. math:: \log p(y \mid X) = -\frac12 \sum_i \frac{r_i^2}{a s_i + s_2}
          - \frac12 \sum_i \log(a s_i + s_2) - \frac n2 \log 2\pi,

``O(n)`` per evaluation (``O(n p)`` for ``p`` output columns sharing the hyper-parameters).
A constant mean ``beta`` is profiled out as in :func:`kernelkit.models._gp.gp_fit`: with
``u = U^T 1``, ``beta = (sum_i u_i r_i / d_i) / (sum_i u_i^2 / d_i)``, ``d = a s + s2``, and
``r`` is replaced by ``r - u beta``.  This is the path of
:class:`~kernelkit.estimators.GaussianProcessRegressor` when only the amplitude and the noise
are learned (e.g. a Tanimoto GP on fingerprints).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from kernelkit.solvers import symmetric_eigh
from kernelkit.solvers._dense import tridiagonal_rotation
from kernelkit.utils._threads import blas_threads

_TRIDIAGONAL_MIN_N = 1000
"""From this order on a CPU the rotation goes through the tridiagonal form
(:func:`~kernelkit.solvers._dense.tridiagonal_rotation`)."""


@dataclass(frozen=True)
class SpectralGP:
    """The rotated problem of a fixed kernel.

    Attributes
    ----------
    eigenvalues : torch.Tensor, shape (n,)
        Eigenvalues ``s`` of ``K`` (clipped at 0).
    rotated : torch.Tensor, shape (n,) or (n, p)
        ``U^T y``.
    rotated_ones : torch.Tensor or None, shape (n,)
        ``U^T 1`` when a constant mean is profiled out, else ``None``.
    """

    eigenvalues: torch.Tensor
    rotated: torch.Tensor
    rotated_ones: torch.Tensor | None


def spectral_gp(K: torch.Tensor, y: torch.Tensor, constant_mean: bool = False) -> SpectralGP:
    """Eigendecompose ``K`` (amplitude 1) and rotate ``y`` (and the constant) once: through
    the tridiagonal form (:func:`~kernelkit.solvers._dense.tridiagonal_rotation`) for a
    float64 CPU matrix of order :data:`_TRIDIAGONAL_MIN_N` or more,
    :func:`~kernelkit.solvers.symmetric_eigh` otherwise."""
    n = K.shape[0]
    ones = torch.ones(n, dtype=K.dtype, device=K.device)
    B = torch.cat([y.reshape(n, -1), ones[:, None]], 1).detach()
    out = None
    if K.device.type == "cpu" and K.dtype == torch.float64 and n >= _TRIDIAGONAL_MIN_N:
        with blas_threads(torch.get_num_threads()):
            out = tridiagonal_rotation(K.detach().numpy(), B.numpy())
    if out is None:
        eig = symmetric_eigh(K.detach(), signs=False, name="K")
        s, R = eig.values, eig.vectors.mT @ B
    else:
        s, R = torch.from_numpy(out[0]), torch.from_numpy(out[1])
    s, R = s.to(K), R.to(K)
    rotated = R[:, 0] if y.ndim == 1 else R[:, :-1]
    return SpectralGP(s.clamp_min(0.0), rotated, R[:, -1] if constant_mean else None)


def spectral_log_marginal_likelihood(
    problem: SpectralGP, amplitude: torch.Tensor | float, noise: torch.Tensor | float
) -> torch.Tensor:
    """``log p(y | X)`` at amplitude ``a`` and noise ``s2`` in ``O(n p)`` (module formula;
    differentiable in both)."""
    d = amplitude * problem.eigenvalues + noise
    r = problem.rotated
    dd = d if r.ndim == 1 else d[:, None]
    if problem.rotated_ones is not None:
        u = problem.rotated_ones if r.ndim == 1 else problem.rotated_ones[:, None]
        beta = (u * r / dd).sum(0) / (u * u / dd).sum(0)
        r = r - u * beta
    p = 1 if r.ndim == 1 else r.shape[1]
    n = d.shape[0]
    return (
        -0.5 * (r * r / dd).sum()
        - 0.5 * p * torch.log(d).sum()
        - 0.5 * n * p * math.log(2 * math.pi)
    )


def spectral_objective(
    K: torch.Tensor,
    y: torch.Tensor,
    start: dict[str, Any],
    learned: list[str],
    design: torch.Tensor | None = None,
) -> Callable[[torch.Tensor], torch.Tensor]:
    """``-log p(y | X)`` of the log of the ``learned`` among ``("amplitude", "noise")`` (the
    others at ``start``), from one eigendecomposition of ``K`` (amplitude 1); ``design``: a
    column of ones profiles out a constant mean."""
    problem = spectral_gp(K, y, constant_mean=design is not None)

    def objective(t: torch.Tensor) -> torch.Tensor:
        v = dict(zip(learned, torch.exp(t), strict=True))
        amp = v.get("amplitude", start["amplitude"])
        return -spectral_log_marginal_likelihood(problem, amp, v.get("noise", start["noise"]))

    return objective
