"""Invariance builders: the common contract and the representer container.

An invariance turns training data into a finite set ``S`` of *invariance representers*
``g_j`` embedded in the Nyström space of the base kernel (Ma et al., ICML 2020, Proposition 1:
a semi-norm is ``R(f) = sup_{g in S} <f, g>``).  Builders receive a differentiable feature
map ``embed(X) -> k~_X`` (rows ``K_z^{-1/2} k_z(x)``, eqs. 20-21) and return a
:class:`Representers`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import torch

FeatureMap = Callable[[torch.Tensor], torch.Tensor]
"""``embed(X) -> k~_X``: rows of the base Nyström embedding, differentiable in ``X``."""


@dataclass(frozen=True)
class Representers:
    r"""Invariance representers ``g_j = sum_r left[j, r] (x) right[j, r]``.

    For invariances on inputs ``x`` the representers are vectors of the Nyström space
    (``right`` is None, ``left`` has shape ``(m, 1, d)``).  For the joint kernels
    ``k(x, x') k_y(y, y')`` of sections 5-6 they are ``d x L`` matrices of low rank ``R``,
    ``g_j = sum_r left[j, r] right[j, r]^T`` (``left`` ``(m, R, d)``, ``right`` ``(m, R, L)``),
    with the Frobenius inner product.

    Attributes
    ----------
    left, right : torch.Tensor, torch.Tensor or None
        The factors.
    point : torch.Tensor
        Source index of each representer (a training point, a mixup pair, ...), ``(m,)``.
        The ``"sum_of_max"`` aggregation takes the max within each ``point``.
    kind : torch.Tensor
        Which transformation / grid value / constraint made it, ``(m,)``.  The
        ``"transforms"`` aggregation sums within each ``kind`` and takes the max over kinds.
    one_sided : bool
        Hinge penalty ``[<g, f>]_+`` (section 6) instead of ``|<g, f>|``.
    group_by : str or None
        The aggregation the source prescribes (``"point"`` for eqs. 33 and 36-37), or None
        when the estimator's ``aggregate`` / ``reading`` decide.
    """

    left: torch.Tensor
    right: torch.Tensor | None
    point: torch.Tensor
    kind: torch.Tensor
    one_sided: bool = False
    group_by: str | None = None

    def __len__(self) -> int:
        return int(self.left.shape[0])

    def gram(self, other: Representers | None = None) -> torch.Tensor:
        """Inner products ``<g_i, g'_j>``, shape ``(m, m')``."""
        other = self if other is None else other
        L1, L2 = self.left, other.left
        inner = torch.einsum("ird,jsd->ijrs", L1, L2)
        if self.right is not None and other.right is not None:
            inner = inner * torch.einsum("irl,jsl->ijrs", self.right, other.right)
        return inner.sum((2, 3))

    def dense(self) -> torch.Tensor:
        """The representers as rows of a matrix, shape ``(m, d)`` or ``(m, d * L)``."""
        if self.right is None:
            return self.left[:, 0, :]
        return torch.einsum("mrd,mrl->mdl", self.left, self.right).reshape(len(self), -1)


class Invariance(ABC):
    """Base class of the invariance builders of :mod:`kernelkit.invariance`.

    Subclasses take their settings in ``__init__`` (stored under the same names, so
    scikit-learn's ``clone`` works on an estimator holding them) and implement
    :meth:`representers`.

    Attributes
    ----------
    joint : bool
        Whether the representers live on the joint kernel of inputs and labels (sections
        5-6); such invariances need ``y`` and give one representation per (x, label).
    """

    joint: ClassVar[bool] = False

    @abstractmethod
    def representers(self, embed: FeatureMap, X: torch.Tensor, y: Any = None) -> Representers:
        """Representers of the invariance on the training data ``X`` (and labels ``y``)."""

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({params})"
