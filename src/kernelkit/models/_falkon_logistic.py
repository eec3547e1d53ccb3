r"""Kernel logistic regression at scale: Newton steps solved by Falkon's preconditioned CG.

The course's kernel logistic regression (part 1, section 3.3) restricted to the span of ``m``
Nyström centres, ``f(x) = sum_j alpha_j k(x, c_j)``, with labels ``y_i in {-1, +1}`` and
optional sample weights ``s_i``:

.. math:: J(\alpha) = \frac1n \sum_i s_i \,\ell(y_i f(x_i)) + \lambda \alpha^T K_{mm}
          \alpha, \qquad \ell(u) = \log(1 + e^{-u}),

the package's ``(1/n) sum loss + lam ||f||^2`` (the course's slide writes ``lam_c / 2``,
``lam_c = 2 lam``).

Its gradient and Hessian (course, same section; ``f = K_nm alpha``) are

.. math:: \nabla J = -\frac1n K_{nm}^T u + 2\lambda K_{mm} \alpha, \quad
          u_i = s_i y_i \sigma(-y_i f_i), \qquad
          \nabla^2 J = \frac1n K_{nm}^T W K_{nm} + 2\lambda K_{mm}, \quad
          W_i = s_i \sigma(f_i) \sigma(-f_i),

so every Newton step ``delta`` is a weighted Nyström ridge system (IRLS with ridge
``2 lam``), solved by the preconditioned CG of :func:`kernelkit.solvers.nystrom_pcg`
with the preconditioner built from the Hessian weights at the centres, as in the logistic
Falkon of Meanti, Carratino, Rosasco and Rudi ("Kernel methods through the roof", NeurIPS
2020, section 3; Marteau-Ferey, Bach and Rudi, NeurIPS 2019, for the Newton scheme).  A
backtracking (Armijo) line search on ``J`` makes the iteration globally convergent; it costs no
extra pass since ``K_nm (alpha + t delta) = f + t K_nm delta``.  Per Newton step: one pass for
the gradient and one per CG iteration (over ``K_nm`` kept in memory after the first pass when
it fits the budget of :func:`~kernelkit.models._falkon.nystrom_system`: one kernel pass per
fit); ``K_nm delta`` is carried along the CG steps from the
``K_nm V`` each CG pass computes anyway (``delta = sum_k a_k B p_k``).  The CG of step ``k``
stops at a tolerance tied to the gradient (inexact Newton, ``forcing``).

Several classes run together as columns (one-vs-rest: column ``c`` separates class ``c``
from the rest), each with its own weights and preconditioner; sharing ``T = chol(K_mm)`` and
every pass over the data.  This equals scikit-learn's ``LogisticRegression(C=1 / (2 n lam),
fit_intercept=False)`` on the explicit Nyström features ``phi(x) = L^{-1} k_C(x)``
(``K_mm = L L^T``), whose weights are ``w = L^T alpha``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import torch

from kernelkit.kernels._base import Batch, Kernel
from kernelkit.models._falkon import (
    NystromSystem,
    nystrom_predict,
    nystrom_system,
)
from kernelkit.solvers._cholesky import solve_triangular
from kernelkit.solvers._nystrom_normal import (
    NystromStatistics,
    nystrom_normal_solve,
    symmetric_from_upper,
    syrk_,
)
from kernelkit.solvers._nystrom_pcg import (
    NystromPreconditioner,
    nystrom_pcg,
    nystrom_preconditioner,
)
from kernelkit.utils._config import deprecated_options, options
from kernelkit.utils._errors import InputError
from kernelkit.utils._validation import signed_targets


@dataclass(frozen=True)
class NystromLogisticResult:
    """Result of :func:`nystrom_logistic_fit`.

    Attributes
    ----------
    coef : torch.Tensor, shape (m, c)
        ``alpha`` of each column (float64); ``c = 1`` for two classes.
    classes : ndarray
        The sorted labels; binary: column 0 scores ``classes[1]`` against ``classes[0]``;
        otherwise column ``c`` scores ``classes[c]`` against the rest.
    centres : batch
        The centres (prepared).
    indices : ndarray of int
        The centres' indices among the training points.
    objective : ndarray, shape (c,)
        ``J(alpha)`` of each column at the end.
    n_newton : int
        Newton steps taken.
    n_cg : int
        CG iterations in all (each one pass over the data).
    converged : bool
        Whether the Newton decrement fell below ``newton_tol`` in every column.
    scores : torch.Tensor or None, shape (n, c)
        ``f = K_nm alpha`` at the training points (float64): with ``coef`` the warm start of
        a later fit (``coef0``, ``scores0``).
    """

    coef: torch.Tensor
    classes: np.ndarray
    centres: Batch
    indices: np.ndarray
    objective: np.ndarray
    n_newton: int
    n_cg: int
    converged: bool
    scores: torch.Tensor | None = None


def _objective(
    f: torch.Tensor, Y: torch.Tensor, s: torch.Tensor, Lt_alpha: torch.Tensor, lam: float
) -> torch.Tensor:
    """``J`` per column from the predictions ``f`` and ``L^T alpha``."""
    data = (s[:, None] * torch.nn.functional.softplus(-Y * f)).mean(0)
    return data + lam * (Lt_alpha**2).sum(0)


def _targets(
    system: NystromSystem, y: Any, sample_weight: Any, device: torch.device
) -> tuple[np.ndarray, torch.Tensor, torch.Tensor]:
    """Classes, ``+-1`` targets ``Y`` (one column per one-vs-rest problem) and sample weights
    ``s`` (ones by default), float64 on ``device``, checked against the system's ``n``."""
    classes, Y = signed_targets(y)
    n = system.op.shape[0]
    if len(Y) != n:
        raise InputError(f"y: expected {n} labels (one per row of X), got {len(Y)}")
    s = torch.ones(n, dtype=torch.float64, device=device)
    if sample_weight is not None:
        s = torch.as_tensor(sample_weight, dtype=torch.float64, device=device)
    return classes, Y.to(device), s


