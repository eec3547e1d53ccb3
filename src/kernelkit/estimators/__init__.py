"""Thin scikit-learn-compatible estimators: validate, build the Gram, call a solver.

>>> from kernelkit.estimators import KernelPCA, KernelRidge, KernelSVC
"""

from kernelkit.estimators.ckn import CKNClassifier, CKNFeatures
from kernelkit.estimators.ckn_seq import SequenceCKNClassifier, SequenceCKNFeatures
from kernelkit.estimators.features import NystromFeatures, RandomFourierFeatures
from kernelkit.estimators.pca import KernelPCA, KernelPCAResult, kernel_pca
from kernelkit.estimators.ridge import KernelRidge, kernel_ridge_coefficients
from kernelkit.estimators.svm import KernelSVC

__all__ = [
    "CKNClassifier",
    "CKNFeatures",
    "KernelPCA",
    "KernelPCAResult",
    "KernelRidge",
    "KernelSVC",
    "NystromFeatures",
    "RandomFourierFeatures",
    "SequenceCKNClassifier",
    "SequenceCKNFeatures",
    "kernel_pca",
    "kernel_ridge_coefficients",
]
