r"""Exact kernel ridge regression for a whole ``lam`` path, with closed-form LOO and GCV.

With the ERM convention of kernelkit (``(1/n) sum_i w_i (y_i - f(x_i))^2 + lam ||f||^2``,
``mu = n lam``) and the weighted Gram ``K_w = W^{1/2} K W^{1/2}`` (``W = I`` unweighted),
one eigendecomposition ``K_w = U diag(s) U^T`` gives every ``lam`` at ``O(n^2)``
(course part 1, section 3.1 "Kernel ridge regression"; section 3.2 "Weighted KRR"):

.. math:: B_\mu = (K_w + \mu I)^{-1} = U\,\mathrm{diag}\big(1/(s + \mu)\big)\,U^T,
          \qquad a = B_\mu W^{1/2} y, \qquad \alpha = W^{1/2} a,
          \qquad f = K \alpha .

The hat matrix of the weighted fit, ``H = K_w B_mu`` (``W^{1/2} f = H W^{1/2} y``), has
``I - H = mu B_mu``, so the residuals and leverages are

.. math:: W^{1/2}(y - f) = \mu a, \qquad 1 - H_{ii} = \mu (B_\mu)_{ii}
          = \mu \sum_k U_{ik}^2 / (s_k + \mu).

**Leave-one-out.** Refitting without point ``i`` (same penalty ``mu``) equals the full fit
with ``y_i`` replaced by the left-out prediction, hence the shortcut (Wahba 1990, *Spline
Models for Observational Data*, Theorem 4.2.1; Golub, Heath and Wahba 1979, section 2)

.. math:: r_i = y_i - f^{(-i)}(x_i) = \frac{y_i - f_i}{1 - H_{ii}}
          = \frac{a_i}{\sqrt{w_i}\,(B_\mu)_{ii}},
          \qquad \mathrm{LOO}(\lambda) = \frac{\sum_i w_i r_i^2}{\sum_i w_i}
          = \frac{\sum_i (a_i / (B_\mu)_{ii})^2}{\sum_i w_i},

(``r_i = y_i - f_i`` for a zero weight: that point does not move the fit).  The refit on
``n - 1`` points with the same ``mu`` is ``KernelRidge(lam * n / (n - 1))`` there.

**Leaving a group out.** Refitting without a set ``G`` of points (same ``mu``) equals the
full fit with ``y_G`` replaced by the left-out predictions, so ``(I - H_GG)`` maps the
left-out residuals to the fitted ones (the leave-one-out argument with a block; An, Liu
and Venkatesh 2007, "Fast cross-validation algorithms for least squares support vector
machine and kernel ridge regression", *Pattern Recognition* 40(8), for k-fold), and with
``(I - H)_GG = mu (B_mu)_GG``

.. math:: W_G^{1/2} r_G = (I - H_{GG})^{-1} W_G^{1/2} (y_G - f_G) = (B_\mu)_{GG}^{-1} a_G,
          \qquad (B_\mu)_{GG} = U_G\,\mathrm{diag}\big(1/(s + \mu)\big)\,U_G^T,

``O(|G|^2 n + |G|^3)`` per group and ``lam`` (a zero-weight member takes the group's left-out
prediction; a singleton group is the shortcut above).  The refit is
``KernelRidge(lam * n / (n - |G|))`` on the other points.  :func:`duplicate_groups` forms the
groups of inputs the kernel cannot tell apart: leaving one of two such twins out keeps the
other, whose fitted value the left-out point shares, so the plain LOO error is not a
held-out error there and favours too little regularisation.

**Generalised cross-validation** (Golub, Heath and Wahba 1979, eq. (1.4)):

.. math:: \mathrm{GCV}(\lambda) = \frac{\frac1n \|(I - H) W^{1/2} y\|^2}
          {\big(1 - \mathrm{tr}(H)/n\big)^2} = \frac{n\,\|a\|^2}{\mathrm{tr}(B_\mu)^2}.

Several output columns share ``U`` and ``s``; their criteria are averaged, and both are
differentiable in a tensor ``lam``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from kernelkit.solvers import symmetric_eigh
from kernelkit.solvers._cholesky import solve
from kernelkit.utils._config import options
from kernelkit.utils._errors import InputError

CRITERIA = ("loo", "gcv")
"""Closed-form selection criteria of :class:`RidgeSpectrum`."""

__all__ = [
    "RidgeFit",
    "RidgeSpectrum",
    "check_lam_grid",
    "duplicate_groups",
    "group_blocks",
    "kfold_path_errors",
    "ridge_spectrum",
]


@dataclass(frozen=True)
class RidgeFit:
    """One ``lam`` of a :class:`RidgeSpectrum`.

    Attributes
    ----------
    coef : torch.Tensor
        Dual coefficients ``alpha``, shaped like ``y``.
    fitted : torch.Tensor
        In-sample predictions ``f = K alpha``.
    loo_residuals : torch.Tensor
        ``r_i = y_i - f^{(-i)}(x_i)`` (module docstring).
    """

    coef: torch.Tensor
    fitted: torch.Tensor
    loo_residuals: torch.Tensor


@dataclass(frozen=True)
class RidgeSpectrum:
    """Eigendecomposition of a (weighted) Gram with the projected targets; see the module.

    Attributes
    ----------
    values : torch.Tensor, shape (n,)
        Eigenvalues ``s`` of ``K_w`` (clipped at 0: round-off below is not a direction).
    vectors : torch.Tensor, shape (n, n)
        Orthonormal eigenvectors ``U``.
    leverage_basis : torch.Tensor, shape (n, n)
        ``U * U`` (entrywise): ``(B_mu)_ii = (U * U) @ (1 / (s + mu))``.
    proj : torch.Tensor
        ``U^T W^{1/2} y``, shape ``(n,)`` or ``(n, p)``.
    y : torch.Tensor
        The targets.
    root_w : torch.Tensor or None
        ``sqrt(w)`` (None: unweighted).
    gram : torch.Tensor or None
        The unweighted Gram ``K`` (weighted fits only: ``f = K alpha``).
    groups : tuple of torch.Tensor
        Groups of two or more points left out together by LOO (:func:`group_blocks`);
        empty: plain leave-one-out.
    """

    values: torch.Tensor
    vectors: torch.Tensor
    leverage_basis: torch.Tensor
    proj: torch.Tensor
    y: torch.Tensor
    root_w: torch.Tensor | None
    gram: torch.Tensor | None
    groups: tuple[torch.Tensor, ...] = ()

    @property
    def n(self) -> int:
        """Number of training points."""
        return int(self.values.shape[0])

    def _parts(self, lam: float | torch.Tensor) -> tuple[torch.Tensor, ...]:
        """``a``, ``diag(B_mu)`` and ``1 / (s + mu)`` at ``mu = n lam``."""
        d = 1.0 / (self.values + self.n * lam)
        scaled = self.proj * (d if self.proj.ndim == 1 else d[:, None])
        return self.vectors @ scaled, self.leverage_basis @ d, d

    def _scaled_loo(self, a: torch.Tensor, b: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
        """``W^{1/2} r`` at one ``lam`` (``a`` shaped like ``y``; :meth:`_path_loo`)."""
        q = self._path_loo(a.reshape(self.n, -1, 1), b[:, None], d[:, None])
        return q.reshape(a.shape)

    def _path_loo(self, a: torch.Tensor, b: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
        """``W^{1/2} r`` for ``G`` values of ``lam`` at once (``a``: ``(n, p, G)``; ``b``,
        ``d``: ``(n, G)``): ``a_i / B_ii``, and ``B_GG^{-1} a_G`` on each group, its blocks
        formed and solved for every ``lam`` together (module docstring; differentiable)."""
        q = a / b[:, None, :]
        for idx in self.groups:  # (g, m) index array
            rows = self.vectors[idx]  # (g, m, n)
            blocks = torch.stack([(rows * d[:, j]) @ rows.mT for j in range(d.shape[1])])
            sol = solve(blocks, a[idx].permute(3, 0, 1, 2), name="B_GG")  # (G, g, m, p)
            q = q.index_put((idx.reshape(-1),), sol.permute(1, 2, 3, 0).reshape(-1, *q.shape[1:]))
        return q

    def criterion(self, lam: float | torch.Tensor, cv: str = "loo") -> torch.Tensor:
        """LOO or GCV mean squared error at ``lam`` (differentiable in a tensor ``lam``)."""
        a, b, d = self._parts(lam)
        p = 1 if a.ndim == 1 else a.shape[1]
        if cv == "gcv":
            return self.n * (a * a).sum() / (p * b.sum() ** 2)
        q = self._scaled_loo(a, b, d)
        total_w = self.n if self.root_w is None else float((self.root_w**2).sum())
        return (q * q).sum() / (p * total_w)

    def path(self, lams: Sequence[float] | np.ndarray, cv: str = "loo") -> np.ndarray:
        """:meth:`criterion` at every ``lam`` of ``lams``, shape ``(len(lams),)``.

        The whole path is two products with ``G = len(lams)`` columns,
        ``U @ (proj / (s + mu))`` and ``(U * U) @ (1 / (s + mu))``: two passes over the
        ``n x n`` factors instead of two per ``lam``; a group's blocks ``(B_mu)_GG`` are
        formed and solved for every ``lam`` at once."""
        mu = self.n * torch.as_tensor(np.asarray(lams, dtype=float), dtype=self.values.dtype)
        d = 1.0 / (self.values[:, None] + mu.to(self.values.device))  # (n, G)
        proj = self.proj.reshape(self.n, -1, 1)  # (n, p, 1)
        scaled = (proj * d.unsqueeze(1)).reshape(self.n, -1)  # (n, p * G)
        a = _columns_product(self.vectors, scaled).reshape(self.n, -1, d.shape[1])  # (n, p, G)
        b = _columns_product(self.leverage_basis, d)  # (n, G)
        p = a.shape[1]
        if cv == "gcv":
            values = self.n * (a * a).sum((0, 1)) / (p * b.sum(0) ** 2)
            return values.cpu().numpy()
        q = self._path_loo(a, b, d)
        total_w = self.n if self.root_w is None else float((self.root_w**2).sum())
        return ((q * q).sum((0, 1)) / (p * total_w)).cpu().numpy()

    def fit(self, lam: float) -> RidgeFit:
        """Coefficients, fitted values and LOO residuals at ``lam`` (``O(n^2)``)."""
        a, b, d = self._parts(lam)
        mu = self.n * lam
        if self.root_w is None:
            return RidgeFit(a, self.y - mu * a, self._scaled_loo(a, b, d))
        rw = self.root_w if a.ndim == 1 else self.root_w[:, None]
        coef = rw * a
        fitted = self.gram @ coef
        col = b if a.ndim == 1 else b[:, None]
        loo = torch.where(rw > 0, a / (col * rw.clamp_min(torch.finfo(a.dtype).tiny)), 0.0)
        loo = torch.where(rw > 0, loo, self.y - fitted)
        if self.groups:
            loo = self._weighted_group_loo(loo, self._scaled_loo(a, b, d))
        return RidgeFit(coef, fitted, loo)

    def _weighted_group_loo(self, loo: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
        """Group members' ``r = q / sqrt(w)``; a zero-weight member gets ``y_i`` minus the
        group's left-out prediction ``y_j - r_j`` of its first positive-weight member."""
        for idx in self.groups:
            rw = self.root_w[idx] if loo.ndim == 1 else self.root_w[idx][..., None]
            pos = rw > 0
            r = torch.where(pos, q[idx] / rw.clamp_min(torch.finfo(q.dtype).tiny), loo[idx])
            first = pos.reshape(len(idx), idx.shape[1], -1)[..., 0].to(torch.int8).argmax(1)
            shared = (self.y[idx] - r)[torch.arange(len(idx)), first].unsqueeze(1)
            take = ~pos & pos.any(1, keepdim=True)
            r = torch.where(take, self.y[idx] - shared, r)
            loo = loo.index_put((idx.reshape(-1),), r.reshape(-1, *loo.shape[1:]))
        return loo


