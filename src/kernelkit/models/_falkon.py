r"""Nyström kernel ridge regression by preconditioned CG (Falkon), and its ``lam`` path.

Rudi, Carratino and Rosasco, "FALKON: An Optimal Large Scale Kernel Method" (NeurIPS 2017),
Algorithm 1.  With ``m`` centres ``C`` chosen among the training points by the maps of
:mod:`kernelkit.gram._nystrom` (course part 3, section 5, slide "Nyström": uniform subset,
k-means++ or greedy pivoted Cholesky), the estimator ``f(x) = sum_j alpha_j k(x, c_j)``
minimises the course's objective (part 1, section 3.1; weighted: section 3.2)

.. math:: \frac1n \sum_i w_i (y_i - f(x_i))^2 + \lambda \|f\|_H^2
          \;\Longleftrightarrow\;
          \Big(\frac1n K_{nm}^T W K_{nm} + \lambda K_{mm}\Big) \alpha = \frac1n K_{nm}^T W y,

the same ``lam`` as the exact :class:`~kernelkit.KernelRidge` (with ``m = n`` the two
coincide).  The products with ``K_nm`` are streamed (:mod:`kernelkit.gram._streaming`), the
preconditioner and CG are :mod:`kernelkit.solvers.nystrom_pcg`.  Memory: ``O(n c + m^2)``,
plus the kept ``n x m`` block when it fits the memory budget (:func:`nystrom_system`); time:
``O(n m (d + c))`` per CG iteration streamed, ``O(n m c)`` (memory-bound) with the block kept,
plus ``O(m^3)`` once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import torch

from kernelkit.gram._centres import take
from kernelkit.gram._engine import gram_tensor, prepare_pair
from kernelkit.gram._nystrom import too_many_centres
from kernelkit.gram._streaming import (
    NystromOperator,
    StreamedProducts,
    keep_budget,
    kept_block_bytes,
)
from kernelkit.kernels._base import Batch, Kernel
from kernelkit.solvers._nystrom_normal import (
    NystromNormalResult,
    NystromStatistics,
    nystrom_normal_solve,
    to_features,
    unmapped_error_bound,
)
from kernelkit.solvers._nystrom_pcg import (
    CentreFactor,
    NystromPCGResult,
    centre_factor,
    centre_jitter,
    nystrom_pcg,
    nystrom_preconditioner,
)
from kernelkit.utils._config import deprecated_options, options
from kernelkit.utils._errors import InputError

NYSTROM_METHODS = ("onepass", "pcg")
"""The methods of the Nyström system of ridge and logistic regression (their
``nystrom_method``): the one-pass normal equations and Falkon's preconditioned CG."""

__getattr__ = deprecated_options(
    __name__,
    {
        name: name.lower()
        for name in (
            "CG_CENTRES_EXPONENT",
            "CG_LAM_EXPONENT",
            "CG_PASSES_PER_DIGIT",
            "CG_REFERENCE_LAM",
            "EIGH_FLOPS",
            "EXACT_FLOPS",
            "KEEP_FILL_FLOPS",
            "KEPT_ENTRY_FLOPS",
            "KERNEL_ENTRY_FLOPS",
            "ONEPASS_ENTRY_FLOPS",
            "ONEPASS_SHARED_ENTRY_FLOPS",
            "ONEPASS_SHARED_UPDATE_FLOPS",
            "ONEPASS_UPDATE_FLOPS",
            "UNMAPPED_PASS_FRACTION",
            "UNMAPPED_ROWS_PER_CENTRE",
        )
    },
)
"""The cost-model constants of the previous release, now options (``kernelkit.get_config``):
importable with a ``FutureWarning`` for one release."""


