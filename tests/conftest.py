"""Shared fixtures."""

from __future__ import annotations

import pytest
import torch


@pytest.fixture
def one_torch_thread():
    """Torch on one thread for the test (tiny matrices: OpenMP spin-waits dominate on 2 cores)."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)
