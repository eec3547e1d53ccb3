"""Random-state handling shared by every stochastic routine and estimator.

Every ``random_state`` of kernelkit accepts ``None``, an ``int``, a NumPy ``RandomState`` or a
NumPy ``Generator``, with scikit-learn's meaning (one rule, no exception):

* ``None`` draws fresh entropy from the operating system: two calls differ (no routine or
  estimator rewrites ``None`` to a fixed seed);
* an ``int`` gives the same result on every call;
* a ``RandomState`` or ``Generator`` is *consumed*: each use draws from it, as in
  scikit-learn.  Two fits give identical results when their generators start in the same
  state, e.g. two fresh ``np.random.default_rng(0)``, or an estimator and its
  ``sklearn.base.clone`` (which deep-copies the generator); refitting one estimator with the
  same generator object continues its stream.
"""

from __future__ import annotations

import numpy as np
import torch

RandomStateLike = int | np.integer | np.random.Generator | np.random.RandomState | None
"""What a ``random_state`` parameter accepts."""


def check_random_state(seed: RandomStateLike) -> np.random.Generator:
    """Return a NumPy ``Generator`` from ``None``, an int seed, a ``RandomState`` or a
    ``Generator`` (returned as is, so drawing from the result consumes it)."""
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, np.random.RandomState):
        return np.random.default_rng(seed.randint(0, 2**31 - 1))
    return np.random.default_rng(seed)


def as_seed(random_state: RandomStateLike) -> int:
    """An integer seed from a ``random_state``: ints pass through, ``None`` gives a fresh seed
    from the operating system's entropy, a ``Generator`` or ``RandomState`` gives one draw in
    ``[0, 2**31 - 1)`` (consuming it).

    Routines seeded by an integer (``torch.Generator().manual_seed``, scikit-learn's
    ``random_state``) take their seed from here, so an int gives the same stream as before
    and ``None`` a different one on every call.
    """
    if random_state is None:
        return int(np.random.default_rng().integers(0, 2**31 - 1))
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**31 - 1))
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(0, 2**31 - 1))
    return int(random_state)


def torch_generator(seed: RandomStateLike) -> torch.Generator:
    """A CPU ``torch.Generator`` seeded reproducibly from ``seed``."""
    rng = check_random_state(seed)
    gen = torch.Generator()
    gen.manual_seed(int(rng.integers(0, 2**63 - 1)))
    return gen
