"""Class labels of the margin classifiers: +-1 targets, one-vs-rest, decisions and probabilities.

The course's classifiers (kernel logistic regression, the bias-free SVMs; course part 1,
sections 3.3-3.6) are binary with ``y in {-1, +1}``.  The estimators map two classes to
``-1`` (``classes_[0]``) and ``+1`` (``classes_[1]``), and more classes one-vs-rest: one binary
problem per class, class ``c`` against the others, decided by the largest decision value.
"""

from __future__ import annotations

from collections.abc import Callable
from numbers import Integral, Real
from typing import Any

import numpy as np
import torch

from kernelkit.estimators._base import KERNEL_CONSTRAINTS, VERBOSE_CONSTRAINT, KernelEstimatorMixin
from kernelkit.kernels._base import Batch
from kernelkit.utils._constraints import Interval
from kernelkit.utils._validation import like_input, signed_targets

MARGIN_CONSTRAINTS: dict[str, list[Any]] = {
    **KERNEL_CONSTRAINTS,
    "lam": [Interval(Real, 0, None, closed="neither")],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "gamma": [Interval(Real, 0, None, closed="neither"), None],
    "degree": [Interval(Integral, 1, None, closed="left"), None],
    "coef0": [Interval(Real, 0, None, closed="left"), None],
    "verbose": VERBOSE_CONSTRAINT,
}
"""Parameters shared by the margin classifiers (``lam > 0`` of the course's objectives)."""


def decision_labels(classes: np.ndarray, scores: torch.Tensor, X: Any) -> Any:
    """Predicted labels from decision values (binary: the sign; else the largest column),
    as a tensor for tensor input with numeric labels."""
    s = scores.detach().cpu()
    index = (s > 0).long().numpy() if s.ndim == 1 else s.argmax(1).numpy()
    labels = classes[index]
    if isinstance(X, torch.Tensor) and labels.dtype.kind in "biuf":
        return torch.as_tensor(labels, device=X.device)
    return labels


def squeeze_binary(scores: torch.Tensor) -> torch.Tensor:
    """Decision values of shape ``(m,)`` for one binary problem, ``(m, p)`` otherwise."""
    return scores[:, 0] if scores.shape[1] == 1 else scores


class MarginClassifierMixin(KernelEstimatorMixin):
    """Targets, decisions and labels of the course's margin classifiers.

    Subclasses implement ``_scores(X)``: the decision values ``f(x)`` as a float64 tensor,
    shape (m,) for two classes, (m, n_classes) one-vs-rest.
    """

    classes_: np.ndarray
    _scores: Callable[[Any], torch.Tensor]

    def _fit_targets(self, X: Any, y: Any) -> tuple[Batch, torch.Tensor]:
        """Validate the parameters, store ``X_fit_`` and ``classes_``; the training batch and
        the +-1 targets of the binary problems (:func:`signed_targets`)."""
        self._validate_params()
        Xb = self._fit_X(X)
        if y is None:
            self._check_y_length(y, len(Xb))
        classes, Y = signed_targets(y)
        self._check_y_length(Y, len(Xb))
        self.classes_ = classes
        return Xb, Y

    def decision_function(self, X: Any) -> Any:
        """``f(x)``: shape (m,) for two classes (positive means ``classes_[1]``), else
        (m, n_classes) one-vs-rest."""
        return like_input(self._scores(X), X)

    def predict(self, X: Any) -> Any:
        """Predicted class labels (the largest decision value)."""
        scores = self._scores(X)
        return decision_labels(self.classes_, scores, X)


__all__ = [
    "MARGIN_CONSTRAINTS",
    "MarginClassifierMixin",
    "decision_labels",
    "signed_targets",
    "squeeze_binary",
]
