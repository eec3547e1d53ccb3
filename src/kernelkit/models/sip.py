r"""Nyström base embedding and the quadratic (kernel-warping) s.i.p. embedding.

Ma, Ganapathiraman, Yu and Zhang, *Convex representation learning for generalized invariance
in semi-inner-product space* (ICML 2020), section 4, eqs. (19)-(28); the quadratic case is the
kernel warping of Ma et al. (AISTATS 2019), eq. (1) / eq. (17) of the seed.

Notation used by every function of the ``sip*`` modules:

* ``k~_x = K_z^{-1/2} k_z(x)`` (eqs. 20-21), the base embedding of ``k(., x)`` in ``R^d``;
* ``G`` (``m x d``), the rows ``g~_j`` of the finite invariance set ``S`` embedded the same way;
* ``K_S = G G^T`` (``m x m``) and ``h(x) = G k~_x`` (``m``): the solvers of
  :mod:`kernelkit.models.sip_polar` only need these and ``kappa(x) = ||k~_x||^2``;
* an embedding is returned as two coefficient arrays, ``iota(G_x) = coef_k(x) k~_x -
  coef_rep(x)^T G`` (so joint, matrix-valued embeddings of section 5-6 reuse the solvers).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from kernelkit.solvers import cholesky_factor, symmetric_eigh
from kernelkit.utils.errors import InputError, NotPSDError
from kernelkit.utils.numerics import eps, psd_tolerance


@dataclass(frozen=True)
class NystromBasis:
    r"""The map ``k_z(x) -> k~_x = Lambda^{-1/2} U^T k_z(x)`` of eqs. (20)-(21).

    ``K_z = U Lambda U^T`` is the landmark Gram; eigenpairs with ``lambda <= jitter *
    lambda_max`` are dropped, so ``d = len(inv_sqrt_eigenvalues) <= n_landmarks``.  The basis
    is the eigenbasis of ``K_z`` rather than the symmetric root ``K_z^{-1/2}`` of eq. (20):
    the two differ by an orthogonal rotation, which changes no inner product, and the rotated
    one is ``d``-dimensional when ``K_z`` is singular.  Then
    ``<k~_x, k~_y> = K_xz K_z^+ K_zy``, the Nyström kernel.

    Attributes
    ----------
    eigenvectors : torch.Tensor
        ``U``, shape ``(n_landmarks, d)``.
    inv_sqrt_eigenvalues : torch.Tensor
        ``lambda^{-1/2}``, shape ``(d,)``.
    jitter : float
        The relative eigenvalue floor used.
    """

    eigenvectors: torch.Tensor
    inv_sqrt_eigenvalues: torch.Tensor
    jitter: float

    @property
    def dim(self) -> int:
        """Dimension ``d`` of the embedding."""
        return int(self.inv_sqrt_eigenvalues.shape[0])

    def features(self, K_xz: torch.Tensor) -> torch.Tensor:
        """``k~_x`` for every row of ``K_xz`` (shape ``(n, n_landmarks)``), shape ``(n, d)``."""
        return (K_xz @ self.eigenvectors) * self.inv_sqrt_eigenvalues


def default_jitter(dtype: torch.dtype) -> float:
    """Relative eigenvalue floor of :func:`nystrom_basis`: ``1e-10`` (float64), ``1e-5``."""
    return 1e-10 if dtype == torch.float64 else 1e-5


def nystrom_basis(K_zz: torch.Tensor, *, jitter: float | None = None) -> NystromBasis:
    r"""Robust inverse square root of the landmark Gram ``K_z`` (eqs. 20-21).

    ``K_z = U Lambda U^T`` by :func:`kernelkit.solvers.symmetric_eigh`; eigenvalues
    ``<= jitter * lambda_max`` (round-off of a rank-deficient Gram) are dropped instead of
    inverted.

    Parameters
    ----------
    K_zz : torch.Tensor
        Symmetric landmark Gram, shape ``(m, m)``.
    jitter : float, optional
        Relative floor; :func:`default_jitter` of the dtype when None.

    Raises
    ------
    NotPSDError
        If ``lambda_min < -psd_tolerance * lambda_max`` (the kernel is not p.d. on the
        landmarks); the message gives the eigenvalue and the jitter used.
    InputError
        If ``K_zz`` is not square or is zero.
    """
    if K_zz.ndim != 2 or K_zz.shape[0] != K_zz.shape[1] or K_zz.shape[0] == 0:
        raise InputError(
            f"K_zz: expected a non-empty square landmark Gram, got shape {tuple(K_zz.shape)}"
        )
    jitter = default_jitter(K_zz.dtype) if jitter is None else float(jitter)
    eig = symmetric_eigh(K_zz, signs=False, name="K_zz")
    lam, U = eig.values, eig.vectors
    lam_max = float(lam[-1])
    if lam_max <= 0:
        raise NotPSDError(
            f"K_zz: expected a positive semi-definite landmark Gram with a positive "
            f"eigenvalue, got largest eigenvalue {lam_max:.3g} (jitter {jitter:.1e})"
        )
    lam_min = float(lam[0])
    if lam_min < -max(psd_tolerance(K_zz.dtype), jitter) * lam_max:
        raise NotPSDError(
            f"K_zz: the landmark Gram is not positive semi-definite: smallest eigenvalue "
            f"{lam_min:.3g} = {lam_min / lam_max:.2e} x lambda_max, below the tolerance "
            f"{-max(psd_tolerance(K_zz.dtype), jitter):.1e}; eigenvalue floor (jitter) used: "
            f"{jitter:.1e} x lambda_max = {jitter * lam_max:.3g}. Use a positive definite "
            "kernel, or fewer / distinct landmarks"
        )
    keep = lam > jitter * lam_max
    return NystromBasis(U[:, keep], lam[keep].rsqrt(), jitter)


@dataclass(frozen=True)
class Embedding:
    r"""Embeddings ``iota(G_x) = coef_k k~_x - coef_rep^T G`` with their certificates.

    Attributes
    ----------
    coef_k : torch.Tensor
        Shape ``(n,)``.
    coef_rep : torch.Tensor
        Shape ``(n, m)``, coefficients on the invariance representers.
    primal : torch.Tensor
        ``J(v)`` at the returned primal point ``v`` of eq. (28), shape ``(n,)``.
    dual : torch.Tensor
        Value of the dual problem at the returned dual point (a lower bound on the optimum
        of eq. 28), shape ``(n,)``.
    gap : torch.Tensor
        Relative duality gap ``(primal - dual) / primal`` (``>= 0`` up to round-off): the
        optimality certificate of each point.
    iterations : int
        Outer iterations used (0 for closed forms).
    """

    coef_k: torch.Tensor
    coef_rep: torch.Tensor
    primal: torch.Tensor
    dual: torch.Tensor
    gap: torch.Tensor
    iterations: int = 0

    def vectors(self, k_tilde: torch.Tensor, G: torch.Tensor) -> torch.Tensor:
        """``iota(G_x)`` as rows, from ``k~_x`` (``(n, d)``) and the representers ``G``."""
        return self.coef_k[:, None] * k_tilde - self.coef_rep @ G


def embed_quadratic(
    K_S: torch.Tensor, H: torch.Tensor, kappa: torch.Tensor, *, strength: float = 1.0
) -> Embedding:
    r"""Closed-form embedding for the quadratic semi-norm ``R(v)^2 = s sum_j <g_j, v>^2``.

    With ``M = I + s G^T G``, problem (28) ``min v^T M v s.t. <v, k~_x> = 1`` has the
    solution ``v = M^{-1} k~_x / (k~_x^T M^{-1} k~_x)`` and ``J(v) = 1 / (k~_x^T M^{-1} k~_x)``,
    so ``iota(G_x) = v / J(v) = M^{-1} k~_x`` (eq. 26).  By Woodbury,
    ``M^{-1} k~_x = k~_x - G^T (I/s + K_S)^{-1} h(x)``; its pairing with ``k~_y`` is
    ``k(x, y) - z(x)^T (I/s + K_z)^{-1} z(y)``, the warped kernel of eq. (1) / (17) (with
    ``s = 1``, in the Nyström space).

    Parameters
    ----------
    K_S : torch.Tensor
        Representer Gram ``G G^T``, shape ``(m, m)``.
    H : torch.Tensor
        ``h(x) = G k~_x`` as rows, shape ``(n, m)``.
    kappa : torch.Tensor
        ``||k~_x||^2``, shape ``(n,)``.
    strength : float
        ``s > 0``.

    Returns
    -------
    Embedding
        ``coef_k = 1``; the certificate is the relative residual of the normal equations
        ``(I/s + K_S) w = h`` scaled like the gap (exact up to round-off).
    """
    m = K_S.shape[0]
    A = K_S + torch.eye(m, dtype=K_S.dtype, device=K_S.device) / strength
    W = cholesky_factor(A, jitter=0.0, name="K_S + I/strength").solve(H.T).T
    hw = (H * W).sum(1)
    value = kappa - hw  # k~^T M^{-1} k~
    residual = torch.linalg.vector_norm(W @ A - H, dim=1) / torch.linalg.vector_norm(
        H, dim=1
    ).clamp_min(eps(H.dtype))
    primal = 1.0 / value
    return Embedding(
        coef_k=torch.ones_like(kappa),
        coef_rep=W,
        primal=primal,
        dual=primal,
        gap=residual,
    )


def embed_quadratic_primal(
    G: torch.Tensor, points: torch.Tensor, *, strength: float = 1.0
) -> tuple[Embedding, torch.Tensor]:
    r"""The closed form of :func:`embed_quadratic` in feature space, for ``m > D`` representers.

    ``iota(G_x) = M^{-1} k~_x`` with ``M = I + s G^T G`` (``D x D``), by one Cholesky
    factorisation of ``M``: ``O(m D^2 + D^3)`` instead of the ``O(m^2 D + m^3)`` of the
    Woodbury form, and no ``m x m`` Gram (mixup with ``p`` pairs and a grid of ``lambda``
    has ``m = p n_grid`` representers in ``D = d L`` dimensions).

    Parameters
    ----------
    G : torch.Tensor
        Representers, shape ``(m, D)``.
    points : torch.Tensor
        ``k~_x`` as rows, shape ``(n, D)``.
    strength : float
        ``s > 0``.

    Returns
    -------
    (Embedding, torch.Tensor)
        The embedding, with ``J = 1 / (k~^T M^{-1} k~)`` as primal and dual value and the
        relative residual ``||M iota - k~|| / ||k~||`` as certificate (``coef_rep`` is
        empty), and the features ``iota(G_x)``, shape ``(n, D)``.
    """
    M = quadratic_gram(G, strength=strength)
    features = cholesky_factor(M, jitter=0.0, name="I + strength G^T G").solve(points.T).T
    residual = torch.linalg.vector_norm(features @ M - points, dim=1)
    gap = residual / torch.linalg.vector_norm(points, dim=1).clamp_min(eps(points.dtype))
    value = 1.0 / (points * features).sum(1)
    empty = points.new_zeros(points.shape[0], 0)
    return Embedding(1.0 / value, empty, value, value, gap), features


def quadratic_gram(G: torch.Tensor, *, strength: float = 1.0) -> torch.Tensor:
    """``M = I + s G^T G`` (``d x d``): the metric of the quadratic s.i.p. norm."""
    d = G.shape[1]
    return torch.eye(d, dtype=G.dtype, device=G.device) + strength * (G.T @ G)