def cg_passes(
    m: int, *, tol: float = 1e-6, newton_steps: int = 1, lam: float | None = None
) -> float:
    r"""Modelled passes over ``K_nm`` of Falkon's PCG (ridge) or Newton-PCG (logistic):

    .. math:: t = \max\Big(a \log_{10}(1/\text{tol}) \big(\tfrac{m}{1000}\big)^{-\beta}
              \big(\tfrac{\lambda}{\lambda_0}\big)^{-\gamma},
              \; 2 \log_{10}(1/\text{tol})\Big) + s - 1,

    ``a``, ``beta``, ``gamma`` and ``lambda_0`` the options ``cg_passes_per_digit``,
    ``cg_centres_exponent``, ``cg_lam_exponent`` and ``cg_reference_lam``
    (:func:`kernelkit.get_config`, read at each call; the
    factor is 1 when ``lam`` is None), ``tol`` clipped to ``[1e-12, 0.1]``, ``s`` Newton steps
    (one gradient pass each besides the CG; the inexact-Newton forcing term keeps the early
    steps' CG short, so the CG of about one full solve is counted).
    """
    digits = float(np.log10(1 / min(max(tol, 1e-12), 0.1)))
    opt = options()
    cg = opt.cg_passes_per_digit * digits * (max(m, 1) / 1000) ** -opt.cg_centres_exponent
    if lam is not None and float(lam) > 0:
        cg *= (float(lam) / opt.cg_reference_lam) ** -opt.cg_lam_exponent
    return max(cg, 2 * digits) + max(1, int(newton_steps)) - 1


def solver_costs(
    n: int,
    m: int,
    *,
    d: int = 0,
    c: int = 1,
    tol: float = 1e-6,
    newton_steps: int = 1,
    keep: bool = False,
    select: bool = False,
    lam: float | None = None,
    unmapped: bool = False,
) -> dict[str, float]:
    r"""Modelled cost of each solver in float64 GEMM flops (the model of ``solver="auto"``).

    With ``E =`` ``kernel_entry_flops`` per kernel value plus ``2 d`` for the distance, ``c``
    outputs (or one-vs-rest classes), ``s = newton_steps`` (1 for ridge regression) and
    ``t`` the PCG passes of :func:`cg_passes`:

    .. math:: C_\text{exact} = s\,(n^2 (E + 2d) + n^3 / 3), \qquad
              C_\text{nystrom} = t\,n m (E + 2d + 4c) + 2 m^3,

    and with ``keep`` (``K_nm`` kept in memory, :func:`nystrom_system`: one kernel pass, then
    ``t - 1`` passes over the stored block, ``E_k =`` ``kept_entry_flops``, ``F =``
    ``keep_fill_flops``)

    .. math:: C_\text{nystrom} = n m (E + F + 2d + 4c) + (t - 1)\, n m (E_k + 4c) + 2 m^3,

    .. math:: C_\text{onepass} = p\,(n m (E_1 + 2d + 2c) + h\,(g + 1)\, n m^2)
              + (s + 1)\, m^3 / 3,

    ``E_1 =`` ``onepass_entry_flops`` and ``h =`` ``onepass_update_flops`` (from
    ``shared_blas_centres`` centres, where the tiles share every BLAS thread,
    ``onepass_shared_entry_flops`` and ``onepass_shared_update_flops``), the
    one-pass solver's ``(g + 1) n m^2`` being the triangular solve of the feature map
    ``K_b L^{-T}`` and the symmetric rank-``b`` updates of ``H`` (one per weight column:
    ``g = c`` for one-vs-rest logistic regression, 1 for ridge), its ``p`` passes 1 for
    ridge, ``s + 1`` for logistic regression (one per Newton step plus the first), its
    ``m^3 / 3`` the factors of ``K_mm`` and of each system; PCG's ``2 m^3`` the
    preconditioner (factors of ``K_mm`` and of Falkon's ``A``, the product ``T T^T``).  The
    constants were measured on the 2-core x86-64 benchmark machine (one thread, CPU seconds,
    benchmarks/bench_falkon.py's problem; ``docs/scale.md``, "Cost model").
    One-pass beats PCG while ``E_1 + 2 h m < t E`` (ridge, streamed): up to ``m`` of about
    1500 at ``tol = 1e-4``, 2000 at ``tol = 1e-6``; against the kept block while
    ``E_1 + 2 h m < E + F + (t - 1) E_k`` (d = 10): up to about 800 and 1000.

    ``select`` (ridge regression choosing ``lam``: a grid or ``"auto"``,
    :mod:`kernelkit.models._ridge_path` and :mod:`kernelkit.models._nystrom_path`): the exact
    solver's Cholesky becomes one eigendecomposition of the Gram and the one-pass solver's
    that of ``H``, ``e =`` ``eigh_flops``,
    ``C_exact = n^2 (E + 2d) + e n^3``, ``C_onepass = n m (E_1 + 2d + 2c) + 2 h n m^2 +
    m^3 / 3 + e m^3``; PCG has no ``lam`` path and keeps its cost.

    ``lam`` (a float ``lam``) enters ``t`` (:func:`cg_passes`); ``unmapped`` (ridge regression
    whose one-pass statistics are summed without the per-tile map, :func:`nystrom_statistics`)
    multiplies the one-pass pass cost by ``unmapped_pass_fraction``.

    The constants named here are options (:func:`kernelkit.get_config`,
    ``docs/configuration.md``), read at each call.
    """
    opt = options()
    entry = opt.kernel_entry_flops + 2 * d
    s = max(1, int(newton_steps))
    ridge = s == 1
    t = cg_passes(m, tol=tol, newton_steps=s, lam=lam)
    shared = m >= opt.shared_blas_centres
    h = opt.onepass_shared_update_flops if shared else opt.onepass_update_flops
    update = h * ((1 if ridge else c) + 1) * n * m**2
    tile = (opt.onepass_shared_entry_flops if shared else opt.onepass_entry_flops) + 2 * d + 2 * c
    factor, system = (opt.eigh_flops, opt.eigh_flops) if select else (1 / 3, s / 3)
    pass_fraction = opt.unmapped_pass_fraction if unmapped and ridge else 1.0
    return {
        "exact": s * n * n * entry + s * factor * n**3,
        "onepass": (s + (0 if ridge else 1)) * pass_fraction * (n * m * tile + update)
        + (1 / 3 + system) * m**3,
        "pcg": (
            n * m * (entry + opt.keep_fill_flops + 4 * c + (t - 1) * (opt.kept_entry_flops + 4 * c))
            if keep
            else t * n * m * (entry + 4 * c)
        )
        + 2 * m**3,
    }


