"""The declarative parameter validation of an estimator, checked (the estimator face of the
conformance kit).

Every constructor parameter must have an entry in ``_parameter_constraints``
(:mod:`kernelkit.utils._constraints`), and ``fit`` with a value that satisfies none of them (an
object of a foreign type, a number just outside each interval, a string outside each option
set) must raise :class:`~kernelkit.utils._errors.ParameterError` naming the parameter, in
scikit-learn's words, before doing any work.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
from sklearn.base import clone

from kernelkit.utils._constraints import invalid_values
from kernelkit.utils._errors import ParameterError


def check_param_validation(name: str, estimator: Any) -> int:
    """Assert the contract above for ``estimator`` (class name ``name``); returns the number
    of invalid values tried.

    Raises
    ------
    AssertionError
        For a parameter without a constraint, or an invalid value that ``fit`` accepts or
        rejects with another error or message.
    """
    params = estimator.get_params(deep=False)
    constraints = estimator._parameter_constraints
    missing = set(params) - set(constraints)
    assert not missing, f"{name}: parameters without a constraint: {sorted(missing)}"
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 4))
    y = np.arange(20) % 2
    tried = 0
    for param, allowed in constraints.items():
        for value in invalid_values(allowed):
            bad = clone(estimator).set_params(**{param: value})
            pattern = rf"^{param}: The '{param}' parameter of {name} must be .* Got .* instead\."
            try:
                bad.fit(X, y)
            except ParameterError as exc:
                assert re.match(pattern, str(exc), flags=re.S), (name, param, str(exc))
            else:
                raise AssertionError(f"{name}: fit accepted {param}={value!r}")
            tried += 1
    return tried


__all__ = ["check_param_validation"]
