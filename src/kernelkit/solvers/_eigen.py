"""Top-k eigenpairs of a symmetric matrix or lazy operator (kernel PCA, spectral methods).

Kernel PCA (course part 1, slides "Kernel Principal Component Analysis") needs the top eigenpairs
``(Delta_i, u_i)`` of the centred Gram; spectral clustering (section 4.4) the top eigenvectors
of ``K``.  Several LAPACK / ARPACK routes compute the same pairs at very different costs, and
:func:`top_eigenpairs` picks the fastest for the problem size (see its notes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg
import torch
from scipy.sparse.linalg import eigsh, lobpcg

from kernelkit.solvers._randomized import randomized_eigh
from kernelkit.utils._config import deprecated_options, options
from kernelkit.utils._errors import InputError
from kernelkit.utils._threads import blas_threads
from kernelkit.utils._validation import check_int, to_tensor

METHODS = ("auto", "full", "subset", "arpack", "block", "randomized", "lobpcg")

ARPACK_MAX_FRACTION = 0.02
"""ARPACK is used when ``k <= ARPACK_MAX_FRACTION * n``; a subset ``eigh`` otherwise."""

__getattr__ = deprecated_options(
    __name__,
    {
        "FULL_MAX_N": "eigen_full_max_n",
        "BLOCK_MAX_FRACTION": "eigen_block_max_fraction",
        "BLOCK_BASIS_BYTES": "eigen_block_basis_bytes",
    },
)
"""The ``auto`` rule's constants of the previous release, now options
(``kernelkit.get_config``): importable with a ``FutureWarning`` for one release."""


@dataclass(frozen=True)
class EigenResult:
    """Result of :func:`top_eigenpairs`.

    Attributes
    ----------
    values : torch.Tensor, shape (k,)
        Eigenvalues, largest first (``largest=True``) or smallest first.
    vectors : torch.Tensor, shape (n, k)
        Orthonormal eigenvectors in columns; each column's entry of largest magnitude is
        positive (deterministic signs).
    method : str
        The method actually used (``"arpack"`` when ``"block"`` fell back to it).
    residual : torch.Tensor or None
        ``block`` only: relative residuals ``||K v_i - lambda_i v_i|| / |lambda_1|`` of the
        returned pairs (all ``<= tol`` when the method is ``"block"``); None otherwise.
    n_iter : int
        ``block`` only: number of block products ``K Q_j``; 0 otherwise.
    """

    values: torch.Tensor
    vectors: torch.Tensor
    method: str
    residual: torch.Tensor | None = None
    n_iter: int = 0


def fix_signs(vectors: torch.Tensor) -> torch.Tensor:
    """Flip each column so its entry of largest magnitude (first on ties) is positive.

    The sign convention of every eigensolver of kernelkit (:func:`symmetric_eigh`,
    :func:`top_eigenpairs`): eigenvectors are defined up to sign, and this choice makes them
    deterministic across LAPACK drivers and machines.
    """
    if vectors.numel() == 0:
        return vectors
    V = vectors.detach()
    signs = torch.sign(V.gather(-2, V.abs().argmax(-2, keepdim=True)))
    return vectors * torch.where(signs == 0, 1.0, signs)


def symmetric_eigh(
    A: Any, *, descending: bool = False, signs: bool = True, name: str = "A"
) -> EigenResult:
    r"""All eigenpairs of a symmetric matrix: :math:`A = U \Lambda U^T`.

    LAPACK's divide-and-conquer ``syevd`` on the symmetric part ``(A + A^T) / 2``: SciPy's
    LAPACK on torch's thread count for one CPU matrix of order 1000 or more that needs no
    gradient (1.6x less CPU time than ``torch.linalg.eigh``'s at n = 2000,
    ``docs/measurements.md``), ``torch.linalg.eigh`` otherwise (stacks, GPU tensors,
    autograd).  The entry point of kernelkit for a full eigendecomposition
    (:func:`top_eigenpairs` for a few pairs).  A stack of matrices ``(..., n, n)`` is
    decomposed matrix by matrix in one call (values ``(..., n)``, vectors ``(..., n, n)``).

    Parameters
    ----------
    A : tensor or array-like, shape (n, n) or (..., n, n)
        Symmetric matrix, or a stack of them.
    descending : bool
        Order of the eigenvalues: ascending (default, LAPACK's) or descending.
    signs : bool
        Apply the sign convention of :func:`fix_signs` (largest-magnitude entry of each
        eigenvector positive); False keeps LAPACK's signs (e.g. for ``U f(Lambda) U^T``, which
        does not depend on them, or when ``A`` requires a gradient).
    name : str
        Argument name quoted in error messages.

    Returns
    -------
    EigenResult
        ``values`` (n,), orthonormal ``vectors`` (n, n) in columns, ``method="full"``.
    """
    A = A if isinstance(A, torch.Tensor) else to_tensor(A, name=name, ndim=None)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise InputError(
            f"{name}: expected a square matrix (n x n) or a stack (..., n, n), "
            f"got shape {tuple(A.shape)}"
        )
    S = torch.add(A, A.mT).mul_(0.5)
    if S.ndim == 2 and S.device.type == "cpu" and not S.requires_grad and S.shape[0] >= 1000:
        with blas_threads(torch.get_num_threads()):
            w_np, V_np = scipy.linalg.eigh(  # S^T: the Fortran-ordered view LAPACK overwrites
                S.numpy().T, driver="evd", overwrite_a=True, check_finite=False
            )
        w, V = torch.from_numpy(w_np), torch.from_numpy(V_np)
    else:
        w, V = torch.linalg.eigh(S)
    if descending:
        w, V = w.flip(-1), V.flip(-1)
    if signs:
        V = fix_signs(V)
    return EigenResult(w, V, "full")


def _orthogonalize(Q: np.ndarray, W: np.ndarray) -> np.ndarray:
    """``W - Q Q^T W`` by classical Gram-Schmidt applied twice (CGS2, "twice is enough")."""
    if Q.shape[1]:
        for _ in range(2):
            W -= Q @ (Q.T @ W)
    return W


def _new_block(
    Q: np.ndarray, W: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Orthonormal basis of ``W`` orthogonalised against ``Q`` and its ``R`` factor.

    Columns of ``W`` that vanish against ``Q`` (an invariant subspace was found) are replaced by
    random directions, so the basis keeps growing; ``R`` is then returned as zeros (no
    continuation, the Ritz values of the current basis are exact).
    """
    scale = max(float(np.linalg.norm(W, axis=0).max(initial=0.0)), np.finfo(W.dtype).tiny)
    W = _orthogonalize(Q, W)
    Qw, R = np.linalg.qr(W)
    if (np.abs(np.diag(R)) <= 1e3 * np.finfo(W.dtype).eps * scale).any():
        Wr = _orthogonalize(Q, rng.standard_normal(W.shape).astype(W.dtype))
        Qw = np.linalg.qr(_orthogonalize(Q, np.linalg.qr(Wr)[0]))[0]
        R = np.zeros_like(R)
    return Qw, R