def choose_solver(
    n: int,
    m: int,
    *,
    d: int = 0,
    c: int = 1,
    tol: float = 1e-6,
    newton_steps: int = 1,
    exact: bool = True,
    keep: bool = False,
    select: bool = False,
    lam: float | None = None,
    unmapped: bool = False,
) -> str:
    """The solver of ``solver="auto"``: exact when ``m >= n`` or its modelled cost is below
    the option ``exact_flops`` or below both Nyström solvers', else the cheaper of one-pass and PCG
    (:func:`solver_costs`; ``keep``: PCG on the kept ``K_nm``, :func:`keeps_block`);
    ``exact=False`` (a Dask fit): the cheaper Nyström solver; ``select`` (a ``lam`` path):
    the costs of the path, exact or one-pass; ``lam``, ``unmapped``: :func:`solver_costs`."""
    cost = solver_costs(
        n,
        m,
        d=d,
        c=c,
        tol=tol,
        newton_steps=newton_steps,
        keep=keep,
        select=select,
        lam=lam,
        unmapped=unmapped,
    )
    if select:
        cost["pcg"] = float("inf")
    nystrom = min(cost["onepass"], cost["pcg"])
    if exact and (m >= n or cost["exact"] <= max(options().exact_flops, nystrom)):
        return "exact"
    return "onepass" if cost["onepass"] <= cost["pcg"] else "pcg"


