r"""Random-walk graph kernel on the direct product graph (geometric, exponential, p-walk).

Gärtner, Flach & Wrobel, COLT 2003; Vishwanathan et al., "Graph kernels", JMLR 11 (2010),
sections 2 and 4.2; course part 2, section 4 ("Walk kernels").  The geometric kernel solves
:math:`(I - \lambda A_\times)x = 1` for all pairs of a block at once with the batched
conjugate gradient of :func:`kernelkit.solvers.conjugate_gradient`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
import torch

from kernelkit.data._graphs import GraphBatch
from kernelkit.kernels._base import Batch, Kernel
from kernelkit.kernels._graphs import _check_label_name, _GraphKernel, example_graphs
from kernelkit.solvers import conjugate_gradient
from kernelkit.solvers._spectra import symmetric_eigvalsh, symmetric_spectral_radius
from kernelkit.utils._errors import ConvergenceError, InputError
from kernelkit.utils._validation import check_int, check_positive

__all__ = ["RandomWalk"]

_PAIR_BUDGET = 2_000_000  # float64 elements per chunk of graph pairs (~16 MB per tensor)


def _dense_graphs(
    X: GraphBatch,
    graphs: np.ndarray,
    n_pad: int,
    edge_class: np.ndarray,
    n_classes: int,
    node_codes: np.ndarray,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Padded dense adjacency per edge class ``(B, E, n, n)``, label codes and a node mask."""
    sub = X[graphs]
    n_total = int(sub.node_ptr[-1])
    gi = sub.graph_index
    local = np.arange(n_total) - sub.node_ptr[gi]
    deg = np.diff(sub.adj_ptr)
    src = np.repeat(np.arange(n_total), deg)
    # entries of the selected graphs in X's numbering, to read their edge classes
    old_nodes = np.arange(n_total) + np.repeat(X.node_ptr[graphs] - sub.node_ptr[:-1], sub.n_nodes)
    old_entries = np.arange(len(src)) + np.repeat(X.adj_ptr[old_nodes] - sub.adj_ptr[:-1], deg)
    A = torch.zeros(len(graphs), n_classes, n_pad, n_pad, dtype=torch.float64)
    A[gi[src], edge_class[old_entries], local[src], local[sub.adj_idx]] = 1.0
    codes = torch.zeros(len(graphs), n_pad, dtype=torch.int64)
    valid = torch.zeros(len(graphs), n_pad, dtype=torch.bool)
    codes[gi, local] = torch.as_tensor(node_codes[old_nodes])
    valid[gi, local] = True
    return A, codes, valid


def _side_chunks(order: np.ndarray, sizes: np.ndarray) -> list[np.ndarray]:
    """Pieces of size-sorted ``order`` with ``len(piece) * max size <= sqrt(budget)``."""
    side = int(np.sqrt(_PAIR_BUDGET))
    out, start = [], 0
    while start < len(order):
        stop = start + 1
        while stop < len(order) and (stop + 1 - start) * max(int(sizes[order[stop]]), 1) <= side:
            stop += 1
        out.append(order[start:stop])
        start = stop
    return out


def _size_chunks(order: np.ndarray, cells: Any) -> list[np.ndarray]:
    """Consecutive pieces of ``order`` whose padded size ``len * cells(piece)`` fits the budget."""
    out, start = [], 0
    while start < len(order):
        stop = start + 1
        while stop < len(order):
            grow = min(len(order), start + 2 * (stop - start))
            if (grow - start) * 8 * cells(order[start:grow]) > _PAIR_BUDGET:
                break
            stop = grow
        out.append(order[start:stop])
        start = stop
    return out


