"""Thread limits of the BLAS libraries that SciPy and NumPy call (OpenBLAS, MKL, BLIS).

torch keeps its own thread pool; SciPy's LAPACK and NumPy's BLAS have theirs.  kernelkit runs
their calls on torch's thread count (``torch.set_num_threads``), so that one setting governs
every dense routine, and on one thread where two pools would spin against each other.
"""

from __future__ import annotations

import functools
from typing import Any

from threadpoolctl import ThreadpoolController

__all__ = ["blas_threads"]


@functools.cache
def _controller() -> ThreadpoolController:
    """threadpoolctl's inventory of the loaded libraries, taken once per process: building it
    walks every loaded shared object (milliseconds), more than many of the calls it limits.
    kernelkit imports SciPy and NumPy, whose BLAS libraries are then loaded, before the
    first call."""
    return ThreadpoolController()


def blas_threads(limits: int) -> Any:
    """Context manager running the BLAS libraries' calls on ``limits`` threads
    (``threadpoolctl``'s ``limit``, ``user_api="blas"``); the previous limits are restored
    on exit."""
    return _controller().limit(limits=limits, user_api="blas")
