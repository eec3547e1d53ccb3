"""Representer-theorem machines in PyTorch: kernel layers, chains, closed-form ridge heads and
the kernel autoencoders (KAE, K2AE) of Laforgue, Clémençon and d'Alché-Buc (2019).

Pure torch modules and functions (no scikit-learn); the estimator is
:class:`kernelkit.estimators._autoencoder.KernelAutoencoder`.
"""

from kernelkit._moved import moved_names
from kernelkit.models._autoencoder import KernelAutoencoderModel, build_autoencoder, train
from kernelkit.models._ckn import CKNLayer
from kernelkit.models._ckn_seq import GappedKmerLayer
from kernelkit.models._graph_search import graph_search
from kernelkit.models._layers import KernelChain, KernelLayer
from kernelkit.models._ridge import ridge_coefficients

__all__ = [
    "CKNLayer",
    "GappedKmerLayer",
    "KernelAutoencoderModel",
    "KernelChain",
    "KernelLayer",
    "build_autoencoder",
    "graph_search",
    "ridge_coefficients",
    "train",
]

# Public before 0.2; importable from here for one more release, with a FutureWarning.
__getattr__ = moved_names(
    __name__,
    {
        "AutoencoderData": "kernelkit.models._autoencoder",
        "CKN": "kernelkit.models._ckn",
        "ChainPass": "kernelkit.models._layers",
        "NonFiniteObjectiveWarning": "kernelkit.solvers._training",
        "RidgeTrace": "kernelkit.models._ridge",
        "TrainResult": "kernelkit.solvers._training",
        "check_operator": "kernelkit.models._layers",
        "median_sigma": "kernelkit.kernels._specs",
        "psd_factor": "kernelkit.models._ridge",
        "reconstruction_errors": "kernelkit.models._autoencoder",
        "ridge_coefficients_projected": "kernelkit.models._ridge",
        "ridge_loss_projected": "kernelkit.models._ridge",
        "ridge_trace_loss": "kernelkit.models._ridge",
        "sym_outer": "kernelkit.models._ridge",
        "train_alternating": "kernelkit.models._autoencoder",
    },
)
