"""What a kernel *is*: one block ``K(X, Y)``, its diagonal, and the algebra of kernels.

>>> import torch
>>> from kernelkit.kernels import Gaussian, Linear
>>> k = Gaussian(sigma=2.0) + 0.5 * Linear()
>>> k(torch.zeros(3, 2)).shape
torch.Size([3, 3])
"""

from kernelkit.kernels._alignment import LocalAlignment, LogNormalizedAlignment
from kernelkit.kernels._base import (
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
from kernelkit.kernels._centered import CenteredKernel
from kernelkit.kernels._characteristic import BallSpectrum
from kernelkit.kernels._chi2 import Chi2
from kernelkit.kernels._course_kernels import (
    Brownian,
    Exponentiated,
    Kendall,
    LaplaceTransform,
    PeriodicSobolev,
)
from kernelkit.kernels._dictionary import DictionaryKernel
from kernelkit.kernels._dot_product import (
    SphereExponential,
    SphereInversePolynomial,
    SpherePolynomial,
    SphereVovk,
)
from kernelkit.kernels._fisher import FisherVector, HMMFisher, HMMMarginalized
from kernelkit.kernels._graph_attributes import GraphHopper, Propagation, PropagationAttr
from kernelkit.kernels._graph_core import CoreFramework
from kernelkit.kernels._graph_graphlets import GraphletSampling
from kernelkit.kernels._graph_histograms import (
    EdgeHistogram,
    NeighborhoodHash,
    VertexHistogram,
    WeisfeilerLehmanOptimalAssignment,
)
from kernelkit.kernels._graph_matching import SubgraphMatching
from kernelkit.kernels._graph_multiscale import MultiscaleLaplacian
from kernelkit.kernels._graph_nspdk import NeighborhoodSubgraphPairwiseDistance
from kernelkit.kernels._graph_oddsth import OddSth
from kernelkit.kernels._graph_paths import BoundedPath
from kernelkit.kernels._graph_pyramid import PyramidMatch
from kernelkit.kernels._graph_relabel import morgan_index, morgan_relabel
from kernelkit.kernels._graph_subtree import TreePattern
from kernelkit.kernels._graph_theta import LovaszTheta, SvmTheta
from kernelkit.kernels._graph_wwl import WassersteinWeisfeilerLehman
from kernelkit.kernels._graphs import ShortestPath, WeisfeilerLehman
from kernelkit.kernels._measures import (
    BagFisherVector,
    EntropyKernel,
    InverseGeneralizedVariance,
)
from kernelkit.kernels._molecules import MinMax, Tanimoto
from kernelkit.kernels._mutual_information import MutualInformation
from kernelkit.kernels._network import NetworkLinear, SpectralNode
from kernelkit.kernels._neural import ArcCosine, ReLUNTK
from kernelkit.kernels._nodes import CommuteTime, Diffusion, GraphDistance, RegularizedLaplacian
from kernelkit.kernels._physico_chemical import PhysicoChemical
from kernelkit.kernels._precomputed import Precomputed, PrecomputedBatch
from kernelkit.kernels._random_walk import RandomWalk
from kernelkit.kernels._strings import Mismatch, Spectrum, Subsequence
from kernelkit.kernels._vector import Gaussian, Laplacian, Linear, Matern, Polynomial, TensorMatern
from kernelkit.kernels._weighted_degree import UnequalLengthError, WeightedDegree

__all__ = [
    "ArcCosine",
    "BagFisherVector",
    "BallSpectrum",
    "BoundedPath",
    "Brownian",
    "CenteredKernel",
    "Chi2",
    "CommuteTime",
    "Constant",
    "CoreFramework",
    "DictionaryKernel",
    "Diffusion",
    "DotProductKernel",
    "EdgeHistogram",
    "EntropyKernel",
    "Exponentiated",
    "FeatureSpaceGaussian",
    "FisherVector",
    "Gaussian",
    "GraphDistance",
    "GraphHopper",
    "GraphletSampling",
    "HMMFisher",
    "HMMMarginalized",
    "InverseGeneralizedVariance",
    "Kendall",
    "Kernel",
    "LaplaceTransform",
    "Laplacian",
    "Linear",
    "LocalAlignment",
    "LogNormalizedAlignment",
    "LovaszTheta",
    "Matern",
    "MinMax",
    "Mismatch",
    "MultiscaleLaplacian",
    "MutualInformation",
    "NeighborhoodHash",
    "NeighborhoodSubgraphPairwiseDistance",
    "NetworkLinear",
    "NormalizedKernel",
    "OddSth",
    "PeriodicSobolev",
    "PhysicoChemical",
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
    "SpectralNode",
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
    "TreePattern",
    "UnequalLengthError",
    "VertexHistogram",
    "WassersteinWeisfeilerLehman",
    "WeightedDegree",
    "WeisfeilerLehman",
    "WeisfeilerLehmanOptimalAssignment",
    "morgan_index",
    "morgan_relabel",
]
