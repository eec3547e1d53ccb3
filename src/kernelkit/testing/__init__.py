"""Conformance kit: checks every kernel (and estimator) implementation must pass.

>>> import torch
>>> from kernelkit.kernels import Gaussian
>>> from kernelkit.testing import check_kernel
>>> check_kernel(Gaussian(sigma=1.5), torch.randn(8, 3, dtype=torch.float64))

See :mod:`kernelkit.testing._kernels` for the enrolment hook ``_check_example`` that lets new
kernels join the common tests (``tests/test_common.py``) without editing any list.
"""

from kernelkit._moved import moved_names
from kernelkit.testing._kernels import (  # noqa: F401 (EXAMPLE_INPUTS: importable, not in __all__)
    EXAMPLE_INPUTS,
    all_kernel_classes,
    check_kernel,
    kernel_examples,
)

__all__ = [
    "all_kernel_classes",
    "check_kernel",
    "kernel_examples",
]

# Public before 0.2; importable from here for one more release, with a FutureWarning.
__getattr__ = moved_names(
    __name__,
    {
        "is_abstract": "kernelkit.testing._kernels",
        "iter_all_examples": "kernelkit.testing._kernels",
    },
)