def keeps_block(Xb: Batch, m: int) -> bool:
    """Whether :func:`nystrom_system` keeps the ``n x m`` block of these prepared rows with
    its default budget (:func:`~kernelkit.gram._streaming.keep_budget`)."""
    device = Xb.device if isinstance(Xb, torch.Tensor) else None
    return kept_block_bytes(Xb, m) <= keep_budget(device)


def priced_as_kept(op: StreamedProducts) -> bool:
    """Whether the cost model prices PCG on ``op``'s kept ``K_nm`` (``keep`` of
    :func:`choose_solver`): an in-process :class:`~kernelkit.gram.NystromOperator`
    that keeps it.  A Dask operator's passes also pay a scheduler round trip each, and priced
    as streamed the model picked the faster solver at n = 2·10^5, m = 500 to 2000
    (``docs/distributed.md``, "Keeping ``K_nm`` on the workers")."""
    return isinstance(op, NystromOperator) and op.keeps_block


def forced_solver(solver: str, n: int, m: int, *, stacklevel: int = 5) -> str:
    """``solver`` as forced by the user; a Nyström solver with more centres than points is the
    exact one, with the warning of :func:`~kernelkit.gram._nystrom.too_many_centres` (one
    behaviour for every Nyström-using estimator)."""
    if solver != "exact" and too_many_centres(
        m, n, exact="the exact solver", stacklevel=stacklevel
    ):
        return "exact"
    return solver


def fitting_method(
    solver: str, nystrom_method: str, n: int, m: int, auto: Callable[[bool], str]
) -> str:
    """The method that fits ridge or logistic regression: ``"exact"``, ``"onepass"`` or
    ``"pcg"``.

    ``solver="exact"`` is exact; ``"nystrom"`` is ``nystrom_method``, or for ``"auto"`` the
    cheaper Nyström method, ``auto(False)`` (:func:`choose_solver` with ``exact=False``), and
    the exact solver with a warning when ``m >= n`` (:func:`forced_solver`); ``"auto"`` is
    ``auto(True)``, with ``nystrom_method`` in place of its Nyström choice when given.
    """
    if solver == "exact":
        return "exact"
    if solver == "nystrom":
        if forced_solver(solver, n, m, stacklevel=6) == "exact":
            return "exact"
        return nystrom_method if nystrom_method != "auto" else auto(False)
    chosen = auto(True)
    return chosen if chosen == "exact" or nystrom_method == "auto" else nystrom_method


def centre_gram(kernel: Kernel, centres: Batch) -> torch.Tensor:
    """``K_mm`` in float64 (vector centres are cast up before the kernel is evaluated)."""
    if isinstance(centres, torch.Tensor) and centres.is_floating_point():
        centres = centres.to(torch.float64)
    return gram_tensor(kernel, centres).to(torch.float64)


