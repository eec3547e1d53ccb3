r"""The one meaning of a ``kernel`` argument: a Kernel, a spec, a scikit-learn name or None.

Every entry point resolves its ``kernel`` here: the estimators' ``kernel`` parameter,
:mod:`kernelkit.stats` (MMD, HSIC, two-sample tests) and the command line's ``--kernel``, so
one string means one kernel with one default width everywhere
(``tests/kernels/test_resolve.py`` checks the three against each other).
:func:`resolve_kernel` turns the argument into a kernel in one of four ways:

* a kernelkit :class:`~kernelkit.kernels.Kernel`: used as given (its clone);
* a Python callable (scikit-learn's convention ``f(x, y, **kernel_params) -> float`` on 1-D
  rows, or ``f(X, Y, **kernel_params) -> array`` on blocks, detected once):
  :class:`~kernelkit.kernels._callable.CallableKernel`, run through the tiled Gram engine;
* ``None``: the default kernel of the kind of ``X`` (:func:`kernelkit.data.detect_input_kind`,
  :func:`kernelkit.kernels._specs.default_kernel`): Tanimoto for molecules, ``Spectrum(k=3)``
  for sequences, Weisfeiler-Lehman for graphs and, for vectors, ``Gaussian(sigma)`` with the
  median heuristic ``sigma = median_{i<j} ||x_i - x_j||`` on the training vectors;
* a scikit-learn name written alone (the names of ``sklearn.metrics.pairwise_kernels``), with
  scikit-learn's formula and defaults (``gamma=None`` and ``"auto"`` are ``1 / n_features``,
  ``"scale"`` is ``1 / (n_features X.var())``, ``SVC``'s default):

  =================  ==========================================  ===============================
  name               scikit-learn's kernel                       kernelkit kernel
  =================  ==========================================  ===============================
  ``"rbf"``          ``exp(-gamma ||x - y||_2^2)``               ``Gaussian(1 / sqrt(2 gamma))``
  ``"laplacian"``    ``exp(-gamma ||x - y||_1)`` (L1 norm)       ``TensorMatern(1, 1 / gamma)``
  ``"poly"``         ``(gamma <x, y> + coef0)^degree``           ``Polynomial(degree, gamma,
                                                                 coef0)``
  ``"linear"``       ``<x, y>``                                  ``Linear()``
  ``"cosine"``       ``<x, y> / (||x|| ||y||)``                  ``Linear().normalized()``
  ``"chi2"``         ``exp(-gamma sum (x - y)^2 / (x + y))``     ``Chi2(gamma)``
  ``"precomputed"``  the Gram matrix is ``X``                    ``Precomputed()``
  =================  ==========================================  ===============================

  ``"polynomial"`` is ``"poly"``; ``degree=3`` and ``coef0=1`` by default, as scikit-learn.
  ``"chi2"``'s ``gamma=None`` is 1 (``chi2_kernel``'s default) and it needs non-negative
  features; ``"sigmoid"`` and ``"additive_chi2"`` (not positive definite) are refused;
* a kernel spec ``NAME:param=value,...`` of the command line
  (:data:`kernelkit.kernels._specs.KERNEL_SPECS`, e.g. ``"gaussian:sigma=2"``,
  ``"spectrum:k=4"``), a missing Gaussian/Laplacian ``sigma`` set by the median heuristic.
  A spec name written with parameters keeps kernelkit's meaning: ``"laplacian:sigma=2"`` is
  the Euclidean ``exp(-||x - y||_2 / sigma)``, while the bare ``"laplacian"`` is
  scikit-learn's L1 kernel.  A bare ``"gaussian"`` or ``"tanimoto"`` is a spec.

``gamma``, ``degree`` and ``coef0`` apply only to the scikit-learn names that use them, and
``kernel_params`` only to callables; given with anything else they are an error.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from kernelkit.data import detect_input_kind
from kernelkit.kernels._base import Kernel
from kernelkit.kernels._callable import CallableItemKernel, CallableKernel
from kernelkit.kernels._chi2 import Chi2
from kernelkit.kernels._precomputed import Precomputed
from kernelkit.kernels._sparse import SparseRows
from kernelkit.kernels._specs import (
    KERNEL_SPECS,
    KernelSpecError,
    build_kernel,
    default_spec,
    kind_mismatch,
    median_sigma,
    spec_kind,
)
from kernelkit.kernels._vector import Gaussian, Linear, Polynomial, TensorMatern
from kernelkit.utils._errors import InputError
from kernelkit.utils._kinds import InputKind

SKLEARN_KERNELS: dict[str, tuple[str, ...]] = {
    "rbf": ("gamma",),
    "laplacian": ("gamma",),
    "poly": ("gamma", "degree", "coef0"),
    "polynomial": ("gamma", "degree", "coef0"),
    "linear": (),
    "cosine": (),
    "chi2": ("gamma",),
    "precomputed": (),
}
"""scikit-learn's kernel names accepted by ``kernel=``, with the parameters each reads."""