def _columns_product(M: torch.Tensor, P: torch.Tensor) -> torch.Tensor:
    """``M @ P`` for a row-major ``n x n`` factor and a few columns ``P``, computed as
    ``(P^T M^T)^T``: the BLAS call then reads ``M`` as a transposed column-major operand, the
    layout MKL's GEMM streams fastest with few columns (``docs/model_selection.md``)."""
    return (P.mT.contiguous() @ M.mT).mT


def duplicate_groups(K: torch.Tensor, rtol: float | None = None) -> np.ndarray:
    r"""Label the points that the kernel cannot tell apart, shape ``(n,)``.

    ``i`` and ``j`` are twins when their feature-space distance vanishes to round-off,

    .. math:: \|\phi(x_i) - \phi(x_j)\|^2 = K_{ii} + K_{jj} - 2 K_{ij}
              \le \mathrm{rtol}\,\max(K_{ii}, K_{jj}),

    (then ``k(x_i, .) = k(x_j, .)``: equal Gram rows, equal predictions for every fit), and
    groups are the connected components of that relation.  Identical inputs are twins
    for every kernel; so are inputs a kernel maps to one point (two molecules with one
    fingerprint, for Tanimoto).  ``rtol`` defaults to ``eps^(2/3)`` of ``K``'s dtype
    (3.7e-11 in float64): ``10^5`` times the round-off of a Gram entry, grouping only points
    closer than ``eps^(1/3)`` (6e-6) in relative feature-space distance.  ``O(n^2)``, in
    row blocks; labels are ``0 .. n_groups - 1``.

    One comparison per entry screens the pairs: twins satisfy
    ``2 K_ij >= (K_ii + K_jj) - rtol max(K_ii, K_jj) >= (1 - rtol) (K_ii + K_jj)``, so
    ``K_ij >= (1 - rtol) min_k K_kk``; only the entries passing this screen (the diagonal
    alone for a Gaussian Gram) are tested exactly.
    """
    n = K.shape[0]
    tol = torch.finfo(K.dtype).eps ** (2 / 3) if rtol is None else rtol
    diag = K.diagonal()
    low = float(diag.min()) if n else 0.0
    screen = (1.0 - tol) * low if low > 0 else -float("inf")
    step = max(1, 2**22 // max(n, 1))
    rows, cols = [], []
    for start in range(0, n, step):
        i, j = torch.nonzero(K[start : start + step] >= screen, as_tuple=True)
        i = i + start
        di, dj = diag[i], diag[j]
        twin = di + dj - 2 * K[i, j] <= tol * torch.maximum(di, dj).clamp_min(0)
        rows.append(i[twin].cpu().numpy())
        cols.append(j[twin].cpu().numpy())
    r, c = np.concatenate(rows), np.concatenate(cols)
    graph = coo_matrix((np.ones(len(r)), (r, c)), shape=(n, n))
    return connected_components(graph, directed=False)[1].astype(np.int64)


def group_blocks(labels: np.ndarray) -> tuple[torch.Tensor, ...]:
    """The groups of two or more points of ``labels``, one ``(g, m)`` index tensor per
    group size ``m``; empty when every label is distinct."""
    order = np.argsort(labels, kind="stable")
    sizes = np.bincount(labels)
    size_of = sizes[labels[order]]
    return tuple(
        torch.as_tensor(order[size_of == m].reshape(-1, m)) for m in np.unique(sizes[sizes > 1])
    )


def ridge_spectrum(
    K: torch.Tensor,
    y: torch.Tensor,
    *,
    sample_weight: torch.Tensor | None = None,
    groups: np.ndarray | None = None,
) -> RidgeSpectrum:
    """Eigendecompose the (weighted) Gram once for every ``lam`` of a path.

    Parameters
    ----------
    K : torch.Tensor, shape (n, n)
        Training Gram (not modified).
    y : torch.Tensor, shape (n,) or (n, p)
        Targets.
    sample_weight : torch.Tensor, optional
        Non-negative weights ``w`` (validated by the caller).
    groups : ndarray of int, shape (n,), optional
        Group label of each point (:func:`duplicate_groups`); LOO leaves each group out
        together.  None: every point alone.

    Returns
    -------
    RidgeSpectrum
    """
    root_w = None if sample_weight is None else sample_weight.to(K.dtype).sqrt()
    Kw = K if root_w is None else K * root_w[:, None] * root_w[None, :]
    eig = symmetric_eigh(Kw, signs=False, name="K")
    del Kw
    s, U = eig.values.clamp_min(0.0), eig.vectors.contiguous()  # row-major: _columns_product
    yw = y if root_w is None else y * (root_w if y.ndim == 1 else root_w[:, None])
    proj = U.mT @ yw
    return RidgeSpectrum(
        s,
        U,
        U * U,
        proj,
        y,
        root_w,
        None if root_w is None else K,
        () if groups is None else tuple(g.to(K.device) for g in group_blocks(groups)),
    )


def lam_grid(
    low: float | None = None, high: float | None = None, per_decade: int | None = None
) -> np.ndarray:
    """A window of the library's one ``lam`` lattice, ascending.

    The lattice is ``10^(j / p)`` between the options ``lam_grid_low`` and ``lam_grid_high``,
    ``p = lam_grid_per_decade`` (``1e-9 .. 10`` in half decades: 21 values); the window keeps
    the values in ``[low, high]``, every ``p / per_decade``-th one when ``per_decade`` is
    coarser (a decade grid is a sub-lattice).  Every ``lam="auto"`` selector draws its grid
    from it: ridge regression all of it, logistic regression the window up to ``1e-1``, the
    convolutional kernel networks ``1e-7 .. 1e-1`` and the autoencoder ``1e-5 .. 1e-1`` in
    decades (``docs/model_selection.md``, "One lam lattice").
    """
    opt = options()
    p = int(opt.lam_grid_per_decade)
    step = max(1, p // int(per_decade)) if per_decade else 1
    first = math.ceil(round(math.log10(max(opt.lam_grid_low, low or 0.0)) * p, 9))
    last = math.floor(round(math.log10(min(opt.lam_grid_high, high or math.inf)) * p, 9))
    exponents = [j for j in range(first, last + 1) if j % step == 0]
    if not exponents:
        raise InputError(
            f"lam_grid_low, lam_grid_high: the lam lattice has no value in [{low}, {high}]; "
            f"got {opt.lam_grid_low}, {opt.lam_grid_high}"
        )
    return np.logspace(exponents[0] / p, exponents[-1] / p, len(exponents))


def check_lam_grid(lams: Sequence[float] | np.ndarray, name: str = "lam") -> np.ndarray:
    """A 1-D float array of positive, finite grid values (named error otherwise)."""
    try:
        grid = np.asarray(lams, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        raise InputError(
            f"{name}: expected a float, a list of positive floats or 'auto', got {lams!r}"
        ) from None
    if grid.size == 0 or not np.isfinite(grid).all() or (grid <= 0).any():
        raise InputError(
            f"{name}: expected a non-empty list of positive finite values (the closed-form "
            f"path divides by s + n lam), got {lams!r}"
        )
    return grid


def kfold_path_errors(
    K: torch.Tensor,
    y: torch.Tensor,
    lams: np.ndarray,
    folds: Sequence[tuple[np.ndarray, np.ndarray]],
    *,
    sample_weight: torch.Tensor | None = None,
) -> np.ndarray:
    """Held-out mean squared errors of every ``lam`` on every fold, shape ``(folds, lams)``.

    Each fold refits on its training rows (``n_train lam``, its weights rescaled to mean 1, as
    a refit of ``KernelRidge(lam)`` would) from one eigendecomposition of the fold's Gram,
    and scores
    ``sum_test w_i ||y_i - f(x_i)||^2 / sum_test w_i`` (averaged over outputs).
    """
    errors = np.empty((len(folds), len(lams)))
    for j, (train, test) in enumerate(folds):
        tr, te = torch.as_tensor(train), torch.as_tensor(test)
        w_tr = None if sample_weight is None else sample_weight[tr]
        if w_tr is not None:  # mean 1 on the fold: its refit minimises (1/sum w) sum w loss
            w_tr = w_tr * (len(tr) / w_tr.sum().clamp_min(1e-300))
        spec = ridge_spectrum(K[tr][:, tr], y[tr], sample_weight=w_tr)
        cross = K[te][:, tr]
        w_te = torch.ones(len(te), dtype=K.dtype) if sample_weight is None else sample_weight[te]
        for k, lam in enumerate(lams):
            pred = cross @ spec.fit(float(lam)).coef
            sq = (y[te] - pred) ** 2
            sq = sq if sq.ndim == 1 else sq.mean(1)
            errors[j, k] = float((w_te * sq).sum() / w_te.sum().clamp_min(1e-300))
    return errors
