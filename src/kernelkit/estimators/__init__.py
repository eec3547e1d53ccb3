"""Thin scikit-learn-compatible estimators: validate, build the Gram, call a solver.

>>> from kernelkit.estimators import KernelPCA, KernelRidge, KernelSVC
"""

from kernelkit.estimators.ckn import CKNClassifier, CKNFeatures
from kernelkit.estimators.ckn_seq import SequenceCKNClassifier, SequenceCKNFeatures
from kernelkit.estimators.clustering import KernelKMeans, kernel_kmeans
from kernelkit.estimators.features import NystromFeatures, RandomFourierFeatures
from kernelkit.estimators.gckn import GraphCKNClassifier, GraphCKNFeatures
from kernelkit.estimators.huber import KernelHuberRegressor
from kernelkit.estimators.kcca import KernelCCA
from kernelkit.estimators.logistic import KernelLogisticRegression
from kernelkit.estimators.mkl import SimpleMKL
from kernelkit.estimators.pca import KernelPCA, KernelPCAResult, kernel_pca
from kernelkit.estimators.ridge import KernelRidge
from kernelkit.estimators.spectral import SpectralClustering
from kernelkit.estimators.svm import KernelSVC
from kernelkit.estimators.svm_dual import BiasFreeSVC, bias_free_svm
from kernelkit.estimators.svr import KernelSVR
from kernelkit.models._logistic_exact import kernel_logistic_regression
from kernelkit.models.ridge import kernel_ridge_coefficients

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
    "KernelPCAResult",
    "KernelRidge",
    "KernelSVC",
    "KernelSVR",
    "NystromFeatures",
    "RandomFourierFeatures",
    "SequenceCKNClassifier",
    "SequenceCKNFeatures",
    "SimpleMKL",
    "SpectralClustering",
    "bias_free_svm",
    "kernel_kmeans",
    "kernel_logistic_regression",
    "kernel_pca",
    "kernel_ridge_coefficients",
]