def _warm_start(
    system: NystromSystem,
    coef0: torch.Tensor | None,
    scores0: torch.Tensor | None,
    shape: tuple[int, int],
    device: torch.device,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``alpha_0`` (zeros by default) and ``f_0 = K_nm alpha_0`` (computed when not given),
    float64 on ``device``."""
    n = system.op.shape[0]
    if coef0 is None:
        zero = torch.zeros(shape, dtype=torch.float64, device=device)
        return zero, torch.zeros(n, shape[1], dtype=torch.float64, device=device)
    alpha = torch.as_tensor(coef0, dtype=torch.float64).reshape(shape).to(device)
    if scores0 is None:
        scores0 = system.op.matmat(alpha)
    return alpha, torch.as_tensor(scores0, dtype=torch.float64).reshape(n, shape[1]).to(device)


__getattr__ = deprecated_options(
    __name__,
    {
        "HESSIAN_ROWS_PER_CENTRE": "hessian_rows_per_centre",
        "HESSIAN_SAMPLE_BYTES": "hessian_sample_bytes",
    },
)
"""The sample's constants of the previous release, now options (``kernelkit.get_config``):
importable with a ``FutureWarning`` for one release."""


def hessian_sample_size(n: int, m: int) -> int:
    """Rows of :func:`hessian_sample`: ``hessian_rows_per_centre m``, at most
    ``hessian_sample_bytes`` of float64 kernel rows but at least ``m``, at most ``n`` (both
    options, :func:`kernelkit.get_config`)."""
    opt = options()
    rows = min(opt.hessian_rows_per_centre * m, opt.hessian_sample_bytes // (8 * m))
    return min(n, max(m, rows))


@dataclass(frozen=True)
class HessianSample:
    """A uniform sample of training rows and their kernel rows against the centres.

    Attributes
    ----------
    rows : ndarray of int
        Row indices, sorted.
    K : torch.Tensor, shape (len(rows), m)
        ``K_nm[rows]`` in float64.
    """

    rows: np.ndarray
    K: torch.Tensor


def hessian_sample(system: NystromSystem) -> HessianSample:
    """:func:`hessian_sample_size` rows drawn uniformly without replacement and their
    kernel rows (read from the kept block, else evaluated).  The draw is seeded (0): it only
    shapes a preconditioner, so it changes CG iterations, never the solution beyond the CG
    tolerance."""
    n, m = system.op.shape
    size = hessian_sample_size(n, m)
    rows = np.sort(np.random.default_rng(0).choice(n, size=size, replace=False))
    return HessianSample(rows, system.op.take_rows(rows))


def logistic_preconditioner(
    system: NystromSystem,
    f: torch.Tensor,
    lam: float,
    s: torch.Tensor | None = None,
    *,
    sample: HessianSample | None = None,
) -> NystromPreconditioner:
    r"""Falkon's preconditioner of the Newton system at the scores ``f`` (shape ``(n, c)``,
    one group per column): ``A`` from the Hessian weights ``W = s sigma(f) sigma(-f)`` at the
    centres (their mean over the rows for centres given as points) and the ridge ``2 lam``
    (Meanti et al., NeurIPS 2020, section 3; ``s`` default ones).

    ``sample``: the data term ``K_nm^T W K_nm / n`` estimated on the sampled rows instead of
    the centres, :math:`\frac{1}{|S|} \sum_{i \in S} W_i k_C(x_i) k_C(x_i)^T`
    (:func:`~kernelkit.solvers.nystrom_preconditioner`'s ``hessian``): Falkon's
    estimate is the same average over the ``m`` centres' rows; the option
    ``hessian_rows_per_centre`` times more rows approximate the Hessian better where ``lam``
    is small against ``1 / m``, at ``|S| m^2`` flops per build (a row-subsampled Newton
    Hessian: Roosta-Khorasani and Mahoney, "Sub-sampled Newton methods", Math. Programming
    2019)."""
    W = torch.sigmoid(f) * torch.sigmoid(-f)
    if s is not None:
        W = s[:, None] * W
    m, c = system.op.shape[1], f.shape[1]
    if sample is not None:
        root = W[torch.as_tensor(sample.rows, device=W.device)].sqrt()  # (|S|, c)
        H = torch.zeros(c, m, m, dtype=torch.float64, device=W.device)
        for j in range(c):
            H[j] = symmetric_from_upper(syrk_(H[j], sample.K * root[:, j : j + 1]))
        H /= len(sample.rows)
        return nystrom_preconditioner(system.factor, [2 * float(lam)] * c, hessian=H)
    if system.indices is None:
        W_m = W.mean(0, keepdim=True).expand(m, c)
    else:
        W_m = W[torch.as_tensor(system.indices, device=W.device)]
    return nystrom_preconditioner(system.factor, [2 * float(lam)] * c, W_m.mT)


def _entry_flops(system: NystromSystem) -> float:
    """The cost model's flops per kernel value of one pass over ``system``'s ``K_nm``."""
    opt = options()
    kept = getattr(system.op, "keeps_block", False)
    return opt.kept_entry_flops if kept else opt.kernel_entry_flops


def rebuild_passes(system: NystromSystem, columns: int = 1) -> float:
    """Passes over ``K_nm`` that cost as much as one build of :func:`logistic_preconditioner`,
    by the cost model of :func:`~kernelkit.models._falkon.solver_costs`: ``2 m^3`` for the
    build (per column) against ``n m (E + 4)`` per column for a pass, ``E`` =
    the option ``kept_entry_flops`` on the kept block, else ``kernel_entry_flops``."""
    n, m = system.op.shape
    entry = _entry_flops(system)
    return 2 * m**3 * columns / (n * m * (entry + 4 * columns))


def sample_passes(system: NystromSystem, columns: int = 1) -> float:
    """Passes over ``K_nm`` that cost as much as one build of the row-sampled preconditioner
    (:func:`logistic_preconditioner` with a :func:`hessian_sample` of ``|S|`` rows): by the cost
    model of :func:`~kernelkit.models._falkon.solver_costs`, ``c (2 |S| m^2 + 2 m^3) + m^3 / 3``
    (the products, the two triangular solves and the factor of each column) against
    ``n m (E + 4 c)`` per pass (``E`` as in :func:`rebuild_passes`); infinite for an operator
    that cannot read single rows (a cluster's, :mod:`kernelkit.models._falkon_distributed`)."""
    if not hasattr(system.op, "take_rows"):
        return float("inf")
    n, m = system.op.shape
    size = hessian_sample_size(n, m)
    entry = _entry_flops(system)
    build = columns * (2 * size * m**2 + 2 * m**3) + m**3 / 3
    return build / (n * m * (entry + 4 * columns))


def preconditioner_due(
    system: NystromSystem,
    sample: HessianSample | None,
    spent: int,
    n_cg: int,
    sample_cost: float,
    falkon_budget: float | None,
) -> tuple[bool, HessianSample | None]:
    """Whether to rebuild the preconditioner now, and the row sample to build it on (ski
    rental, Karlin et al. 1988): the sample is bought once the CG iterations run so far
    (``n_cg``) cost ``sample_cost`` passes (:func:`sample_passes`), and rebuilt at the current
    weights once those run with it (``spent``) cost as much again; until then Falkon's is
    rebuilt once ``spent`` reaches ``falkon_budget`` (None: never on that account)."""
    buy = (spent if sample is not None else n_cg) >= sample_cost
    stale = sample is None and falkon_budget is not None and spent >= falkon_budget
    if buy and sample is None:
        sample = hessian_sample(system)
    return buy or stale, sample


def nystrom_logistic_fit(
    kernel: Kernel,
    X: Any,
    y: Any,
    indices: np.ndarray,
    lam: float,
    *,
    sample_weight: Any = None,
    tol: float = 1e-6,
    max_iter: int = 100,
    max_newton: int = 30,
    newton_tol: float = 1e-10,
    forcing: float = 0.5,
    fast_products: bool = True,
    block_size: int | None = None,
    system: NystromSystem | None = None,
    callback: Callable[[int, torch.Tensor], None] | None = None,
    coef0: torch.Tensor | None = None,
    scores0: torch.Tensor | None = None,
    preconditioner: NystromPreconditioner | None = None,
    rebuild_after: float | None = None,
    sampled: bool = False,
) -> NystromLogisticResult:
    r"""Nyström kernel logistic regression by Newton steps and preconditioned CG.

    Parameters
    ----------
    kernel : Kernel
        Any kernelkit kernel.
    X : batch
        The ``n`` training points, prepared by ``kernel`` (or raw vectors).
    y : array-like, shape (n,)
        Class labels (two or more classes; one-vs-rest for more than two).
    indices : ndarray of int
        The centres among the rows of ``X``
        (:func:`kernelkit.gram._nystrom.centre_indices`).
    lam : float
        ``lam > 0`` of ``(1/n) sum_i s_i l(y_i f(x_i)) + lam ||f||^2`` (course part 1,
        section 3.3, whose slide writes ``lam_c / 2``: ``lam_c = 2 lam``).
    sample_weight : array-like, optional
        Non-negative weights ``s_i``.
    tol, max_iter : float, int
        Stopping rule of the CG of each Newton step: relative residual ``tol`` (the last
        steps; see ``forcing``) or ``max_iter`` iterations.
    forcing : float
        Largest CG tolerance of the inexact Newton steps (Dembo, Eisenstat and Steihaug,
        SIAM J. Numer. Anal. 1982; Eisenstat and Walker, SIAM J. Sci. Comput. 1996; Nocedal
        and Wright, *Numerical Optimization*, section 7.1): step ``k`` runs CG to the
        relative residual ``max(tol, min(forcing, sqrt(||g_k|| / ||g_0||)))``, ``g_k`` the
        preconditioned gradient, so early steps take few iterations and the tolerance falls
        to ``tol`` as the gradient does (superlinear local convergence).  0: every step
        runs to ``tol``.
    fast_products : bool
        Compute the Hessian products of the CG (and the ``K_nm delta`` carried along) in the
        block dtype (:func:`~kernelkit.gram.nystrom_tile`'s ``fast``); the
        gradient pass stays in float64.  An inexact Newton method tolerates perturbed
        Hessian products as long as the gradient is exact (Nocedal and Wright, section 7.1;
        measured: ``docs/measurements.md``).  No effect for float64 data.
    max_newton : int
        Most Newton steps.
    newton_tol : float
        Stop when every column's Newton decrement ``-grad^T delta`` is at most this.
    block_size : int, optional
        Rows per tile of the streamed products.
    system : NystromSystem, optional
        A prepared ``K_nm`` and ``chol(K_mm)`` for these points and centres (reused across
        calls, e.g. a ``lam`` grid).
    callback : callable, optional
        ``callback(k, rel)`` after every CG iteration.
    coef0, scores0 : torch.Tensor, optional, shape (m, c) and (n, c)
        Warm start ``alpha_0`` (default 0) and its ``f_0 = K_nm alpha_0`` (one pass computes it
        when omitted), e.g. the solution at the previous ``lam`` of a decreasing path.
    preconditioner : NystromPreconditioner, optional
        Falkon's ``B = T^{-1} A^{-1}`` of every Newton step (default: one per step,
        :func:`logistic_preconditioner` at the step's weights).  Any ``A`` gives a valid
        preconditioner of the system at this ``lam``, whose penalty ``B^T lam T^T T B =
        lam A^{-T} A^{-1}`` does not depend on the weights and ``lam`` ``A`` was built for;
        built at others it costs CG iterations (about the square root of the ratio of the
        ``lam`` values), not accuracy.
    rebuild_after : float, optional
        Keep the preconditioner (``preconditioner``, else the first step's) across Newton
        steps and rebuild it at the next step's weights once the CG iterations run with it
        reach ``rebuild_after`` (the passes over ``K_nm`` that cost as much as one build:
        the rent-or-buy rule of ski rental, Karlin, Manasse, Rudolph and Sleator,
        Algorithmica 1988; :func:`rebuild_passes`).
        None: one preconditioner per step.
    sampled : bool
        Once this fit's CG iterations reach the passes one row-sampled build costs
        (:func:`sample_passes`: ski rental again), the next step builds the preconditioner
        from a :func:`hessian_sample` of the rows at its weights
        (:func:`logistic_preconditioner`'s ``sample``), kept until the CG iterations run with
        it cost as much again.  False: Falkon's preconditioner throughout.
    """
    lam = float(lam)
    if not lam > 0 or not np.isfinite(lam):
        raise InputError(f"lam: expected a finite lam > 0 (Newton-PCG), got {lam!r}")
    if not 0 <= forcing < 1:
        raise InputError(f"forcing: expected a CG tolerance in [0, 1), got {forcing!r}")
    reg = 2 * lam  # the ridge of the Newton systems: the Hessian of lam ||f||^2 is 2 lam K_mm
    if system is None:
        system = nystrom_system(kernel, X, indices, block_size=block_size, lam=reg)
    classes, Y, s = _targets(system, y, sample_weight, system.device)
    (n, m), c = system.op.shape, Y.shape[1]
    L = system.factor.L
    alpha, f = _warm_start(system, coef0, scores0, (m, c), system.device)
    J = _objective(f, Y, s, L.mT @ alpha, lam)
    n_cg, steps, converged, spent = 0, 0, False, 0
    sample: HessianSample | None = None
    sample_after = sample_passes(system, c) if sampled else float("inf")
    g0: list[float] = []  # ||g_0||, the first step's preconditioned gradient

    def forcing_term(b_norm: torch.Tensor) -> float:
        """CG tolerance of this step: ``max(tol, min(forcing, sqrt(||g_k|| / ||g_0||)))``."""
        g = float(b_norm.max())
        if not g0:
            g0.append(g)
        return max(tol, min(forcing, (g / g0[0]) ** 0.5 if g0[0] > 0 else 0.0))

    while steps < max_newton and not converged:
        steps += 1
        U = s[:, None] * Y * torch.sigmoid(-Y * f)
        W = s[:, None] * torch.sigmoid(f) * torch.sigmoid(-f)
        due, sample = preconditioner_due(system, sample, spent, n_cg, sample_after, rebuild_after)
        if preconditioner is None or due:
            preconditioner = logistic_preconditioner(system, f, lam, s, sample=sample)
            spent = 0
        precond = replace(
            preconditioner, lam=torch.full((c,), reg, dtype=torch.float64, device=system.device)
        )
        rhs = system.op.rmatmat(U)

        def normal(V: torch.Tensor, W: torch.Tensor = W) -> tuple[torch.Tensor, torch.Tensor]:
            R, KV = system.op.normal_matmat(V, weights=W, keep_kv=True, fast=fast_products)
            assert KV is not None
            return R, KV

        res = nystrom_pcg(
            normal,
            rhs,
            precond,
            n=n,
            tol=forcing_term if forcing > 0 else tol,
            max_iter=max_iter,
            penalty_at=alpha,
            image=True,
            callback=callback,
        )
        n_cg += res.cg.iterations
        spent += res.cg.iterations
        if rebuild_after is None and sample is None:
            preconditioner = None
        delta = res.coef
        f_delta = torch.zeros_like(f) if res.image is None else res.image
        Lt_a, Lt_d = L.mT @ alpha, L.mT @ delta
        slope = -(U * f_delta).sum(0) / n + reg * (Lt_a * Lt_d).sum(0)  # grad^T delta
        t = torch.ones(c, dtype=torch.float64, device=f.device)
        for _ in range(40):
            J_new = _objective(f + t * f_delta, Y, s, Lt_a + t * Lt_d, lam)
            bad = J_new > J + 1e-4 * t * slope
            if not bool(bad.any()):
                break
            t = torch.where(bad, 0.5 * t, t)
        alpha = alpha + t * delta
        f = f + t * f_delta
        J = J_new
        converged = bool((-slope <= newton_tol).all())
    return NystromLogisticResult(
        alpha,
        classes,
        system.op.centres,
        system.indices,
        J.cpu().numpy(),
        steps,
        n_cg,
        converged,
        f,
    )


def newton_rows(
    kv: torch.Tensor | None, f: torch.Tensor, Y: torch.Tensor, s: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""A tile's Newton weights and right-hand side at the trial point ``f + K_b delta``:
    ``W = s sigma(f) sigma(-f)``, ``U = s Y sigma(-Y f)`` (:data:`~kernelkit.gram._tiles.RowsFn`;
    ``kv`` None: at ``f``)."""
    fb = f if kv is None else f + kv
    sb = s[:, None]
    return sb * torch.sigmoid(fb) * torch.sigmoid(-fb), sb * Y * torch.sigmoid(-Y * fb)


def nystrom_logistic_onepass(
    system: NystromSystem,
    y: Any,
    lam: float,
    *,
    sample_weight: Any = None,
    max_newton: int = 30,
    newton_tol: float = 1e-10,
    coef0: torch.Tensor | None = None,
    scores0: torch.Tensor | None = None,
) -> NystromLogisticResult:
    r"""Nyström kernel logistic regression by exact Newton steps on one-pass normal equations.

    The objective and Newton system of :func:`nystrom_logistic_fit` (module docstring), with
    the Hessian ``K_nm^T W K_nm / n + 2 lam (K_mm + tau s I)`` (penalty ``lam ||f||^2``)
    formed in ONE weighted pass per Newton step
    (:meth:`~kernelkit.gram._streaming.StreamedProducts.normal_equations`, one ``H`` per
    column) and factorised by Cholesky
    (:func:`~kernelkit.solvers._nystrom_normal.nystrom_normal_solve`) instead of CG.  The pass
    of step ``k + 1`` computes ``K_b delta_k`` first, so it evaluates the trial point
    ``alpha + delta`` and its weights in the same tile: when the full step passes the
    Armijo test (the usual case) the step costs one pass; otherwise the step is halved in
    memory from the stored ``K_nm delta`` and one more pass recomputes the weights.  The
    systems are formed in the Nyström feature coordinates ``beta = L^T alpha``
    (:func:`~kernelkit.models._falkon.nystrom_statistics`; conditioning ``1 / lam``, not its
    square).  Passes:
    Newton steps + 1 + damped steps.  The same on a cluster
    (:class:`~kernelkit.gram._distributed_nystrom.DistributedNystromOperator`): each pass is
    one map-reduce whose tasks run the in-process pass on their row blocks with their rows of
    ``f``, ``Y`` and ``s`` (:func:`newton_rows`), and the ``n x c`` vectors ``f`` and
    ``K_nm delta`` live on the client.  ``coef0``, ``scores0``: the warm start of
    :func:`nystrom_logistic_fit`.
    """
    lam = float(lam)
    if not lam > 0 or not np.isfinite(lam):
        raise InputError(f"lam: expected a finite lam > 0 (Newton), got {lam!r}")
    device = system.device
    classes, Y, s = _targets(system, y, sample_weight, device)
    (n, m), c = system.op.shape, Y.shape[1]
    L = system.factor.L.to(device)  # beta = L^T alpha: f = Phi beta, penalty lam ||beta||^2

    def objective(f: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        data = (s[:, None] * torch.nn.functional.softplus(-Y * f)).mean(0)
        return data + lam * (b**2).sum(0)

    def weighted_pass(f: torch.Tensor, delta: torch.Tensor | None) -> tuple:
        return system.op.normal_equations(
            None,
            V=delta,
            rows=newton_rows,
            row_data=(f, Y, s),
            groups=c,
            columns=c,
            basis=L,
        )

    alpha0, f = _warm_start(system, coef0, scores0, (m, c), device)
    beta = L.mT @ alpha0
    H, R, _ = weighted_pass(f, None)
    J = objective(f, beta)
    steps, converged = 0, False
    K_mm = system.K_mm.to(device)
    while steps < max_newton:
        steps += 1
        grad = -R / n + 2 * lam * beta
        stats = NystromStatistics(H, R, K_mm, system.factor.jitter, n, L)
        delta = nystrom_normal_solve(stats, 2 * lam, rhs=-grad).solution
        slope = (grad * delta).sum(0)  # grad^T delta < 0
        if bool((-slope <= newton_tol).all()):
            beta, converged = beta + delta, True
            break
        H, R, f_delta = weighted_pass(f, delta)
        assert f_delta is not None
        t = torch.ones(c, dtype=torch.float64, device=device)
        for _ in range(40):
            J_new = objective(f + t * f_delta, beta + t * delta)
            bad = J_new > J + 1e-4 * t * slope
            if not bool(bad.any()):
                break
            t = torch.where(bad, 0.5 * t, t)
        beta, f, J = beta + t * delta, f + t * f_delta, J_new
        if bool((t < 1).any()):  # damped: the pass's weights were those of the full step
            H, R, _ = weighted_pass(f, None)
    alpha = solve_triangular(L.mT, beta, upper=True)
    if converged:  # the last step was taken without its pass: f of the returned alpha
        f = None
    return NystromLogisticResult(
        alpha, classes, system.op.centres, system.indices, J.cpu().numpy(), steps, 0, converged, f
    )


def nystrom_logistic_decision(
    kernel: Kernel, X: Any, result: NystromLogisticResult, *, block_size: int | None = None
) -> torch.Tensor:
    """Scores ``f(x)`` of every column in row tiles, shape ``(n, c)`` (float64)."""
    return nystrom_predict(kernel, X, result.centres, result.coef, block_size=block_size)


__all__ = [
    "HessianSample",
    "NystromLogisticResult",
    "hessian_sample",
    "hessian_sample_size",
    "logistic_preconditioner",
    "newton_rows",
    "nystrom_logistic_decision",
    "nystrom_logistic_fit",
    "nystrom_logistic_onepass",
    "preconditioner_due",
    "rebuild_passes",
    "sample_passes",
]
