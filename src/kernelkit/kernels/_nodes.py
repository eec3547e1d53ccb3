"""Kernels between the nodes of one graph: diffusion, regularised Laplacian, commute time.

Course part 2, section 5 ("Kernels on graphs").  The graph is fixed at construction (a
networkx graph or a symmetric non-negative adjacency matrix, weights allowed); inputs are
node indices ``0..m-1`` (in ``list(G.nodes)`` order for a networkx graph), as a 1-D integer
array or a column ``(n, 1)`` as scikit-learn passes it.  With ``L = D - A`` the graph
Laplacian and ``L = sum_i lambda_i u_i u_i^T`` its eigendecomposition, each kernel is a spectral
function ``K = sum_i r(lambda_i) u_i u_i^T``:

* :class:`Diffusion`: ``r = exp(-beta lambda)``, ``K = expm(-beta L)`` (Kondor & Lafferty 2002);
* :class:`RegularizedLaplacian`: ``r = 1 / (lambda + eps)``, ``K = (L + eps I)^-1``;
* :class:`CommuteTime`: ``r = 1 / lambda`` on ``Im L``, ``K = L^+`` (Fouss et al. 2007).

:class:`GraphDistance` (``K = exp(-t d_G)``, shortest-path distances) is not spectral; it
shares the node input and the cached Gram.

The full node Gram is computed once (lazily, by one ``eigh``) and indexed afterwards;
``set_params`` re-runs ``__init__``, which drops the cache.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
import torch
from scipy.sparse import csgraph

from kernelkit.kernels._base import Batch, Kernel
from kernelkit.solvers import symmetric_eigh
from kernelkit.solvers._spectra import symmetric_eigvalsh
from kernelkit.utils._errors import InputError
from kernelkit.utils._kinds import InputKind
from kernelkit.utils._validation import check_positive

__all__ = [
    "CommuteTime",
    "Diffusion",
    "GraphDistance",
    "NodeBatch",
    "RegularizedLaplacian",
    "graph_laplacian",
]


@dataclass(eq=False)
class NodeBatch:
    """Node indices of the kernel's graph (``len`` and indexing like an array)."""

    index: np.ndarray
    dtype: torch.dtype = torch.float64

    def __len__(self) -> int:
        return len(self.index)

    def __getitem__(self, idx: Any) -> NodeBatch:
        if isinstance(idx, (int, np.integer)):
            idx = [int(idx)]
        elif isinstance(idx, torch.Tensor):
            idx = idx.cpu().numpy()
        return NodeBatch(np.atleast_1d(self.index[idx]), self.dtype)


