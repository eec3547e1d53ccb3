"""kernelkit.utils._constraints against scikit-learn's (private) parameter validation, the
oracle it replaces, and kernelkit.testing.check_param_validation against estimators that
break the contract."""

from __future__ import annotations

from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import pytest
from sklearn.base import BaseEstimator
from sklearn.utils import _param_validation as sk

from kernelkit.testing._params import check_param_validation
from kernelkit.utils import _constraints as kk
from kernelkit.utils._errors import ParameterError

VALUES = [None, True, False, 0, 1, -1, 2, 0.5, -0.5, 1.0, 1e9, np.nan, np.inf, np.int64(3),
          np.float32(0.25), "a", "b", "z", "", [1, 2], (1,), np.zeros(2), print, object(),
          np.random.RandomState(0), np.random.default_rng(0)]  # fmt: skip


def _pairs():
    yield lambda m: [m.Interval(Integral, 1, None, closed="left")]
    yield lambda m: [m.Interval(Real, 0, None, closed="neither"), None]
    yield lambda m: [m.Interval(Real, 0, 1, closed="both")]
    yield lambda m: [m.Interval(Real, None, 1, closed="right")]
    yield lambda m: [m.StrOptions({"a", "b"}), None]
    yield lambda m: ["boolean"]
    yield lambda m: ["random_state", np.random.Generator]
    yield lambda m: ["verbose", callable]
    yield lambda m: [list, tuple, dict]
    yield lambda m: ["array-like", str]


@pytest.mark.parametrize("make", list(_pairs()))
def test_accepts_and_rejects_as_scikit_learn(make):
    ours, theirs = make(kk), make(sk)
    for value in VALUES:
        try:
            sk.validate_parameter_constraints({"p": theirs}, {"p": value}, caller_name="E")
            expected = True
        except sk.InvalidParameterError:
            expected = False
        try:
            kk.validate_parameter_constraints({"p": ours}, {"p": value}, caller_name="E")
            got = True
        except kk.InvalidParameterError as exc:
            got = False
            assert str(exc).startswith("The 'p' parameter of E must be ") and "Got " in str(exc)
        assert got == expected, (ours, value)
    for value in kk.invalid_values(ours):
        with pytest.raises(kk.InvalidParameterError):
            kk.validate_parameter_constraints({"p": ours}, {"p": value}, caller_name="E")


def test_interval_and_options_are_worded_as_scikit_learn():
    for make in (lambda m: m.Interval(Integral, 1, None, closed="left"),
                 lambda m: m.Interval(Real, 0, 1, closed="neither")):  # fmt: skip
        assert str(make(kk)) == str(make(sk))


class _Silent(BaseEstimator):
    """Declares a constraint but never validates: the checker must say so."""

    _parameter_constraints: ClassVar = {"lam": [kk.Interval(Real, 0, None, closed="neither")]}

    def __init__(self, lam=1.0):
        self.lam = lam

    def fit(self, X, y=None):
        return self


class _Undeclared(_Silent):
    _parameter_constraints: ClassVar = {}


class _Validating(_Silent):
    def fit(self, X, y=None):
        try:
            kk.validate_parameter_constraints(
                self._parameter_constraints, self.get_params(), caller_name="_Validating"
            )
        except kk.InvalidParameterError as exc:
            raise ParameterError(f"lam: {exc}") from None
        return self


def test_check_param_validation_can_fail():
    with pytest.raises(AssertionError, match="fit accepted lam="):
        check_param_validation("_Silent", _Silent())
    with pytest.raises(AssertionError, match="without a constraint: \\['lam'\\]"):
        check_param_validation("_Undeclared", _Undeclared())
    assert check_param_validation("_Validating", _Validating()) == 2
