"""Random-state handling shared by every stochastic routine."""

from __future__ import annotations

import numpy as np
import torch


def check_random_state(seed: int | np.random.Generator | None) -> np.random.Generator:
    """Return a NumPy ``Generator`` from ``None``, an int seed or a ``Generator``."""
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, np.random.RandomState):
        return np.random.default_rng(seed.randint(0, 2**31 - 1))
    return np.random.default_rng(seed)


def torch_generator(seed: int | np.random.Generator | None) -> torch.Generator:
    """A CPU ``torch.Generator`` seeded reproducibly from ``seed``."""
    rng = check_random_state(seed)
    gen = torch.Generator()
    gen.manual_seed(int(rng.integers(0, 2**63 - 1)))
    return gen