_REFUSED = {
    "sigmoid": "tanh(gamma <x, y> + coef0) is not positive definite",
    "additive_chi2": "-sum (x - y)^2 / (x + y) is not positive definite (only conditionally)",
}


@dataclass(frozen=True)
class VectorKernelRecipe:
    """A vector kernel whose hyperparameters are read from the training vectors.

    ``build(X, sample_weight)`` reads them from the rows of ``X``, row ``i`` counted
    ``sample_weight[i]`` times (``None``: once), so integer weights give the kernel of the
    repeated rows (the weighted median of :func:`~kernelkit.kernels._specs.median_sigma`, the
    weighted variance of ``gamma="scale"``).
    """

    build: Callable[[torch.Tensor, np.ndarray | None], Kernel]
    input_kind: InputKind = InputKind.VECTOR


def _variance(X: Any, w: np.ndarray | None = None) -> float:
    """Variance of all the entries of a dense or sparse training batch (``X.var()``), row
    ``i`` counted ``w_i`` times."""
    if w is None and not isinstance(X, SparseRows):
        return float(X.to(torch.float64).var(unbiased=False))
    w = np.ones(X.shape[0]) if w is None else np.asarray(w, dtype=np.float64)
    total = float(w.sum()) * X.shape[1]
    if isinstance(X, SparseRows):
        m = X.matrix
        rows, squares = np.asarray(m.sum(axis=1)).ravel(), np.asarray(m.multiply(m).sum(axis=1))
        mean = float(w @ rows) / total
        return float(w @ squares.ravel()) / total - mean**2
    Xd = X.to(torch.float64)
    wt = torch.as_tensor(w, dtype=torch.float64, device=Xd.device)
    mean = float(wt @ Xd.sum(1)) / total
    return float(wt @ ((Xd - mean) ** 2).sum(1)) / total


GAMMA_WHEN_NONE: dict[str, float] = {"chi2": 1.0}
"""``gamma=None`` of the names whose scikit-learn function does not read it from the data
(``chi2_kernel``'s default is 1)."""


def _gamma(
    gamma: float | str | None, X: Any, w: np.ndarray | None = None, name: str = "rbf"
) -> float:
    """scikit-learn's ``gamma`` of kernel ``name``: ``"auto"`` (and None) ``1 / n_features``
    (None: :data:`GAMMA_WHEN_NONE` where listed), ``"scale"`` ``1 / (n_features X.var())``
    (``1`` when the variance is 0), as ``sklearn.svm.SVC``; the variance of the rows counted
    ``w_i`` times with weights."""
    if gamma is None and name in GAMMA_WHEN_NONE:
        return GAMMA_WHEN_NONE[name]
    if gamma == "scale":
        var = _variance(X, w)
        value = 1.0 / (X.shape[1] * var) if var != 0 else 1.0
        if not 0.0 < value < math.inf:
            raise InputError(
                f"gamma: 'scale' is 1 / (n_features X.var()) = {value:.3g} with X.var() = "
                f"{var:.3g}; expected a finite positive value: rescale X or pass gamma"
            )
        return value
    return 1.0 / X.shape[1] if gamma in (None, "auto") else float(gamma)


def _sklearn_kernel(name: str, gamma: Any, degree: Any, coef0: Any) -> Kernel | VectorKernelRecipe:
    if name == "precomputed":
        return Precomputed()
    if name == "linear":
        return Linear()
    if name == "cosine":
        return Linear().normalized()
    if name == "chi2":
        return VectorKernelRecipe(lambda X, w=None: Chi2(gamma=_gamma(gamma, X, w, name)))
    if name == "rbf":
        return VectorKernelRecipe(
            lambda X, w=None: Gaussian(sigma=1.0 / math.sqrt(2.0 * _gamma(gamma, X, w)))
        )
    if name == "laplacian":
        return VectorKernelRecipe(
            lambda X, w=None: TensorMatern(s=1.0, sigma=1.0 / _gamma(gamma, X, w))
        )
    deg = 3 if degree is None else degree
    off = 1.0 if coef0 is None else coef0
    return VectorKernelRecipe(
        lambda X, w=None: Polynomial(degree=deg, scale=_gamma(gamma, X, w), offset=off)
    )


