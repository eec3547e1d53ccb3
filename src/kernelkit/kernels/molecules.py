"""Kernels between molecules on Morgan fingerprints: Tanimoto and MinMax.

Course part 2, section 4 (explicit-feature baselines, fingerprints); Ralaivola, Swamidass,
Saigo & Baldi, "Graph kernels for chemical informatics", Neural Networks 18 (2005), section
2.3.  Inputs are SMILES strings, RDKit ``Mol`` objects or a
:class:`~kernelkit.data.molecules.MoleculeBatch`; RDKit is the optional ``chem`` extra.
Graph kernels (:class:`~kernelkit.kernels.graphs.WeisfeilerLehman`,
:class:`~kernelkit.kernels.graphs.ShortestPath`, :class:`~kernelkit.kernels.graphs.RandomWalk`)
take molecules directly too, through their heavy-atom graphs.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import torch

from kernelkit.data.graphs import hash_combine
from kernelkit.data.molecules import as_molecule_batch
from kernelkit.kernels.base import Batch, Kernel
from kernelkit.kernels.features import SparseFeatures, sparse_feature_gram
from kernelkit.utils.errors import InputError
from kernelkit.utils.kinds import InputKind
from kernelkit.utils.validation import check_int

__all__ = ["MinMax", "Tanimoto", "tanimoto_from_features"]

_EXAMPLE_X = ["CCO", "CCCO", "c1ccccc1O", "CC(=O)O", "CCN(CC)CC", "C1CCCCC1", "OCC(O)CO", "C"]
_EXAMPLE_Y = ["CCOC", "c1ccccc1N", "CC(C)(C)O"]


def _row_sq_norms(F: SparseFeatures) -> np.ndarray:
    sq = np.zeros(len(F))
    nz = np.diff(F.indptr) > 0
    if len(F.values):
        sq[nz] = np.add.reduceat(F.values**2, F.indptr[:-1][nz])
    return sq


def tanimoto_from_features(FX: SparseFeatures, FY: SparseFeatures) -> torch.Tensor:
    r"""``<a, b> / (|a|^2 + |b|^2 - <a, b>)`` for all rows of two sparse feature batches.

    Items whose features are all zero get similarity 0 (also with themselves), the value of
    the convergent series below at :math:`a = 0`.
    """
    G = sparse_feature_gram(FX, FY)
    nx_ = torch.as_tensor(_row_sq_norms(FX))
    ny_ = nx_ if FY is FX else torch.as_tensor(_row_sq_norms(FY))
    den = nx_[:, None] + ny_[None, :] - G
    return torch.where(den > 0, G / den.clamp_min(1e-300), 0.0)


class _FingerprintKernel(Kernel):
    input_kind: ClassVar[InputKind] = InputKind.MOLECULE
    differentiable: ClassVar[bool] = False

    def _init_fp(self, radius: int, n_bits: int | None, counts: bool) -> None:
        self.radius = check_int(radius, name="radius", minimum=0)
        self.n_bits = None if n_bits is None else check_int(n_bits, name="n_bits", minimum=1)
        if not isinstance(counts, (bool, np.bool_)):
            raise InputError(f"counts: expected True or False, got {counts!r}")
        self.counts = bool(counts)

    def fingerprints(self, X: Any) -> SparseFeatures:
        """Morgan fingerprints of molecules as :class:`SparseFeatures` (int64 keys)."""
        indptr, keys, values = as_molecule_batch(X, name="X").fingerprints(
            radius=self.radius, n_bits=self.n_bits, counts=self.counts
        )
        return SparseFeatures(indptr, keys, values)

    def prepare(
        self, X: Any, *, dtype: torch.dtype | None = None, reference: bool = False
    ) -> SparseFeatures:
        """SMILES / Mol objects / MoleculeBatch -> their fingerprints (the prepared batch)."""
        if isinstance(X, SparseFeatures):
            if not len(X):
                raise InputError("X: expected at least one molecule, got 0")
            return X
        return self.fingerprints(X)

    def features(self, X: Batch) -> None:
        """``None``: the kernel is not a dot product of the fingerprints (see :meth:`block`)."""
        return None

    def block_diag(self, X: Batch) -> torch.Tensor:
        return torch.as_tensor((np.diff(X.indptr) > 0).astype(np.float64))


class Tanimoto(_FingerprintKernel):
    r"""Tanimoto kernel on Morgan fingerprints (bits or counts).

    .. math:: k(x, y) = \frac{\langle a, b\rangle}{\|a\|^2 + \|b\|^2 - \langle a, b\rangle},

    with :math:`a, b` the fingerprints of :math:`x, y` (Ralaivola et al. 2005, eq. 7; on bit
    vectors this is the Jaccard index :math:`|a \cap b| / |a \cup b|`, RDKit's
    ``TanimotoSimilarity``).  With ``counts=True`` it is the same formula on count vectors
    (note: RDKit's Tanimoto on count fingerprints is :class:`MinMax` instead).

    Positive definite (Gower 1971 for bits; in general): with :math:`s = \langle a, b\rangle`
    and :math:`c = \|a\|^2 + \|b\|^2`, :math:`k = \sum_{n \ge 1} (s / c)^n` where
    :math:`|s/c| \le 1/2`; :math:`1/c = \int_0^\infty e^{-t\|a\|^2} e^{-t\|b\|^2} dt` is p.d.
    (an integral of rank-one p.d. kernels), so :math:`s/c` is p.d. (Schur product) and so are
    its powers and their convergent sum with non-negative coefficients.

    Parameters
    ----------
    radius : int
        Morgan radius (``2`` ~ ECFP4).
    n_bits : int or None
        Folded fingerprint size; ``None``: unfolded (no bit collisions).
    counts : bool
        Count fingerprints instead of bits.
    """

    def __init__(self, radius: int = 2, n_bits: int | None = 2048, *, counts: bool = False):
        super().__init__()
        self._init_fp(radius, n_bits, counts)

    def block(self, X: Batch, Y: Batch) -> torch.Tensor:
        return tanimoto_from_features(X, Y)

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        return [
            (cls(), _EXAMPLE_X, _EXAMPLE_Y),
            (cls(1, 512, counts=True), _EXAMPLE_X, _EXAMPLE_Y),
            (cls(3, None), _EXAMPLE_X, _EXAMPLE_Y),
        ]


def unary_expansion(F: SparseFeatures) -> SparseFeatures:
    r"""Binary features ``[a_k >= t]`` for ``t = 1..a_k`` of non-negative integer counts.

    :math:`\sum_k \min(a_k, b_k) = \langle u(a), u(b)\rangle`, which makes the MinMax kernel a
    Tanimoto kernel of :math:`u(a)` (Ralaivola et al. 2005, section 2.3).
    """
    counts = np.rint(F.values).astype(np.int64)
    if (counts < 0).any() or not np.allclose(counts, F.values):
        raise InputError("X: MinMax needs non-negative integer counts")
    rows = np.repeat(np.arange(len(F)), np.diff(F.indptr))
    rep = np.repeat(np.arange(len(counts)), counts)
    level = np.arange(len(rep)) - np.repeat(np.cumsum(counts) - counts, counts) + 1
    keys = hash_combine(F.keys[rep], level).view(np.int64)
    g = rows[rep]
    order = np.lexsort((keys, g))
    indptr = np.searchsorted(g[order], np.arange(len(F) + 1)).astype(np.int64)
    return SparseFeatures(indptr, keys[order], np.ones(len(order)))


class MinMax(_FingerprintKernel):
    r"""MinMax kernel on Morgan count fingerprints.

    .. math:: k(x, y) = \frac{\sum_k \min(a_k, b_k)}{\sum_k \max(a_k, b_k)}

    (Ralaivola et al. 2005, eq. 8).  For bit fingerprints it equals :class:`Tanimoto`; on
    counts it equals RDKit's ``TanimotoSimilarity`` of count fingerprints.  Positive definite:
    with the unary expansion :math:`u` (:func:`unary_expansion`),
    :math:`\sum \min = \langle u(a), u(b)\rangle` and :math:`\sum \max = \|u(a)\|^2 +
    \|u(b)\|^2 - \langle u(a), u(b)\rangle`, so MinMax is the Tanimoto kernel of :math:`u`,
    p.d. as shown in :class:`Tanimoto`.

    Parameters
    ----------
    radius : int
        Morgan radius.
    n_bits : int or None
        Folded fingerprint size; ``None``: unfolded.
    counts : bool
        Count fingerprints (default ``True``; ``False`` gives the bit Tanimoto kernel).
    """

    def __init__(self, radius: int = 2, n_bits: int | None = 2048, *, counts: bool = True):
        super().__init__()
        self._init_fp(radius, n_bits, counts)

    def block(self, X: Batch, Y: Batch) -> torch.Tensor:
        UX = unary_expansion(X)
        UY = UX if Y is X else unary_expansion(Y)
        return tanimoto_from_features(UX, UY)

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        return [(cls(), _EXAMPLE_X, _EXAMPLE_Y), (cls(3, None), _EXAMPLE_X, _EXAMPLE_Y)]
