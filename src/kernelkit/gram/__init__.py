"""How a Gram matrix is computed, stored and approximated: tiled evaluation, a lazy operator,
centering, Nyström and random Fourier feature maps.

>>> import torch
>>> from kernelkit.kernels import Gaussian
>>> from kernelkit.gram import gram
>>> gram(Gaussian(1.0), torch.zeros(4, 2)).shape
torch.Size([4, 4])
>>> import numpy as np
>>> type(gram(Gaussian(1.0), np.zeros((4, 2)))).__name__
'ndarray'
"""

from kernelkit.gram.centering import GramCenterer, center_gram
from kernelkit.gram.engine import gram, gram_tensor
from kernelkit.gram.nystrom import NystromMap, nystrom_map, pivoted_cholesky
from kernelkit.gram.operator import GramOperator
from kernelkit.gram.random_features import RandomFourierMap, random_fourier_map

__all__ = [
    "GramCenterer",
    "GramOperator",
    "NystromMap",
    "RandomFourierMap",
    "center_gram",
    "gram",
    "gram_tensor",
    "nystrom_map",
    "pivoted_cholesky",
    "random_fourier_map",
]
