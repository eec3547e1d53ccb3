r"""Parameter checks and the full-batch fit of
:class:`~kernelkit.estimators._autoencoder.KernelAutoencoder` (exact or landmark mode:
every Gram block of the training data held, L-BFGS / Adam on the whole objective or the
paper's Algorithm 1)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from kernelkit.estimators._base import progress_of, renamed_parameter, result_dtype
from kernelkit.gram._centres import take
from kernelkit.gram._distances import feature_space_median
from kernelkit.gram._nystrom import cholesky_basis, choose_centres
from kernelkit.kernels import FeatureSpaceGaussian, Gaussian, Kernel, Linear
from kernelkit.kernels._base import Batch
from kernelkit.kernels._specs import median_sigma
from kernelkit.models import build_autoencoder, train
from kernelkit.models._autoencoder import AutoencoderData, train_alternating
from kernelkit.utils._errors import InputError
from kernelkit.utils._seeding import RandomStateLike, as_seed
from kernelkit.utils._validation import check_int, check_positive

__all__ = [
    "FitSetup",
    "TrainingGrams",
    "build",
    "check_params",
    "fit_full_batch",
    "run_training",
    "supports_and_first_kernel",
    "training_grams",
]


def check_params(
    est: Any, lam: float | Sequence[float]
) -> tuple[list[int], list[float], list[Kernel | None]]:
    """``(dims, lam per layer, kernel per layer)`` of ``est`` with ``lam``; named errors."""
    dims = est.dims
    if isinstance(dims, (int, np.integer)):
        dims = (dims,)
    if not isinstance(dims, Sequence) or len(dims) == 0:
        raise InputError(f"dims: expected a non-empty sequence of positive ints, got {dims!r}")
    dims = [check_int(d, name="dims", minimum=1) for d in dims]
    L = len(dims) + 1
    lams = [lam] * L if not isinstance(lam, Sequence) else list(lam)
    if len(lams) != L:
        raise InputError(f"lam: expected a float or {L} values (one per layer), got {lam!r}")
    lams = [check_positive(v, name="lam", strict=False) for v in lams]
    kernels = est.kernels
    if kernels is None or isinstance(kernels, Kernel):
        kerns: list[Kernel | None] = [kernels] * L
    else:
        kerns = list(kernels)
        if len(kerns) != L:
            raise InputError(
                f"kernels: expected a Kernel, None or {L} entries (one per layer), got {len(kerns)}"
            )
    for k in kerns:
        if k is not None and not isinstance(k, Kernel):
            raise InputError(f"kernels: expected kernelkit Kernels or None, got {k!r}")
    last = kerns[-1]
    if est.closed_form and lams[-1] == 0 and not isinstance(last, Linear):
        raise InputError(
            "lam: the last layer's lam must be > 0 with a closed-form last layer and a "
            f"non-linear kernel ({type(last).__name__ if last else 'default Gaussian'}); "
            "lam = 0 is allowed with a Linear() last kernel (ridgeless projection)"
        )
    if est.code_layer is not None:
        if est.code_layer >= len(dims):
            raise InputError(
                f"code_layer: expected an index in dims (< {len(dims)}), got {est.code_layer}"
            )
    return dims, lams, kerns


def _first_kernel(est: Any, spec: Kernel | None, ref: Batch) -> Kernel:
    """The first layer's kernel on the raw input (vectors or the input kernel's space); the
    median heuristic (``spec`` None) on ``ref``."""
    if est.input_kernel_ is None:
        return Gaussian(sigma=median_sigma(ref)) if spec is None else spec
    base = est.input_kernel_
    if isinstance(spec, Linear):
        return base
    if spec is None or isinstance(spec, Gaussian):
        if spec is None:
            sigma = feature_space_median(base, ref, memory_budget=est.memory_budget)
        else:
            sigma = spec.sigma
        return FeatureSpaceGaussian(base, sigma=sigma)
    raise InputError(
        "kernels[0]: with an input_kernel the first layer acts on its feature space; "
        f"expected Linear(), Gaussian(sigma) or None, got {spec!r}"
    )


LANDMARK_METHODS = {"random": "uniform", "kmeans": "kmeans++"}
"""The deprecated ``landmark_method`` values in the ``centers`` vocabulary."""


def _choose_landmarks(
    est: Any, Xb: Batch, random_state: RandomStateLike
) -> tuple[np.ndarray | None, Batch | None]:
    """Landmark indices and landmarks (``None, None``: exact mode), chosen by
    :func:`~kernelkit.gram._nystrom.choose_centres` in the first layer's input feature space."""
    m = renamed_parameter(est, "landmarks", "n_centers")
    centers = renamed_parameter(est, "landmark_method", "centers", LANDMARK_METHODS)
    if m is None and isinstance(centers, str):
        return None, None
    kern = est.input_kernel_ if est.input_kernel is not None else Linear()
    choice = choose_centres(
        kern,
        Xb,
        len(Xb) if m is None else m,
        centers,
        random_state=random_state,
        exact="the exact autoencoder",
        stacklevel=6,
    )
    if choice.exact:
        return None, None
    if choice.indices is None:
        return np.full(len(choice.centres), -1), choice.centres
    return choice.indices, choice.centres


