"""Two samples of any kind and their kernel: validation, kernel resolution, the pooled Gram.

``kernel`` is resolved as in the estimators and the command line
(:mod:`kernelkit.kernels._resolve`): a kernelkit :class:`~kernelkit.kernels.Kernel` as given;
``None`` for the default kernel of the input kind (Tanimoto for molecules, ``Spectrum(k=3)``
for sequences, Weisfeiler-Lehman for graphs, a Gaussian with the median-heuristic width of
the *pooled* vectors); a scikit-learn name (``"rbf"``, ``"laplacian"``, ``"poly"``, ...) with
scikit-learn's defaults; a spec ``NAME:param=value`` (a missing Gaussian/Laplacian ``sigma``
set by the median heuristic on the pooled vectors); a callable; or ``"precomputed"``
(:class:`~kernelkit.kernels.Precomputed`), with ``X`` the Gram matrix of the pooled sample
``(x_1..x_n, y_1..y_m)`` and ``Y`` the size ``n`` of the first sample.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from kernelkit.data import detect_input_kind
from kernelkit.gram._engine import gram_tensor
from kernelkit.kernels import Kernel, Precomputed
from kernelkit.kernels._base import DotProductKernel, StationaryKernel
from kernelkit.kernels._precomputed import check_gram
from kernelkit.kernels._resolve import kernel_on
from kernelkit.kernels._specs import spec_kind
from kernelkit.utils._errors import InputError
from kernelkit.utils._kinds import InputKind
from kernelkit.utils._validation import to_tensor


@dataclass
class TwoSamples:
    """Two validated samples: ``X`` and ``Y`` (items or tensors) and their kind.

    For a precomputed Gram, ``X`` holds the pooled Gram and ``Y`` is ``None``.
    """

    X: Any
    Y: Any
    n_x: int
    n_y: int
    kind: InputKind


def _length(S: Any, name: str) -> int:
    try:
        return len(S)
    except TypeError:
        raise InputError(
            f"{name}: expected a sample (array, tensor or list of items), got {type(S).__name__}"
        ) from None


def _as_vectors(S: Any, name: str) -> torch.Tensor:
    """A vector sample as a 2-D float tensor; a 1-D array is a sample of scalars."""
    t = to_tensor(S, name=name, ndim=None)
    if t.ndim == 1:
        t = t[:, None]
    if t.ndim != 2:
        raise InputError(f"{name}: expected a 2-D array (n x d), got shape {tuple(t.shape)}")
    return t


def _as_stream(S: Any, name: str) -> Any:
    """A vector sample for the streamed linear-time estimator: a 2-D tensor or NumPy array
    (memory maps stay unread); values are checked chunk by chunk when read."""
    if hasattr(S, "to_numpy"):
        S = S.to_numpy()
    A = S if isinstance(S, torch.Tensor) else np.asarray(S)
    if not isinstance(A, torch.Tensor) and A.dtype.kind not in "biuf":
        raise InputError(f"{name}: expected a numeric array, got dtype {A.dtype}")
    if A.ndim == 1:
        A = A.reshape(-1, 1)
    if A.ndim != 2:
        raise InputError(f"{name}: expected a 2-D array (n x d), got shape {tuple(A.shape)}")
    return A


def _items(S: Any) -> Any:
    """Structured items as a list (NumPy object arrays and pandas Series included)."""
    if hasattr(S, "to_numpy"):
        S = S.to_numpy()
    return list(S) if isinstance(S, (np.ndarray, tuple)) else S


def is_precomputed(kernel: Any) -> bool:
    """Whether ``kernel`` names a precomputed Gram (``"precomputed"`` or ``Precomputed()``)."""
    if isinstance(kernel, Precomputed):
        return True
    return isinstance(kernel, str) and kernel.strip().lower().partition(":")[0] == "precomputed"


def check_samples(
    X: Any, Y: Any, kernel: Any = None, *, kind: InputKind | None = None, stream: bool = False
) -> TwoSamples:
    """Validate two samples: both non-empty and of one kind (or a pooled Gram and ``n``).

    ``kind``: the kind of both samples when the caller knows it (a file reader); detected by
    :func:`kernelkit.data.detect_input_kind` otherwise.  ``stream``: vectors stay as given
    (NumPy arrays, memory maps, tensors) for the streamed linear-time estimator, which checks
    their values chunk by chunk.

    Raises
    ------
    InputError
        Naming ``X`` or ``Y`` for an empty sample, a sample of another kind than the other,
        non-finite vectors, samples of vectors of different widths, or a pooled Gram that is
        not square, symmetric and PSD or a size ``Y`` outside ``1..N-1``.
    """
    if is_precomputed(kernel):
        K = check_gram(to_tensor(X, name="X", ndim=2), name="X")
        N = K.shape[0]
        if isinstance(Y, bool) or not isinstance(Y, (int, np.integer)) or not 0 < Y < N:
            raise InputError(
                f"Y: with a precomputed Gram of the pooled sample, expected the size n of the "
                f"first sample (an integer in 1..{N - 1}), got {Y!r}"
            )
        return TwoSamples(K, None, int(Y), N - int(Y), InputKind.GRAM)
    for S, name in ((X, "X"), (Y, "Y")):
        if _length(S, name) == 0:
            raise InputError(f"{name}: expected a non-empty sample, got 0 items")
    kx, ky = (kind, kind) if kind is not None else (detect_input_kind(X), detect_input_kind(Y))
    if kx is ky is InputKind.STRING and _declared_kind(kernel) is InputKind.MOLECULE:
        kx = ky = InputKind.MOLECULE  # SMILES written only with letters of the sequences
    if kx is not ky:
        raise InputError(f"Y: expected the same kind of input as X ({kx.plural}), got {ky.plural}")
    if kx is InputKind.VECTOR:
        convert = _as_stream if stream else _as_vectors
        X, Y = convert(X, "X"), convert(Y, "Y")
        if X.shape[1] != Y.shape[1]:
            raise InputError(
                f"Y: expected vectors of X's width {X.shape[1]}, got width {Y.shape[1]}"
            )
        if not stream:
            Y = Y.to(X.dtype)
    else:
        X, Y = _items(X), _items(Y)
    return TwoSamples(X, Y, _length(X, "X"), _length(Y, "Y"), kx)


def _declared_kind(kernel: Any) -> InputKind | None:
    """The kind of input a kernel or a kernel spec takes (``None`` when not known)."""
    if isinstance(kernel, Kernel):
        kind = getattr(kernel, "input_kind", None)
        return InputKind.parse(kind) if kind is not None else None
    if isinstance(kernel, str):
        try:
            return spec_kind(kernel)
        except InputError:
            return None
    return None


def pooled_vectors(samples: TwoSamples) -> torch.Tensor | None:
    """The pooled vectors ``(x_1..x_n, y_1..y_m)`` (``None`` for other kinds; for streamed
    samples, 1000 evenly spaced rows of each, enough for the median heuristic)."""
    if samples.kind is not InputKind.VECTOR:
        return None
    if not isinstance(samples.X, torch.Tensor) or not isinstance(samples.Y, torch.Tensor):
        # streamed samples: 1000 evenly spaced rows of each (what the median heuristic reads)
        parts = [
            S[np.linspace(0, len(S) - 1, min(len(S), 1000)).astype(int)]
            for S in (samples.X, samples.Y)
        ]
        return torch.cat([_as_vectors(P, n) for P, n in zip(parts, "XY", strict=True)])
    return torch.cat([samples.X, samples.Y])


def resolve_kernel(kernel: Any, samples: TwoSamples, *, name: str = "kernel") -> Kernel:
    """The kernel of a ``kernel`` argument for two samples.

    The estimators' and the command line's meaning (:func:`kernelkit.kernels._resolve.kernel_on`:
    scikit-learn names with scikit-learn's defaults, specs, callables, ``None`` for the
    default kernel of the samples' kind), a data-dependent width read on the pooled vectors:
    the median heuristic of a default or width-less Gaussian/Laplacian as in Gretton et al.
    (2012), section 8, and ``gamma = 1 / n_features`` of ``"rbf"`` as scikit-learn.
    """
    if isinstance(kernel, Kernel):
        return kernel
    if samples.kind is InputKind.GRAM:
        return Precomputed()
    pooled = pooled_vectors(samples)
    data = pooled if pooled is not None else samples.X
    return kernel_on(kernel, data, kind=samples.kind, name=name)


def check_kernel_kind(kernel: Kernel, samples: TwoSamples, name: str = "kernel") -> None:
    """A kernel that takes another kind of input than the samples is an error."""
    takes = getattr(kernel, "input_kind", InputKind.ANY)
    if samples.kind is InputKind.GRAM or takes in (InputKind.ANY, samples.kind):
        return
    raise InputError(
        f"{name}: {type(kernel).__name__} takes {InputKind.parse(takes).plural}, but the "
        f"samples hold {samples.kind.plural}"
    )


def pooled_gram(kernel: Kernel, samples: TwoSamples, **gram_args: Any) -> torch.Tensor:
    """The Gram matrix of the pooled sample, ``[[K_XX, K_XY], [K_YX, K_YY]]`` (float64).

    Vectors are pooled and computed as one symmetric Gram; structured samples as the three
    blocks through :func:`kernelkit.gram.gram_tensor` (the engine's tiling, sparse features
    and memory budget).
    """
    if samples.kind is InputKind.GRAM:
        return samples.X.to(torch.float64)
    if samples.kind is InputKind.VECTOR:
        return gram_tensor(kernel, pooled_vectors(samples), dtype=torch.float64, **gram_args)
    n, m = samples.n_x, samples.n_y
    K = torch.empty(n + m, n + m, dtype=torch.float64)
    K[:n, :n] = gram_tensor(kernel, samples.X, **gram_args)
    K[n:, n:] = gram_tensor(kernel, samples.Y, **gram_args)
    K[:n, n:] = gram_tensor(kernel, samples.X, samples.Y, **gram_args)
    K[n:, :n] = K[:n, n:].T
    return K


def paired_values(kernel: Kernel, A: Any, B: Any) -> torch.Tensor:
    """``k(a_i, b_i)`` for each index ``i`` of two samples of one length.

    ``profile(||a_i - b_i||^2)`` for stationary kernels and ``h(<a_i, b_i>)`` for dot-product
    kernels (O(n d)); for any other kernel, the diagonals of blocks of 64 pairs.
    """
    if isinstance(kernel, StationaryKernel):
        return kernel.profile(((A - B) ** 2).sum(1))
    if isinstance(kernel, DotProductKernel):
        return kernel.scalar((A * B).sum(1))
    out = torch.empty(len(A), dtype=torch.float64)
    for s in range(0, len(A), 64):
        out[s : s + 64] = torch.diagonal(kernel(A[s : s + 64], B[s : s + 64]))
    return out
