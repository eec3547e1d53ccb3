"""Thin scikit-learn-compatible estimators: validate, build the Gram, call a solver.

>>> from kernelkit.estimators import KernelPCA, KernelRidge, KernelSVC
"""

from kernelkit._moved import moved_names
from kernelkit.estimators._ckn import CKNClassifier, CKNFeatures
from kernelkit.estimators._ckn_seq import SequenceCKNClassifier, SequenceCKNFeatures
from kernelkit.estimators._clustering import KernelKMeans
from kernelkit.estimators._features import NystromFeatures, RandomFourierFeatures
from kernelkit.estimators._gckn import GraphCKNClassifier, GraphCKNFeatures
from kernelkit.estimators._huber import KernelHuberRegressor
from kernelkit.estimators._kcca import KernelCCA
from kernelkit.estimators._logistic import KernelLogisticRegression
from kernelkit.estimators._mkl import SimpleMKL
from kernelkit.estimators._network import network_weights
from kernelkit.estimators._pca import KernelPCA
from kernelkit.estimators._ridge import KernelRidge
from kernelkit.estimators._spectral import SpectralClustering
from kernelkit.estimators._svm import KernelSVC
from kernelkit.estimators._svm_dual import BiasFreeSVC
from kernelkit.estimators._svr import KernelSVR

__all__ = [
    "BiasFreeSVC",
    "CKNClassifier",
    "CKNFeatures",
    "GraphCKNClassifier",
    "GraphCKNFeatures",
    "KernelCCA",
    "KernelHuberRegressor",
    "KernelKMeans",
    "KernelLogisticRegression",
    "KernelPCA",
    "KernelRidge",
    "KernelSVC",
    "KernelSVR",
    "NystromFeatures",
    "RandomFourierFeatures",
    "SequenceCKNClassifier",
    "SequenceCKNFeatures",
    "SimpleMKL",
    "SpectralClustering",
    "network_weights",
]

# Public before 0.2; importable from here for one more release, with a FutureWarning.
__getattr__ = moved_names(
    __name__,
    {
        "KernelPCAResult": "kernelkit.estimators._pca",
        "bias_free_svm": "kernelkit.estimators._svm_dual",
        "kernel_kmeans": "kernelkit.estimators._clustering",
        "kernel_logistic_regression": "kernelkit.models._logistic_exact",
        "kernel_pca": "kernelkit.estimators._pca",
        "kernel_ridge_coefficients": "kernelkit.models._ridge",
    },
)
