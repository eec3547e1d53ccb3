"""Thin scikit-learn-compatible estimators: validate, build the Gram, call a solver.

>>> from kernelkit.estimators import KernelPCA, KernelRidge, KernelSVC
"""

from kernelkit.estimators.features import NystromFeatures, RandomFourierFeatures
from kernelkit.estimators.kcca import KernelCCA
from kernelkit.estimators.mkl import SimpleMKL
from kernelkit.estimators.pca import KernelPCA, KernelPCAResult, kernel_pca
from kernelkit.estimators.ridge import KernelRidge, kernel_ridge_coefficients
from kernelkit.estimators.svm import KernelSVC

__all__ = [
    "KernelCCA",
    "KernelPCA",
    "KernelPCAResult",
    "KernelRidge",
    "KernelSVC",
    "NystromFeatures",
    "RandomFourierFeatures",
    "SimpleMKL",
    "kernel_pca",
    "kernel_ridge_coefficients",
]