def _block_krylov(
    matmat: Any,
    n: int,
    k: int,
    dtype: np.dtype,
    *,
    tol: float,
    max_iter: int,
    block_size: int | None = None,
    max_basis: int | None = None,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, bool]:
    r"""Largest ``k`` eigenpairs of a symmetric ``K`` by block Krylov + Rayleigh-Ritz.

    Block Lanczos with full reorthogonalisation (Golub & Van Loan, *Matrix Computations*, 4th
    ed., section 10.3.6; randomized block Krylov of Halko, Martinsson & Tropp 2011, SIAM
    Review 53(2), section 4.5 / Algorithm 4.4 with the whole Krylov space kept; Musco & Musco
    2015).  From a Gaussian start block ``Q_1`` (``n x b``, from ``seed``) the orthonormal basis
    ``Q = [Q_1, ..., Q_j]`` of :math:`\mathcal{K}_j(K, Q_1)` grows by
    ``Q_{j+1} R_j = (I - Q Q^T) K Q_j`` (CGS2 + QR), with ``K Q`` kept, so each step costs one
    BLAS-3 product ``K Q_j``.  Rayleigh-Ritz: ``H = Q^T K Q = S Theta S^T``, Ritz pairs
    ``(theta_i, v_i = Q s_i)``.  The Lanczos estimate ``||R_j S_{j,i}||`` of the residual
    (``S_{j,i}``: the last block's rows of ``s_i``) decides when to stop; convergence is then
    certified with the true residuals

    .. math:: \|K v_i - \theta_i v_i\| = \|(KQ) s_i - \theta_i Q s_i\|
              \le \mathrm{tol}\,|\theta_1|, \qquad i = 1, \dots, k.

    When the basis reaches ``max_basis`` columns it is thick-restarted (Wu & Simon 2000) with
    the leading ``max_basis / 2`` Ritz vectors and the next block of the Krylov recursion.

    Returns
    -------
    values, vectors, residuals, n_iter, converged
        Ritz values (descending), Ritz vectors, relative residuals
        ``||K v_i - theta_i v_i|| / |theta_1|``, number of products ``K Q_j`` and whether all
        residuals are ``<= tol``.
    """
    b = min(block_size or int(np.clip(k // 3, 4, 32)), n)
    by_memory = options().eigen_block_basis_bytes // (2 * n * dtype.itemsize)
    m_max = min(n, max_basis or max(min(max(8 * k, 4 * k + 8 * b), by_memory), k + 2 * b))
    rng = np.random.default_rng(seed)
    Q = np.empty((n, m_max), dtype=dtype, order="F")
    KQ = np.empty_like(Q)
    H = np.zeros((m_max, m_max), dtype=dtype)
    Qj, _ = np.linalg.qr(rng.standard_normal((n, b)).astype(dtype))
    m, n_iter = 0, 0
    while True:
        bj = Qj.shape[1]
        Q[:, m : m + bj] = Qj
        KQ[:, m : m + bj] = np.asarray(matmat(Qj), dtype=dtype).reshape(n, bj)
        n_iter += 1
        H[: m + bj, m : m + bj] = Q[:, : m + bj].T @ KQ[:, m : m + bj]
        H[m : m + bj, :m] = H[:m, m : m + bj].T
        m += bj
        room = min(b, n - m)  # a block is never truncated, except by n itself
        Qn, Rn = _new_block(Q[:, :m], KQ[:, m - bj : m].copy(), rng) if m < n else (None, None)
        if m < k:
            Qj = Qn[:, :room]
            continue
        Hm = (H[:m, :m] + H[:m, :m].T) / 2
        theta, S = np.linalg.eigh(Hm)
        theta, S = theta[::-1], S[:, ::-1]
        scale = max(abs(float(theta[0])), np.finfo(dtype).tiny)
        estimate = np.zeros(k) if Rn is None else np.linalg.norm(Rn @ S[m - bj : m, :k], axis=0)
        if (estimate <= tol * scale).all() or n_iter >= max_iter or m == n:
            V = Q[:, :m] @ S[:, :k]
            residual = np.linalg.norm(KQ[:, :m] @ S[:, :k] - V * theta[:k], axis=0) / scale
            done = bool((residual <= tol).all())
            if done or n_iter >= max_iter or m == n:
                return theta[:k].copy(), V, residual, n_iter, done
        if m + room > m_max and m_max < n:
            # thick restart: keep the leading Ritz vectors, continue with the next block
            p = max(k, m_max // 2)
            Sp = np.ascontiguousarray(S[:, :p])
            Q[:, :p] = Q[:, :m] @ Sp
            KQ[:, :p] = KQ[:, :m] @ Sp
            H[:, :] = 0.0
            H[np.arange(p), np.arange(p)] = theta[:p]
            m = p
            Qn, _ = _new_block(Q[:, :m], Qn, rng)
        Qj = Qn[:, :room]


def choose_method(n: int, k: int, *, is_operator: bool, largest: bool = True) -> str:
    """The method ``auto`` picks for ``k`` pairs of an ``n x n`` problem (see notes above)."""
    if is_operator:
        return "arpack" if k < n else "full"
    opt = options()
    if n <= opt.eigen_full_max_n or k >= n:
        return "full"
    if largest and k <= opt.eigen_block_max_fraction * n:
        return "block"
    return "subset"


def top_eigenpairs(
    K: Any,
    k: int,
    *,
    method: str = "auto",
    largest: bool = True,
    tol: float = 0.0,
    max_iter: int | None = None,
    seed: int = 0,
) -> EigenResult:
    r"""The ``k`` largest (or smallest) eigenpairs of a symmetric ``K``.

    Parameters
    ----------
    K : tensor, array-like or GramOperator, shape (n, n)
        Symmetric matrix (only the lower triangle is read by ``full``/``subset``), or a lazy
        operator with ``matmat`` and ``shape`` (``arpack``).
    k : int
        Number of pairs, ``1 <= k <= n`` (``k < n`` for ``arpack``).
    method : {"auto", "full", "subset", "arpack", "block", "randomized", "lobpcg"}
        ``full``: ``torch.linalg.eigh`` then selection.  ``subset``:
        ``scipy.linalg.eigh(subset_by_index=..., driver="evr")`` (MRRR, only the wanted
        pairs).  ``arpack``: ``scipy.sparse.linalg.eigsh`` (implicitly restarted Lanczos) with
        a deterministic start ``v0`` (uniform on [-1, 1], from ``seed``).  ``randomized``:
        the randomised range finder with power iterations (Halko, Martinsson and Tropp 2011,
        :func:`~kernelkit.solvers.randomized_eigh`; approximate, largest pairs
        only).  ``lobpcg``: ``scipy.sparse.linalg.lobpcg`` (Knyazev 2001, locally optimal
        block preconditioned conjugate gradient, no preconditioner) from a random block
        (normal, from ``seed``), as scikit-learn's ``eigen_solver="lobpcg"``; below
        ``n = 5 k + 1`` (where LOBPCG is not meant to run) ``full``.  ``auto``: see notes.
    largest : bool
        Largest eigenvalues (sorted descending) or smallest (sorted ascending).
    tol : float
        ARPACK relative accuracy (0 = machine precision).  ``block``: relative residual
        bound ``||K v_i - lambda_i v_i|| <= tol |lambda_1|`` for every returned pair
        (0 = ``eps**(2/3)`` of the dtype: 3.7e-11 in float64, 2.4e-5 in float32).
    max_iter : int, optional
        ``block``: most block products ``K Q_j`` before falling back to ARPACK (default 200);
        ``randomized``: power iterations (default ``"auto"`` of
        :func:`~kernelkit.solvers.randomized_eigh`).
    seed : int
        Seed of the random start of ``arpack`` (``v0``) and ``block`` (``Q_1``).

    Returns
    -------
    EigenResult
        Values, vectors (signs fixed: largest-magnitude entry positive) and the method used.

    Notes
    -----
    ``auto`` rule (the timings behind it: ``docs/measurements.md``, "Top-k eigensolvers").

    Hence: ``full`` for ``n <=`` ``eigen_full_max_n`` (an option, :func:`kernelkit.get_config`)
    or ``k = n``; ``block`` for the largest pairs of a dense ``K`` when ``k <=``
    ``eigen_block_max_fraction`` ``n`` (2%),
    ``arpack`` for an operator; ``subset``
    otherwise (and always for the smallest pairs, where ARPACK without shift-invert stalls on
    the cluster of near-zero eigenvalues of a Gram).
    """
    if method not in METHODS:
        raise InputError(f"method: expected one of {METHODS}, got {method!r}")
    is_operator = not isinstance(K, (torch.Tensor, np.ndarray, list, tuple)) and hasattr(
        K, "matmat"
    )
    if is_operator:
        shape = tuple(K.shape)
        dtype = K.dtype
    else:
        K = to_tensor(K, name="K")
        shape = tuple(K.shape)
        dtype = K.dtype
    if len(shape) != 2 or shape[0] != shape[1]:
        raise InputError(f"K: expected a square symmetric matrix (n x n), got shape {shape}")
    n = shape[0]
    k = check_int(k, name="k", minimum=1)
    if k > n:
        raise InputError(f"k: expected at most n = {n} eigenpairs, got {k}")
    if method == "auto":
        method = choose_method(n, k, is_operator=is_operator, largest=largest)
    if is_operator and method not in ("arpack", "block"):
        K = K.to_dense() if hasattr(K, "to_dense") else torch.as_tensor(K.matmat(torch.eye(n)))
    if method == "randomized" and not largest:
        raise InputError("method: 'randomized' finds the largest eigenpairs only (largest=True)")
    if method == "lobpcg" and n < 5 * k + 1:
        method = "full"
    if method == "arpack" and k >= n:
        raise InputError(f"k: method 'arpack' needs k < n = {n}, got {k}; use 'full'")

    if method == "full":
        w, V = torch.linalg.eigh(K)
        sel = torch.arange(n - 1, n - k - 1, -1) if largest else torch.arange(k)
        values, vectors = w[sel].cpu().numpy(), V[:, sel].cpu().numpy()
    elif method == "subset":
        Kn = K.cpu().numpy()
        index = [n - k, n - 1] if largest else [0, k - 1]
        w, V = scipy.linalg.eigh(
            Kn, subset_by_index=index, driver="evr", overwrite_a=False, check_finite=False
        )
        order = np.arange(k)[::-1] if largest else np.arange(k)
        values, vectors = w[order], V[:, order]
    elif method == "randomized":
        power = "auto" if max_iter is None else check_int(max_iter, name="max_iter", minimum=0)
        values, vectors = randomized_eigh(K.cpu().numpy(), k, n_iter=power, seed=seed)
    elif method == "lobpcg":
        X0 = np.random.default_rng(seed).standard_normal((n, k))
        iters = 200 if max_iter is None else check_int(max_iter, name="max_iter", minimum=1)
        w, V = lobpcg(K.cpu().numpy(), X0, tol=tol or None, maxiter=iters, largest=largest)
        order = np.argsort(w)[::-1] if largest else np.argsort(w)
        values, vectors = w[order], V[:, order]
    elif method == "block":
        np_dtype = torch.empty((), dtype=dtype).numpy().dtype
        sign = 1.0 if largest else -1.0
        if is_operator:

            def matmat(Z: np.ndarray) -> np.ndarray:
                return sign * np.asarray(torch.as_tensor(K.matmat(torch.from_numpy(Z))).cpu())

        else:
            Kt = torch.as_tensor(K).cpu().contiguous()

            def matmat(Z: np.ndarray) -> np.ndarray:
                return sign * (Kt @ torch.from_numpy(np.ascontiguousarray(Z))).numpy()

        rtol = tol if tol > 0 else float(np.finfo(np_dtype).eps) ** (2.0 / 3.0)
        iters = 200 if max_iter is None else check_int(max_iter, name="max_iter", minimum=1)
        # The big products run in torch; NumPy's small QR / eigh / orthogonalisation run on one
        # BLAS thread: two thread pools (OpenBLAS and torch's OpenMP) spinning against each
        # other oversubscribe the cores (a 20x slower solve on 2 cores, 18 s against 0.8 s,
        # when scikit-learn's own libgomp is loaded after torch).
        with blas_threads(1):
            w, V, res, n_iter, converged = _block_krylov(
                matmat, n, k, np_dtype, tol=rtol, max_iter=iters, seed=seed
            )
        if not converged:
            fallback = "arpack" if largest or is_operator else "subset"
            out = top_eigenpairs(K, k, method=fallback, largest=largest, tol=tol, seed=seed)
            return EigenResult(out.values, out.vectors, out.method, None, n_iter)
        values, vectors = sign * w, V
        device = K.device if isinstance(K, torch.Tensor) else None
        residual = torch.as_tensor(res, dtype=dtype, device=device)
    else:
        if is_operator:
            op = K.as_linear_operator() if hasattr(K, "as_linear_operator") else K
        else:
            op = K.cpu().numpy()
        np_dtype = torch.empty((), dtype=dtype).numpy().dtype
        # deterministic but generic start: a constant v0 lies in the null space of a centred
        # Gram (K 1 = 0) and would break the Lanczos recursion down at once
        v0 = np.random.default_rng(seed).uniform(-1.0, 1.0, n).astype(np_dtype)
        w, V = eigsh(op, k=k, which="LA" if largest else "SA", v0=v0, tol=tol)
        order = np.argsort(w)[::-1] if largest else np.argsort(w)
        values, vectors = w[order], V[:, order]
    vectors = fix_signs(torch.as_tensor(np.ascontiguousarray(vectors)))
    device = K.device if isinstance(K, torch.Tensor) else None
    return EigenResult(
        torch.as_tensor(np.ascontiguousarray(values), dtype=dtype, device=device),
        vectors.to(dtype=dtype, device=device),
        method,
        residual if method == "block" else None,
        n_iter if method == "block" else 0,
    )
