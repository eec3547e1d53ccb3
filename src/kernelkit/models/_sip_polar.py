r"""The polar problem (28) with a max-type semi-norm, solved with a duality-gap certificate.

Ma et al. (ICML 2020), section 4, eq. (28) and appendix C (Theorem 8): the embedding of the
s.i.p. kernel representer ``G_x`` is ``iota(G_x) = v / J(v)`` where ``v`` solves

.. math:: \min_v\ J(v) = \|v\|^2 + s \sum_b \max_{j \in b} \phi(\langle g_j, v\rangle)^2
          \quad \text{s.t.}\quad \langle v, \tilde k_x\rangle = 1,

with ``phi(t) = |t|`` (a symmetric set ``S = {+-g_j}``, Proposition 1) or ``phi(t) = [t]_+``
(the one-sided hinge penalties of section 6, eqs. 35-37).  One group ``b`` holding every
representer is the finite ``S`` of eq. (28) and appendix D; one group per training point is
the "sum over points of the max over transformations" (the pattern of eqs. 33 and 36-37).

**Dual and certificate (our derivation).**  Write the max as ``t_b >= phi(<g_j, v>)`` with
multipliers ``alpha_j`` (signed for ``|.|``, ``>= 0`` for the hinge) and ``beta`` for the
hyperplane.  Minimising the Lagrangian over ``v``, ``t`` and then ``beta`` in closed form
leaves, with ``gamma = alpha / 2``, ``K_S = G G^T``, ``h = G k~_x``, ``kappa = ||k~_x||^2``,

.. math:: D(\gamma) = \frac{(1 + h^T\gamma)^2}{\kappa} - \gamma^T K_S \gamma
          - \frac{1}{s}\sum_b \|\gamma_b\|_1^2 ,

a concave "exclusive lasso" problem in representer space, and every ``gamma`` maps to the
*feasible* primal point ``v(gamma) = (1 + h^T gamma) k~_x / kappa - G^T gamma`` (it satisfies
``<v, k~_x> = 1`` exactly).  Weak duality gives ``D(gamma) <= J* <= J(v(gamma))``, so the
relative gap ``(J - D) / J`` is a certificate of optimality for each point.  Both values need
only ``K_S``, ``h`` and ``kappa``: ``<g_j, v> = (1 + h^T gamma) h_j / kappa - (K_S gamma)_j``
and ``||v||^2 = (1 - (h^T gamma)^2) / kappa + gamma^T K_S gamma``.

**Algorithm.**  An active-set method on ``gamma`` (it is sparse: one entry per active
representer), batched over points: on the active set with fixed signs ``sigma`` the problem
is the quadratic ``min gamma^T (K_S - h h^T / kappa + E / s) gamma - 2 h^T gamma / kappa``
(``E`` couples the signed entries of a group), solved by one batched linear solve; entries
that would change sign are removed by a ratio test (primal active-set method for QPs), and
the representers violating ``phi(<g_j, v>) <= ||gamma_b||_1 / s`` (the KKT condition, equal
to ``t_b``) are added, most violated first, until the gap is below ``tol``.  The paper uses
L-BFGS with projection on the hyperplane (appendix C); this solver is exact on the active
set and certifies its answer.

:func:`kernelkit.models._sip_blocks.embed_block_max` solves the "max over transformations of
the sum over points" reading, ``J(v) = ||v||^2 + s max_t ||G_t v||^2``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import torch

from kernelkit.models._sip import Embedding
from kernelkit.solvers import cholesky_factor
from kernelkit.solvers._cholesky import solve
from kernelkit.utils._errors import ConvergenceWarning, InputError
from kernelkit.utils._numerics import eps

#: semi-smooth Newton iterations of the warm start for many groups (:func:`_selection_newton`)
NEWTON_ITER = 8
#: representers within this relative distance of their group's maximum start active
NEAR_TIE = 1e-2


class EmbeddingConvergenceWarning(ConvergenceWarning):
    """The polar solver stopped at ``max_iter`` with a duality gap above ``tol``."""


def _group_sums(values: torch.Tensor, groups: torch.Tensor, n_groups: int) -> torch.Tensor:
    out = values.new_zeros(values.shape[0], n_groups)
    return out.index_add_(1, groups, values)


def _group_max(values: torch.Tensor, groups: torch.Tensor, n_groups: int) -> torch.Tensor:
    out = values.new_zeros(values.shape[0], n_groups)
    index = groups.expand_as(values)
    return out.scatter_reduce_(1, index, values, reduce="amax", include_self=True)


def _group_min(values: torch.Tensor, groups: torch.Tensor, n_groups: int) -> torch.Tensor:
    out = torch.full(
        (values.shape[0], n_groups), values.max().item(), dtype=values.dtype, device=values.device
    )
    return out.scatter_reduce_(1, groups.expand_as(values), values, reduce="amin")


@dataclass(frozen=True)
class _Problem:
    """Data of problem (28) for a chunk of points (see :func:`embed_max`)."""

    K_S: torch.Tensor
    H: torch.Tensor
    kappa: torch.Tensor
    groups: torch.Tensor
    n_groups: int
    one_sided: torch.Tensor
    strength: float

    def inner(self, gamma: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``h^T gamma``, ``K_S gamma`` and ``<g_j, v(gamma)>`` (``v`` is affine in ``gamma``)."""
        hg = (self.H * gamma).sum(1)
        KG = gamma @ self.K_S
        return hg, KG, ((1.0 + hg) / self.kappa)[:, None] * self.H - KG

    def phi(self, c: torch.Tensor) -> torch.Tensor:
        """``phi(<g_j, v>)``: ``[.]_+`` in one-sided groups, ``|.|`` elsewhere."""
        return torch.where(self.one_sided[self.groups], c.clamp_min(0.0), c.abs())

    def penalty(self, c: torch.Tensor) -> torch.Tensor:
        """``sum_b max_{j in b} phi(<g_j, v>)^2`` (``R(v)^2 / s``)."""
        phi = self.phi(c)
        return _group_max(phi * phi, self.groups, self.n_groups).sum(1)


