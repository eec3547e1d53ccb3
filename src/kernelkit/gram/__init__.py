"""How a Gram matrix is computed and stored: tiled evaluation, a lazy operator, centering.

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
from kernelkit.gram.operator import GramOperator

__all__ = ["GramCenterer", "GramOperator", "center_gram", "gram", "gram_tensor"]
