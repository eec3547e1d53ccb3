"""``--kernel NAME:param=value,...``: the kernel specs of :mod:`kernelkit.kernels.specs`.

The table, the parser and the default kernel of each input kind live in the kernels layer
(estimators take the same specs); this module turns their errors into usage errors (exit 2)
naming ``--kernel`` and writes the option's help.
"""

from __future__ import annotations

import inspect
from typing import Any

from kernelkit.cli.errors import UsageError
from kernelkit.kernels import Kernel, specs
from kernelkit.kernels.specs import DEFAULT_KERNEL_SPECS, KERNEL_SPECS
from kernelkit.utils.kinds import InputKind

KERNELS = KERNEL_SPECS
"""Kernel names of ``--kernel``: the kind of input each takes and its class."""

KERNEL_HELP = (
    "kernel NAME[:param=value,...], e.g. gaussian:sigma=2 or spectrum:k=3; names: "
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
    return KERNELS[parse_kernel(spec)[0]][0]


def build_kernel(
    spec: str | None, kind: InputKind | str, *, sigma_from: Any = None, alphabet: str | None = None
) -> Kernel:
    """The kernel of ``spec`` (default for ``kind`` when ``None``), checked against ``kind``.

    See :func:`kernelkit.kernels.specs.build_kernel`; errors become usage errors.
    """
    try:
        return specs.build_kernel(
            spec, kind, sigma_from=sigma_from, alphabet=alphabet, argument="--kernel"
        )
    except specs.KernelSpecError as exc:
        raise UsageError(str(exc)) from None


def describe_kernel(kernel: Kernel) -> str:
    """``Name(param=value, ...)`` of a kernel's hyperparameters, for reports."""
    params = ", ".join(
        f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v!r}"
        for k, v in kernel.get_params(deep=False).items()
    )
    return f"{type(kernel).__name__}({params})"