class _State:
    """Primal and dual quantities of a batch of points at ``gamma``."""

    def __init__(self, gamma: torch.Tensor, problem: _Problem) -> None:
        pb = problem
        hg, KG, self.c = pb.inner(gamma)  # self.c = <g_j, v>
        self.scale = (1.0 + hg) / pb.kappa  # coefficient of k~_x in v(gamma)
        gKg = (gamma * KG).sum(1)
        v_norm2 = (1.0 - hg) * (1.0 + hg) / pb.kappa + gKg
        self.phi = pb.phi(self.c)
        self.primal = v_norm2 + pb.strength * pb.penalty(self.c)
        l1 = _group_sums(gamma.abs(), pb.groups, pb.n_groups)
        self.level = l1 / pb.strength  # t_b at the optimum
        self.dual = (1.0 + hg) ** 2 / pb.kappa - gKg - (l1 * l1).sum(1) / pb.strength
        self.gap = (self.primal - self.dual) / self.primal


def _restricted_solve(active: torch.Tensor, sign: torch.Tensor, problem: _Problem) -> torch.Tensor:
    """Minimiser of the sign-fixed quadratic on each point's active set (dense ``(n, m)``)."""
    K_S, H, kappa, strength = problem.K_S, problem.H, problem.kappa, problem.strength
    n, m = active.shape
    r = int(active.sum(1).max())
    out = torch.zeros(n, m, dtype=K_S.dtype, device=K_S.device)
    if r == 0:
        return out
    # indices of the active entries first (stable order), padded with inactive ones
    order = torch.argsort((~active).to(torch.int8), dim=1, stable=True)[:, :r]
    mask = torch.gather(active, 1, order).to(H.dtype)
    h = torch.gather(H, 1, order) * mask
    h_scaled = h / kappa.sqrt()[:, None]
    s = torch.gather(sign, 1, order) * mask / strength**0.5
    g = problem.groups[order]
    # Q = K_AA - h h^T / kappa + (sigma sigma^T o same group) / s, in place on the gather
    Q = K_S[order[:, :, None], order[:, None, :]]
    Q.baddbmm_(h_scaled[:, :, None], h_scaled[:, None, :], alpha=-1.0)
    Q.addcmul_(s[:, :, None] * s[:, None, :], g[:, :, None] == g[:, None, :])
    Q.mul_(mask[:, :, None] * mask[:, None, :])  # padding rows and columns -> identity
    diag = torch.diagonal(Q, dim1=1, dim2=2)
    scale = diag.sum(1) / mask.sum(1).clamp_min(1.0)
    diag.add_(1.0 - mask).add_((100 * eps(Q.dtype)) * scale[:, None])
    rhs = (h / kappa[:, None]).unsqueeze(-1)
    chol = cholesky_factor(Q, jitter=0.0, strict=False, name="Q")
    sol = chol.solve(rhs)
    failed = chol.failed  # semi-definite to round-off (dependent representers): LU instead
    if not chol.success:
        sol[failed] = solve(Q[failed], rhs[failed], name="Q")
    sol = sol.squeeze(-1) * mask
    return out.scatter_(1, order, sol)