@dataclass(frozen=True)
class NystromSystem:
    """The streamed ``K_nm`` and ``K_mm`` of one training set and centre set.

    Attributes
    ----------
    op : StreamedProducts
        ``K_nm`` (training rows x centres), in process or on a cluster.
    K_mm : torch.Tensor, shape (m, m)
        The centres' Gram (float64).
    indices : ndarray of int or None
        The centres' indices among the training points (``None``: centres given as points).
    block_dtype : torch.dtype
        Dtype the ``K_nm`` tiles are computed in.
    lam : float or None
        The smallest ``lam`` the system will be solved for (sets the jitter of ``K_mm``,
        :func:`~kernelkit.solvers._nystrom_pcg.centre_jitter`).
    """

    op: StreamedProducts
    K_mm: torch.Tensor
    indices: np.ndarray | None
    block_dtype: torch.dtype = torch.float64
    lam: float | None = None

    @property
    def n(self) -> int:
        """Number of training points."""
        return self.op.shape[0]

    @property
    def device(self) -> torch.device:
        """The data's device, where the passes run and the solvers allocate."""
        return self.op.device

    @property
    def jitter(self) -> float:
        """The one regularisation ``tau s`` of ``K_mm`` (penalty ``lam (K_mm + tau s I)``)."""
        return centre_jitter(self.K_mm, block_dtype=self.block_dtype, lam=self.lam)

    @cached_property
    def factor(self) -> CentreFactor:
        """``T`` of Falkon, ``chol(K_mm + tau s I)`` (computed on first use, shared by every
        ``lam`` and weighting)."""
        return centre_factor(self.K_mm, block_dtype=self.block_dtype, lam=self.lam)

    @cached_property
    def unmapped_bound_times_lam(self) -> float:
        """``lam`` times :func:`~kernelkit.solvers._nystrom_normal.unmapped_error_bound` of
        ``P = K_mm + tau s I`` (``factor``): the bound at any ``lam`` is this over ``lam``,
        so its ``dpocon`` runs once per system (:func:`unmapped_onepass`)."""
        L = self.factor.L
        eye = torch.eye(len(L), dtype=L.dtype, device=L.device)
        return unmapped_error_bound(self.K_mm.to(L) + self.factor.jitter * eye, L, 1.0)


def nystrom_system(
    kernel: Kernel,
    X: Any,
    indices: np.ndarray | None,
    *,
    centres: Batch | None = None,
    block_size: int | None = None,
    lam: float | None = None,
    memory_budget: int | None = None,
) -> NystromSystem:
    """Prepare ``K_nm`` (streamed, or kept) and ``K_mm`` for the centres ``X[indices]``, or for
    the prepared ``centres`` given as points (``indices=None``).

    ``lam`` (the smallest ``lam`` the system will be solved for) sets the jitter of ``K_mm``
    for float32 blocks (:func:`~kernelkit.solvers._nystrom_pcg.centre_jitter`).
    ``memory_budget`` (bytes): ``K_nm`` is computed once, on the first pass of the products,
    and kept for the later passes (the CG iterations, the Newton gradients) when its ``n m``
    entries of the block dtype fit (:class:`~kernelkit.gram.NystromOperator`);
    ``None``: :func:`~kernelkit.gram._streaming.keep_budget`, a quarter of the memory
    available on the data's device; 0: every pass streams (one-pass solvers, which read
    ``K_nm`` once).
    """
    Xb, _ = prepare_pair(kernel, X)
    index = None if indices is None else np.asarray(indices)
    if centres is None:
        if index is None:
            raise InputError("indices: expected the centres' indices or the centres, got neither")
        centres = take(Xb, index)
    device = Xb.device if isinstance(Xb, torch.Tensor) else None
    budget = keep_budget(device) if memory_budget is None else memory_budget
    op = NystromOperator(kernel, Xb, centres, block_size=block_size, memory_budget=budget)
    block_dtype = Xb.dtype if isinstance(Xb, torch.Tensor) else torch.float64
    return NystromSystem(op, centre_gram(kernel, centres), index, block_dtype, lam)


def _as_columns(Y: torch.Tensor, device: torch.device | None = None) -> torch.Tensor:
    return (Y[:, None] if Y.ndim == 1 else Y).to(device=device, dtype=torch.float64)