class RandomWalk(_GraphKernel):
    r"""Random-walk kernel on the direct product graph (geometric or exponential).

    Gärtner, Flach & Wrobel, "On graph kernels: hardness results and efficient alternatives",
    COLT 2003; Vishwanathan et al., "Graph kernels", JMLR 11 (2010), sections 2 and 4.2
    (conjugate gradient with Kronecker matrix-vector products); course part 2, section 4
    ("Walk kernels").  The product graph :math:`G_\times` has the node pairs with equal labels
    and an edge where both coordinates are edges (with equal edge labels when ``edge_label`` is
    set), adjacency :math:`A_\times`.  With walk length counted in *edges* (the course's
    erratum 6: :math:`1^T A_\times^k 1` counts pairs of label-matching walks with :math:`k`
    edges),

    .. math:: k(G, G') = \sum_{k \ge 0} \mu_k\, 1^T A_\times^k 1, \qquad
              \mu_k = \lambda^k \ (\text{geometric}), \quad
              \mu_k = \lambda^k / k! \ (\text{exponential}),

    i.e. :math:`1^T (I - \lambda A_\times)^{-1} 1` and :math:`1^T \exp(\lambda A_\times) 1`;
    with ``p`` set the sum stops at :math:`k = p` (the "p-walk" kernel).  p.d. as a sum with
    non-negative weights of walk-count dot products.

    The geometric series converges iff :math:`\lambda < 1/\rho(A_\times)`; since
    :math:`\rho(A_\times) \le \rho(A)\rho(A')` (Perron-Frobenius, :math:`A_\times` is a
    principal submatrix of a sub-matrix of :math:`A \otimes A'`), the bound is checked for every
    pair and, where it fails, the exact :math:`\rho(A_\times)` of the explicit product graph
    decides; a divergent pair raises :class:`~kernelkit.utils.InputError`.

    Computation: never forms :math:`A_\times`; all pairs of a block are solved together by
    batched conjugate gradient on :math:`(I - \lambda A_\times)x = 1` (SPD when convergent),
    with the Kronecker product :math:`A_\times \mathrm{vec}(V) = \mathrm{vec}(M \circ \sum_e
    A'_e V A_e)` (:math:`M` the label-match mask, :math:`e` the edge labels), cost
    :math:`O(n^3)` per pair and iteration; the exponential and truncated kernels sum their
    series by the same products.

    Parameters
    ----------
    lam : float
        Walk-length decay :math:`\lambda > 0`.
    kind : {"geometric", "exponential"}
        Weights of the walk lengths.
    p : int or None
        Largest walk length (edges) summed; ``None`` sums the whole series.
    node_label, edge_label : str or None
        Attributes of the discrete node / edge labels (``None``: ignored).
    tol : float
        Relative residual (CG) or relative size of the last term (series) at which to stop.
    max_iter : int
        Iteration cap of CG / of the series.
    """

    def __init__(
        self,
        lam: float = 0.1,
        *,
        kind: str = "geometric",
        p: int | None = None,
        node_label: str | None = "label",
        edge_label: str | None = None,
        tol: float = 1e-10,
        max_iter: int = 1000,
    ):
        super().__init__()
        self.lam = check_positive(lam, name="lam")
        if kind not in ("geometric", "exponential"):
            raise InputError(f"kind: expected 'geometric' or 'exponential', got {kind!r}")
        self.kind = kind
        self.p = None if p is None else check_int(p, name="p", minimum=0)
        self.node_label = _check_label_name(node_label, "node_label")
        self.edge_label = _check_label_name(edge_label, "edge_label")
        self.tol = check_positive(tol, name="tol")
        self.max_iter = check_int(max_iter, name="max_iter", minimum=1)

    # -------------------------------------------------------------- helpers
    def _edge_classes(self, X: GraphBatch, Y: GraphBatch) -> tuple[np.ndarray, np.ndarray, int]:
        if self.edge_label is None or X.edge_labels is None or Y.edge_labels is None:
            return np.zeros(len(X.adj_idx), np.int64), np.zeros(len(Y.adj_idx), np.int64), 1
        uniq, inv = np.unique(np.concatenate([X.edge_labels, Y.edge_labels]), return_inverse=True)
        return inv[: len(X.adj_idx)], inv[len(X.adj_idx) :], max(len(uniq), 1)

    @staticmethod
    def spectral_radius(X: GraphBatch) -> np.ndarray:
        """Spectral radius :math:`\\rho(A)` of each graph's adjacency matrix."""
        out = np.zeros(len(X))
        order = np.argsort(X.n_nodes, kind="stable")
        zeros_e, zeros_n = np.zeros(len(X.adj_idx), np.int64), np.zeros(X.node_ptr[-1], np.int64)
        start = 0
        while start < len(order):
            n = max(int(X.n_nodes[order[min(start + 255, len(order) - 1)]]), 1)
            stop = min(len(order), start + max(1, min(256, _PAIR_BUDGET // (n * n))))
            n = max(int(X.n_nodes[order[stop - 1]]), 1)
            A, _, _ = _dense_graphs(X, order[start:stop], n, zeros_e, 1, zeros_n)
            out[order[start:stop]] = symmetric_eigvalsh(A[:, 0]).abs().amax(1).numpy()
            start = stop
        return out

    def _product_radius(self, X: GraphBatch, Y: GraphBatch, i: int, j: int) -> float:
        """Exact :math:`\\rho(A_\\times)` of one pair, from the explicit sparse product graph."""
        cx, cy, n_classes = self._edge_classes(X, Y)
        lx, ly = self._node_codes(X), self._node_codes(Y)
        a0, a1 = X.node_ptr[i], X.node_ptr[i + 1]
        b0, b1 = Y.node_ptr[j], Y.node_ptr[j + 1]
        keep = (lx[a0:a1, None] == ly[None, b0:b1]).ravel()
        Ax = sp.csr_matrix((keep.size, keep.size))
        for e in range(n_classes):
            mats = []
            for Z, c, s, t in ((X, cx, a0, a1), (Y, cy, b0, b1)):
                ptr = Z.adj_ptr[s : t + 1] - Z.adj_ptr[s]
                ent = slice(Z.adj_ptr[s], Z.adj_ptr[t])
                vals = (c[ent] == e).astype(np.float64)
                mats.append(sp.csr_matrix((vals, Z.adj_idx[ent] - s, ptr), shape=(t - s, t - s)))
            Ax = Ax + sp.kron(mats[0], mats[1], format="csr")
        return symmetric_spectral_radius(Ax[keep][:, keep])

    def _check_convergence(
        self,
        X: GraphBatch,
        Y: GraphBatch,
        ix: np.ndarray,
        iy: np.ndarray,
        rx: np.ndarray | None = None,
        ry: np.ndarray | None = None,
    ) -> None:
        if self.kind != "geometric" or self.p is not None:
            return
        rx = self.spectral_radius(X) if rx is None else rx
        ry = (rx if Y is X else self.spectral_radius(Y)) if ry is None else ry
        bound = rx[ix] * ry[iy]
        for k in np.flatnonzero(self.lam * bound >= 1.0 - 1e-9):
            rho = self._product_radius(X, Y, int(ix[k]), int(iy[k]))
            if self.lam * rho >= 1.0 - 1e-9:
                safe = 1.0 / max(float(rx.max() * ry.max()), 1e-300)
                raise InputError(
                    f"lam: the geometric random-walk series diverges for lam={self.lam:g}: the "
                    f"product graph of X[{ix[k]}] and Y[{iy[k]}] has spectral radius "
                    f"rho={rho:.6g}, so lam must be < 1/rho = {1.0 / rho:.6g} (a value safe for "
                    f"all pairs here: lam < {safe:.6g}); or use kind='exponential' or a finite p"
                )

    def _pair_values(
        self, X: GraphBatch, Y: GraphBatch, ix: np.ndarray, iy: np.ndarray
    ) -> np.ndarray:
        """Kernel values of the pairs ``(X[ix[k]], Y[iy[k]])`` (one batched solve per chunk)."""
        self._check_convergence(X, Y, ix, iy)
        cx, cy, n_classes = self._edge_classes(X, Y)
        lx, ly = self._node_codes(X), self._node_codes(Y)
        nx_, ny_ = X.n_nodes[ix], Y.n_nodes[iy]
        order = np.lexsort((ny_, nx_))
        out = np.zeros(len(ix))
        for sel in _size_chunks(order, lambda s: int(nx_[s].max()) * int(ny_[s].max())):
            n1, n2 = max(int(nx_[sel].max()), 1), max(int(ny_[sel].max()), 1)
            A1, c1, v1 = _dense_graphs(X, ix[sel], n1, cx, n_classes, lx)
            A2, c2, v2 = _dense_graphs(Y, iy[sel], n2, cy, n_classes, ly)
            M = ((c2[:, :, None] == c1[:, None, :]) & v2[:, :, None] & v1[:, None, :]).double()

            def product(
                V: torch.Tensor, A1: torch.Tensor = A1, A2: torch.Tensor = A2
            ) -> torch.Tensor:
                acc = torch.zeros_like(V)
                for e in range(n_classes):
                    acc += A2[:, e] @ V @ A1[:, e]
                return acc

            out[sel] = self._solve(product, M)
        return out

    def _grid_values(self, X: GraphBatch, Y: GraphBatch) -> np.ndarray:
        """The full block ``K(X, Y)``: chunks of size-sorted graphs, solved grid by grid.

        For a chunk of ``b1`` graphs of X and ``b2`` of Y the iterate has shape
        ``(b1, b2, n2, n1)`` and the Kronecker product is two large batched GEMMs
        (``b2`` products ``A'_e (n2 x n2)`` times ``(n2 x b1 n1)``, then ``b1`` products by
        ``A_e``) instead of ``b1 b2`` tiny ones.
        """
        same = Y is X
        rx = self.spectral_radius(X) if self.kind == "geometric" and self.p is None else None
        ry = rx if same else (None if rx is None else self.spectral_radius(Y))
        cx, cy, n_classes = self._edge_classes(X, Y)
        lx, ly = self._node_codes(X), self._node_codes(Y)
        ox = np.argsort(X.n_nodes, kind="stable")
        oy = ox if same else np.argsort(Y.n_nodes, kind="stable")
        K = np.zeros((len(X), len(Y)))
        chunks_x = _side_chunks(ox, X.n_nodes)
        chunks_y = chunks_x if same else _side_chunks(oy, Y.n_nodes)
        for ci, gx in enumerate(chunks_x):
            n1 = max(int(X.n_nodes[gx].max()), 1)
            A1, c1, v1 = _dense_graphs(X, gx, n1, cx, n_classes, lx)
            for gy in chunks_y[ci:] if same else chunks_y:
                if rx is not None and ry is not None:
                    ii, jj = np.meshgrid(gx, gy, indexing="ij")
                    self._check_convergence(X, Y, ii.ravel(), jj.ravel(), rx, ry)
                n2 = max(int(Y.n_nodes[gy].max()), 1)
                A2, c2, v2 = _dense_graphs(Y, gy, n2, cy, n_classes, ly)
                b1, b2 = len(gx), len(gy)
                M = (
                    (c2[None, :, :, None] == c1[:, None, None, :])
                    & v2[None, :, :, None]
                    & v1[:, None, None, :]
                ).double()

                # classes stacked: (b2, E n2, n2) and (b1, E n1, n1), so that each product is
                # two GEMMs whose second one also sums over the edge classes
                A2s = A2.reshape(b2, n_classes * n2, n2)
                A1s = A1.reshape(b1, n_classes * n1, n1)

                def product(
                    V: torch.Tensor,
                    A1s: torch.Tensor = A1s,
                    A2s: torch.Tensor = A2s,
                    b1: int = b1,
                    b2: int = b2,
                    n1: int = n1,
                    n2: int = n2,
                ) -> torch.Tensor:
                    W = V.permute(1, 2, 0, 3).reshape(b2, n2, b1 * n1)
                    T = (A2s @ W).reshape(b2, n_classes, n2, b1, n1)
                    T = T.permute(3, 0, 2, 1, 4).reshape(b1, b2 * n2, n_classes * n1)
                    return (T @ A1s).reshape(b1, b2, n2, n1)

                block = self._solve(product, M)
                K[np.ix_(gx, gy)] = block
                if same:
                    K[np.ix_(gy, gx)] = block.T
        return K

    def _solve(self, product: Any, M: torch.Tensor) -> np.ndarray:
        """Sum of the series / CG solution on the product nodes ``M`` (batch dims leading).

        ``product(V)`` applies ``sum_e A'_e V A_e`` (the Kronecker product before masking).
        """
        dims = (-2, -1)

        def Ax(V: torch.Tensor) -> torch.Tensor:
            return product(V).mul_(M)

        lam = self.lam
        if self.kind == "geometric" and self.p is None:
            res = conjugate_gradient(
                lambda V: Ax(V).mul_(-lam).add_(V),  # (I - lam A_x) V
                M,
                tol=self.tol,
                max_iter=self.max_iter,
                vector_dims=2,
            )
            if not res.converged:
                raise ConvergenceError(
                    f"RandomWalk: conjugate gradient did not reach tol={self.tol:g} in "
                    f"max_iter={self.max_iter} iterations; raise max_iter or lower lam"
                )
            return res.solution.sum(dims).numpy()
        term = M.clone()
        total = M.sum(dims)
        k = 0
        while True:
            k += 1
            if self.p is not None and k > self.p:
                break
            if k > self.max_iter:
                raise ConvergenceError(
                    f"RandomWalk: the exponential series did not converge in "
                    f"max_iter={self.max_iter} terms (lam={lam:g} too large)"
                )
            coef = lam / k if self.kind == "exponential" else lam
            term = coef * Ax(term)
            size = term.sum(dims)
            total = total + size
            if self.p is None and bool((size <= self.tol * 1e-6 * total).all()):
                break
        return total.numpy()

    # -------------------------------------------------------------- contract
    def features(self, X: Batch) -> None:
        return None

    def block(self, X: Batch, Y: Batch) -> torch.Tensor:
        return torch.as_tensor(self._grid_values(X, Y))

    def block_diag(self, X: Batch) -> torch.Tensor:
        idx = np.arange(len(X))
        return torch.as_tensor(self._pair_values(X, X, idx, idx))

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        X, Y = example_graphs()
        return [
            (cls(0.1), X, Y),
            (cls(0.1, edge_label="label", node_label=None), X, Y),
            (cls(0.5, kind="exponential"), X, Y),
            (cls(0.3, p=3), X, Y),
        ]
