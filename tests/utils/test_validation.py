"""The input validator's rules on dtypes, magnitudes and pandas columns (issue 51)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

from kernelkit.utils._errors import InputError
from kernelkit.utils._validation import largest_entry, to_tensor


@pytest.mark.parametrize("half", [torch.float16, torch.bfloat16])
def test_half_precision_is_computed_in_float32(half):
    t = to_tensor(torch.ones(3, 2, dtype=half))
    assert t.dtype == torch.float32
    assert to_tensor(torch.ones(3, 2, dtype=half), dtype=torch.float64).dtype == torch.float64
    assert to_tensor(np.ones((3, 2), dtype=np.float16)).dtype == torch.float64


def test_the_largest_entry_keeps_sums_of_squares_finite():
    for dtype in (torch.float32, torch.float64):
        limit = largest_entry(dtype)
        assert limit == math.sqrt(torch.finfo(dtype).max) / 1e4
        # 2e7 squared differences of entries at the limit stay finite
        assert 2e7 * (2 * limit) ** 2 < torch.finfo(dtype).max
    assert 1e150 < largest_entry(torch.float64) < 1e151


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_entries_above_the_limit_are_named(dtype):
    X = torch.zeros(3, 2, dtype=dtype)
    X[2, 1] = -2 * largest_entry(dtype)
    with pytest.raises(InputError, match=r"X: entry -.* at index \(2, 1\) is too large"):
        to_tensor(X)
    X[2, 1] = largest_entry(dtype) / 2
    to_tensor(X)


def test_a_non_numeric_frame_column_is_named():
    df = pd.DataFrame({"a": [1.0, 2.0], "kind": pd.Categorical(["x", "y"])})
    with pytest.raises(InputError, match=r"X: column 'kind' has dtype category .*'x'"):
        to_tensor(df)
    df["text"] = ["1", "2.5"]  # text that parses as numbers is converted
    df["kind"] = pd.Categorical([3, 4])
    assert to_tensor(df).tolist() == [[1.0, 3.0, 1.0], [2.0, 4.0, 2.5]]


def test_an_explicit_half_dtype_keeps_its_own_range_and_duplicate_columns_are_read():
    t = to_tensor(np.full((2, 2), 300.0), dtype=torch.float16)
    assert t.dtype == torch.float16
    df = pd.DataFrame([[1.0, "a"], [2.0, "b"]], columns=["x", "x"])
    with pytest.raises(InputError, match=r"X: column 'x' has dtype .* non-numeric values .*'a'"):
        to_tensor(df)
