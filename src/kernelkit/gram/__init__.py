"""How a Gram matrix is computed, stored and approximated: tiled evaluation, a lazy operator,
centering, Nyström and random Fourier feature maps.

The estimators get their Gram blocks here: :func:`gram` (tiled, in place, within
``memory_budget``; explicit sparse features as one product; dtype and device of the input)
and :class:`GramOperator` (products ``K V`` one tile at a time, ``K`` never held);
:class:`NystromOperator` streams ``K_nm^T (w K_nm V + U)`` for Falkon in one pass over row
tiles (:mod:`kernelkit.gram._streaming`).
The kernel autoencoders (KAE, K2AE), the concatenated regression and
:class:`~kernelkit.InvariantEmbedding` take a ``memory_budget`` with the meaning of
:func:`gram`: bytes of scratch allowed besides the blocks the method must hold (default
``None``, no limit).

Blocks inside an autograd graph (kernels on the latent codes of the KAE and concatenated
objectives, the features that :class:`~kernelkit.invariance.MixupInvariance` differentiates)
use ``gram(..., differentiable=True)`` (:mod:`kernelkit.gram._autodiff`).  Those ``n x n``
blocks are needed whole by the Cholesky factorisation that follows, so the budget bounds the
scratch around them, not the blocks.  Without a budget the block is ``kernel.block`` in one
piece, bitwise the direct call; the KAE and concatenated fits compute all their blocks in
this mode, so that without a budget they do not move by a last bit (their L-BFGS runs are
non-convex: a last-bit change of a Gram can end in another local minimum).  With a budget,
the forward pass is the tiled engine with no intermediate kept, and the backward pass
recomputes tile by tile (gradient checkpointing); its gradients equal those of the direct
call to 1e-10 (``tests/gram/test_gram_autodiff.py``).

Measured peaks (growth of the resident set during the call; ``tests/gram/test_gram_memory.py``
and ``tests/estimators/test_memory_budget.py``, one thread, glibc ``mmap`` threshold 64 KiB,
budget 1 MiB unless stated):

=====================================================  ============  ==============
call                                                   no budget     memory_budget
=====================================================  ============  ==============
``gram(Polynomial(3), X)``, n = 3000 (K: 68.7 MiB)     79.3 MiB      69.1 MiB
``GramOperator(Gaussian, X) @ V``, n = 3000, V n x 3   --            0.09 MiB
``<gram(Gaussian, Z, differentiable=True), W>`` and    85.6 MiB      34.3 MiB
its gradient, n = 1500 (one block 17.2 MiB; 4 MiB)     (5.0 blocks)  (2.0 blocks)
K2AE fit, n = 600, ``max_iter=3``                      33.3 MiB      22.2 MiB
K2AE fit, n = 1500, ``max_iter=2``                     177.2 MiB     142.7 MiB
KAE fit, n = 1500, ``max_iter=2``                      124.3 MiB     89.8 MiB
concatenated fit, 4 restarts, n = 500, ``max_iter=3``  42.6 MiB      29.8 MiB
concatenated fit, 4 restarts, n = 1500, ``max_iter=2`` 369.5 MiB     250.3 MiB
InvariantEmbedding fit, n = 12000, 400 landmarks       109.4 MiB     36.0 MiB
InvariantEmbedding fit, n = 20000, 400 landmarks       184.3 MiB     61.3 MiB
=====================================================  ============  ==============

The rest of those peaks is the numerics (Cholesky factors, the kernel PCA initialisation,
the polar solver), outside this package.  Time: the checkpointed backward pass evaluates the
kernel a second time and pays a Python call per tile (timings: ``docs/measurements.md``).

>>> import torch
>>> from kernelkit.kernels import Gaussian
>>> from kernelkit.gram import gram
>>> gram(Gaussian(1.0), torch.zeros(4, 2)).shape
torch.Size([4, 4])
>>> import numpy as np
>>> type(gram(Gaussian(1.0), np.zeros((4, 2)))).__name__
'ndarray'
"""

from kernelkit._moved import moved_names
from kernelkit.gram._centering import GramCenterer, center_gram
from kernelkit.gram._engine import gram
from kernelkit.gram._nystrom import NystromMap, nystrom_map
from kernelkit.gram._operator import GramOperator
from kernelkit.gram._random_features import RandomFourierMap, random_fourier_map
from kernelkit.gram._streaming import NystromOperator

__all__ = [
    "GramCenterer",
    "GramOperator",
    "NystromMap",
    "NystromOperator",
    "RandomFourierMap",
    "center_gram",
    "gram",
    "nystrom_map",
    "random_fourier_map",
]

# Public before 0.2; importable from here for one more release, with a FutureWarning.
__getattr__ = moved_names(
    __name__,
    {
        "feature_space_median": "kernelkit.gram._distances",
        "gram_tensor": "kernelkit.gram._engine",
        "nystrom_tile": "kernelkit.gram._tiles",
        "pivoted_cholesky": "kernelkit.gram._centres",
    },
)
