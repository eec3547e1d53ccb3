r"""Kernels on networks: a spectral node kernel for any transform, and the network-regularised
linear kernel on vectors indexed by the nodes of a graph.

Course part 2, "Kernels on graphs" (kernels on graph nodes: spectral functions
``K = sum_i r(lambda_i) u_i u_i^T`` of the Laplacian ``L = D - A``, p.d. when ``r >= 0``;
applications to gene networks) after Rapaport, Zinovyev, Dutreix, Barillot & Vert,
"Classification of microarray data using gene networks", BMC Bioinformatics 8:35, 2007:

* :class:`SpectralNode`: ``K = U r(Lambda) U^T`` for a user transform ``r``
  (``r(lambda) = exp(-t lambda)`` is :class:`~kernelkit.kernels.Diffusion`);
* :class:`NetworkLinear`: ``k(x, x') = x^T K_G x'`` on expression profiles ``x in R^m`` (one
  coordinate per node).  A linear function ``f(x) = beta^T x`` has RKHS norm
  ``||f||^2 = beta^T K_G^{-1} beta`` (``K_G`` invertible; its pseudo-inverse on ``Im K_G``
  otherwise), Rapaport et al.'s network penalty, which favours weights ``beta`` smooth on the
  network (small on the high-frequency eigenvectors of ``L``).  Equivalently it is the linear
  kernel on the features ``x -> K_G^{1/2} x``.  The weights of a fitted model are
  ``beta = K_G X^T alpha`` (:func:`kernelkit.estimators.network_weights`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
import torch

from kernelkit.kernels._base import Kernel
from kernelkit.kernels._nodes import _example_adjacency, _SpectralNodeKernel
from kernelkit.solvers import check_psd, symmetric_eigh
from kernelkit.utils._errors import InputError
from kernelkit.utils._kinds import InputKind
from kernelkit.utils._validation import to_tensor

__all__ = ["NetworkLinear", "SpectralNode"]


def _exp_minus(eigenvalues: np.ndarray) -> np.ndarray:
    """``r(lambda) = exp(-lambda)`` (the example transform: a diffusion of time 1)."""
    return np.exp(-eigenvalues)


class SpectralNode(_SpectralNodeKernel):
    r"""Spectral kernel on the nodes of a graph for any transform ``r`` of the Laplacian.

    With ``L = D - A = sum_i lambda_i u_i u_i^T`` (course part 2, "Kernels on graphs",
    spectral family), ``K = sum_i r(lambda_i) u_i u_i^T``: p.d. exactly when
    ``r(lambda_i) >= 0`` for every eigenvalue, and smooth on the graph when ``r`` decreases
    (``||f||^2 = sum_i (u_i^T f)^2 / r(lambda_i)`` penalises the high frequencies).
    ``r(lambda) = exp(-t lambda)`` gives :class:`~kernelkit.kernels.Diffusion` (``beta = t``),
    ``1 / (lambda + eps)`` :class:`~kernelkit.kernels.RegularizedLaplacian`.

    Parameters
    ----------
    graph : networkx.Graph or array-like (m, m)
        The graph (symmetric non-negative adjacency).
    transform : callable
        ``r``: maps the NumPy array of the Laplacian's eigenvalues (ascending, ``>= 0`` up to
        round-off) to an array of the same shape of finite non-negative values.  A model
        holding a Python function is not saved by :mod:`kernelkit.io` (functions are never
        written).

    Raises
    ------
    InputError
        When ``transform`` is not callable, or (at the first evaluation) returns values of
        another shape, non-finite or negative values.
    """

    def __init__(self, graph: Any, transform: Callable[[np.ndarray], Any] = _exp_minus):
        super().__init__()
        self._init_graph(graph)
        if not callable(transform):
            raise InputError(
                f"transform: expected a callable r(eigenvalues) -> values, got "
                f"{type(transform).__name__} {transform!r}"
            )
        self.transform = transform

    def spectrum(self, eigenvalues: np.ndarray) -> np.ndarray:
        values = np.asarray(self.transform(eigenvalues.copy()), dtype=np.float64)
        if values.shape != eigenvalues.shape:
            raise InputError(
                f"transform: expected {eigenvalues.shape[0]} values (one per eigenvalue), got "
                f"shape {values.shape}"
            )
        if not np.isfinite(values).all() or (values < 0).any():
            bad = int(np.flatnonzero(~np.isfinite(values) | (values < 0))[0])
            raise InputError(
                "transform: expected finite non-negative values r(lambda) (a p.d. kernel), got "
                f"r({eigenvalues[bad]:.4g}) = {values[bad]!r}"
            )
        return values

    @classmethod
    def _check_example(cls) -> tuple[Kernel, Any, Any]:
        return cls(_example_adjacency()), np.array([0, 1, 2, 3, 4, 5, 2]), np.array([5, 0, 3])


def _network_matrix(network: Any) -> torch.Tensor:
    """``K_G`` (float64, symmetric PSD) of a node kernel or a matrix."""
    if isinstance(network, Kernel):
        gram = getattr(network, "node_gram", None)
        if gram is None:
            raise InputError(
                f"network: expected a kernel on the nodes of a graph (Diffusion, "
                f"RegularizedLaplacian, CommuteTime, SpectralNode) or a PSD matrix, got "
                f"{type(network).__name__}"
            )
        return gram().to(torch.float64)
    K = to_tensor(network, name="network", dtype=torch.float64)
    if K.shape[0] != K.shape[1]:
        raise InputError(f"network: expected a square (m, m) matrix, got shape {tuple(K.shape)}")
    if not torch.allclose(K, K.T, rtol=0, atol=1e-12 * max(float(K.abs().max()), 1.0)):
        raise InputError("network: expected a symmetric matrix K_G")
    check_psd(K, name="network")
    return (K + K.T) / 2


class NetworkLinear(Kernel):
    r"""Network-regularised linear kernel ``k(x, x') = x^T K_G x'`` (Rapaport et al. 2007).

    For profiles ``x in R^m`` whose coordinates are the nodes (genes) of a network with node
    kernel ``K_G`` (course part 2, "Kernels on graphs": diffusion, regularised Laplacian...),
    the RKHS of ``k`` is the linear functions ``f(x) = beta^T x`` with norm
    ``||f||^2 = beta^T K_G^{-1} beta``, so ERM with this kernel is the network-penalised
    linear model of Rapaport, Zinovyev, Dutreix, Barillot & Vert (BMC Bioinformatics 8:35,
    2007, eq. 3-4).  It is the linear kernel on ``phi(x) = K_G^{1/2} x`` (:meth:`network_features`),
    and the weights of a fitted dual model ``f = sum_i alpha_i k(x_i, .)`` are
    ``beta = K_G X^T alpha`` (:func:`kernelkit.estimators.network_weights`), to be drawn on
    the network.

    Parameters
    ----------
    network : Kernel or array-like (m, m)
        A node kernel of the graph (:class:`~kernelkit.kernels.Diffusion`,
        :class:`~kernelkit.kernels.RegularizedLaplacian`, :class:`SpectralNode` ...) whose
        full node Gram is ``K_G``, or ``K_G`` itself (symmetric PSD).
    """

    input_kind: ClassVar[InputKind] = InputKind.VECTOR

    def __init__(self, network: Any):
        super().__init__()
        self.network = network
        self._K = _network_matrix(network)
        self._root: torch.Tensor | None = None

    @classmethod
    def _check_example(cls) -> tuple[Kernel, Any, Any]:
        from kernelkit.kernels._nodes import Diffusion

        g = torch.Generator().manual_seed(0)
        X = torch.randn(9, 6, generator=g, dtype=torch.float64)
        Y = torch.randn(4, 6, generator=g, dtype=torch.float64)
        return cls(Diffusion(_example_adjacency(), beta=0.5)), X, Y

    @property
    def n_nodes(self) -> int:
        """Number of nodes ``m`` (features of the inputs)."""
        return int(self._K.shape[0])

    def network_gram(self) -> torch.Tensor:
        """``K_G``, shape ``(m, m)``, float64."""
        return self._K

    def network_root(self) -> torch.Tensor:
        """``K_G^{1/2}`` (symmetric PSD square root by eigendecomposition), float64."""
        if self._root is None:
            eig = symmetric_eigh(self._K, signs=False, name="network")
            U = eig.vectors
            R = (U * eig.values.clamp_min(0.0).sqrt()) @ U.T
            self._root = (R + R.T) / 2
        return self._root

    def _check_width(self, X: torch.Tensor) -> None:
        if X.shape[1] != self.n_nodes:
            raise InputError(
                f"X: expected {self.n_nodes} features (one per node of the network), got "
                f"{X.shape[1]}"
            )

    def block(self, X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
        self._check_width(X)
        self._check_width(Y)
        K = self._K.to(dtype=X.dtype, device=X.device)
        return X @ K @ Y.T

    def block_diag(self, X: torch.Tensor) -> torch.Tensor:
        self._check_width(X)
        K = self._K.to(dtype=X.dtype, device=X.device)
        return ((X @ K) * X).sum(1)

    def network_features(self, X: Any) -> torch.Tensor:
        """``phi(X) = X K_G^{1/2}``: the linear kernel on these rows is this kernel.

        Not :meth:`features`, which the Gram engine calls on every Gram: the Gram
        ``X K_G Y^T`` needs no square root (an ``m x m`` eigendecomposition).
        """
        X = self.prepare(X)
        self._check_width(X)
        return X @ self.network_root().to(dtype=X.dtype, device=X.device)
