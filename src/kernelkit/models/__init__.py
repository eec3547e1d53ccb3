"""Representer-theorem machines in PyTorch: kernel layers, chains, closed-form ridge heads and
the kernel autoencoders (KAE, K2AE) of Laforgue, Clémençon and d'Alché-Buc (2019).

Pure torch modules and functions (no scikit-learn); the estimator is
:class:`kernelkit.estimators.autoencoder.KernelAutoencoder`.
"""

from kernelkit.models._graph_search import graph_search
from kernelkit.models.autoencoder import (
    AutoencoderData,
    KernelAutoencoderModel,
    NonFiniteObjectiveWarning,
    TrainResult,
    build_autoencoder,
    median_sigma,
    reconstruction_errors,
    train,
    train_alternating,
)
from kernelkit.models.ckn import CKN, CKNLayer
from kernelkit.models.ckn_seq import GappedKmerLayer
from kernelkit.models.layers import ChainPass, KernelChain, KernelLayer, check_operator
from kernelkit.models.ridge import (
    RidgeTrace,
    psd_factor,
    ridge_coefficients,
    ridge_coefficients_projected,
    ridge_loss_projected,
    ridge_trace_loss,
    sym_outer,
)

__all__ = [
    "CKN",
    "AutoencoderData",
    "CKNLayer",
    "ChainPass",
    "GappedKmerLayer",
    "KernelAutoencoderModel",
    "KernelChain",
    "KernelLayer",
    "NonFiniteObjectiveWarning",
    "RidgeTrace",
    "TrainResult",
    "build_autoencoder",
    "check_operator",
    "graph_search",
    "median_sigma",
    "psd_factor",
    "reconstruction_errors",
    "ridge_coefficients",
    "ridge_coefficients_projected",
    "ridge_loss_projected",
    "ridge_trace_loss",
    "sym_outer",
    "train",
    "train_alternating",
]
