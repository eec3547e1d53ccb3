r"""Joint (input, label) invariances: mixup (section 5) and label logic (section 6).

Both use the joint kernel ``k((x, y), (x', y')) = k(x, x') <y, y'>`` (section 5: "whose
simplest form is decomposed as k^x(x, x') k^y(y, y')", with a linear kernel on one-hot /
indicator labels), so the representer of ``(x, l)`` is ``k~_x e_l^T`` (a ``d x L`` matrix)
and a function is ``f(x, l) = <V, k~_x e_l^T>``.  The embedding returns one representation
per (x, label); a linear model on them gives per-label scores (:func:`joint_scores`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from kernelkit.invariance._base import FeatureMap, Invariance, Representers
from kernelkit.utils._errors import InputError
from kernelkit.utils._seeding import check_random_state
from kernelkit.utils._validation import check_int


class MixupInvariance(Invariance):
    r"""Mixup as an invariance (section 5, eqs. 32-34).

    For a pair ``(i, j)`` of training points and ``lambda`` in ``[0, 1]``, with
    ``x^_lambda = lambda x_i + (1 - lambda) x_j`` and ``y~_lambda = lambda y_i + (1 - lambda)
    y_j``, the invariance is the derivative ``g_ij(lambda) = d/d lambda f(x^_lambda,
    y~_lambda)``, represented by

    .. math:: Z^{ij}_\lambda = (\partial_\lambda \tilde k_{\hat x_\lambda})\,
              \tilde y_\lambda^T + \tilde k_{\hat x_\lambda} (y_i - y_j)^T

    (the derivative of the Nyström features along ``x_i - x_j`` by forward-mode autograd
    through the kernel).  Eq. (33) penalises ``(1/n^2) sum_ij max_lambda <V, Z>^2``: here
    the mean over ``n_pairs`` sampled pairs of the max over a grid of ``n_grid`` values of
    ``lambda`` (the paper's "grid style search"; a finer grid refines it), i.e. the
    ``"sum_of_max"`` grouping by pair with representers scaled by ``1 / sqrt(n_pairs)``.

    Parameters
    ----------
    n_pairs : int, optional
        Number of pairs ``p`` drawn uniformly (``i != j``); the number of training points by
        default (the paper uses ``p in {n, 2n, 4n}``).
    n_grid : int
        Grid values of ``lambda`` (``linspace(0, 1, n_grid)``), at least 2.
    random_state : int, Generator or None
        Seed of the pair draw.
    """

    joint = True

    def __init__(self, n_pairs: int | None = None, *, n_grid: int = 11, random_state: Any = None):
        self.n_pairs = n_pairs
        self.n_grid = n_grid
        self.random_state = random_state

    def pairs(self, n: int) -> np.ndarray:
        """The sampled pairs ``(i, j)``, shape ``(n_pairs, 2)``."""
        if n < 2:
            raise InputError(f"X: mixup needs at least 2 training points, got {n}")
        p = n if self.n_pairs is None else check_int(self.n_pairs, name="n_pairs")
        rng = check_random_state(self.random_state)
        i = rng.integers(0, n, size=p)
        j = (i + rng.integers(1, n, size=p)) % n  # uniform over j != i
        return np.stack([i, j], axis=1)

    def representers(self, embed: FeatureMap, X: torch.Tensor, y: Any = None) -> Representers:
        """The ``Z^{ij}_lambda`` of every sampled pair and grid value, grouped by pair."""
        Y = _indicator(y, X.shape[0])
        n_grid = check_int(self.n_grid, name="n_grid", minimum=2)
        pairs = torch.as_tensor(self.pairs(X.shape[0]), device=X.device)
        lam = torch.linspace(0.0, 1.0, n_grid, dtype=X.dtype, device=X.device)
        p = pairs.shape[0]
        i, j = pairs[:, 0].repeat_interleave(n_grid), pairs[:, 1].repeat_interleave(n_grid)
        lam = lam.repeat(p)[:, None]
        X_hat = lam * X[i] + (1 - lam) * X[j]
        B, A = torch.autograd.functional.jvp(embed, (X_hat,), (X[i] - X[j],))
        y_mix = lam * Y[i] + (1 - lam) * Y[j]
        scale = 1.0 / np.sqrt(p)
        return Representers(
            left=torch.stack([A, B], 1).detach() * scale,
            right=torch.stack([y_mix, Y[i] - Y[j]], 1),
            point=torch.arange(p, device=X.device).repeat_interleave(n_grid),
            kind=torch.arange(n_grid, device=X.device).repeat(p),
            group_by="point",
        )


class LabelLogicInvariance(Invariance):
    r"""Implications and exclusions between labels (section 6, eqs. 35-37).

    An implication ``a -> b`` ("a cat is an animal") asks ``f(x, b) >= f(x, a)``: hinge
    penalty ``[f(x, a) - f(x, b)]_+``, representer ``k~_x (e_a - e_b)^T``; an exclusion
    ``a <~> b`` ("not both") asks ``f(x, a) + f(x, b) <= 0``: ``[f(x, a) + f(x, b)]_+``,
    representer ``k~_x (e_a + e_b)^T``.  Eqs. (36)-(37): ``R(f)^2 = E_x [max_{a -> b}
    [.]_+^2 + max_{a <~> b} [.]_+^2]`` over the training points, i.e. one-sided groups per
    (training point, kind of constraint), representers scaled by ``1 / sqrt(n)``.

    Parameters
    ----------
    implications : sequence of (a, b)
        Pairs ``a -> b`` (child -> parent in a hierarchy).
    exclusions : sequence of (a, b)
        Mutually exclusive pairs (siblings).
    labels : sequence, optional
        Label names in the column order of ``y``; when given, pairs use these names,
        otherwise column indices.

    Raises
    ------
    InputError
        No constraint at all, or a label outside the hierarchy / the columns of ``y``.
    """

    joint = True

    def __init__(
        self,
        implications: Sequence[tuple[Any, Any]] = (),
        exclusions: Sequence[tuple[Any, Any]] = (),
        *,
        labels: Sequence[Any] | None = None,
    ):
        self.implications = implications
        self.exclusions = exclusions
        self.labels = labels

    def constraint_vectors(self, n_labels: int) -> tuple[np.ndarray, np.ndarray]:
        """``e_a - e_b`` of each implication and ``e_a + e_b`` of each exclusion."""
        pairs = {"implications": list(self.implications), "exclusions": list(self.exclusions)}
        if not pairs["implications"] and not pairs["exclusions"]:
            raise InputError(
                "implications, exclusions: expected at least one constraint, got an empty "
                "invariance set"
            )
        names = None if self.labels is None else list(self.labels)
        if names is not None and len(names) != n_labels:
            raise InputError(f"labels: expected {n_labels} names (columns of y), got {len(names)}")
        out = {}
        for kind, sign in (("implications", -1.0), ("exclusions", 1.0)):
            rows = []
            for k, pair in enumerate(pairs[kind]):
                if len(tuple(pair)) != 2:
                    raise InputError(f"{kind}[{k}]: expected a pair (a, b), got {pair!r}")
                index = [self._index(label, names, n_labels, f"{kind}[{k}]") for label in pair]
                row = np.zeros(n_labels)
                row[index[0]] += 1.0
                row[index[1]] += sign
                rows.append(row)
            out[kind] = np.array(rows).reshape(-1, n_labels)
        return out["implications"], out["exclusions"]

    @staticmethod
    def _index(label: Any, names: list[Any] | None, n_labels: int, where: str) -> int:
        if names is not None:
            if label not in names:
                raise InputError(
                    f"{where}: label {label!r} is outside the hierarchy; known labels: {names}"
                )
            return names.index(label)
        if isinstance(label, (int, np.integer)) and 0 <= label < n_labels:
            return int(label)
        raise InputError(
            f"{where}: label {label!r} is outside the hierarchy: expected a column index in "
            f"[0, {n_labels}) of y (or pass labels=[...] to use names)"
        )

    def representers(self, embed: FeatureMap, X: torch.Tensor, y: Any = None) -> Representers:
        """``k~_{x_i} c^T`` for every training point and constraint, grouped as eq. (36)."""
        Y = _indicator(y, X.shape[0])
        n = X.shape[0]
        impl, excl = self.constraint_vectors(Y.shape[1])
        C = torch.as_tensor(np.vstack([impl, excl]), dtype=X.dtype, device=X.device)
        n_c = C.shape[0]
        base = embed(X).detach() / np.sqrt(n)
        is_excl = torch.arange(n_c, device=X.device) >= len(impl)
        point = 2 * torch.arange(n, device=X.device).repeat_interleave(n_c) + is_excl.repeat(n)
        return Representers(
            left=base.repeat_interleave(n_c, 0)[:, None, :],
            right=C.repeat(n, 1)[:, None, :],
            point=point,
            kind=torch.arange(n_c, device=X.device).repeat(n),
            one_sided=True,
            group_by="point",
        )


def _indicator(y: Any, n: int) -> torch.Tensor:
    if not isinstance(y, torch.Tensor) or y.ndim != 2 or y.shape[0] != n:
        raise InputError(
            f"y: joint invariances need an (n, n_labels) label indicator tensor with n={n}, "
            f"got {type(y).__name__} of shape {getattr(y, 'shape', None)}"
        )
    return y


def joint_scores(features: Any, model: Any) -> np.ndarray:
    """Per-label scores ``w . iota(x, l)`` of a fitted linear model, shape ``(n, n_labels)``.

    ``features`` is the ``(n, n_labels, D)`` representation of a joint ``InvariantEmbedding``
    (``embed(X).features``) or its ``transform`` output ``(n, n_labels * D)``, where ``D``
    is then read from ``model.n_features_in_``; ``model`` a fitted binary linear model
    (``decision_function``) trained on the rows ``features.reshape(-1, D)`` with targets
    ``Y.reshape(-1)`` (1 when ``x`` has label ``l``).  Predict a class by
    ``scores.argmax(1)`` (mixup) or labels by ``scores > 0``.
    """
    F = np.asarray(features.detach().cpu() if isinstance(features, torch.Tensor) else features)
    D = getattr(model, "n_features_in_", None)
    if F.ndim == 2 and D and F.shape[1] % D == 0:
        F = F.reshape(F.shape[0], F.shape[1] // D, D)
    if F.ndim != 3:
        raise InputError(
            f"features: expected shape (n, n_labels, D), or (n, n_labels * D) with D the "
            f"model's n_features_in_ ({D}), got {F.shape}"
        )
    n, L, D = F.shape
    return np.asarray(model.decision_function(F.reshape(n * L, D))).reshape(n, L)
