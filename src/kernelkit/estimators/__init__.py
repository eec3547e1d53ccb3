"""Thin scikit-learn-compatible estimators: validate, build the Gram, call a solver.

>>> from kernelkit.estimators import KernelPCA, KernelRidge, KernelSVC
"""

from kernelkit.estimators._ckn import CKNClassifier, CKNFeatures
from kernelkit.estimators._ckn_seq import SequenceCKNClassifier, SequenceCKNFeatures
from kernelkit.estimators._clustering import KernelKMeans, kernel_kmeans
from kernelkit.estimators._features import NystromFeatures, RandomFourierFeatures
from kernelkit.estimators._huber import KernelHuberRegressor
from kernelkit.estimators._kcca import KernelCCA
from kernelkit.estimators._logistic import KernelLogisticRegression
from kernelkit.estimators._mkl import SimpleMKL
from kernelkit.estimators._network import network_weights
from kernelkit.estimators._pca import KernelPCA, KernelPCAResult, kernel_pca
from kernelkit.estimators._ridge import KernelRidge
from kernelkit.estimators._spectral import SpectralClustering
from kernelkit.estimators._svm import KernelSVC
from kernelkit.estimators._svm_dual import BiasFreeSVC, bias_free_svm
from kernelkit.estimators._svr import KernelSVR
from kernelkit.models._logistic_exact import kernel_logistic_regression
from kernelkit.models._ridge import kernel_ridge_coefficients

__all__ = [
    "BiasFreeSVC",
    "CKNClassifier",
    "CKNFeatures",
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
    "network_weights",
]