def nystrom_ridge(
    system: NystromSystem,
    Y: torch.Tensor,
    lam: float | Sequence[float],
    *,
    sample_weight: torch.Tensor | None = None,
    tol: float = 1e-6,
    max_iter: int = 100,
    callback: Callable[[int, torch.Tensor], None] | None = None,
) -> NystromPCGResult:
    r"""Falkon's solve of ``(K_nm^T W K_nm / n + lam K_mm) alpha = K_nm^T W Y / n``.

    Parameters
    ----------
    system : NystromSystem
        ``K_nm`` and ``T``.
    Y : torch.Tensor
        Targets, shape ``(n,)`` or ``(n, c)``.
    lam : float or sequence of float
        ``lam > 0``; a sequence solves every value in the same CG run (one pass over the data
        per iteration for the whole path: the ``g`` values are ``g`` column groups sharing
        ``T``, each with its own ``A``).
    sample_weight : torch.Tensor, optional
        Non-negative weights ``w``, shape ``(n,)``.
    tol, max_iter : float, int
        CG stopping rule (:func:`~kernelkit.solvers.nystrom_pcg`).
    callback : callable, optional
        ``callback(k, rel)`` after every CG iteration.

    Returns
    -------
    NystromPCGResult
        ``coef`` of shape ``(m, g c)``: the columns of ``lam[0]`` first.
    """
    Yc = _as_columns(Y, system.device)
    lams = [float(lam)] if np.isscalar(lam) else [float(v) for v in lam]  # type: ignore[union-attr]
    w = (
        None
        if sample_weight is None
        else sample_weight.to(device=system.device, dtype=torch.float64)
    )
    rhs = system.op.rmatmat(Yc if w is None else Yc * w[:, None])
    centre_w = None if w is None or system.indices is None else w[torch.as_tensor(system.indices)]
    precond = nystrom_preconditioner(system.factor, lams, centre_w)

    def normal(V: torch.Tensor) -> torch.Tensor:
        return system.op.normal_matmat(V, weights=w)[0]

    return nystrom_pcg(
        normal,
        rhs.repeat(1, len(lams)),
        precond,
        n=system.n,
        tol=tol,
        max_iter=max_iter,
        callback=callback,
    )


def unmapped_onepass(system: NystromSystem, lam: float | None, tol: float | None) -> bool:
    """Whether the one-pass ridge statistics at ``lam`` are summed unmapped: ``lam`` and
    ``tol`` given, at least ``unmapped_rows_per_centre`` (an option) rows per centre, and
    :func:`~kernelkit.solvers._nystrom_normal.unmapped_error_bound` of ``P = K_mm + tau s I``
    (``system.factor``) at ``lam`` within ``tol``
    (:attr:`NystromSystem.unmapped_bound_times_lam`, computed once per system)."""
    per_centre = options().unmapped_rows_per_centre
    if tol is None or lam is None or system.n < per_centre * len(system.K_mm):
        return False
    if not float(lam) > 0:
        raise InputError(f"lam: expected lam > 0, got {lam!r}")
    return system.unmapped_bound_times_lam / float(lam) <= tol


def nystrom_statistics(
    system: NystromSystem,
    Y: torch.Tensor,
    *,
    sample_weight: torch.Tensor | None = None,
    lam: float | None = None,
    tol: float | None = None,
) -> NystromStatistics:
    r"""``H = Phi^T W Phi``, ``r = Phi^T W Y`` in one streamed pass, ``Phi = K_nm L^{-T}``.

    ``L`` is Falkon's factor of ``K_mm + tau s I`` (``system.factor``), so ``H`` and ``r`` are
    the sufficient statistics of the Nyström ridge objective for every ``lam`` in the
    coordinates ``beta = L^T alpha`` (:mod:`kernelkit.solvers._nystrom_normal`); float64 on
    the data's device.  Each tile is mapped to the features (a triangular solve) unless
    ``lam`` and ``tol`` are given, ``n >=`` ``unmapped_rows_per_centre m`` and the
    error bound :func:`~kernelkit.solvers._nystrom_normal.unmapped_error_bound` is within
    ``tol``: then the tiles' own ``K_b^T W_b K_b`` are summed and mapped once at the end
    (:func:`~kernelkit.solvers._nystrom_normal.to_features`; 2-3x less time per pass).
    """
    Yc = _as_columns(Y, system.device)
    w = (
        None
        if sample_weight is None
        else sample_weight.to(device=system.device, dtype=torch.float64)
    )
    factor = system.factor
    L = factor.L
    U = Yc if w is None else Yc * w[:, None]
    unmapped = unmapped_onepass(system, lam, tol)
    if unmapped:
        H, r, _ = system.op.normal_equations(U, w)
        H, r = to_features(H, r, L.to(H.device))
    else:
        H, r, _ = system.op.normal_equations(U, w, basis=L)
    K_mm = system.K_mm.to(H.device)
    return NystromStatistics(H, r, K_mm, factor.jitter, system.n, L.to(H.device), unmapped)