def embed_max(
    K_S: torch.Tensor,
    H: torch.Tensor,
    kappa: torch.Tensor,
    *,
    groups: torch.Tensor | None = None,
    one_sided: bool | torch.Tensor = False,
    strength: float = 1.0,
    tol: float = 1e-8,
    max_iter: int = 100,
    add_per_iter: int = 16,
    memory_budget: float = 2e8,
) -> Embedding:
    r"""Certified solution of eq. (28) with ``R(v)^2 = s sum_b max_{j in b} phi(<g_j, v>)^2``.

    See the module docstring for the dual, the certificate and the algorithm.

    Parameters
    ----------
    K_S : torch.Tensor
        Representer Gram ``G G^T``, shape ``(m, m)``.
    H : torch.Tensor
        ``h(x) = G k~_x`` as rows, shape ``(n, m)``.
    kappa : torch.Tensor
        ``||k~_x||^2 > 0``, shape ``(n,)``.
    groups : torch.Tensor, optional
        Group index in ``[0, n_groups)`` of each representer, shape ``(m,)``; None puts all
        representers in one group (the finite ``S`` of eq. 28).
    one_sided : bool or torch.Tensor
        ``phi = [.]_+`` (hinge, section 6) instead of ``|.|``, for all groups or per group
        (a boolean tensor of shape ``(n_groups,)``).
    strength : float
        ``s > 0``.
    tol : float
        Target relative duality gap of every point.
    max_iter : int
        Maximum outer (working-set) iterations; a warning is issued if the gap is not reached.
    add_per_iter : int
        Violated representers added per point and iteration (besides one per group at start).
    memory_budget : float
        Bytes for the batched working-set matrices (``points x r^2``, with ``r`` at least
        the number of groups); points are processed in chunks that fit.

    Returns
    -------
    Embedding
        ``iota(G_x) = v / J(v)``: ``coef_k = scale / J``, ``coef_rep = gamma / J``, with the
        primal value, dual value and relative gap of each point.
    """
    n, m = H.shape
    if K_S.shape != (m, m) or kappa.shape != (n,):
        raise InputError(
            f"K_S, H, kappa: expected shapes (m, m), (n, m), (n,), got {tuple(K_S.shape)}, "
            f"{tuple(H.shape)}, {tuple(kappa.shape)}"
        )
    if groups is None:
        groups = torch.zeros(m, dtype=torch.long, device=H.device)
    n_groups = int(groups.max()) + 1 if m else 1
    one_sided = torch.as_tensor(one_sided, device=H.device).expand(n_groups)
    r_guess = n_groups + 4 * add_per_iter
    chunk = max(1, min(n, int(memory_budget / (4 * H.element_size() * r_guess**2))))
    parts = [
        _embed_max_batch(
            _Problem(
                K_S, H[i : i + chunk], kappa[i : i + chunk], groups, n_groups, one_sided, strength
            ),
            tol,
            max_iter,
            add_per_iter,
        )
        for i in range(0, n, chunk)
    ]
    result = Embedding(
        *(
            torch.cat([getattr(p, f) for p in parts])
            for f in ("coef_k", "coef_rep", "primal", "dual", "gap")
        ),
        iterations=max(p.iterations for p in parts),
    )
    if bool((result.gap > tol).any()):
        warnings.warn(
            f"embed_max: relative duality gap {float(result.gap.max()):.2e} above "
            f"tol={tol:.1e} after max_iter={max_iter} iterations; raise max_iter or tol",
            EmbeddingConvergenceWarning,
            stacklevel=2,
        )
    return result


