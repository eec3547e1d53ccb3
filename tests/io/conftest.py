"""Shared checks of the kernelkit.io tests."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch


def assert_same_state(a, b, path: str = "model") -> None:
    """Deep equality of two object graphs: arrays bit for bit, with dtype and strides."""
    assert type(a) is type(b), path
    if isinstance(a, torch.Tensor):
        assert a.dtype == b.dtype and a.shape == b.shape and a.stride() == b.stride(), path
        assert a.requires_grad == b.requires_grad, path
        assert torch.equal(a, b) or bool(((a == b) | (a.isnan() & b.isnan())).all()), path
    elif isinstance(a, np.ndarray):
        # loaded arrays are in native byte order; negative strides (a[::-1]) are made positive
        assert a.dtype.newbyteorder("=") == b.dtype, path
        assert a.strides == b.strides or min(a.strides, default=0) < 0, path
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), path
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same_state(x, y, f"{path}[{i}]")
    elif isinstance(a, dict):
        assert list(a) == list(b), path
        for key in a:
            assert_same_state(a[key], b[key], f"{path}[{key!r}]")
    elif isinstance(a, np.random.Generator):
        assert_same_state(a.bit_generator.state, b.bit_generator.state, path)
    elif isinstance(a, np.random.RandomState):
        assert_same_state(a.get_state(legacy=False), b.get_state(legacy=False), path)
    elif isinstance(a, float):
        assert a == b or (math.isnan(a) and math.isnan(b)), path
    elif hasattr(a, "__dict__") and not isinstance(a, type):
        assert vars(a).keys() == vars(b).keys(), path
        for key, value in vars(a).items():
            assert_same_state(value, vars(b)[key], f"{path}.{key}")
    else:
        assert a == b, path


@pytest.fixture
def same_state():
    """:func:`assert_same_state`, for the tests of this folder."""
    return assert_same_state
