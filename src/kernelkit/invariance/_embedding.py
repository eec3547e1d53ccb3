r"""Assemble the semi-norm from invariance representers and embed points (eqs. 19-28).

The aggregations offered (Ma et al., ICML 2020; ``s`` is ``strength``):

* ``aggregate="sum"``: ``R(v)^2 = s sum_j <g_j, v>^2``, the quadratic case, equal to the
  kernel warping of Ma et al. (2019), eq. (1): closed form
  (:func:`kernelkit.models._sip.embed_quadratic`).
* ``aggregate="max"`` with a ``reading`` of section 7.1 ("Dual and Embed took their max as
  the R(f)^2"), which does not say where the max is taken:

  - ``"pairs"``: ``s max_{t, j} <g_{t,j}, v>^2`` over every (transformation, training point)
    representer: the finite ``S`` of eq. (28) and appendix D;
  - ``"transforms"``: ``s max_t sum_j <g_{t,j}, v>^2``: the max over transformations of the
    warping penalty of each;
  - ``"sum_of_max"``: ``s sum_j max_t <g_{t,j}, v>^2``: per training point the max over
    transformations, summed (the pattern of eqs. 33 and 36-37).

  Each invariance of the list adds its own term; representers that prescribe their grouping
  (mixup pairs, label constraints) always use ``"sum_of_max"`` over their ``point``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from kernelkit.invariance._base import Representers
from kernelkit.models._sip import Embedding, embed_quadratic, embed_quadratic_primal
from kernelkit.models._sip_blocks import embed_block_max
from kernelkit.models._sip_metric import local_metric_features, quadratic_metric_features
from kernelkit.models._sip_polar import embed_max
from kernelkit.solvers._spectra import symmetric_eigvalsh
from kernelkit.utils._errors import InputError
from kernelkit.utils._numerics import eps

AGGREGATES = ("max", "sum")
READINGS = ("pairs", "transforms", "sum_of_max")
FEATURE_MAPS = ("iota", "metric")


@dataclass
class InvariantFeatures:
    r"""Embedded points and their optimality certificates.

    Attributes
    ----------
    features : torch.Tensor
        ``iota(G_x)`` (or ``M_{p(x)}^{-1/2} k~_x`` for ``feature_map="metric"``), shape
        ``(n, d)``, or ``(n, n_labels, d * n_labels)`` for joint
        invariances (one representation per (x, label), row-major ``d x n_labels``).
    gap : torch.Tensor
        Relative duality gap ``(J(v) - D) / J(v)`` of problem (28) at each point (the
        certificate: the embedding is optimal up to this relative error in the objective);
        for ``aggregate="sum"`` the relative residual of the normal equations.  Shape ``(n,)``
        or ``(n, n_labels)``.
    primal, dual : torch.Tensor
        ``J(v)`` and the dual lower bound, same shape as ``gap``.
    iterations : int
        Iterations of the polar solver (1 for closed forms).
    """

    features: torch.Tensor
    gap: torch.Tensor
    primal: torch.Tensor
    dual: torch.Tensor
    iterations: int = 1


@dataclass
class SemiNorm:
    """The assembled semi-norm: representers, their Gram and the grouping of the max."""

    representers: list[Representers]
    dense: torch.Tensor  # (m, D)
    gram: torch.Tensor | None  # (m, m); None where the embedding works in feature space
    groups: torch.Tensor  # (m,) group of the max (aggregate="max", readings a/c)
    one_sided: torch.Tensor  # (n_groups,)
    blocks: list[torch.Tensor]  # reading "transforms": representer indices of each block
    aggregate: str
    reading: str
    joint: bool
    n_labels: int


def _check_choice(value: object, choices: tuple[str, ...], name: str) -> str:
    if not isinstance(value, str) or value not in choices:
        raise InputError(f"{name}: expected one of {choices}, got {value!r}")
    return value


def assemble(
    representers: list[Representers], *, aggregate: str, reading: str, n_labels: int = 0
) -> SemiNorm:
    """Group the representers of each invariance as ``aggregate`` and ``reading`` say."""
    _check_choice(aggregate, AGGREGATES, "aggregate")
    _check_choice(reading, READINGS, "reading")
    joint = any(r.right is not None for r in representers)
    if joint and not all(r.right is not None for r in representers):
        raise InputError(
            "invariances: expected either only input invariances or only joint (x, label) "
            "invariances (MixupInvariance, LabelLogicInvariance), got a mix"
        )
    groups, one_sided, blocks = [], [], []
    n_groups, offset = 0, 0
    for reps in representers:
        m = len(reps)
        by = reps.group_by or ("point" if reading == "sum_of_max" else "all")
        if reps.group_by is None and reading == "transforms" and aggregate == "max":
            for kind in torch.unique(reps.kind):
                blocks.append(offset + torch.nonzero(reps.kind == kind).flatten())
        if by == "point":
            _, local = torch.unique(reps.point, return_inverse=True)
        else:
            local = torch.zeros(m, dtype=torch.long, device=reps.point.device)
        count = int(local.max()) + 1 if m else 0
        groups.append(local + n_groups)
        one_sided.extend([reps.one_sided] * count)
        n_groups += count
        offset += m
    dense = torch.cat([r.dense() for r in representers])
    # the representer Gram is needed by the solvers that work in representer space: the
    # max readings (a) and (c), and the quadratic closed form when m <= D (Woodbury)
    in_feature_space = (aggregate == "max" and bool(blocks)) or (
        aggregate == "sum" and dense.shape[0] > dense.shape[1]
    )
    if blocks and len(blocks) != sum(len(torch.unique(r.kind)) for r in representers):
        raise InputError(
            "reading: 'transforms' needs every invariance to leave its grouping to the "
            "estimator; joint invariances prescribe 'sum_of_max'"
        )
    return SemiNorm(
        representers=representers,
        dense=dense,
        gram=None if in_feature_space else dense @ dense.T,
        groups=torch.cat(groups),
        one_sided=torch.tensor(one_sided, dtype=torch.bool, device=dense.device),
        blocks=blocks,
        aggregate=aggregate,
        reading=reading,
        joint=joint,
        n_labels=n_labels,
    )


def seminorm_scale(norm: SemiNorm) -> float:
    r"""``sup_{||v|| = 1} R(v)^2`` (strength 1): the scale of the semi-norm against ``||v||^2``.

    From the spectrum of ``G^T G``: the quadratic case ``lambda_max(G^T G)``; the reading
    ``"pairs"`` ``max_j ||g_j||^2``; ``"transforms"`` ``max_t lambda_max(G_t^T G_t)``;
    ``"sum_of_max"`` and the prescribed groupings (mixup, label logic) the upper bound
    ``lambda_max(G^T G)``.  Eigenvalues of the smaller of ``G G^T`` and ``G^T G``.
    """
    G = norm.dense
    if G.shape[0] == 0:
        return 1.0

    def top(A: torch.Tensor) -> float:
        small = A @ A.T if A.shape[0] <= A.shape[1] else A.T @ A
        return float(symmetric_eigvalsh((small + small.T) / 2)[-1])

    if norm.aggregate == "max" and norm.blocks:
        value = max(top(G[idx]) for idx in norm.blocks)
    elif norm.aggregate == "max" and norm.reading == "pairs" and not norm.joint:
        value = float((G * G).sum(1).max())
    else:
        value = top(G)
    return value if value > 0 else 1.0


def _joint_points(k_tilde: torch.Tensor, n_labels: int) -> torch.Tensor:
    """``vec(k~_x e_l^T)`` for every (x, l), shape ``(n * L, d * L)`` (row-major ``d x L``)."""
    eye = torch.eye(n_labels, dtype=k_tilde.dtype, device=k_tilde.device)
    return torch.einsum("nd,lk->nldk", k_tilde, eye).reshape(-1, k_tilde.shape[1] * n_labels)


def embed_points(
    k_tilde: torch.Tensor,
    norm: SemiNorm | None,
    *,
    strength: float,
    tol: float,
    max_iter: int,
    feature_map: str = "iota",
) -> InvariantFeatures:
    """``iota(G_x)`` of eq. (26) for every row of ``k_tilde`` under the semi-norm ``norm``.

    ``norm=None`` (no invariance, ``R = 0``) returns ``k~_x`` itself with zero gaps.  The
    target gap is at least ``50 eps`` of the dtype (``6e-6`` in float32), the resolution of a
    difference of two values of order ``J``.  ``feature_map="metric"`` returns
    ``M_{p(x)}^{-1/2} k~_x`` instead of ``iota = M_{p(x)}^{-1} k~_x``
    (:mod:`kernelkit.models._sip_metric`: the features on which a linear model's ridge penalty
    is the s.i.p. norm; not offered for the ``"transforms"`` reading, whose per-point metric
    is a sum of ``d x d`` blocks); the certificates are those of ``iota``.
    """
    _check_choice(feature_map, FEATURE_MAPS, "features")
    tol = max(tol, 50 * eps(k_tilde.dtype))
    if norm is None or norm.dense.shape[0] == 0:
        zero = torch.zeros(k_tilde.shape[0], dtype=k_tilde.dtype, device=k_tilde.device)
        value = 1.0 / (k_tilde * k_tilde).sum(1)
        return InvariantFeatures(k_tilde, zero, value, value, 1)
    n = k_tilde.shape[0]
    points = _joint_points(k_tilde, norm.n_labels) if norm.joint else k_tilde
    G = norm.dense
    if norm.gram is None and norm.aggregate == "sum":
        result, features = embed_quadratic_primal(G, points, strength=strength)
    elif norm.aggregate == "max" and norm.blocks:
        if feature_map == "metric":
            raise InputError(
                "features: 'metric' is offered for aggregate='sum' and the 'pairs' / "
                "'sum_of_max' readings, got reading='transforms'"
            )
        result, features = embed_block_max(
            [G[idx] for idx in norm.blocks],
            points,
            strength=strength,
            tol=tol,
            max_iter=max_iter,
        )
    else:
        H = points @ G.T
        kappa = (points * points).sum(1)
        result: Embedding
        if norm.aggregate == "sum":
            result = embed_quadratic(norm.gram, H, kappa, strength=strength)
        else:
            result = embed_max(
                norm.gram,
                H,
                kappa,
                groups=norm.groups,
                one_sided=norm.one_sided,
                strength=strength,
                tol=tol,
                max_iter=max_iter,
            )
        features = result.vectors(points, G)
        if feature_map == "metric" and norm.aggregate == "max":
            features = local_metric_features(points, features, result.coef_rep, G)
    if feature_map == "metric" and norm.aggregate == "sum":
        features = quadratic_metric_features(points, G, strength=strength)
    if norm.joint:
        L = norm.n_labels
        return InvariantFeatures(
            features.reshape(n, L, -1),
            result.gap.reshape(n, L),
            result.primal.reshape(n, L),
            result.dual.reshape(n, L),
            max(result.iterations, 1),
        )
    return InvariantFeatures(
        features, result.gap, result.primal, result.dual, max(result.iterations, 1)
    )
