"""What a kernel *is*: one block ``K(X, Y)``, its diagonal, and the algebra of kernels.

>>> import torch
>>> from kernelkit.kernels import Gaussian, Linear
>>> k = Gaussian(sigma=2.0) + 0.5 * Linear()
>>> k(torch.zeros(3, 2)).shape
torch.Size([3, 3])
"""

from kernelkit.kernels._graph_paths import BoundedPath
from kernelkit.kernels._graph_relabel import morgan_index, morgan_relabel
from kernelkit.kernels.alignment import LocalAlignment, LogNormalizedAlignment
from kernelkit.kernels.base import (
    Constant,
    DotProductKernel,
    FeatureSpaceGaussian,
    Kernel,
    NormalizedKernel,
    PowerKernel,
    ProductKernel,
    ScaledKernel,
    StationaryKernel,
    SumKernel,
)
from kernelkit.kernels.centered import CenteredKernel
from kernelkit.kernels.characteristic import BallSpectrum
from kernelkit.kernels.chi2 import Chi2
from kernelkit.kernels.dot_product import (
    SphereExponential,
    SphereInversePolynomial,
    SpherePolynomial,
    SphereVovk,
)
from kernelkit.kernels.fisher import FisherVector, HMMFisher, HMMMarginalized
from kernelkit.kernels.graph_attributes import GraphHopper, Propagation, PropagationAttr
from kernelkit.kernels.graph_core import CoreFramework
from kernelkit.kernels.graph_graphlets import GraphletSampling
from kernelkit.kernels.graph_histograms import (
    EdgeHistogram,
    NeighborhoodHash,
    VertexHistogram,
    WeisfeilerLehmanOptimalAssignment,
)
from kernelkit.kernels.graph_matching import SubgraphMatching
from kernelkit.kernels.graph_multiscale import MultiscaleLaplacian
from kernelkit.kernels.graph_nspdk import NeighborhoodSubgraphPairwiseDistance
from kernelkit.kernels.graph_oddsth import OddSth
from kernelkit.kernels.graph_pyramid import PyramidMatch
from kernelkit.kernels.graph_theta import LovaszTheta, SvmTheta
from kernelkit.kernels.graph_wwl import WassersteinWeisfeilerLehman
from kernelkit.kernels.graphs import ShortestPath, WeisfeilerLehman
from kernelkit.kernels.molecules import MinMax, Tanimoto
from kernelkit.kernels.neural import ArcCosine, ReLUNTK
from kernelkit.kernels.nodes import CommuteTime, Diffusion, RegularizedLaplacian
from kernelkit.kernels.precomputed import Precomputed, PrecomputedBatch
from kernelkit.kernels.random_walk import RandomWalk
from kernelkit.kernels.strings import Mismatch, Spectrum, Subsequence
from kernelkit.kernels.vector import Gaussian, Laplacian, Linear, Matern, Polynomial, TensorMatern
from kernelkit.kernels.weighted_degree import UnequalLengthError, WeightedDegree

__all__ = [
    "ArcCosine",
    "BallSpectrum",
    "BoundedPath",
    "CenteredKernel",
    "Chi2",
    "CommuteTime",
    "Constant",
    "CoreFramework",
    "Diffusion",
    "DotProductKernel",
    "EdgeHistogram",
    "FeatureSpaceGaussian",
    "FisherVector",
    "Gaussian",
    "GraphHopper",
    "GraphletSampling",
    "HMMFisher",
    "HMMMarginalized",
    "Kernel",
    "Laplacian",
    "Linear",
    "LocalAlignment",
    "LogNormalizedAlignment",
    "LovaszTheta",
    "Matern",
    "MinMax",
    "Mismatch",
    "MultiscaleLaplacian",
    "NeighborhoodHash",
    "NeighborhoodSubgraphPairwiseDistance",
    "NormalizedKernel",
    "OddSth",
    "Polynomial",
    "PowerKernel",
    "Precomputed",
    "PrecomputedBatch",
    "ProductKernel",
    "Propagation",
    "PropagationAttr",
    "PyramidMatch",
    "RandomWalk",
    "ReLUNTK",
    "RegularizedLaplacian",
    "ScaledKernel",
    "ShortestPath",
    "Spectrum",
    "SphereExponential",
    "SphereInversePolynomial",
    "SpherePolynomial",
    "SphereVovk",
    "StationaryKernel",
    "SubgraphMatching",
    "Subsequence",
    "SumKernel",
    "SvmTheta",
    "Tanimoto",
    "TensorMatern",
    "UnequalLengthError",
    "VertexHistogram",
    "WassersteinWeisfeilerLehman",
    "WeightedDegree",
    "WeisfeilerLehman",
    "WeisfeilerLehmanOptimalAssignment",
    "morgan_index",
    "morgan_relabel",
]
