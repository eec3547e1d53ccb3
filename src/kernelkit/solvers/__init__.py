"""Functional numerics on tensors or lazy operators, each returning a small result dataclass.

>>> import torch
>>> from kernelkit.solvers import cholesky_solve
>>> cholesky_solve(torch.eye(3, dtype=torch.float64), torch.ones(3), shift=1.0).solution
tensor([0.5000, 0.5000, 0.5000], dtype=torch.float64)
"""

from kernelkit.solvers.cg import CGResult, conjugate_gradient
from kernelkit.solvers.cholesky import CholeskyResult, cholesky_solve
from kernelkit.solvers.eigen import EigenResult, top_eigenpairs

__all__ = [
    "CGResult",
    "CholeskyResult",
    "EigenResult",
    "cholesky_solve",
    "conjugate_gradient",
    "top_eigenpairs",
]