def _check_unused(
    kernel: Any, reads: tuple[str, ...], extras: dict[str, Any], owner: str = "the estimator"
) -> None:
    opaque = (callable(kernel) and not isinstance(kernel, Kernel)) or (
        isinstance(kernel, str) and kernel.strip().lower() == "precomputed"
    )
    for param, value in extras.items():
        if value is not None and opaque:
            raise InputError(
                f"{param}: Don't pass gamma, coef0 or degree to {owner} if using a callable or "
                f"precomputed kernel; got {param}={value!r} with kernel={kernel!r} (a "
                "callable takes its parameters through kernel_params)"
            )
        if value is not None and param not in reads:
            users = ", ".join(repr(n) for n, ps in SKLEARN_KERNELS.items() if param in ps)
            raise InputError(
                f"{param}: only used with scikit-learn's kernel names ({users}); got "
                f"{param}={value!r} with kernel={kernel!r}. Set the kernel's own "
                "hyperparameters instead (e.g. Gaussian(sigma=...), 'gaussian:sigma=2')"
            )


def resolve_kernel(
    kernel: Any,
    X: Any = None,
    *,
    kind: InputKind | str | None = None,
    gamma: Any = None,
    degree: Any = None,
    coef0: Any = None,
    kernel_params: Any = None,
    alphabet: str | None = None,
    name: str = "kernel",
    owner: str = "the estimator",
) -> Kernel | VectorKernelRecipe:
    """The kernel named by a ``kernel`` argument (see the module docstring).

    Returns a :class:`~kernelkit.kernels.Kernel`, or a :class:`VectorKernelRecipe` when a
    vector kernel's hyperparameters depend on the training vectors (the median heuristic, a
    default ``gamma``); the caller builds it on the validated training tensor
    (:func:`kernel_on` does both).

    Parameters
    ----------
    kernel : Kernel, str, callable or None
        The argument.
    X : array-like, optional
        The data, read only for its kind (:func:`kernelkit.data.detect_input_kind`) when
        ``kind`` is not given.
    kind : InputKind or str, optional
        The kind of the data, when the caller knows it.
    gamma, degree, coef0 : optional
        scikit-learn's parameters of its kernel names.
    kernel_params : dict, optional
        Keyword arguments of a callable kernel.
    alphabet : str, optional
        Set on a string kernel named by a spec (or the default) that takes one and was not
        given one.
    name, owner : str
        The argument and the class named in errors.

    Raises
    ------
    InputError
        For a value that is neither a Kernel, a string, a callable nor None, an unknown or
        refused name, or ``gamma``/``degree``/``coef0``/``kernel_params`` given where they
        are not used.
    """
    extras = {"gamma": gamma, "degree": degree, "coef0": coef0}
    data_kind = InputKind.parse(kind) if kind is not None else None
    if callable(kernel) and not isinstance(kernel, Kernel):
        _check_unused(kernel, (), extras, owner)
        if (data_kind or detect_input_kind(X)) not in (InputKind.VECTOR, InputKind.GRAM):
            return CallableItemKernel(kernel, kernel_params)  # strings, graphs, objects
        return CallableKernel(kernel, kernel_params)
    if kernel_params is not None:
        raise InputError(
            f"kernel_params: only used with a callable kernel; got kernel_params="
            f"{kernel_params!r} with kernel={kernel!r}"
        )
    if kernel is None or isinstance(kernel, Kernel):
        _check_unused(kernel, (), extras)
        if isinstance(kernel, Kernel):
            return kernel
        data_kind = data_kind or detect_input_kind(X)
        if data_kind is InputKind.VECTOR:
            return VectorKernelRecipe(
                lambda Xt, w=None: Gaussian(sigma=median_sigma(Xt, sample_weight=w))
            )
        return build_kernel(
            default_spec(data_kind, X), data_kind, alphabet=alphabet, argument=name
        )
    if not isinstance(kernel, str):
        raise InputError(
            f"{name}: expected a kernelkit Kernel (e.g. Gaussian(sigma=1.0)), a kernel spec "
            f"such as 'gaussian:sigma=2', a scikit-learn name ({', '.join(SKLEARN_KERNELS)}), "
            f"a callable f(x, y) -> float or None, got {type(kernel).__name__} {kernel!r}"
        )
    key = kernel.strip().lower()
    if key in _REFUSED:
        raise InputError(f"{name}: scikit-learn's {key!r} kernel is not supported: {_REFUSED[key]}")
    if key in SKLEARN_KERNELS:
        _check_unused(kernel, SKLEARN_KERNELS[key], extras, owner)
        return _sklearn_kernel(key, gamma, degree, coef0)
    _check_unused(kernel, (), extras)
    spec_takes = spec_kind(kernel, argument=name)
    if spec_takes is not InputKind.VECTOR:
        return build_kernel(kernel, spec_takes, alphabet=alphabet, argument=name)
    return VectorKernelRecipe(
        lambda Xt, w=None: build_kernel(
            kernel, spec_takes, sigma_from=Xt, sample_weight=w, argument=name
        )
    )


