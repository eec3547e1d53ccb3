"""``--kernel NAME:param=value,...``: kernels by name, for the kind of input they take."""

from __future__ import annotations

import inspect
from typing import Any

from kernelkit.cli.errors import UsageError
from kernelkit.data.readers import is_number
from kernelkit.kernels import (
    Gaussian,
    Kernel,
    Laplacian,
    Linear,
    Matern,
    MinMax,
    Mismatch,
    Polynomial,
    Precomputed,
    ShortestPath,
    Spectrum,
    Subsequence,
    Tanimoto,
    WeisfeilerLehman,
)

KERNELS: dict[str, tuple[str, type[Kernel]]] = {
    "gaussian": ("vectors", Gaussian),
    "laplacian": ("vectors", Laplacian),
    "linear": ("vectors", Linear),
    "matern": ("vectors", Matern),
    "polynomial": ("vectors", Polynomial),
    "tanimoto": ("molecules", Tanimoto),
    "minmax": ("molecules", MinMax),
    "spectrum": ("sequences", Spectrum),
    "mismatch": ("sequences", Mismatch),
    "subsequence": ("sequences", Subsequence),
    "wl": ("graphs", WeisfeilerLehman),
    "shortest-path": ("graphs", ShortestPath),
    "precomputed": ("gram", Precomputed),
}
"""Kernel names of ``--kernel``: the kind of input each takes and its class."""

DEFAULT_KERNELS = {
    "vectors": "gaussian",
    "molecules": "tanimoto",
    "sequences": "spectrum:k=3",
    "graphs": "wl",
    "gram": "precomputed",
}
"""The kernel used for each kind of input when ``--kernel`` is not given."""

KERNEL_HELP = (
    "kernel NAME[:param=value,...], e.g. gaussian:sigma=2 or spectrum:k=3; names: "
    + ", ".join(f"{n} ({kind})" for n, (kind, _) in KERNELS.items())
    + "; default: "
    + ", ".join(f"{spec} for {kind}" for kind, spec in DEFAULT_KERNELS.items())
    + " (gaussian/laplacian without sigma: median heuristic)"
)


def _parameters(cls: type[Kernel]) -> dict[str, inspect.Parameter]:
    params = inspect.signature(cls.__init__).parameters
    return {k: p for k, p in params.items() if k != "self" and p.kind != p.VAR_KEYWORD}


def _convert(name: str, param: str, text: str, default: Any) -> Any:
    """The text of a parameter as the type of its default (None written ``none``)."""
    if text.lower() == "none":
        return None
    try:
        if isinstance(default, bool):
            if text.lower() not in ("true", "false", "1", "0"):
                raise ValueError(text)
            return text.lower() in ("true", "1")
        if isinstance(default, int):
            return int(text)
        if isinstance(default, float) or (default is None and is_number(text)):
            return float(text) if not text.lstrip("-").isdigit() else int(text)
    except ValueError:
        kind = type(default).__name__
        raise UsageError(
            f"--kernel: parameter {param!r} of {name} expects a {kind}, got {text!r}"
        ) from None
    return text


def parse_kernel(spec: str) -> tuple[str, dict[str, Any]]:
    """Split ``NAME:a=1,b=x`` into the name and typed parameters (checked against the class)."""
    name, _, rest = spec.strip().partition(":")
    name = name.strip().lower()
    if name not in KERNELS:
        raise UsageError(f"--kernel: unknown kernel {name!r}; expected one of {', '.join(KERNELS)}")
    params = _parameters(KERNELS[name][1])
    values: dict[str, Any] = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, text = item.partition("=")
        key = key.strip()
        if not eq or key not in params:
            valid = ", ".join(params) or "none"
            raise UsageError(
                f"--kernel: unknown parameter {item!r} of {name}; valid parameters: {valid} "
                "(written name=value)"
            )
        default = params[key].default
        values[key] = _convert(
            name, key, text.strip(), None if default is params[key].empty else default
        )
    return name, values


def kernel_kind(spec: str) -> str:
    """The kind of input the kernel named in ``spec`` takes."""
    return KERNELS[parse_kernel(spec)[0]][0]


def build_kernel(
    spec: str | None, kind: str, *, sigma_from: Any = None, alphabet: str | None = None
) -> Kernel:
    """The kernel of ``spec`` (default for ``kind`` when ``None``), checked against ``kind``.

    ``sigma_from``: vectors from which a missing Gaussian/Laplacian ``sigma`` is set by the
    median heuristic (median pairwise distance).  ``alphabet``: the alphabet of sequences,
    set on string kernels that take one and were not given one.
    """
    name, values = parse_kernel(spec or DEFAULT_KERNELS[kind])
    takes, cls = KERNELS[name]
    if takes != kind:
        raise UsageError(
            f"--kernel: {name} takes {takes}, but the input holds {kind}; kernels for {kind}: "
            + ", ".join(n for n, (k, _) in KERNELS.items() if k == kind)
        )
    params = _parameters(cls)
    if "sigma" in params and "sigma" not in values and sigma_from is not None:
        import torch

        from kernelkit.models import median_sigma

        values["sigma"] = float(median_sigma(torch.as_tensor(sigma_from)))
    if "alphabet" in params and "alphabet" not in values and alphabet is not None:
        values["alphabet"] = alphabet
    try:
        return cls(**values)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"--kernel: {spec}: {exc}") from None


def describe_kernel(kernel: Kernel) -> str:
    """``Name(param=value, ...)`` of a kernel's hyperparameters, for reports."""
    params = ", ".join(
        f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v!r}"
        for k, v in kernel.get_params(deep=False).items()
    )
    return f"{type(kernel).__name__}({params})"
