"""The ``solver`` vocabulary of the estimators: the requested solver, the fitted
``solver_`` / ``nystrom_method_``, and the one announcement of ``solver="auto"``'s switch to
the Nyström approximation (``docs/approximations.md``)."""

from __future__ import annotations

import warnings
from typing import Any

__all__ = ["announce_solver", "record_method", "requested_solver"]


def requested_solver(estimator: Any) -> tuple[str, str]:
    """``(solver, nystrom_method)`` of ridge or logistic regression, with the deprecated
    ``solver="onepass"`` read as ``solver="nystrom", nystrom_method="onepass"`` (one
    ``FutureWarning``)."""
    if estimator.solver != "onepass":
        return str(estimator.solver), str(estimator.nystrom_method)
    warnings.warn(
        f"{type(estimator).__name__}: solver='onepass' is deprecated and will be removed in "
        "the next release; use solver='nystrom', nystrom_method='onepass'",
        FutureWarning,
        stacklevel=3,
    )
    return "nystrom", "onepass"


_ANNOUNCED: set[str] = set()
"""Estimator classes whose ``solver="auto"`` switch to Nyström was announced (once each)."""


def announce_solver(estimator: Any) -> None:
    """Say once per estimator class and process (a ``UserWarning``) that ``solver="auto"``
    fitted the Nyström approximation: the exact fit was over the options' budget
    (``exact_flops``, memory).  An explicit ``solver`` is not announced."""
    name = type(estimator).__name__
    if estimator.solver != "auto" or estimator.solver_ == "exact" or name in _ANNOUNCED:
        return
    _ANNOUNCED.add(name)
    warnings.warn(
        f"{name}: solver='auto' fits the Nyström approximation on n_centers="
        f"{estimator.n_centers} centres, since the exact fit of this training set is over the "
        "budget (kernelkit.set_config(exact_flops=...)); solver='exact' forces the exact fit. "
        "Said once per estimator class.",
        UserWarning,
        stacklevel=4,
    )


def record_method(estimator: Any, method: str) -> None:
    """Store ``solver_`` (``"exact"`` or ``"nystrom"``) and, for a Nyström fit,
    ``nystrom_method_`` (``"onepass"`` or ``"pcg"``) of the ``method`` that fits; a switch
    of ``solver="auto"`` to Nyström is announced (:func:`announce_solver`)."""
    estimator.solver_ = "exact" if method == "exact" else "nystrom"
    estimator.__dict__.pop("nystrom_method_", None)
    if method != "exact":
        estimator.nystrom_method_ = method
    announce_solver(estimator)
