"""How a Gram matrix is computed and stored: tiled evaluation, a lazy operator, centering.

>>> import torch
>>> from kernelkit.kernels import Gaussian
>>> from kernelkit.gram import gram
>>> gram(Gaussian(1.0), torch.zeros(4, 2)).shape
torch.Size([4, 4])
"""

from kernelkit.gram.centering import GramCenterer, center_gram
from kernelkit.gram.engine import gram
from kernelkit.gram.operator import GramOperator

__all__ = ["GramCenterer", "GramOperator", "center_gram", "gram"]