def nystrom_ridge_onepass(
    system: NystromSystem,
    Y: torch.Tensor,
    lam: float,
    *,
    sample_weight: torch.Tensor | None = None,
    tol: float | None = None,
) -> NystromNormalResult:
    r"""The Nyström ridge solution from its normal equations formed in ONE pass.

    ``(K_nm^T W K_nm / n + lam (K_mm + tau s I)) alpha = K_nm^T W Y / n``: the same system
    and penalty as :func:`nystrom_ridge` (Falkon's PCG), formed in the Nyström feature
    coordinates (:func:`nystrom_statistics`) and solved by Cholesky
    (:func:`~kernelkit.solvers._nystrom_normal.nystrom_normal_solve`) after one pass over the
    data instead of one per CG iteration.  ``result.statistics`` holds ``H``, ``r``, ``K_mm``
    for other ``lam``.  Cost: one kernel pass, ``2 n m^2`` flops, ``m^3 / 3``; ``n m^2``
    when the solution's bound without the per-tile map is below ``tol``
    (:func:`nystrom_statistics`).
    """
    if system.lam is not None and float(lam) < system.lam:
        raise InputError(
            f"lam: expected at least the lam the system was prepared for ({system.lam:g}), "
            f"got {lam!r}"
        )
    stats = nystrom_statistics(system, Y, sample_weight=sample_weight, lam=lam, tol=tol)
    return nystrom_normal_solve(stats, lam)


def nystrom_validation_errors(
    system: NystromSystem,
    Y: torch.Tensor,
    X_val: Batch,
    Y_val: torch.Tensor,
    lams: Sequence[float],
    *,
    tol: float = 1e-6,
    max_iter: int = 100,
) -> np.ndarray:
    r"""Held-out mean squared error of the Nyström KRR for every ``lam`` of a grid.

    Model selection at scale: ``T = chol(K_mm)`` and ``K_nm^T Y`` are computed once, every
    ``lam`` runs in the same CG (one pass over the training rows per iteration for the whole
    grid, :func:`nystrom_ridge`), and the predictions of all ``lam`` on the validation rows
    come from one streamed pass.  Returns the ``len(lams)`` errors (mean over outputs).
    """
    Yc = _as_columns(Y, system.device)
    res = nystrom_ridge(system, Yc, lams, tol=tol, max_iter=max_iter)
    val = NystromOperator(system.op.kernel, X_val, system.op.centres)
    Yv = _as_columns(Y_val, val.device)
    pred = val.matmat(res.coef).reshape(len(Yv), len(lams), Yc.shape[1])
    return ((pred - Yv[:, None, :]) ** 2).mean((0, 2)).cpu().numpy()


def nystrom_predict(
    kernel: Kernel, X: Any, centres: Batch, coef: torch.Tensor, *, block_size: int | None = None
) -> torch.Tensor:
    """``f(x) = sum_j coef_j k(x, c_j)`` in row tiles (float64, shaped like ``coef``'s columns)."""
    return NystromOperator(kernel, X, centres, block_size=block_size).matmat(coef)


__all__ = [
    "NYSTROM_METHODS",
    "NystromSystem",
    "centre_gram",
    "cg_passes",
    "choose_solver",
    "fitting_method",
    "forced_solver",
    "keeps_block",
    "nystrom_predict",
    "nystrom_ridge",
    "nystrom_ridge_onepass",
    "nystrom_statistics",
    "nystrom_system",
    "nystrom_validation_errors",
    "priced_as_kept",
    "solver_costs",
    "unmapped_onepass",
]