def supports_and_first_kernel(
    est: Any,
    Xb: Batch,
    spec: Kernel | None,
    rows: np.ndarray | None,
    random_state: RandomStateLike,
) -> tuple[np.ndarray | None, Batch, Kernel]:
    """Landmark indices (``None``: exact mode) drawn among ``rows`` of ``Xb`` (``None``: all),
    the supports (all of ``Xb``, or the landmarks) and the first layer's kernel with the
    median heuristic on the landmarks or those rows."""
    pool = Xb if rows is None else take(Xb, rows)
    idx, ref = _choose_landmarks(est, pool, random_state)
    if idx is not None and rows is not None:
        idx = np.where(idx >= 0, rows[np.maximum(idx, 0)], -1)
    return idx, Xb if ref is None else ref, _first_kernel(est, spec, pool if ref is None else ref)


@dataclass
class FitSetup:
    """What both fits (full batch, minibatch) start from.

    Attributes
    ----------
    Xb, ref : Batch
        Prepared training data and the supports (all of it, or the landmarks).
    first : Kernel
        The first layer's kernel on the input.
    dims, kerns, lams : lists
        Layer widths, kernels (``None``: median heuristic) and ``lam`` per layer.
    random_state : int, generator or None
        Seed of the initialisation.
    """

    Xb: Batch
    ref: Batch
    first: Kernel
    dims: list[int]
    kerns: list[Kernel | None]
    lams: list[float]
    random_state: RandomStateLike


