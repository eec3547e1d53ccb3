"""Kernels between molecules on RDKit fingerprints (Morgan, atom pairs, topological torsions,
MACCS keys, fragment counts, fragprints, linear paths): Tanimoto and MinMax.

Course part 2, section 4 (explicit-feature baselines, fingerprints); Ralaivola, Swamidass,
Saigo & Baldi, "Graph kernels for chemical informatics", Neural Networks 18 (2005), section
2.3.  Inputs are SMILES strings, RDKit ``Mol`` objects or a
:class:`~kernelkit.data.MoleculeBatch` (RDKit is the optional ``chem`` extra), or a
fingerprint matrix: a non-negative dense NumPy array, ``scipy.sparse`` matrix or tensor of
bits or counts from any tool, or any set / count data (:mod:`kernelkit.kernels._fingerprints`).
Graph kernels (:class:`~kernelkit.kernels.WeisfeilerLehman`,
:class:`~kernelkit.kernels.ShortestPath`, :class:`~kernelkit.kernels.RandomWalk`)
take molecules directly too, through their heavy-atom graphs.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
import torch

from kernelkit.data._molecules import FINGERPRINTS, as_molecule_batch
from kernelkit.kernels._base import Batch, Kernel
from kernelkit.kernels._features import SparseFeatures
from kernelkit.kernels._fingerprints import (
    FingerprintMatrix,
    as_fingerprint_matrix,
    is_fingerprint_matrix,
    minmax_csr,
    sparse_pair,
    tanimoto_csr,
)
from kernelkit.utils._errors import InputError
from kernelkit.utils._kinds import InputKind
from kernelkit.utils._validation import check_int

__all__ = ["MinMax", "Tanimoto", "tanimoto_from_features"]

_EXAMPLE_X = ["CCO", "CCCO", "c1ccccc1O", "CC(=O)O", "CCN(CC)CC", "C1CCCCC1", "OCC(O)CO", "C"]
_EXAMPLE_Y = ["CCOC", "c1ccccc1N", "CC(C)(C)O"]


def _example_matrices(*, binary: bool) -> tuple[np.ndarray, sp.csr_matrix]:
    """A dense ``(10, 40)`` and a sparse ``(5, 40)`` fingerprint matrix (bits or counts)."""
    rng = np.random.default_rng(0)
    M = rng.poisson(0.4, size=(15, 40)).astype(np.float64)
    if binary:
        M = (M > 0).astype(np.float64)
    return M[:10], sp.csr_matrix(M[10:])


def tanimoto_from_features(FX: SparseFeatures, FY: SparseFeatures) -> torch.Tensor:
    r"""``<a, b> / (|a|^2 + |b|^2 - <a, b>)`` for all rows of two sparse feature batches.

    Items whose features are all zero get similarity 0 (also with themselves), the value of
    the convergent series of :class:`Tanimoto` at :math:`a = 0`.
    """
    return tanimoto_csr(*sparse_pair(FX, FY))


class _FingerprintKernel(Kernel):
    input_kind: ClassVar[InputKind] = InputKind.MOLECULE
    differentiable: ClassVar[bool] = False

    def _init_fp(
        self, radius: int, n_bits: int | None, counts: bool, fingerprint: str, max_path: int
    ) -> None:
        self.radius = check_int(radius, name="radius", minimum=0)
        self.max_path = check_int(max_path, name="max_path", minimum=1)
        self.n_bits = None if n_bits is None else check_int(n_bits, name="n_bits", minimum=1)
        if not isinstance(counts, (bool, np.bool_)):
            raise InputError(f"counts: expected True or False, got {counts!r}")
        self.counts = bool(counts)
        if fingerprint not in FINGERPRINTS:
            raise InputError(f"fingerprint: expected one of {FINGERPRINTS}, got {fingerprint!r}")
        if fingerprint == "maccs" and self.counts:
            raise InputError("counts: MACCS keys are bits; use counts=False with them")
        self.fingerprint = fingerprint

    def fingerprints(self, X: Any) -> SparseFeatures:
        """The fingerprints of molecules as :class:`SparseFeatures` (int64 keys)."""
        indptr, keys, values = as_molecule_batch(X, name="X").fingerprints(
            radius=self.radius,
            n_bits=self.n_bits,
            counts=self.counts,
            kind=self.fingerprint,
            max_path=self.max_path,
        )
        return SparseFeatures(indptr, keys, values)

    def prepare(
        self, X: Any, *, dtype: torch.dtype | None = None, reference: bool = False
    ) -> SparseFeatures | FingerprintMatrix:
        """The prepared batch: a fingerprint matrix as validated CSR, molecules as fingerprints.

        SMILES / Mol objects / MoleculeBatch become their fingerprints (``fingerprint``)
        (:meth:`fingerprints`); a dense or ``scipy.sparse`` non-negative matrix (or tensor)
        is taken as given, rows = items (``radius``, ``n_bits`` and ``counts`` then play no
        part).
        """
        if isinstance(X, SparseFeatures):
            if not len(X):
                raise InputError("X: expected at least one molecule, got 0")
            return X
        if is_fingerprint_matrix(X):
            return as_fingerprint_matrix(X, name="X")
        return self.fingerprints(X)

    def features(self, X: Batch) -> None:
        """``None``: the kernel is not a dot product of the fingerprints (see :meth:`block`)."""
        return None

    def block_diag(self, X: Batch) -> torch.Tensor:
        nonzero = X.nonzero_rows() if isinstance(X, FingerprintMatrix) else np.diff(X.indptr) > 0
        return torch.as_tensor(nonzero.astype(np.float64))


class Tanimoto(_FingerprintKernel):
    r"""Tanimoto kernel on molecular fingerprints (Morgan by default; bits or counts).

    .. math:: k(x, y) = \frac{\langle a, b\rangle}{\|a\|^2 + \|b\|^2 - \langle a, b\rangle},

    with :math:`a, b` the fingerprints of :math:`x, y` (Ralaivola et al. 2005, eq. 7; on bit
    vectors this is the Jaccard index :math:`|a \cap b| / |a \cup b|`, RDKit's
    ``TanimotoSimilarity``).  With ``counts=True`` it is the same formula on count vectors
    (note: RDKit's Tanimoto on count fingerprints is :class:`MinMax` instead).  On a
    fingerprint matrix (dense or ``scipy.sparse``) the formula is applied to its rows, by the
    sparse product :math:`A B^\top` (:func:`~kernelkit.kernels._fingerprints.tanimoto_csr`).

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
    fingerprint : {"morgan", "atom-pair", "torsion", "maccs", "fragments", "fragprints", "paths"}
        RDKit fingerprint of the molecules (:data:`kernelkit.data._molecules.FINGERPRINTS`);
        ``radius`` applies to Morgan only, MACCS keys are 167 bits whatever ``n_bits``;
        ``"fragprints"`` is the Morgan fingerprint followed by the counts of RDKit's 85
        fragment patterns (``counts`` applies to the Morgan part; ``Tanimoto(3,
        fingerprint="fragprints")`` is the kernel of GAUCHE's best Tanimoto GP, Griffiths
        et al., NeurIPS 2023), ``"fragments"`` those counts alone, ``"paths"`` the linear
        paths of 1 to ``max_path`` bonds (``Tanimoto(fingerprint="paths")`` is the linear-path
        Tanimoto kernel of Ralaivola et al. 2005, section 2.1, used by Laforgue et al.,
        AISTATS 2019, section 5.2).
    max_path : int
        Longest linear path in bonds (``fingerprint="paths"`` only; RDKit's default 7).
    """

    def __init__(
        self,
        radius: int = 2,
        n_bits: int | None = 2048,
        *,
        counts: bool = False,
        fingerprint: str = "morgan",
        max_path: int = 7,
    ):
        super().__init__()
        self._init_fp(radius, n_bits, counts, fingerprint, max_path)

    def block(self, X: Batch, Y: Batch) -> torch.Tensor:
        return tanimoto_csr(*sparse_pair(X, Y))

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        return [
            (cls(), _EXAMPLE_X, _EXAMPLE_Y),
            (cls(1, 512, counts=True), _EXAMPLE_X, _EXAMPLE_Y),
            (cls(3, None), _EXAMPLE_X, _EXAMPLE_Y),
            (cls(fingerprint="atom-pair"), _EXAMPLE_X, _EXAMPLE_Y),
            (cls(fingerprint="maccs"), _EXAMPLE_X, _EXAMPLE_Y),
            (cls(3, fingerprint="fragprints"), _EXAMPLE_X, _EXAMPLE_Y),
            (cls(fingerprint="paths", max_path=5), _EXAMPLE_X, _EXAMPLE_Y),
            (cls(), *_example_matrices(binary=True)),
        ]


class MinMax(_FingerprintKernel):
    r"""MinMax kernel on molecular count fingerprints (Morgan by default).

    .. math:: k(x, y) = \frac{\sum_k \min(a_k, b_k)}{\sum_k \max(a_k, b_k)}

    (Ralaivola et al. 2005, eq. 8).  For bit fingerprints it equals :class:`Tanimoto`; on
    counts it equals RDKit's ``TanimotoSimilarity`` of count fingerprints.  Positive definite:
    with the weighted level expansion :math:`u` (levels of
    :func:`~kernelkit.kernels._fingerprints.level_expansion` scaled by
    :math:`\sqrt{\delta_j}`; on integer counts the unary expansion of Ralaivola et al.),
    :math:`\sum \min = \langle u(a), u(b)\rangle` and :math:`\sum \max = \|u(a)\|^2 +
    \|u(b)\|^2 - \langle u(a), u(b)\rangle`, so MinMax is the Tanimoto kernel of :math:`u`,
    p.d. as shown in :class:`Tanimoto`.  Fingerprint matrices may hold any non-negative
    values (counts or real weights); the sparse computation is in
    :func:`~kernelkit.kernels._fingerprints.minmax_csr`.

    Parameters
    ----------
    radius : int
        Morgan radius.
    n_bits : int or None
        Folded fingerprint size; ``None``: unfolded.
    counts : bool
        Count fingerprints (default ``True``; ``False`` gives the bit Tanimoto kernel).
    fingerprint : {"morgan", "atom-pair", "torsion", "maccs", "fragments", "fragprints", "paths"}
        As in :class:`Tanimoto` (MACCS keys are bits: use ``counts=False``).
    max_path : int
        Longest linear path in bonds (``fingerprint="paths"`` only).
    """

    def __init__(
        self,
        radius: int = 2,
        n_bits: int | None = 2048,
        *,
        counts: bool = True,
        fingerprint: str = "morgan",
        max_path: int = 7,
    ):
        super().__init__()
        self._init_fp(radius, n_bits, counts, fingerprint, max_path)

    def block(self, X: Batch, Y: Batch) -> torch.Tensor:
        return minmax_csr(*sparse_pair(X, Y))

    @classmethod
    def _check_example(cls) -> list[tuple[Kernel, Any, Any]]:
        return [
            (cls(), _EXAMPLE_X, _EXAMPLE_Y),
            (cls(3, None), _EXAMPLE_X, _EXAMPLE_Y),
            (cls(fingerprint="torsion", n_bits=None), _EXAMPLE_X, _EXAMPLE_Y),
            (cls(fingerprint="paths", n_bits=None), _EXAMPLE_X, _EXAMPLE_Y),
            (cls(), *_example_matrices(binary=False)),
        ]
