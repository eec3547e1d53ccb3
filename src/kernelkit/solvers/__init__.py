"""The numerics layer: factorisations, solves, eigensolvers and optimisers on tensors.

Every Cholesky factorisation (one jitter ladder), linear solve, PSD test, symmetric
eigendecomposition, conjugate-gradient solve and L-BFGS run of kernelkit goes through this
package; it imports nothing above :mod:`kernelkit.data` and takes tensors, or any object with
``matmat`` / ``__matmul__`` where an operator is enough.

>>> import torch
>>> from kernelkit.solvers import cholesky_solve
>>> cholesky_solve(torch.eye(3, dtype=torch.float64), torch.ones(3), shift=1.0).solution
tensor([0.5000, 0.5000, 0.5000], dtype=torch.float64)
"""

from kernelkit.solvers.boxqp import BoxQPResult, box_qp
from kernelkit.solvers.cg import CGResult, conjugate_gradient
from kernelkit.solvers.cholesky import (
    CholeskyFactor,
    CholeskyResult,
    cho_solve,
    cholesky_factor,
    cholesky_solve,
    solve,
    solve_triangular,
)
from kernelkit.solvers.eigen import EigenResult, fix_signs, symmetric_eigh, top_eigenpairs
from kernelkit.solvers.lbfgs import (
    BatchedLBFGSResult,
    LBFGSResult,
    lbfgs,
    lbfgs_batched,
    lbfgs_restarts,
)
from kernelkit.solvers.matfun import inverse_sqrt
from kernelkit.solvers.nystrom_pcg import (
    CentreFactor,
    NystromPCGResult,
    NystromPreconditioner,
    centre_factor,
    nystrom_pcg,
    nystrom_preconditioner,
)
from kernelkit.solvers.optima import DistinctOptima, Optimum
from kernelkit.solvers.psd import PSDCheck, check_psd
from kernelkit.solvers.randomized import randomized_eigh, randomized_range
from kernelkit.solvers.training import (
    NonFiniteObjectiveWarning,
    Step,
    TrainResult,
    train_loop,
    train_module,
)

__all__ = [
    "BatchedLBFGSResult",
    "BoxQPResult",
    "CGResult",
    "CentreFactor",
    "CholeskyFactor",
    "CholeskyResult",
    "DistinctOptima",
    "EigenResult",
    "LBFGSResult",
    "NonFiniteObjectiveWarning",
    "NystromPCGResult",
    "NystromPreconditioner",
    "Optimum",
    "PSDCheck",
    "Step",
    "TrainResult",
    "box_qp",
    "centre_factor",
    "check_psd",
    "cho_solve",
    "cholesky_factor",
    "cholesky_solve",
    "conjugate_gradient",
    "fix_signs",
    "inverse_sqrt",
    "lbfgs",
    "lbfgs_batched",
    "lbfgs_restarts",
    "nystrom_pcg",
    "nystrom_preconditioner",
    "randomized_eigh",
    "randomized_range",
    "solve",
    "solve_triangular",
    "symmetric_eigh",
    "top_eigenpairs",
    "train_loop",
    "train_module",
]