def _signs(c: torch.Tensor) -> torch.Tensor:
    return torch.where(c >= 0, 1.0, -1.0).to(c.dtype)


def _embed_max_batch(problem: _Problem, tol: float, max_iter: int, add_per_iter: int) -> Embedding:
    """:func:`embed_max` on one chunk of points (no checks, no warning)."""
    groups, n_groups = problem.groups, problem.n_groups
    gamma = torch.zeros_like(problem.H)
    # start from gamma = 0 with the maximisers of every group at v(gamma = 0), or, for many
    # groups, with the near-maximisers at the semi-smooth Newton point
    if n_groups > 1:
        state, near = _selection_newton(problem, tol), 1.0 - NEAR_TIE
    else:
        state, near = _State(gamma, problem), 1.0
    best = _group_max(state.phi, groups, n_groups)
    active = (state.phi >= near * best[:, groups]) & (state.phi > 0)
    sign = _signs(state.c)
    iterations = 0
    while iterations < max_iter:
        iterations += 1
        gamma, sign = _working_set_qp(gamma, active, sign, problem)
        active = active & (gamma != 0)
        state = _State(gamma, problem)
        todo = state.gap > tol
        if not bool(todo.any()):
            break
        violation = state.phi - state.level[:, groups]
        thresh = tol * state.primal.sqrt()[:, None] * problem.kappa.sqrt()[:, None]
        candidate = (~active) & (violation > thresh) & todo[:, None]
        k = min(add_per_iter, gamma.shape[1])
        top = torch.topk(torch.where(candidate, violation, -1.0), k, dim=1)
        add = torch.zeros_like(active).scatter_(1, top.indices, top.values > 0)
        active = active | add
        sign = torch.where(add, _signs(state.c), sign)
    return Embedding(
        coef_k=state.scale / state.primal,
        coef_rep=gamma / state.primal[:, None],
        primal=state.primal,
        dual=state.dual,
        gap=state.gap,
        iterations=iterations,
    )


def _selection_newton(problem: _Problem, tol: float) -> _State:
    r"""Warm start for many groups: semi-smooth Newton on the piecewise-quadratic primal.

    With the maximiser ``j_b`` of every group fixed, ``J`` is the quadratic
    ``||v||^2 + s sum_b phi(<g_{j_b}, v>)^2``, a minorant of ``J`` touching it at the
    current ``v``; its minimiser on the hyperplane is the restricted solve with one active
    entry per group (no sign constraint: one entry per group is smooth).  An exact line
    search on ``J`` (convex and piecewise quadratic along the segment) between the current
    and the Newton point gives the next iterate; the maximisers are then re-selected.  This
    finds the optimal selection in a few iterations where adding violated representers a
    few at a time needs one working-set pass per change; ties at the optimum are left to
    the active-set method that follows, which certifies the result.  At most
    :data:`NEWTON_ITER` iterations, from ``gamma = 0``; returns the state of the last one.
    """
    groups, n_groups, m = problem.groups, problem.n_groups, problem.H.shape[1]
    gamma = torch.zeros_like(problem.H)
    state = _State(gamma, problem)
    first = torch.arange(m, device=gamma.device).expand_as(gamma)
    for _ in range(NEWTON_ITER):
        best = _group_max(state.phi, groups, n_groups)[:, groups]
        chosen = torch.where((state.phi >= best) & (state.phi > 0), first, m)
        winner = _group_min(chosen, groups, n_groups)[:, groups]  # one maximiser per group
        target = _restricted_solve(first == winner, _signs(state.c), problem)
        gamma = gamma + _line_search(gamma, target, problem)[:, None] * (target - gamma)
        previous, state = state, _State(gamma, problem)
        if bool((previous.primal - state.primal <= tol * previous.primal).all()):
            break
    return state


