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

from kernelkit._moved import moved_names
from kernelkit.solvers._boxqp import box_qp
from kernelkit.solvers._cg import conjugate_gradient
from kernelkit.solvers._cholesky import cholesky_factor, cholesky_solve
from kernelkit.solvers._eigen import symmetric_eigh, top_eigenpairs
from kernelkit.solvers._lbfgs import lbfgs, lbfgs_restarts
from kernelkit.solvers._nystrom_pcg import nystrom_pcg
from kernelkit.solvers._psd import check_psd
from kernelkit.solvers._randomized import randomized_eigh
from kernelkit.solvers._training import NonFiniteObjectiveWarning, train_module

__all__ = [
    "NonFiniteObjectiveWarning",
    "box_qp",
    "check_psd",
    "cholesky_factor",
    "cholesky_solve",
    "conjugate_gradient",
    "lbfgs",
    "lbfgs_restarts",
    "nystrom_pcg",
    "randomized_eigh",
    "symmetric_eigh",
    "top_eigenpairs",
    "train_module",
]

# Public before 0.2; importable from here for one more release, with a FutureWarning.
__getattr__ = moved_names(
    __name__,
    {
        "BatchedLBFGSResult": "kernelkit.solvers._lbfgs",
        "BoxQPResult": "kernelkit.solvers._boxqp",
        "CGResult": "kernelkit.solvers._cg",
        "CentreFactor": "kernelkit.solvers._nystrom_pcg",
        "CholeskyFactor": "kernelkit.solvers._cholesky",
        "CholeskyResult": "kernelkit.solvers._cholesky",
        "DistinctOptima": "kernelkit.solvers._optima",
        "EigenResult": "kernelkit.solvers._eigen",
        "LBFGSResult": "kernelkit.solvers._lbfgs",
        "NystromPCGResult": "kernelkit.solvers._nystrom_pcg",
        "NystromPreconditioner": "kernelkit.solvers._nystrom_pcg",
        "Optimum": "kernelkit.solvers._optima",
        "PSDCheck": "kernelkit.solvers._psd",
        "Step": "kernelkit.solvers._training",
        "TrainResult": "kernelkit.solvers._training",
        "centre_factor": "kernelkit.solvers._nystrom_pcg",
        "cho_solve": "kernelkit.solvers._cholesky",
        "fix_signs": "kernelkit.solvers._eigen",
        "inverse_sqrt": "kernelkit.solvers._matfun",
        "lbfgs_batched": "kernelkit.solvers._lbfgs",
        "nystrom_preconditioner": "kernelkit.solvers._nystrom_pcg",
        "randomized_range": "kernelkit.solvers._randomized",
        "solve": "kernelkit.solvers._cholesky",
        "solve_triangular": "kernelkit.solvers._cholesky",
        "train_loop": "kernelkit.solvers._training",
    },
)
