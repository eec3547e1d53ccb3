"""``--kernel NAME[:param=value,...]``: a kernel resolved as everywhere else.

``--kernel`` takes what an estimator's ``kernel`` parameter takes, resolved by the one
resolver of the kernels layer (:func:`kernelkit.kernels._resolve.kernel_on`): scikit-learn's
names alone with scikit-learn's defaults (``rbf``, ``laplacian``, ``poly``/``polynomial``,
``linear``, ``cosine``, ``chi2``) and the specs of :mod:`kernelkit.kernels._specs`.  This
module turns their errors into usage errors (exit 2) naming ``--kernel`` and writes the
option's help.
"""

from __future__ import annotations

import inspect
from typing import Any

from kernelkit.cli._errors import UsageError
from kernelkit.kernels import Kernel
from kernelkit.kernels import _specs as specs
from kernelkit.kernels._resolve import SKLEARN_KERNELS, kernel_on, parameter_kind
from kernelkit.kernels._specs import DEFAULT_KERNEL_SPECS, KERNEL_SPECS
from kernelkit.utils._errors import InputError
from kernelkit.utils._kinds import InputKind

KERNELS = KERNEL_SPECS
"""Kernel names of ``--kernel``: the kind of input each takes and its class."""

KERNEL_HELP = (
    "kernel NAME[:param=value,...], e.g. gaussian:sigma=2 or spectrum:k=3; scikit-learn's "
    "names alone, with its defaults: "
    + ", ".join(n for n in SKLEARN_KERNELS if n != "precomputed")
    + "; names: "
    + ", ".join(f"{n} ({kind.plural})" for n, (kind, _) in KERNELS.items())
    + "; default: "
    + ", ".join(f"{spec} for {kind.plural}" for kind, spec in DEFAULT_KERNEL_SPECS.items())
    + " (gaussian/laplacian without sigma: median heuristic)"
)


def kernel_parameters() -> str:
    """Every kernel of ``--kernel`` with its parameters and their defaults, for ``--help``."""
    entries = []
    for name, (kind, cls) in KERNELS.items():
        params = [
            f"{p.name}={p.default!r}" if p.default is not p.empty else p.name
            for p in inspect.signature(cls.__init__).parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]
        entries.append(f"{name} ({kind.plural}): {', '.join(params) or 'no parameters'}")
    return "; ".join(entries)


def parse_kernel(spec: str) -> tuple[str, dict[str, Any]]:
    """Split ``NAME:a=1,b=x`` into the name and typed parameters (usage error if invalid)."""
    try:
        return specs.parse_kernel_spec(spec, argument="--kernel")
    except specs.KernelSpecError as exc:
        raise UsageError(str(exc)) from None


def kernel_kind(spec: str) -> InputKind:
    """The kind of input the kernel named in ``spec`` takes."""
    if spec.strip().lower() in SKLEARN_KERNELS:
        return parameter_kind(spec)
    return KERNELS[parse_kernel(spec)[0]][0]


def build_kernel(
    spec: str | None, kind: InputKind | str, *, sigma_from: Any = None, alphabet: str | None = None
) -> Kernel:
    """The kernel of ``spec`` (default for ``kind`` when ``None``), checked against ``kind``.

    See :func:`kernelkit.kernels._resolve.kernel_on`: a data-dependent vector kernel (median
    heuristic, scikit-learn's ``gamma``) is built on the vectors ``sigma_from``; errors become
    usage errors.
    """
    try:
        return kernel_on(spec, sigma_from, kind=kind, alphabet=alphabet, name="--kernel")
    except InputError as exc:
        raise UsageError(str(exc)) from None


def describe_kernel(kernel: Kernel) -> str:
    """``Name(param=value, ...)`` of a kernel's hyperparameters, for reports."""
    params = ", ".join(
        f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v!r}"
        for k, v in kernel.get_params(deep=False).items()
    )
    return f"{type(kernel).__name__}({params})"