def _adjacency(graph: Any) -> np.ndarray:
    """Dense symmetric non-negative adjacency of a networkx graph or a matrix."""
    if type(graph).__module__.startswith("networkx"):
        import networkx as nx

        if graph.is_directed():
            raise InputError("graph: expected an undirected graph, got a directed networkx graph")
        A = nx.to_numpy_array(graph, weight="weight", dtype=np.float64)
    elif sp.issparse(graph):
        A = graph.toarray().astype(np.float64)
    elif isinstance(graph, torch.Tensor):
        A = graph.detach().cpu().double().numpy()
    else:
        try:
            A = np.asarray(graph, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InputError(
                f"graph: expected a networkx graph or an adjacency matrix, got "
                f"{type(graph).__name__}"
            ) from exc
    if A.ndim != 2 or A.shape[0] != A.shape[1] or A.shape[0] == 0:
        raise InputError(f"graph: expected a non-empty square adjacency matrix, got {A.shape}")
    if not np.isfinite(A).all() or (A < 0).any():
        raise InputError("graph: expected finite non-negative edge weights")
    if not np.allclose(A, A.T, rtol=0, atol=1e-12 * max(np.abs(A).max(), 1.0)):
        raise InputError("graph: expected a symmetric adjacency matrix (undirected graph)")
    return A


def graph_laplacian(graph: Any) -> np.ndarray:
    """``L = D - A`` of a networkx graph or adjacency matrix (self-loops cancel out)."""
    A = _adjacency(graph)
    return np.diag(A.sum(1)) - A


class _SpectralNodeKernel(Kernel):
    """``K = U r(Lambda) U^T`` from the eigendecomposition of the Laplacian, cached."""

    input_kind: ClassVar[InputKind] = InputKind.NODE
    differentiable: ClassVar[bool] = False

    def _init_graph(self, graph: Any) -> None:
        self.graph = graph
        self._laplacian = graph_laplacian(graph)
        self._gram: torch.Tensor | None = None

    @property
    def n_nodes(self) -> int:
        """Number of nodes of the graph."""
        return self._laplacian.shape[0]

    def spectrum(self, eigenvalues: np.ndarray) -> np.ndarray:
        """The spectral function ``r(lambda)``."""
        raise NotImplementedError

    def node_gram(self) -> torch.Tensor:
        """The full ``m x m`` Gram over all nodes (computed once, then cached)."""
        if self._gram is None:
            eig = symmetric_eigh(torch.as_tensor(self._laplacian), signs=False, name="laplacian")
            lam, U = eig.values.numpy(), eig.vectors.numpy()
            K = (U * self.spectrum(lam)) @ U.T
            self._gram = torch.as_tensor((K + K.T) / 2)
        return self._gram

    def prepare(
        self, X: Any, *, dtype: torch.dtype | None = None, reference: bool = False
    ) -> NodeBatch:
        if isinstance(X, NodeBatch):
            return X
        if isinstance(X, torch.Tensor):
            X = X.detach().cpu().numpy()
        if hasattr(X, "to_numpy"):
            X = X.to_numpy()
        arr = np.asarray(X)
        if arr.ndim == 2 and arr.shape[1] == 1:
            arr = arr[:, 0]
        if arr.ndim != 1:
            raise InputError(
                f"X: expected node indices as a 1-D array or an (n, 1) column, got shape "
                f"{arr.shape}"
            )
        if arr.size == 0:
            raise InputError("X: expected at least one node index, got 0")
        if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        if arr.dtype.kind not in "iu":
            raise InputError(f"X: expected integer node indices, got dtype {arr.dtype}")
        bad = (arr < 0) | (arr >= self.n_nodes)
        if bad.any():
            raise InputError(
                f"X: node indices must lie in [0, {self.n_nodes}), got {int(arr[bad][0])} at "
                f"position {int(np.flatnonzero(bad)[0])}"
            )
        out_dtype = dtype if dtype is not None and dtype.is_floating_point else torch.float64
        return NodeBatch(arr.astype(np.int64), out_dtype)

    def block(self, X: Batch, Y: Batch) -> torch.Tensor:
        K = self.node_gram()
        return K[torch.as_tensor(X.index)][:, torch.as_tensor(Y.index)].to(X.dtype)

    def block_diag(self, X: Batch) -> torch.Tensor:
        return self.node_gram().diagonal()[torch.as_tensor(X.index)].to(X.dtype)


def _example_adjacency() -> tuple[tuple[float, ...], ...]:
    """The 5-node tree of course part 2, section 5 (edges 1-3, 2-3, 3-4, 4-5) plus a 6th node.

    Given as nested tuples (an array-like that compares by value, as the clone checks need).
    """
    A = np.zeros((6, 6))
    for u, v in [(0, 2), (1, 2), (2, 3), (3, 4), (4, 5), (1, 5)]:
        A[u, v] = A[v, u] = 1.0
    return tuple(tuple(float(a) for a in row) for row in A)


_EXAMPLE_X = np.array([0, 1, 2, 3, 4, 5, 2])
_EXAMPLE_Y = np.array([[5], [0], [3]])


class Diffusion(_SpectralNodeKernel):
    r"""Diffusion (heat) kernel ``K = expm(-beta L)`` on the nodes of a graph.

    Kondor & Lafferty, "Diffusion kernels on graphs and other discrete input spaces", ICML
    2002; course part 2, section 5: :math:`K = e^{-\beta L} = \sum_i e^{-\beta\lambda_i} u_i
    u_i^T`, strictly p.d. for every :math:`\beta > 0`, the discrete analogue of the Gaussian
    (solution of :math:`\partial_t f = -L f`).

    Parameters
    ----------
    graph : networkx.Graph or array-like (m, m)
        The graph (symmetric non-negative adjacency; networkx edge attribute ``weight`` used
        when present).
    beta : float
        Diffusion time :math:`\beta > 0` (``t`` in the course).
    """

    def __init__(self, graph: Any, beta: float = 1.0):
        super().__init__()
        self._init_graph(graph)
        self.beta = check_positive(beta, name="beta")

    def spectrum(self, eigenvalues: np.ndarray) -> np.ndarray:
        return np.exp(-self.beta * eigenvalues)

    @classmethod
    def _check_example(cls) -> tuple[Kernel, Any, Any]:
        return cls(_example_adjacency(), beta=0.7), _EXAMPLE_X, _EXAMPLE_Y


class RegularizedLaplacian(_SpectralNodeKernel):
    r"""Regularised Laplacian kernel ``K = (L + eps I)^-1``.

    Course part 2, section 5 (spectral family, :math:`r(\lambda) = 1/(\lambda + \epsilon)`):
    the RKHS norm is :math:`\|f\|^2 = f^T L f + \epsilon \|f\|^2`; strictly p.d. for
    :math:`\epsilon > 0`.

    Parameters
    ----------
    graph : networkx.Graph or array-like (m, m)
        The graph.
    eps : float
        Ridge :math:`\epsilon > 0`.
    """

    def __init__(self, graph: Any, eps: float = 1.0):
        super().__init__()
        self._init_graph(graph)
        self.eps = check_positive(eps, name="eps")

    def spectrum(self, eigenvalues: np.ndarray) -> np.ndarray:
        return 1.0 / (np.clip(eigenvalues, 0.0, None) + self.eps)

    @classmethod
    def _check_example(cls) -> tuple[Kernel, Any, Any]:
        return cls(_example_adjacency(), eps=0.5), _EXAMPLE_X, _EXAMPLE_Y


class CommuteTime(_SpectralNodeKernel):
    r"""Commute-time kernel ``K = L^+`` (Moore-Penrose pseudo-inverse of the Laplacian).

    Course part 2, section 5: :math:`L^+` is the reproducing kernel of the functions with
    :math:`\sum_i f_i = 0` (per connected component) under the norm :math:`f^T L f`; p.s.d.
    with :math:`K 1 = 0`.  Its feature-space distance is the commute time up to the factor
    ``vol(G)`` (Fouss et al., IEEE TKDE 19, 2007).  Eigenvalues below
    ``m * eps(float64) * lambda_max`` count as zero (as ``numpy.linalg.pinv(hermitian=True)``).

    Parameters
    ----------
    graph : networkx.Graph or array-like (m, m)
        The graph.
    """

    def __init__(self, graph: Any):
        super().__init__()
        self._init_graph(graph)

    def spectrum(self, eigenvalues: np.ndarray) -> np.ndarray:
        cutoff = len(eigenvalues) * np.finfo(np.float64).eps * max(np.abs(eigenvalues).max(), 1.0)
        out = np.zeros_like(eigenvalues)
        big = eigenvalues > cutoff
        out[big] = 1.0 / eigenvalues[big]
        return out

    @classmethod
    def _check_example(cls) -> tuple[Kernel, Any, Any]:
        return cls(_example_adjacency()), _EXAMPLE_X, _EXAMPLE_Y


class GraphDistance(_SpectralNodeKernel):
    r"""Graph-distance kernel ``K = exp(-t d_G)``, refused where it is not p.d.

    Course part 2, section 5 ("shortest-path graph distance"): :math:`K_{ij} = e^{-t\,
    d_G(i, j)}`, :math:`d_G` the number of edges of a shortest path (0 across connected
    components: :math:`d_G = \infty`).  :math:`K` is p.d. for every :math:`t > 0` iff
    :math:`-d_G` is conditionally p.d. (Schoenberg), which holds on trees and cycles but not in
    general (the course's counterexample :math:`K_{2,3}`: :math:`\lambda_{\min} = -0.0278` at
    :math:`t = 0.2`).  The construction computes :math:`K` and raises
    :class:`~kernelkit.utils.InputError` when its smallest eigenvalue is below
    :math:`-10^{-10} \lambda_{\max}`; :meth:`conditionally_pd` tells whether every
    :math:`t` is safe.

    Parameters
    ----------
    graph : networkx.Graph or array-like (m, m)
        The graph (edge weights are ignored: distances count edges).
    t : float
        Scale :math:`t > 0`.
    """

    def __init__(self, graph: Any, t: float = 1.0):
        super().__init__()
        self._init_graph(graph)
        self.t = check_positive(t, name="t")
        self._distances = csgraph.shortest_path(
            sp.csr_matrix(self._laplacian < 0), directed=False, unweighted=True
        )
        K = torch.as_tensor(np.exp(-self.t * self._distances))
        eig = symmetric_eigvalsh(K)
        low, high = float(eig.min()), float(eig.max())
        if low < -1e-10 * high:
            raise InputError(
                f"t: exp(-t d_G) is not positive definite on this graph at t={self.t:g} "
                f"(smallest eigenvalue {low:.3g}): -d_G is not conditionally p.d. here; try "
                "other values of t, or Diffusion / RegularizedLaplacian"
            )
        self._gram = K

    def node_gram(self) -> torch.Tensor:
        """The full ``m x m`` Gram ``exp(-t d_G)``."""
        return self._gram

    def conditionally_pd(self) -> bool:
        r"""Whether :math:`-d_G` is conditionally p.d. on every connected component, i.e.
        :math:`x^T d_G x \le 0` whenever :math:`\sum_i x_i = 0` (then every ``t`` is safe)."""
        _, comp = csgraph.connected_components(sp.csr_matrix(self._laplacian < 0), directed=False)
        for c in np.unique(comp):
            D = self._distances[np.ix_(comp == c, comp == c)]
            P = np.eye(len(D)) - 1.0 / len(D)
            top = float(symmetric_eigvalsh(torch.as_tensor(P @ D @ P)).max())
            if top > 1e-10 * max(float(D.max()), 1.0) * len(D):
                return False
        return True

    @classmethod
    def _check_example(cls) -> tuple[Kernel, Any, Any]:
        return cls(_example_adjacency(), t=0.5), _EXAMPLE_X, _EXAMPLE_Y
