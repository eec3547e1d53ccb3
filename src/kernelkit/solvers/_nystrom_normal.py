r"""Nyström kernel ridge regression from its normal equations, formed in one pass over the data.

With ``m`` centres, ``K_nm = [k(x_i, c_j)]``, weights ``W = diag(w)`` and targets ``Y``, the
Nyström estimator ``f(x) = sum_j alpha_j k(x, c_j)`` of the course's weighted ridge objective
(part 1, sections 3.1-3.2; restricted to the span of the centres, part 3, section 5 "Nyström")

.. math:: \min_\alpha \frac1n \sum_i w_i \|y_i - f(x_i)\|^2 + \lambda \alpha^T K_{mm} \alpha

solves the ``m x m`` normal equations

.. math:: \Big(\frac{H}{n} + \lambda (K_{mm} + \tau I)\Big) \alpha = \frac{r}{n}, \qquad
          H = \sum_b K_b^T W_b K_b, \quad r = \sum_b K_b^T W_b Y_b,

(Williams and Seeger, "Using the Nyström method to speed up kernel machines", NIPS 2001;
Rudi, Camoriano and Rosasco, "Less is more: Nyström computational regularization", NIPS 2015,
section 2), the sums running over row tiles ``K_b = K(X_b, C)``: ``H`` and ``r`` need one
pass over the data and never ``K_nm`` whole (:mod:`kernelkit.gram._streaming`).  ``tau I`` is
the one regularisation of ``K_mm`` shared with Falkon's PCG
(:func:`~kernelkit.solvers._nystrom_pcg.centre_jitter`), so both solvers minimise the same
objective; the system is factorised by :func:`~kernelkit.solvers.cholesky_factor` (its jitter
ladder on top when the sum is still not numerically positive definite).

Cost: one kernel pass (``n m`` entries) plus ``n m^2`` flops for the rank-``b`` updates of
``H`` (:func:`syrk_`; ``2 n m^2`` with the feature map below) plus ``m^3 / 3`` for the
factorisation, against ``t`` kernel passes for
``t`` CG iterations.  ``H``, ``r`` and ``K_mm`` (:class:`NystromStatistics`) are sufficient for
every ``lam``: a ``lam`` path costs one ``m^3 / 3`` factorisation per value and no pass.

Accuracy: formed with ``K_b`` itself, the system is the square of ``K_nm``'s conditioning
and ``H``'s rounding (``eps ||H||``, first order) swamps ``lam (K_mm + tau s I)`` in the
directions where ``K_mm`` is small: measured (n = 8000, d = 3, Gaussian(2), m = 200,
``lam = 1e-4``, noise-free target) an objective 7e-4 above PCG's.  So the solvers form it in
the coordinates ``beta = L^T alpha`` of the Nyström features ``Phi_b = K_b L^{-T}``
(``L L^T = K_mm + tau s I``, Falkon's ``T`` factor; ``basis`` of :class:`NystromStatistics`):
``(Phi^T W Phi / n + lam I) beta = Phi^T W Y / n``, the system scikit-learn's
``Nystroem + Ridge`` solves, whose conditioning is ``||Phi^T W Phi / n|| / lam`` (bounded by
``max k(x, x) / lam``) instead of its square: the same objective as PCG to round-off
(tests/solvers/test_nystrom_normal.py).  The price is a triangular solve per tile
(``n m^2`` flops more, at half the GEMM rate: the tile costs 2-3x the unmapped one,
``docs/scale.md``).  ``H`` is accumulated in float64 whatever the tile dtype.

Where the square conditioning is harmless the tiles need no map: ``H`` accumulated from the
kernel rows in float64 and mapped once, ``L^{-1} H L^{-T}`` and ``L^{-1} r``
(:func:`to_features`, ``O(m^3)``), perturbs the feature system by at most about
``eps_64 ||H|| / lambda_min(P)`` (``P = K_mm + tau s I``), a relative error of the solution
of at most :func:`unmapped_error_bound` ``= eps_64 kappa(P) s / lam`` (``||Phi^T W Phi / n||
<= s``, the kernel's scale).  The one-pass ridge solver takes that form when the bound is
below its tolerance (:func:`kernelkit.models._falkon.nystrom_statistics`); measured 1.5·10^3
to 2·10^6 times below the bound (benchmarks/screen_unmapped.py; tested within a tenth of it,
tests/solvers/test_nystrom_normal.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from scipy.linalg import blas, lapack

from kernelkit.solvers._cholesky import CholeskyFactor, cholesky_factor, solve_triangular
from kernelkit.utils._errors import InputError


def syrk_(C: torch.Tensor, A: torch.Tensor) -> torch.Tensor:
    r"""``C <- C + A^T A`` on (at least) the upper triangle of ``C``, in float64.

    On the CPU (float64 or float32 rows, float64 ``C``): NumPy's ``A^T A``, which calls the
    symmetric rank-``b`` update of BLAS (``dsyrk`` / ``ssyrk``, half the flops of the general
    product; float32 rows: products rounded in float32, the ``fast`` tiles of
    :func:`kernelkit.gram._tiles.nystrom_normal_tile`) and releases the GIL, so that the
    worker threads of a pass update their accumulators at the same time (SciPy's BLAS
    wrappers hold the GIL: two threads' ``dsyrk`` calls ran one after the other,
    ``docs/scale.md``, "Cost model"), added to ``C``.  ``C.addmm_(A^T, A)`` elsewhere (GPU,
    other dtypes: the whole matrix).  Read the result through :func:`symmetric_from_upper`.

    Parameters
    ----------
    C : torch.Tensor, shape (m, m)
        Float64 accumulator (updated in place).
    A : torch.Tensor, shape (b, m)
        Rows to add.

    Returns
    -------
    torch.Tensor
        ``C``.
    """
    if A.ndim != 2 or C.shape != (A.shape[1], A.shape[1]):
        raise InputError(
            f"A: expected shape (b, {C.shape[0]}) to update C of shape {tuple(C.shape)}, "
            f"got {tuple(A.shape)}"
        )
    cpu = C.device.type == A.device.type == "cpu" and C.dtype == torch.float64
    if not (cpu and A.dtype in (torch.float64, torch.float32)):
        A = A.to(C.dtype)
        return C.addmm_(A.mT, A)
    a = A.numpy()
    return C.add_(torch.from_numpy(a.T @ a))


def features_(K: torch.Tensor, L: torch.Tensor) -> torch.Tensor:
    r"""The Nyström features ``Phi = K L^{-T}`` of a block ``K`` (``L`` lower triangular).

    ``Phi^T = L^{-1} K^T`` by the triangular solve of BLAS (``dtrsm`` / ``strsm``, backward
    stable, ``b m^2`` flops) for C-contiguous float64 or float32 tensors on the CPU,
    overwriting ``K`` (read ``Phi`` from the result); ``torch.linalg.solve_triangular``
    elsewhere.  SciPy's BLAS rather than torch's MKL: as fast or faster on the benchmark
    machine's AMD CPU (``docs/scale.md``, "The README table").

    Parameters
    ----------
    K : torch.Tensor, shape (b, m)
        Kernel rows (overwritten on the BLAS path).
    L : torch.Tensor, shape (m, m)
        Lower factor of ``K_mm + jitter I`` (cast to ``K``'s dtype).

    Returns
    -------
    torch.Tensor
        ``Phi``, shape ``(b, m)``, C-contiguous, dtype of ``K``.
    """
    if K.ndim != 2 or L.shape != (K.shape[1], K.shape[1]):
        raise InputError(
            f"L: expected shape ({K.shape[1]}, {K.shape[1]}) for K of shape "
            f"{tuple(K.shape)}, got {tuple(L.shape)}"
        )
    blas_ok = K.device.type == L.device.type == "cpu" and K.dtype in (
        torch.float64,
        torch.float32,
    )
    if not blas_ok or not K.is_contiguous():
        return solve_triangular(L.to(K).mT, K, upper=True, left=False)
    # K (b, m) C-order is K^T (m, b) in Fortran order: solve L X = K^T in place, X = Phi^T
    trsm = blas.dtrsm if K.dtype == torch.float64 else blas.strsm
    Ln = L.to(K.dtype).numpy()
    out = trsm(1.0, Ln, K.numpy().T, side=0, lower=1, overwrite_b=1)
    if out.ctypes.data != K.data_ptr():  # BLAS returned a copy: write it back
        K.copy_(torch.from_numpy(out.T))
    return K


def symmetric_from_upper(C: torch.Tensor) -> torch.Tensor:
    """The symmetric matrix whose upper triangle is that of ``C`` (batched)."""
    upper = C.triu()
    return upper + upper.triu(1).mT


def unmapped_error_bound(P: torch.Tensor, L: torch.Tensor, lam: float) -> float:
    r"""Bound on the relative error of the ridge solution from unmapped statistics.

    .. math:: \epsilon_{64} \, \kappa_1(P) \, s / \lambda, \qquad
              s = \operatorname{mean} \operatorname{diag} P,

    ``kappa_1`` the 1-norm condition number of ``P = K_mm + tau s I`` estimated from its
    Cholesky factor by LAPACK's ``dpocon`` (``O(m^2)``; on the host).  ``H`` rounded in float64
    (``eps_64 ||H||``) is, in the feature coordinates, a perturbation of at most
    ``eps_64 ||H|| / lambda_min(P) <= eps_64 kappa(P) s`` of ``Phi^T W Phi / n``, against the
    smallest eigenvalue ``lam`` of the feature system (module docstring, "Accuracy").

    Parameters
    ----------
    P : torch.Tensor, shape (m, m)
        ``K_mm + jitter I``.
    L : torch.Tensor, shape (m, m)
        Its lower Cholesky factor.
    lam : float
        The regularisation, ``lam > 0``.

    Returns
    -------
    float
        The bound (``inf`` when ``P`` is numerically singular).
    """
    if not float(lam) > 0:
        raise InputError(f"lam: expected lam > 0, got {lam!r}")
    Pn = P.detach().to(device="cpu", dtype=torch.float64).numpy()
    Ln = np.asfortranarray(L.detach().to(device="cpu", dtype=torch.float64).numpy())
    rcond, info = lapack.dpocon(Ln, float(np.abs(Pn).sum(0).max()), uplo="L")
    if info != 0 or not rcond > 0:
        return float("inf")
    scale = float(np.mean(np.diag(Pn)))
    return float(np.finfo(np.float64).eps / rcond * scale / float(lam))


def to_features(
    H: torch.Tensor, r: torch.Tensor, L: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Unmapped statistics in the feature coordinates: ``L^{-1} H L^{-T}`` and ``L^{-1} r``.

    ``H`` of shape ``(g, m, m)`` (symmetric), ``r`` of shape ``(m, c)``, ``L`` lower
    triangular; two triangular solves per ``H`` (``2 m^3`` flops), the result symmetrised.
    """
    L = L.to(H)
    HL = solve_triangular(L, solve_triangular(L, H).mT)  # L^{-1} (L^{-1} H)^T = L^{-1} H L^{-T}
    return (HL + HL.mT) / 2, solve_triangular(L, r.to(H))


@dataclass(frozen=True)
class NystromStatistics:
    r"""The sufficient statistics of Nyström ridge regression (module docstring).

    Attributes
    ----------
    H : torch.Tensor, shape (g, m, m)
        ``sum_b K_b^T W_b K_b`` (float64), one matrix per weight column (``g = 1`` for one
        weighting shared by every output).
    r : torch.Tensor, shape (m, c)
        ``sum_b K_b^T W_b Y_b`` (float64); ``c`` a multiple of ``g`` (column ``j`` belongs to
        ``H[j // (c / g)]``).
    K_mm : torch.Tensor, shape (m, m)
        The centres' Gram (float64).
    jitter : float
        ``tau s`` of :func:`~kernelkit.solvers._nystrom_pcg.centre_jitter`: the penalty is
        ``lam (K_mm + jitter I)``.
    n : int
        Number of training points (the ``1/n`` of the objective).
    basis : torch.Tensor, optional
        Lower factor ``L`` with ``L L^T = K_mm + jitter I``: ``H`` and ``r`` are then in the
        coordinates ``beta = L^T alpha`` of the Nyström features ``Phi = K_nm L^{-T}``
        (``H = Phi^T W Phi``, ``r = Phi^T W Y``; scikit-learn's ``Nystroem`` features), where
        the penalty is ``lam ||beta||^2`` (module docstring, "Accuracy").
    unmapped : bool
        Whether ``H`` and ``r`` were summed in the centres' coordinates and mapped to the
        features once at the end (:func:`to_features`), rather than tile by tile.
    """

    H: torch.Tensor
    r: torch.Tensor
    K_mm: torch.Tensor
    jitter: float
    n: int
    basis: torch.Tensor | None = None
    unmapped: bool = False

    def __post_init__(self) -> None:
        g, m, m2 = self.H.shape
        if m != m2 or self.K_mm.shape != (m, m) or self.r.ndim != 2 or self.r.shape[0] != m:
            raise InputError(
                f"H, r, K_mm: expected shapes (g, m, m), (m, c), (m, m), got "
                f"{tuple(self.H.shape)}, {tuple(self.r.shape)}, {tuple(self.K_mm.shape)}"
            )
        if self.r.shape[1] % g:
            raise InputError(f"r: expected a multiple of {g} columns, got {self.r.shape[1]}")

    @property
    def m(self) -> int:
        """Number of centres."""
        return int(self.K_mm.shape[0])

    def penalty(self) -> torch.Tensor:
        """The matrix of the penalty in the coordinates of ``H``: ``K_mm + jitter I``, or ``I``
        in the feature coordinates of ``basis``."""
        eye = torch.eye(self.m, dtype=self.K_mm.dtype, device=self.K_mm.device)
        return eye if self.basis is not None else self.K_mm + self.jitter * eye

    def system(self, lam: float) -> torch.Tensor:
        """``H / n + lam P`` (``P``: :meth:`penalty`), shape ``(g, m, m)``."""
        return self.H / self.n + float(lam) * self.penalty()

    def to_centres(self, beta: torch.Tensor) -> torch.Tensor:
        """``alpha = L^{-T} beta`` (the identity without ``basis``)."""
        if self.basis is None:
            return beta
        return solve_triangular(self.basis.mT, beta, upper=True)


@dataclass(frozen=True)
class NystromNormalResult:
    """Result of :func:`nystrom_normal_solve`.

    Attributes
    ----------
    coef : torch.Tensor, shape (m, c)
        ``alpha`` (float64), the coefficients of ``k(., c_j)``.
    solution : torch.Tensor, shape (m, c)
        The solution in the coordinates of ``H`` (``beta = L^T alpha`` with ``basis``).
    factor : CholeskyFactor
        Cholesky factors of ``H / n + lam (K_mm + jitter I)`` (batch of ``g``), reusable for
        other right-hand sides.
    statistics : NystromStatistics
        ``H``, ``r``, ``K_mm`` (reusable for other ``lam``).
    lam : float
        The regularisation solved for.
    """

    coef: torch.Tensor
    solution: torch.Tensor
    factor: CholeskyFactor
    statistics: NystromStatistics
    lam: float


def nystrom_normal_solve(
    stats: NystromStatistics, lam: float, *, rhs: torch.Tensor | None = None
) -> NystromNormalResult:
    r"""Solve ``(H / n + lam P) x = rhs`` by Cholesky; ``alpha = x``, or ``L^{-T} x`` with a basis.

    Parameters
    ----------
    stats : NystromStatistics
        ``H``, ``r``, ``K_mm``, the jitter and ``n``.
    lam : float
        ``lam > 0`` (``lam = 0`` is allowed when ``H`` is positive definite).
    rhs : torch.Tensor, optional
        Right-hand side of shape ``(m, c)`` in the coordinates of ``H`` (default ``r / n``;
        a Newton step passes the negative gradient).

    Returns
    -------
    NystromNormalResult
    """
    lam = float(lam)
    if not lam >= 0 or lam == float("inf"):
        raise InputError(f"lam: expected a finite lam >= 0, got {lam!r}")
    b = stats.r / stats.n if rhs is None else rhs.to(torch.float64)
    g, m = stats.H.shape[0], stats.m
    if b.ndim != 2 or b.shape[0] != m or b.shape[1] % g:
        raise InputError(f"rhs: expected shape ({m}, a multiple of {g}), got {tuple(b.shape)}")
    factor = cholesky_factor(stats.system(lam), name="H / n + lam K_mm")
    q = b.shape[1] // g
    blocks = b.reshape(m, g, q).permute(1, 0, 2)  # (g, m, q)
    x = factor.solve(blocks).permute(1, 0, 2).reshape(m, g * q)
    return NystromNormalResult(stats.to_centres(x), x, factor, stats, lam)


__all__ = [
    "NystromNormalResult",
    "NystromStatistics",
    "features_",
    "nystrom_normal_solve",
    "symmetric_from_upper",
    "syrk_",
    "to_features",
    "unmapped_error_bound",
]
