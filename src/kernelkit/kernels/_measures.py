r"""Semigroup kernels on measures: the inverse generalised variance and the entropy kernel.

Course part 1, "Example 2: semigroup kernels for finite measures" (seed
``kernel_methods_course.txt``, slides (1/6)-(6/6), "Kernelization of the IGV kernel"), after
Cuturi, Fukumizu & Vert, "Semigroup kernels on measures", JMLR 6:1169-1198, 2005.  A kernel
on the semigroup ``(M_+^b(U), +)`` of measures depends only on the union of two bags, read
as the mixture ``(mu + mu') / 2`` of their uniform measures:

* :class:`InverseGeneralizedVariance` on bags of points (:class:`~kernelkit.data.BagBatch`):
  ``1 / det(Sigma((mu + mu')/2) + lam I)``, or its kernelised form through the centred Gram
  of the union bag under a base kernel;
* :class:`EntropyKernel` on histograms (discrete densities): ``exp(-beta h((x + x')/2))``;
* :class:`BagFisherVector`: Fisher vectors of a Gaussian mixture pooled over a bag.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import torch

from kernelkit.data import BagBatch, as_bag_batch
from kernelkit.kernels._base import Kernel
from kernelkit.solvers._dense import logdet_pd
from kernelkit.utils._errors import InputError
from kernelkit.utils._kinds import InputKind
from kernelkit.utils._validation import check_positive, to_tensor

__all__ = ["BagFisherVector", "EntropyKernel", "InverseGeneralizedVariance"]


def _bag_moments(batch: BagBatch) -> tuple[torch.Tensor, torch.Tensor]:
    """Means ``(n, d)`` and covariances ``(n, d, d)`` of the uniform measures of the bags."""
    means, covs = [], []
    for i in range(len(batch)):
        P = batch.bag(i)
        m = P.mean(0)
        C = P - m
        means.append(m)
        covs.append(C.T @ C / len(P))
    return torch.stack(means), torch.stack(covs)




class InverseGeneralizedVariance(Kernel):
    r"""Inverse generalised variance (IGV) kernel on bags of points.

    A bag ``x = {x_1, ..., x_p}`` of points of ``R^d`` is the uniform probability measure
    ``mu = (1/p) sum_i delta_{x_i}``; two bags meet in the mixture ``(mu + mu') / 2`` (each
    bag of weight 1/2, so point ``x_i`` of ``x`` weighs ``1 / (2p)``), of covariance
    ``Sigma(nu) = nu[x x^T] - nu[x] nu[x]^T``.

    **Closed form** (``kernel=None``; course part 1, "Example 2 (6/6)" and "Kernelization
    of the IGV kernel", step 1, regularisation; Cuturi, Fukumizu & Vert 2005, section 4):

    .. math:: k(\mu, \mu') = \frac{1}{\det\big(\Sigma(\tfrac{\mu+\mu'}{2}) + \lambda I_d\big)},

    computed with ``Sigma((mu + mu')/2) = (Sigma(mu) + Sigma(mu'))/2 + (m - m')(m - m')^T / 4``
    (``m``, ``m'`` the means).

    **Kernelised form** (a base kernel ``kappa`` with feature map ``phi``; course,
    "Kernelization of the IGV kernel", step 2: the non-zero eigenvalues of ``U U^T`` and
    ``U^T U`` are the same).  For the union bag ``z_1..z_N`` with mixture weights ``w``
    (``sum w = 1``), ``Sigma = U^T U`` with ``U = diag(sqrt w) (Phi - 1 w^T Phi)``, and

    .. math:: U U^T = M = P\, D^{1/2} K D^{1/2} P, \quad P = I - s s^T,\ s = \sqrt{w},

    ``K`` the base Gram of the union bag.  In infinite dimension ``det(Sigma + lam I)`` has
    no meaning, so the kernel is normalised by ``lam^{-dim}``:

    .. math:: k(\mu, \mu') = \frac{1}{\det(I_N + M / \lambda)}
              = \frac{1}{\det(I + \Sigma / \lambda)} = \prod_i \frac{1}{1 + \sigma_i/\lambda},

    ``sigma_i`` the eigenvalues of ``Sigma`` (Cuturi et al. 2005, section 5, with
    ``eta = lam``).  With the ``Linear`` base kernel on ``R^d`` it equals ``lam^d`` times the
    closed form (the same constant for all pairs); p.d. for every base kernel.

    Parameters
    ----------
    lam : float
        Regularisation ``lambda > 0`` added to the covariance.
    kernel : Kernel, optional
        A base kernel on vectors (``None``: the closed form on ``R^d``).

    Examples
    --------
    >>> import numpy as np
    >>> bags = [np.random.default_rng(i).normal(size=(5, 2)) for i in range(3)]
    >>> InverseGeneralizedVariance(lam=0.1)(bags).shape
    torch.Size([3, 3])
    """

    input_kind: ClassVar[InputKind] = InputKind.BAG
    differentiable: ClassVar[bool] = False

    def __init__(self, lam: float = 1.0, kernel: Kernel | None = None):
        super().__init__()
        self.lam = check_positive(lam, name="lam")
        if kernel is not None and not isinstance(kernel, Kernel):
            raise InputError(
                f"kernel: expected None or a kernelkit Kernel on vectors, got "
                f"{type(kernel).__name__} {kernel!r}"
            )
        if kernel is not None and kernel.input_kind not in (InputKind.VECTOR, InputKind.ANY):
            raise InputError(
                f"kernel: expected a base kernel on vectors (the points of the bags), got "
                f"{type(kernel).__name__} on {kernel.input_kind!s} input"
            )
        self.kernel = kernel

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        from kernelkit.kernels._vector import Gaussian

        rng = np.random.default_rng(0)
        X = [rng.normal(size=(int(rng.integers(3, 8)), 2)) for _ in range(7)]
        Y = [rng.normal(size=(int(rng.integers(3, 8)), 2)) + 0.5 for _ in range(4)]
        return [(cls(lam=0.3), X, Y), (cls(lam=0.05, kernel=Gaussian(sigma=1.5)), X, Y)]

    def prepare(
        self, X: Any, *, dtype: torch.dtype | None = None, reference: bool = False
    ) -> BagBatch:
        return as_bag_batch(X, dtype=dtype)

    def _check_pair(self, X: BagBatch, Y: BagBatch) -> None:
        if X.n_features != Y.n_features:
            raise InputError(
                f"Y: expected bags of {X.n_features}-dimensional points (as X), got {Y.n_features}"
            )

    # ------------------------------------------------------------------ closed form
    def _closed_block(self, X: BagBatch, Y: BagBatch) -> torch.Tensor:
        mx, cx = _bag_moments(X)
        my, cy = _bag_moments(Y)
        eye = self.lam * torch.eye(X.n_features, dtype=X.dtype, device=X.points.device)
        rows = []
        for i in range(len(X)):
            delta = mx[i] - my  # (m, d)
            S = (cx[i] + cy) / 2 + delta[:, :, None] * delta[:, None, :] / 4 + eye
            rows.append(torch.exp(-logdet_pd(S)))
        return torch.stack(rows)

    # ------------------------------------------------------------------ kernelised form
    def _union_logdet(self, K: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        """``log det(I + P D^1/2 K D^1/2 P / lam)`` for a batch of union Grams ``K``."""
        s = w.sqrt()
        B = s[..., :, None] * K * s[..., None, :]
        Bs = B @ s[..., :, None]  # (…, N, 1)
        sBs = (s[..., None, :] @ Bs)[..., 0, 0]
        M = B - Bs * s[..., None, :] - s[..., :, None] * Bs.transpose(-1, -2)
        M = M + sBs[..., None, None] * s[..., :, None] * s[..., None, :]
        M = (M + M.transpose(-1, -2)) / 2
        eye = torch.eye(K.shape[-1], dtype=K.dtype, device=K.device)
        return logdet_pd(eye + M / self.lam)

    def _padded(self, Y: BagBatch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Per-bag base Grams ``(m, q, q)``, point indices ``(m, q)`` and weights ``(m, q)``
        (``1 / (2 p_j)``, 0 on padding) of ``Y``, padded to its largest bag ``q``."""
        sizes = Y.sizes
        q, m = int(sizes.max()), len(Y)
        index = np.zeros((m, q), dtype=np.int64)
        weights = np.zeros((m, q))
        grams = torch.zeros(m, q, q, dtype=Y.dtype, device=Y.points.device)
        for j in range(m):
            p = int(sizes[j])
            index[j, :p] = np.arange(Y.offsets[j], Y.offsets[j + 1])
            weights[j, :p] = 1.0 / (2 * p)
            P = Y.bag(j)
            grams[j, :p, :p] = self.kernel.block(P, P)
        w = torch.as_tensor(weights, dtype=Y.dtype, device=Y.points.device)
        return grams, torch.as_tensor(index, device=Y.points.device), w

    def _kernelised_block(self, X: BagBatch, Y: BagBatch) -> torch.Tensor:
        Kyy, index, wy = self._padded(Y)
        valid = wy > 0
        m = index.shape[0]
        rows = []
        for i in range(len(X)):
            P = X.bag(i)
            p = len(P)
            Kxy = self.kernel.block(P, Y.points)[:, index]  # (p, m, q)
            Kxy = torch.where(valid[None], Kxy, torch.zeros((), dtype=Kxy.dtype)).permute(1, 0, 2)
            Kxx = self.kernel.block(P, P).expand(m, p, p)
            U = torch.cat(
                [torch.cat([Kxx, Kxy], dim=2), torch.cat([Kxy.transpose(1, 2), Kyy], dim=2)], dim=1
            )
            wx = torch.full((m, p), 1.0 / (2 * p), dtype=X.dtype, device=P.device)
            rows.append(torch.exp(-self._union_logdet(U, torch.cat([wx, wy], dim=1))))
        return torch.stack(rows)

    # ------------------------------------------------------------------ contract
    def block(self, X: BagBatch, Y: BagBatch) -> torch.Tensor:
        self._check_pair(X, Y)
        if self.kernel is None:
            return self._closed_block(X, Y)
        return self._kernelised_block(X, Y)

    def block_diag(self, X: BagBatch) -> torch.Tensor:
        if self.kernel is None:
            _, cx = _bag_moments(X)
            eye = self.lam * torch.eye(X.n_features, dtype=X.dtype, device=X.points.device)
            return torch.exp(-logdet_pd(cx + eye))
        out = []
        for i in range(len(X)):
            P = X.bag(i)
            w = torch.full((len(P),), 1.0 / len(P), dtype=X.dtype, device=P.device)
            out.append(torch.exp(-self._union_logdet(self.kernel.block(P, P), w)))
        return torch.stack(out)


class EntropyKernel(Kernel):
    r"""Entropy kernel on histograms: ``k(x, x') = exp(-beta h((x + x') / 2))``.

    Course part 1, "Example 2: semigroup kernels for finite measures (5/6)" (Cuturi, Fukumizu
    & Vert 2005): for probability densities with finite entropy
    ``h(x) = -int x ln x``, ``exp(-beta h((x + x')/2))`` is p.d. for every ``beta > 0``.  Here
    the densities are histograms (densities on a finite set, w.r.t. the counting measure):
    each row of ``X`` is a non-negative vector, normalised to sum to 1, and
    ``h(p) = -sum_k p_k ln p_k`` (``0 ln 0 = 0``).  Only valid for densities, as the course
    remarks: rows are normalised, never used as raw counts.

    Parameters
    ----------
    beta : float
        Inverse temperature ``beta > 0``.
    """

    input_kind: ClassVar[InputKind] = InputKind.VECTOR

    def __init__(self, beta: float = 1.0):
        super().__init__()
        self.beta = check_positive(beta, name="beta")

    @classmethod
    def _check_example(cls) -> tuple[Kernel, Any, Any]:
        rng = np.random.default_rng(0)
        X = torch.as_tensor(rng.dirichlet(np.ones(5), size=9))
        return cls(beta=2.0), X, torch.as_tensor(rng.dirichlet(np.full(5, 0.5), size=4))

    def prepare(
        self, X: Any, *, dtype: torch.dtype | None = None, reference: bool = False
    ) -> torch.Tensor:
        T = to_tensor(X, name="X", dtype=dtype)
        if bool((T < 0).any()):
            raise InputError("X: expected non-negative histograms (rows), got a negative entry")
        total = T.sum(1, keepdim=True)
        if bool((total <= 0).any()):
            row = int(torch.nonzero(total[:, 0] <= 0)[0])
            raise InputError(f"X: expected histograms with a positive total, row {row} sums to 0")
        return T / total

    def _entropy(self, P: torch.Tensor) -> torch.Tensor:
        return -torch.xlogy(P, P).sum(-1)

    def block(self, X: torch.Tensor, Y: torch.Tensor) -> torch.Tensor:
        rows = [torch.exp(-self.beta * self._entropy((x + Y) / 2)) for x in X]
        return torch.stack(rows) if rows else X.new_zeros((0, len(Y)))

    def block_diag(self, X: torch.Tensor) -> torch.Tensor:
        return torch.exp(-self.beta * self._entropy(X))


class BagFisherVector(Kernel):
    r"""Fisher vectors of bags of local descriptors, pooled over the bag.

    Course part 2, section 2 (Fisher kernels; bags of local descriptors of images, Perronnin
    & Dance 2007): the Fisher vector of a bag ``x = {x_1, ..., x_p}`` under a diagonal
    Gaussian mixture is the gradient of the bag's mean log-likelihood
    ``(1/p) sum_t log P(x_t)`` in the means and standard deviations, normalised as in
    :class:`~kernelkit.kernels.FisherVector`, i.e. the mean of the descriptors' Fisher vectors

    .. math:: \Phi(x) = \frac1p \sum_{t=1}^p \phi(x_t), \qquad k(x, y) = \Phi(x)^T \Phi(y),

    (explicit features, :meth:`features`).  The mixture is fitted by the user (e.g. on all
    training descriptors, :meth:`from_mixture`).

    Parameters
    ----------
    weights, means, variances : array-like
        The diagonal Gaussian mixture, as :class:`~kernelkit.kernels.FisherVector`.
    """

    input_kind: ClassVar[InputKind] = InputKind.BAG
    differentiable: ClassVar[bool] = False

    def __init__(self, weights: Any, means: Any, variances: Any):
        super().__init__()
        from kernelkit.kernels._fisher import FisherVector

        self.weights, self.means, self.variances = weights, means, variances
        self._points = FisherVector(weights, means, variances)

    @classmethod
    def from_mixture(cls, mixture: Any) -> BagFisherVector:
        """From a fitted ``sklearn.mixture.GaussianMixture(covariance_type="diag")``."""
        from kernelkit.kernels._fisher import FisherVector

        point = FisherVector.from_mixture(mixture)
        return cls(point.weights, point.means, point.variances)

    @classmethod
    def _check_example(cls) -> tuple[Kernel, Any, Any]:
        rng = np.random.default_rng(0)
        X = [rng.normal(size=(int(rng.integers(2, 7)), 2)) for _ in range(8)]
        Y = [rng.normal(size=(int(rng.integers(2, 7)), 2)) + 1 for _ in range(3)]
        return cls([0.3, 0.7], [[0.0, 0.0], [1.0, -1.0]], [[1.0, 0.5], [2.0, 1.0]]), X, Y

    def prepare(
        self, X: Any, *, dtype: torch.dtype | None = None, reference: bool = False
    ) -> BagBatch:
        return as_bag_batch(X, dtype=dtype)

    def features(self, X: BagBatch) -> torch.Tensor:
        """Pooled Fisher vectors, shape ``(n_bags, 2 k p)``."""
        phi = self._points.features(X.points)
        owner = torch.as_tensor(np.repeat(np.arange(len(X)), X.sizes), device=phi.device)
        sums = torch.zeros(len(X), phi.shape[1], dtype=phi.dtype, device=phi.device)
        sums.index_add_(0, owner, phi)
        return sums / torch.as_tensor(X.sizes, dtype=phi.dtype, device=phi.device)[:, None]

    def block(self, X: BagBatch, Y: BagBatch) -> torch.Tensor:
        return self.features(X) @ self.features(Y).T

    def block_diag(self, X: BagBatch) -> torch.Tensor:
        return (self.features(X) ** 2).sum(1)
