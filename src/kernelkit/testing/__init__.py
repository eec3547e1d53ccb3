"""Conformance kit: checks every kernel (and estimator) implementation must pass.

>>> import torch
>>> from kernelkit.kernels import Gaussian
>>> from kernelkit.testing import check_kernel
>>> check_kernel(Gaussian(sigma=1.5), torch.randn(8, 3, dtype=torch.float64))

See :mod:`kernelkit.testing._kernels` for the enrolment hook ``_check_example`` that lets new
kernels join the common tests (``tests/test_common.py``) without editing any list.
"""

from kernelkit.testing._kernels import (  # noqa: F401 (EXAMPLE_INPUTS: importable, not in __all__)
    EXAMPLE_INPUTS,
    all_kernel_classes,
    check_kernel,
    is_abstract,
    iter_all_examples,
    kernel_examples,
)

__all__ = [
    "all_kernel_classes",
    "check_kernel",
    "is_abstract",
    "iter_all_examples",
    "kernel_examples",
]
