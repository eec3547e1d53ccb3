"""The text of a kernel spec ``NAME:param=value,...``, read without importing any kernel.

:func:`parse_spec` checks a spec against a table of kernel names and their parameters'
defaults; :mod:`kernelkit.kernels._specs` calls it with the table of its kernel classes, and
the command line with :data:`kernelkit.cli._kernel_names.KERNEL_DEFAULTS` (the same table,
importable before torch, so that a bad ``--kernel`` is answered at once).  Standard library
only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kernelkit.utils._errors import InputError


def is_number(text: str) -> bool:
    """Whether ``text`` reads as a float (``float(text)`` succeeds)."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def convert_value(
    argument: str,
    name: str,
    param: str,
    text: str,
    default: Any,
    error: type[InputError] = InputError,
) -> Any:
    """The text of a parameter as the type of its default (``None`` written ``none``)."""
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
        raise error(
            f"{argument}: parameter {param!r} of {name} expects a {kind}, got {text!r}"
        ) from None
    return text


def parse_spec(
    spec: str,
    table: Mapping[str, Mapping[str, Any]],
    *,
    argument: str = "kernel",
    error: type[InputError] = InputError,
) -> tuple[str, dict[str, Any]]:
    """Split ``NAME:a=1,b=x`` into the name and typed parameters.

    Parameters
    ----------
    table : mapping
        Kernel name -> {parameter name -> default} (``None`` for a parameter without a
        default); values are converted to the type of the default.
    argument : str
        The option or parameter named in error messages (``--kernel``, ``kernel``).
    error : type
        The error raised (a subclass of :class:`~kernelkit.utils.InputError`).
    """
    name, _, rest = str(spec).strip().partition(":")
    name = name.strip().lower()
    if name not in table:
        raise error(f"{argument}: unknown kernel {name!r}; expected one of {', '.join(table)}")
    params = table[name]
    values: dict[str, Any] = {}
    for item in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, text = item.partition("=")
        key = key.strip()
        if not eq or key not in params:
            valid = ", ".join(params) or "none"
            raise error(
                f"{argument}: unknown parameter {item!r} of {name}; valid parameters: {valid} "
                "(written name=value)"
            )
        values[key] = convert_value(argument, name, key, text.strip(), params[key], error)
    return name, values


__all__ = ["convert_value", "parse_spec"]