@dataclass
class TrainingGrams:
    """Gram blocks of training points against the supports (the points themselves, or the
    landmarks), from which the objective's data are formed.

    Attributes
    ----------
    K1 : tensor, shape (n, m)
        First-layer Gram against the supports.
    K1_support : tensor, shape (m, m) or None
        First-layer Gram of the landmarks; ``None`` in exact mode (``K1`` is square).
    K_in : tensor, shape (n, m) or None
        Input-kernel Gram against the supports (K2AE); ``None`` for a finite KAE.
    K_in_support : tensor, shape (m, m) or None
        Input-kernel Gram of the landmarks (K2AE, landmark mode).
    k_diag : tensor, shape (n,) or None
        ``k_in(x, x)`` (K2AE).
    targets : tensor, shape (n, d) or None
        The points themselves (finite KAE).
    """

    K1: torch.Tensor
    K1_support: torch.Tensor | None
    K_in: torch.Tensor | None
    K_in_support: torch.Tensor | None
    k_diag: torch.Tensor | None
    targets: torch.Tensor | None

    @property
    def exact(self) -> bool:
        return self.K1_support is None

    def rows(self, index: np.ndarray, columns: np.ndarray | None = None) -> TrainingGrams:
        """The blocks of the points ``index``; in exact mode against the supports
        ``columns`` (default: ``index``, the square block of a training subset)."""
        i = torch.as_tensor(index, dtype=torch.long)
        j = i if columns is None else torch.as_tensor(columns, dtype=torch.long)

        def cut(M: torch.Tensor | None) -> torch.Tensor | None:
            if M is None:
                return None
            return M[i][:, j] if self.exact else M[i]

        return TrainingGrams(
            cut(self.K1),
            self.K1_support,
            cut(self.K_in),
            self.K_in_support,
            None if self.k_diag is None else self.k_diag[i],
            None if self.targets is None else self.targets[i],
        )

    def data(self) -> tuple[AutoencoderData, Any]:
        """The objective's data and the input kernel's basis on the supports (K2AE: the
        Cholesky factor ``R R^T = K_in(S, S)``; ``None`` for a finite KAE)."""
        if self.targets is not None:
            B = self.targets
            return AutoencoderData(self.K1, B, float((B * B).sum()), self.K1_support, B), None
        assert self.K_in is not None and self.k_diag is not None
        basis = cholesky_basis(self.K_in if self.exact else self.K_in_support)
        B = basis.factor if self.exact else basis.features(self.K_in)
        return AutoencoderData(self.K1, B, float(self.k_diag.sum()), self.K1_support), basis


def training_grams(est: Any, setup: FitSetup) -> TrainingGrams:
    """The Gram blocks of ``setup``'s training data (exact or landmark mode)."""
    Xb, ref, first = setup.Xb, setup.ref, setup.first
    dtype = result_dtype(Xb)
    exact = est.landmark_indices_ is None
    with torch.no_grad():
        K1 = est._gram(first, Xb, None if exact else ref, dtype)
        K1_support = None if exact else est._gram(first, ref, None, dtype)
        if est.input_kernel_ is None:
            return TrainingGrams(K1, K1_support, None, None, None, Xb.to(dtype))
        base = est.input_kernel_
        K_in_support = est._gram(base, ref, None, dtype)
        K_in = K_in_support if exact else est._gram(base, Xb, ref, dtype)
        k_diag = base.block_diag(Xb)
    return TrainingGrams(K1, K1_support, K_in, None if exact else K_in_support, k_diag, None)


def build(est: Any, setup: FitSetup, data: AutoencoderData, lams: list[float]) -> Any:
    """The initialised model of ``est`` on ``data`` (:func:`kernelkit.models.build_autoencoder`)."""
    return build_autoencoder(
        data,
        setup.dims,
        [None, *setup.kerns[1:]],
        lams,
        operators=est.operators,
        init=est.init,
        closed_form=est.closed_form,
        random_state=as_seed(setup.random_state),
        memory_budget=est.memory_budget,
    )


def run_training(est: Any, model: Any, data: AutoencoderData) -> Any:
    """Train ``model`` on ``data`` with ``est``'s algorithm, optimiser and stopping rule."""
    options = {"max_iter": est.max_iter, "lr": est.lr, "tol": est.tol}
    if est.algorithm == "alternating":
        progress = progress_of(est, est.max_iter, unit="epoch")
        return train_alternating(model, data, progress=progress, **options)
    if est.optimizer == "lbfgs":  # at most 1.25 max_iter + 1 evaluations (train_module)
        progress = progress_of(est, int(est.max_iter * 1.25) + 1, unit="eval")
    else:
        progress = progress_of(est, est.max_iter, unit="step")
    return train(model, data, optimizer=est.optimizer, progress=progress, **options)


def fit_full_batch(est: Any, setup: FitSetup) -> tuple[Any, Any, AutoencoderData]:
    """Model, training result and data of the full-batch fit (exact or landmark mode)."""
    data, est.ref_basis_ = training_grams(est, setup).data()
    model = build(est, setup, data, setup.lams)
    return model, run_training(est, model, data), data