def _line_search(
    gamma: torch.Tensor, target: torch.Tensor, problem: _Problem, evaluations: int = 40
) -> torch.Tensor:
    """Minimiser in ``[0, 1]`` of the convex ``J(v(gamma + t (target - gamma)))``.

    ``v`` is affine in ``gamma``, so ``<g_j, v>`` is affine in ``t`` and ``||v||^2``
    quadratic: both are evaluated from their values at the ends and the cross term, and
    the minimum is bracketed by golden-section search.
    """
    step = target - gamma
    h_g, K_g, c0 = problem.inner(gamma)
    h_s, K_s, c_step = problem.inner(step)
    kappa = problem.kappa
    dc = c_step - problem.H / kappa[:, None]  # <g_j, v> minus its constant part, for step
    # ||v||^2 = (1 - (h^T gamma)^2) / kappa + gamma^T K_S gamma along gamma + t step
    a0 = (1.0 - h_g * h_g) / kappa + (gamma * K_g).sum(1)
    a1 = -2.0 * h_g * h_s / kappa + 2.0 * (gamma * K_s).sum(1)
    a2 = -h_s * h_s / kappa + (step * K_s).sum(1)

    def value(t: torch.Tensor) -> torch.Tensor:
        return a0 + t * (a1 + t * a2) + problem.strength * problem.penalty(c0 + t[:, None] * dc)

    ratio = (5**0.5 - 1) / 2
    lo, hi = torch.zeros_like(h_g), torch.ones_like(h_g)
    x1, x2 = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    f1, f2 = value(x1), value(x2)
    for _ in range(evaluations):
        left = f1 <= f2  # the minimum is in [lo, x2]: x1 becomes x2
        hi = torch.where(left, x2, hi)
        lo = torch.where(left, lo, x1)
        x_new = torch.where(left, hi - ratio * (hi - lo), lo + ratio * (hi - lo))
        f_new = value(x_new)
        x1, x2 = torch.where(left, x_new, x2), torch.where(left, x1, x_new)
        f1, f2 = torch.where(left, f_new, f2), torch.where(left, f1, f_new)
    return (lo + hi) / 2


def _working_set_qp(
    gamma: torch.Tensor, active: torch.Tensor, sign: torch.Tensor, problem: _Problem
) -> tuple[torch.Tensor, torch.Tensor]:
    """Primal active-set steps: solve on the working set, ratio test, drop blocking entries.

    Only entries sharing their group with another active entry (or in a one-sided group,
    where ``gamma >= 0``) are sign-constrained: for a symmetric group with one active entry
    the penalty ``(sigma gamma_j)^2 = gamma_j^2`` is smooth, so that entry may change sign
    freely (its ``sigma`` follows).  Returns ``(gamma, sign)``.
    """
    groups, n_groups = problem.groups, problem.n_groups
    sided = problem.one_sided[groups]
    active = active.clone()
    for _ in range(int(active.sum(1).max()) + 1):
        target = _restricted_solve(active, sign, problem)
        shared = (_group_sums(active.to(gamma.dtype), groups, n_groups)[:, groups] > 1) | sided
        now, new = sign * gamma, sign * target
        blocking = active & shared & (new < 0)
        if not bool(blocking.any()):
            return target, torch.where(active & ~shared & (target != 0), target.sign(), sign)
        ratio = torch.where(blocking, now / (now - new), torch.inf)
        tau = ratio.min(1).values.clamp(max=1.0)
        gamma = (gamma + tau[:, None] * (target - gamma)) * active
        # drop the first blocking entries, and every entry whose sign the target reverses
        # when it sits at zero already (newly added or on the boundary): one pass for all
        drop = blocking & ((ratio <= tau[:, None]) | (now <= 0))
        gamma = gamma.masked_fill(drop, 0.0)
        active = active & ~drop
        sign = torch.where(active & ~shared & (gamma != 0), torch.sign(gamma), sign)
    return gamma, sign  # pragma: no cover - each pass removes at least one entry
