r"""Global graph kernels from geometric embeddings: Lovász-theta and SVM-theta kernels.

Johansson, Jethava, Dubhashi & Bhattacharyya, "Global graph kernels using geometric
embeddings", ICML 2014, section 3 (GraKeL's ``LovaszTheta`` and ``SvmTheta``).  Both compare
the graphs' subsets of equal size through a number attached to every vertex subset :math:`S`:

.. math:: k(G, G') = \sum_{d=d_0}^{d_1} \frac{1}{\binom{n}{d}\binom{n'}{d}}
          \sum_{|S| = d,\ S \subseteq V} \ \sum_{|S'| = d,\ S' \subseteq V'}
          \vartheta_S(G)\, \vartheta_{S'}(G')
          = \sum_d \phi_d(G)\, \phi_d(G'),

the linear base kernel on the subset numbers (GraKeL's default), so
:math:`\phi_d(G)` is the mean of :math:`\vartheta_S(G)` over the subsets of size :math:`d`
(zero for :math:`d > n`) and the kernel is p.d. with these explicit features.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from kernelkit.data._graphs import GraphBatch
from kernelkit.kernels._base import Kernel
from kernelkit.kernels._features import SparseFeatures
from kernelkit.kernels._graphs import _GraphKernel, count_features, example_graphs
from kernelkit.solvers._theta import lovasz_theta, max_margin_values, svm_theta
from kernelkit.utils._errors import InputError
from kernelkit.utils._validation import check_int

__all__ = ["LovaszTheta", "SvmTheta", "subset_sample_sizes"]

_QP_TOL = 1e-9
"""Ridge and feasibility tolerance of the cone programs (the SDP gives the Gram to ~1e-8)."""


def _check_range(value: Any) -> tuple[int, int]:
    if (
        not isinstance(value, tuple)
        or len(value) != 2
        or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value)
        or not 1 <= value[0] <= value[1]
    ):
        raise InputError(
            "subsets_size_range: expected a tuple (d0, d1) of integers with 1 <= d0 <= d1, got "
            f"{value!r}"
        )
    return int(value[0]), int(value[1])


def subset_sample_sizes(n: int, sizes: tuple[int, int], n_samples: int) -> dict[int, int]:
    """Number of sampled subsets of each size ``d0..min(d1, n)`` of an ``n``-set.

    GraKeL's allocation (``grakel.tools.distribute_samples``): ``floor(n_samples * w_d)`` with
    :math:`w_d \\propto \\binom{n}{d}`, the remainder added one by one from the largest size
    down; then at least one subset per size, so that no size is left without an estimate
    (GraKeL leaves such sizes at 0).
    """
    d0, d1 = sizes
    top = min(d1, n)
    if top < d0:
        return {}
    w = np.array([math.comb(n, d) for d in range(d0, top + 1)], dtype=float)
    counts = np.floor(w / w.sum() * n_samples).astype(int)
    for r in range(int(n_samples - counts.sum())):
        counts[(len(counts) - r - 1) % len(counts)] += 1
    return {d0 + i: max(1, int(c)) for i, c in enumerate(counts)}


class SvmTheta(_GraphKernel):
    r"""SVM-theta kernel (Johansson et al., ICML 2014, section 3.2), computed exactly.

    The subset number is :math:`\sigma_S(G) = \sum_{i \in S} \alpha_i`, with :math:`\alpha`
    the maximiser of the SVM-theta program :math:`\omega(G) = \max_{\alpha \ge 0} 2 e^T\alpha
    - \alpha^T (I + A/\rho) \alpha`, :math:`\rho = -\lambda_{\min}(A)` (Jethava et al., JMLR
    2013; :func:`kernelkit.solvers._theta.svm_theta`).  Every vertex lies in a fraction
    :math:`d/n` of the subsets of size :math:`d`, so the mean over all of them is exactly

    .. math:: \phi_d(G) = \frac{d}{n}\, \omega(G), \qquad
              k(G, G') = \frac{\omega(G)\,\omega(G')}{n n'}
              \sum_{d = d_0}^{\min(d_1, n, n')} d^2,

    the expectation that GraKeL estimates by sampling subsets; no sampling is needed.

    GraKeL 0.1.11 fits scikit-learn's ``OneClassSVM`` (:math:`\nu = 0.5`) instead, whose
    coefficients always sum to :math:`n/2`, so its expected features are :math:`d/2` for every
    graph and only its sampling noise varies between graphs (shown in the tests); kernelkit
    follows the paper.

    Parameters
    ----------
    subsets_size_range : tuple of int
        Subset sizes :math:`(d_0, d_1)` (GraKeL's ``subsets_size_range``).
    """

    def __init__(self, subsets_size_range: tuple[int, int] = (2, 8)):
        super().__init__()
        self.sizes_ = _check_range(subsets_size_range)
        self.subsets_size_range = subsets_size_range
        self.node_label = None
        self.edge_label = None

    def features(self, X: GraphBatch) -> SparseFeatures:
        """:math:`\\phi_d = d\\,\\omega / n` for ``d = d0..min(d1, n)``, keyed by ``d``."""
        d0, d1 = self.sizes_
        gid, keys, vals = [], [], []
        for g in range(len(X)):
            n = int(X.n_nodes[g])
            omega = svm_theta(X.adjacency(g).toarray())[0]
            d = np.arange(d0, min(d1, n) + 1)
            gid.append(np.full(len(d), g))
            keys.append(d)
            vals.append(d / n * omega)
        return count_features(
            np.concatenate(gid), np.concatenate(keys), len(X), np.concatenate(vals)
        )

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        X, Y = example_graphs()
        return [(cls(), X, Y), (cls((1, 3)), X, Y)]


class LovaszTheta(_GraphKernel):
    r"""Lovász-theta kernel (Johansson et al., ICML 2014, section 3.1).

    The subset number is the Lovász value of :math:`S` under the optimal orthonormal
    representation :math:`U` of the whole graph (:func:`kernelkit.solvers._theta.lovasz_theta`:
    unit vectors, orthogonal on non-adjacent vertices, handle :math:`c` with
    :math:`1/(c^T u_i)^2 = \vartheta(G)`):

    .. math:: \vartheta_S(G) = \min_{\|c\| = 1} \max_{i \in S} \frac{1}{(c^T u_i)^2}
              = \max_{\alpha \ge 0}\ 2 e^T\alpha - \alpha^T (U^T U)_{SS}\, \alpha,

    the squared secant of the half-angle of the minimum cone enclosing :math:`\{u_i\}_{i \in
    S}` (:func:`kernelkit.solvers._theta.max_margin_values`; :math:`\vartheta_V = \vartheta(G)`).
    :math:`\phi_d` is the mean of :math:`\vartheta_S` over ``n_samples`` subsets in all,
    allocated to the sizes as GraKeL does (:func:`subset_sample_sizes`), and over *all*
    subsets of a size when there are no more of them than samples (exact).  The subsets of
    size :math:`d` of an :math:`n`-vertex graph are drawn by
    ``numpy.random.default_rng([random_state, n, d])``: a function of the graph alone, so
    separately featurised batches agree.

    GraKeL 0.1.11 differs in three ways, each checked in the tests: its SDP constrains the
    non-edges, so its representation is that of the complement graph (its :math:`\vartheta`
    of :math:`K_n` is :math:`n`); it averages the cosine :math:`\min_i c^T u_i` of the cone
    instead of :math:`\vartheta_S = 1/\cos^2`; and its cone comes from an approximate Welzl
    recursion with tolerance 0.1.

    Parameters
    ----------
    n_samples : int
        Number of sampled subsets per graph (GraKeL's ``n_samples``).
    subsets_size_range : tuple of int
        Subset sizes :math:`(d_0, d_1)` (GraKeL's ``subsets_size_range``).
    random_state : int
        Seed of the subset draws.
    """

    def __init__(
        self,
        n_samples: int = 50,
        subsets_size_range: tuple[int, int] = (2, 8),
        *,
        random_state: int = 0,
    ):
        super().__init__()
        self.n_samples = check_int(n_samples, name="n_samples", minimum=1)
        self.sizes_ = _check_range(subsets_size_range)
        self.subsets_size_range = subsets_size_range
        self.random_state = check_int(random_state, name="random_state", minimum=0)
        self.node_label = None
        self.edge_label = None

    def subsets(self, n: int) -> dict[int, np.ndarray]:
        """The vertex subsets of an ``n``-vertex graph: size ``d`` -> array ``(m_d, d)``."""
        out = {}
        for d, m in subset_sample_sizes(n, self.sizes_, self.n_samples).items():
            if math.comb(n, d) <= m:
                out[d] = np.array(list(itertools.combinations(range(n), d)), dtype=np.int64)
            else:
                rng = np.random.default_rng([self.random_state, n, d])
                out[d] = np.argsort(rng.random((m, n)), axis=1)[:, :d]
        return out

    def features(self, X: GraphBatch) -> SparseFeatures:
        """:math:`\\phi_d` (mean :math:`\\vartheta_S` over the subsets of size ``d``)."""
        cache: dict[int, dict[int, np.ndarray]] = {}
        blocks: dict[int, list[np.ndarray]] = {}  # size d -> subset Grams of every graph
        owner: dict[int, list[int]] = {}
        for g in range(len(X)):
            n = int(X.n_nodes[g])
            subsets = cache.get(n)
            if subsets is None:
                subsets = cache[n] = self.subsets(n)
            gram = lovasz_theta(X.adjacency(g).toarray()).gram
            for d, S in subsets.items():
                blocks.setdefault(d, []).append(gram[S[:, :, None], S[:, None, :]])
                owner.setdefault(d, []).extend([g] * len(S))
        gid, keys, vals = [], [], []
        for d, grams in blocks.items():
            theta_S = max_margin_values(np.concatenate(grams), tol=_QP_TOL)
            who = np.asarray(owner[d])
            counts = np.bincount(who, minlength=len(X))
            sums = np.bincount(who, weights=theta_S, minlength=len(X))
            has = np.flatnonzero(counts)
            gid.append(has)
            keys.append(np.full(len(has), d))
            vals.append(sums[has] / counts[has])
        if not gid:
            return count_features(np.zeros(0, np.int64), np.zeros(0, np.int64), len(X))
        return count_features(
            np.concatenate(gid), np.concatenate(keys), len(X), np.concatenate(vals)
        )

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        X, Y = example_graphs()
        return [(cls(), X, Y), (cls(10, (1, 3), random_state=3), X, Y)]
