"""Kernels given by a precomputed Gram matrix.

:class:`Precomputed` takes Gram values as its input.  At fit time the input is the square
training Gram ``K`` (n x n, symmetric, PSD); at prediction time it is the cross-Gram of new
points against the training points (m x n).  Both are wrapped in a :class:`PrecomputedBatch`,
which also carries the diagonal ``k(x, x)`` when it is known, so kernels built *on* a
precomputed kernel (``FeatureSpaceGaussian(Precomputed(), sigma)``, ``.normalized()``) work
from Gram values alone.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

import torch

from kernelkit.kernels._base import Batch, Kernel
from kernelkit.solvers import check_psd as psd_check
from kernelkit.utils._errors import InputError, NotPSDError
from kernelkit.utils._kinds import InputKind
from kernelkit.utils._numerics import symmetry_tolerance
from kernelkit.utils._validation import to_tensor


@dataclass
class PrecomputedBatch:
    """Rows of a Gram matrix against a reference (training) set.

    Parameters
    ----------
    rows : torch.Tensor
        ``K(items, reference)``, shape ``(m, n_reference)``.
    diag : torch.Tensor, optional
        ``K(item, item)`` for each item; needed by kernels on the feature space of this one.
    ref_index : torch.Tensor, optional
        For items that *are* reference items, their column positions (set for training data).
    """

    rows: torch.Tensor
    diag: torch.Tensor | None = None
    ref_index: torch.Tensor | None = None

    def __len__(self) -> int:
        return self.rows.shape[0]

    @property
    def dtype(self) -> torch.dtype:
        return self.rows.dtype

    def __getitem__(self, idx: Any) -> PrecomputedBatch:
        if isinstance(idx, int):
            idx = slice(idx, idx + 1)
        return PrecomputedBatch(
            self.rows[idx],
            None if self.diag is None else self.diag[idx],
            None if self.ref_index is None else self.ref_index[idx],
        )


SYMMETRISE_FACTOR = 1e4
"""A Gram whose asymmetry is at most this multiple of the symmetry tolerance is symmetrised
with a warning instead of refused (see :func:`check_gram`)."""


def check_gram(
    K: torch.Tensor, *, name: str = "X", check_psd: bool = True, symmetrise: bool = False
) -> torch.Tensor:
    """Check that ``K`` is a square, symmetric and (relatively) PSD Gram matrix.

    Symmetry is checked to ``max|K - K^T| <= tol max|K|`` with ``tol`` of
    :func:`~kernelkit.utils._numerics.symmetry_tolerance` (1e-10 in float64, 1e-5 in float32);
    a Gram within :data:`SYMMETRISE_FACTOR` times that (1e-6 in float64: round-off of a Gram
    computed elsewhere, e.g. in float32 or by a non-symmetric product) is replaced by
    ``(K + K^T) / 2`` with a :class:`UserWarning`; beyond it is an error.  Positivity by
    :func:`kernelkit.solvers.check_psd` (``lambda_min >= -tol lambda_max`` with the relative
    tolerance of :func:`kernelkit.utils._numerics.psd_tolerance`; course part 1, section 1,
    numerical note).  ``symmetrise=True`` replaces any non-symmetric ``K`` by its symmetric
    part ``(K + K^T) / 2`` (the same quadratic form ``x^T K x``; scikit-learn's ``KernelPCA``
    takes a non-symmetric precomputed Gram) with the warning, whatever the asymmetry.
    """
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise InputError(
            f"{name}: expected a square precomputed Gram matrix (n x n), got shape {tuple(K.shape)}"
        )
    scale = float(K.abs().max()) if K.numel() else 0.0
    asym = float((K - K.T).abs().max()) if K.numel() else 0.0
    tol = symmetry_tolerance(K.dtype) * max(scale, 1e-300)
    if tol < asym and (symmetrise or asym <= SYMMETRISE_FACTOR * tol):
        warnings.warn(
            f"{name}: the precomputed Gram matrix is not exactly symmetric (max|K - K^T| = "
            f"{asym:.3g}, max|K| = {scale:.3g}); using (K + K^T) / 2",
            UserWarning,
            stacklevel=3,
        )
        K = (K + K.T) / 2
    elif asym > tol:
        raise InputError(
            f"{name}: expected a symmetric Gram matrix, got max|K - K^T| = {asym:.3g} "
            f"(max|K| = {scale:.3g}); symmetrise with (K + K.T) / 2 if this is round-off"
        )
    if check_psd and K.shape[0] > 0:
        verdict = psd_check(K, name=name, strict=False)
        if not verdict.is_psd:
            raise NotPSDError(
                f"{name}: expected a positive semi-definite Gram matrix, got smallest eigenvalue "
                f"{verdict.min_eigenvalue:.3g} (tolerance {-verdict.tolerance:.1e} x largest "
                f"eigenvalue {verdict.max_eigenvalue:.3g}); is this a similarity that is not a "
                "kernel? Clip negative eigenvalues or add a multiple of the identity"
            )
    return K


class Precomputed(Kernel):
    """A kernel whose values are given: the input *is* the Gram matrix.

    ``fit(K_train)`` takes the square training Gram (checked square, symmetric and PSD);
    ``predict(K_test)`` takes the cross-Gram of new points against the training points.
    Wrap a test block as ``PrecomputedBatch(K_test, diag=k_test_diag)`` when a kernel built on
    this one needs the test points' own values ``k(x, x)``.
    """

    input_kind: ClassVar[InputKind] = InputKind.GRAM
    differentiable: ClassVar[bool] = False

    def __init__(self) -> None:
        super().__init__()

    def prepare(
        self, X: Any, *, dtype: torch.dtype | None = None, reference: bool = False
    ) -> Batch:
        if isinstance(X, PrecomputedBatch):
            return X
        K = to_tensor(X, name="X", dtype=dtype)
        if reference:
            K = check_gram(K)
            return PrecomputedBatch(K, K.diagonal().clone(), torch.arange(K.shape[0]))
        return PrecomputedBatch(K)

    def block(self, X: PrecomputedBatch, Y: PrecomputedBatch) -> torch.Tensor:
        if Y.ref_index is None:
            raise InputError(
                "Y: a precomputed kernel can only be evaluated against the reference (training) "
                "Gram; pass the square training Gram as Y"
            )
        needed = int(Y.ref_index.max()) + 1 if len(Y) else 0
        if X.rows.shape[1] < needed:
            raise InputError(
                f"X: expected Gram rows with {needed} columns (one per training point), "
                f"got {X.rows.shape[1]}"
            )
        return X.rows[:, Y.ref_index]

    def block_diag(self, X: PrecomputedBatch) -> torch.Tensor:
        if X.diag is None:
            raise InputError(
                "X: the diagonal k(x, x) of these points is unknown from a cross-Gram alone; "
                "pass PrecomputedBatch(K_test, diag=k_test_diag)"
            )
        return X.diag