def kernel_on(
    kernel: Any,
    X: Any,
    *,
    kind: InputKind | str | None = None,
    sample_weight: Any = None,
    alphabet: str | None = None,
    name: str = "kernel",
) -> Kernel:
    """The kernel of a ``kernel`` argument for the data ``X``, built on them.

    :func:`resolve_kernel`, then a data-dependent vector kernel (median heuristic, default
    ``gamma``) built on the vectors ``X`` (rows counted ``sample_weight`` times), and a kernel
    of another kind of input than ``X``'s refused.  :mod:`kernelkit.stats` calls it with the
    pooled sample, the command line with the records of its input file.

    Raises
    ------
    KernelSpecError
        When the kernel takes another kind of input than ``X`` holds.
    """
    data_kind = InputKind.parse(kind) if kind is not None else detect_input_kind(X)
    resolved = resolve_kernel(kernel, X, kind=data_kind, alphabet=alphabet, name=name)
    if isinstance(resolved, VectorKernelRecipe):
        if data_kind is not InputKind.VECTOR:
            raise kind_mismatch(name, _label(kernel), InputKind.VECTOR, data_kind)
        vectors = X if isinstance(X, (torch.Tensor, SparseRows)) else torch.as_tensor(X)
        w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        return resolved.build(vectors, w)
    takes = InputKind.parse(getattr(resolved, "input_kind", InputKind.ANY))
    if takes not in (InputKind.ANY, data_kind) and data_kind is not InputKind.GRAM:
        raise kind_mismatch(name, _label(kernel), takes, data_kind)
    return resolved


def _label(kernel: Any) -> str:
    """The name of a kernel argument in errors: a spec's name, else the class name."""
    return kernel.partition(":")[0] if isinstance(kernel, str) else type(kernel).__name__


def parameter_kind(kernel: Any) -> InputKind:
    """Kind of input a ``kernel`` parameter takes, without data (``vector`` when unknown).

    Used by the estimator tags: ``None`` and unparsable values read as vectors (``fit``
    reports invalid values).
    """
    if isinstance(kernel, Kernel):
        try:
            return InputKind.parse(kernel.input_kind)
        except Exception:  # a kernel whose kind cannot be read is reported by fit
            return InputKind.VECTOR
    if isinstance(kernel, str):
        key = kernel.strip().lower()
        if key == "precomputed":
            return InputKind.GRAM
        if key in SKLEARN_KERNELS or key.partition(":")[0] not in KERNEL_SPECS:
            return InputKind.VECTOR
        try:
            return spec_kind(kernel)
        except KernelSpecError:
            return InputKind.VECTOR
    return InputKind.VECTOR


def parameter_accepts_sparse(kernel: Any) -> bool:
    """Whether a ``kernel`` parameter takes sparse vectors, without data (the ``sparse`` tag).

    ``None`` (a Gaussian) and scikit-learn's names but ``"precomputed"`` do; a kernel says so
    by ``accepts_sparse``; a spec by its class's; callables and unknown values do not.
    """
    if kernel is None:
        return True
    if isinstance(kernel, Kernel):
        return bool(kernel.accepts_sparse)
    if not isinstance(kernel, str):
        return False
    key = kernel.strip().lower()
    if key in SKLEARN_KERNELS:
        return key != "precomputed"
    entry = KERNEL_SPECS.get(key.partition(":")[0])
    flag = getattr(entry[1], "accepts_sparse", False) if entry else False
    return flag is True


__all__ = [
    "SKLEARN_KERNELS",
    "VectorKernelRecipe",
    "kernel_on",
    "parameter_accepts_sparse",
    "parameter_kind",
    "resolve_kernel",
]
