"""Molecules (SMILES strings or RDKit molecules) as labelled graphs and as fingerprints.

RDKit is optional (the ``chem`` extra) and imported only when molecules are actually parsed.

* :func:`parse_molecules` turns SMILES / RDKit ``Mol`` objects into ``Mol`` objects, naming the
  invalid SMILES and its index (RDKit's own stderr messages are silenced during the call).
* :meth:`MoleculeBatch.to_graphs` gives the heavy-atom graph as a
  :class:`~kernelkit.data.GraphBatch`: node label = atom symbol (``"C"``, ``"N"``, ...),
  edge label = RDKit bond type (``"SINGLE"``, ``"DOUBLE"``, ``"TRIPLE"``, ``"AROMATIC"``).
* :meth:`MoleculeBatch.fingerprints` gives Morgan (ECFP-like) fingerprints (Rogers & Hahn,
  "Extended-connectivity fingerprints", J. Chem. Inf. Model. 50, 2010), atom-pair and
  topological-torsion fingerprints (bits or counts, folded to ``n_bits`` or unfolded,
  ``n_bits=None``, keys = RDKit's identifiers), MACCS keys, RDKit's fragment counts and
  "fragprints", Morgan bits and fragment counts side by side (GAUCHE's representation,
  Griffiths et al., NeurIPS 2023, section 3), and linear-path fingerprints (RDKit's
  path-based fingerprint without branched subgraphs, the linear-path features of Ralaivola et
  al., Neural Networks 18, 2005, section 2.1) (:data:`FINGERPRINTS`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from kernelkit.data._graphs import GraphBatch, label_codes
from kernelkit.utils._errors import InputError
from kernelkit.utils._optional import require

__all__ = [
    "InvalidRecordsError",
    "MoleculeBatch",
    "as_molecule_batch",
    "invalid_smiles",
    "is_molecule_input",
    "parse_molecules",
    "standardize_smiles",
]


def _chem() -> Any:
    return require("rdkit.Chem", purpose="parsing molecules (SMILES / RDKit)")


@contextmanager
def _quiet_rdkit() -> Iterator[None]:
    """Silence RDKit's logging to stderr for the duration of the block."""
    rdbase = require("rdkit.rdBase", purpose="parsing molecules (SMILES / RDKit)")
    blocker = rdbase.BlockLogs() if hasattr(rdbase, "BlockLogs") else None
    try:
        yield
    finally:
        del blocker


def _is_mol(x: Any) -> bool:
    return type(x).__name__ == "Mol" and type(x).__module__.startswith("rdkit")


def is_molecule_input(X: Any) -> bool:
    """Whether ``X`` looks like molecules: a MoleculeBatch, or a list of SMILES / RDKit Mols."""
    if isinstance(X, MoleculeBatch):
        return True
    if isinstance(X, (str, bytes)) or not hasattr(X, "__len__") or not hasattr(X, "__getitem__"):
        return False
    try:
        first = next(iter(X))
    except (StopIteration, TypeError):
        return False
    return isinstance(first, (str, np.str_)) or _is_mol(first)


def invalid_smiles(smiles: Sequence[str]) -> list[int]:
    """Positions of the strings RDKit does not parse as a molecule with at least one atom."""
    Chem = _chem()
    bad = []
    with _quiet_rdkit():
        for i, text in enumerate(smiles):
            mol = Chem.MolFromSmiles(str(text)) if text else None
            if mol is None or mol.GetNumAtoms() == 0:
                bad.append(i)
    return bad


class InvalidRecordsError(InputError):
    """Records that do not parse as the kind of input: ``indices`` holds their positions."""

    def __init__(self, message: str, indices: list[int]):
        super().__init__(message)
        self.indices = indices


_SHOWN = 5


def parse_molecules(X: Any, *, name: str = "X", allow_empty: bool = False) -> list[Any]:
    """Parse SMILES strings (or pass RDKit ``Mol`` objects through) into a list of ``Mol``.

    Raises
    ------
    InvalidRecordsError
        SMILES RDKit cannot parse (or, unless ``allow_empty``, molecules without atoms): their
        count and the first five with their index.
    InputError
        For an empty list or an item that is neither a string nor a ``Mol``.
    """
    if hasattr(X, "tolist") and not isinstance(X, (str, bytes)):
        X = X.tolist()
    if isinstance(X, (str, bytes)) or not isinstance(X, Sequence):
        raise InputError(
            f"{name}: expected a list of SMILES strings or RDKit molecules, got {type(X).__name__}"
        )
    if not len(X):
        raise InputError(f"{name}: expected at least one molecule, got an empty list")
    Chem = _chem()
    mols = []
    bad = []
    with _quiet_rdkit():
        for i, x in enumerate(X):
            if isinstance(x, (str, np.str_)):
                mol = Chem.MolFromSmiles(str(x))
            elif _is_mol(x):
                mol = x
            else:
                raise InputError(
                    f"{name}[{i}]: expected a SMILES string or an RDKit Mol, got {type(x).__name__}"
                )
            if mol is None or (not allow_empty and mol.GetNumAtoms() == 0):
                bad.append(i)
            mols.append(mol)
    if bad:
        shown = "; ".join(
            f"{name}[{i}]: invalid SMILES {str(X[i])!r} (RDKit could not parse it)"
            if mols[i] is None
            else f"{name}[{i}]: molecule {X[i]!r} has no atoms"
            for i in bad[:_SHOWN]
        )
        first = f" (first {_SHOWN} shown)" if len(bad) > _SHOWN else ""
        raise InvalidRecordsError(
            f"{len(bad)} of {len(X)} records of {name} are not valid molecules{first}: {shown}; "
            "fix them, or leave them out (on_error='skip')",
            bad,
        )
    return mols


def standardize_smiles(smiles: Sequence[str]) -> list[str]:
    """Canonical SMILES of RDKit's standardisation: ``Cleanup`` (normalisation of functional
    groups, metals disconnected), ``FragmentParent`` (the largest organic fragment: salts and
    solvents removed) and ``Uncharger`` (neutralised where possible); RDKit's
    ``rdMolStandardize``, after the protocol of Bento et al., J. Cheminform. 12, 2020.
    Strings RDKit cannot parse are returned unchanged (the readers name them)."""
    Chem = _chem()
    standardize = require(
        "rdkit.Chem.MolStandardize.rdMolStandardize", purpose="standardising molecules"
    )
    uncharger = standardize.Uncharger()
    out = []
    with _quiet_rdkit():
        for text in smiles:
            mol = Chem.MolFromSmiles(text) if text else None
            if mol is None:
                out.append(text)
                continue
            mol = uncharger.uncharge(standardize.FragmentParent(standardize.Cleanup(mol)))
            out.append(Chem.MolToSmiles(mol))
    return out


@dataclass(eq=False)
class MoleculeBatch:
    """A list of parsed RDKit molecules with graph and fingerprint views.

    Supports ``len``, ``batch[i]``, ``batch[i:j]`` and ``batch[index_array]`` (all give a
    ``MoleculeBatch``).
    """

    mols: list[Any]

    dtype = None

    @classmethod
    def from_molecules(cls, X: Any, *, name: str = "X") -> MoleculeBatch:
        """Parse SMILES / Mol objects (see :func:`parse_molecules`)."""
        return cls(parse_molecules(X, name=name))

    def __len__(self) -> int:
        return len(self.mols)

    def __getitem__(self, idx: Any) -> MoleculeBatch:
        if isinstance(idx, (int, np.integer)):
            idx = [int(idx)]
        elif not isinstance(idx, slice):
            idx = np.asarray(idx.cpu() if hasattr(idx, "cpu") else idx)
        rows = np.atleast_1d(np.arange(len(self))[idx])
        return MoleculeBatch([self.mols[i] for i in rows])

    def to_graphs(self) -> GraphBatch:
        """Heavy-atom graphs: node label = atom symbol, edge label = bond type."""
        counts, src, dst, atoms, bonds = [], [], [], [], []
        offset = 0
        for mol in self.mols:
            n = mol.GetNumAtoms()
            atoms.extend(a.GetSymbol() for a in mol.GetAtoms())
            for b in mol.GetBonds():
                src.append(b.GetBeginAtomIdx() + offset)
                dst.append(b.GetEndAtomIdx() + offset)
                bonds.append(str(b.GetBondType()))
            counts.append(n)
            offset += n
        return GraphBatch.from_arrays(
            counts,
            np.asarray(src, dtype=np.int64),
            np.asarray(dst, dtype=np.int64),
            node_labels=label_codes(atoms),
            edge_labels=label_codes(bonds),
            node_label="atom symbol",
            edge_label="bond type",
        )

    def fingerprints(
        self,
        *,
        radius: int = 2,
        n_bits: int | None = 2048,
        counts: bool = False,
        kind: str = "morgan",
        max_path: int = 7,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Fingerprints of RDKit's generators as CSR-like ``(indptr, keys, values)``.

        Parameters
        ----------
        radius : int
            Morgan radius (ECFP4 is ``radius=2``; used by ``kind="morgan"`` only).
        n_bits : int or None
            Folded size; ``None`` keeps RDKit's unfolded identifiers as keys (MACCS: its 167
            keys, whatever ``n_bits``).
        counts : bool
            Occurrence counts instead of bits (a bit is set where the count is positive); the
            fragment counts of ``"fragments"`` and ``"fragprints"`` are always counts.
        kind : {"morgan", "atom-pair", "torsion", "maccs", "fragments", "fragprints", "paths"}
            See :data:`FINGERPRINTS`.
        max_path : int
            Longest linear path, in bonds (``kind="paths"`` only).
        """
        if kind not in FINGERPRINTS:
            raise InputError(f"fingerprint: expected one of {FINGERPRINTS}, got {kind!r}")
        if kind == "maccs":
            return self._maccs()
        if kind == "fragments":
            return self._fragments(0)
        if kind == "fragprints":
            return _side_by_side(
                self.fingerprints(radius=radius, n_bits=n_bits, counts=counts),
                self._fragments(_UNFOLDED_KEYS if n_bits is None else n_bits),
            )
        gen = _generator(kind, radius, n_bits, max_path)
        indptr = [0]
        keys: list[np.ndarray] = []
        values: list[np.ndarray] = []
        for mol in self.mols:
            if n_bits is None:
                nz = gen.GetSparseCountFingerprint(mol).GetNonzeroElements()
            else:
                nz = gen.GetCountFingerprint(mol).GetNonzeroElements()
            k = np.fromiter(nz.keys(), dtype=np.int64, count=len(nz))
            v = np.fromiter(nz.values(), dtype=np.float64, count=len(nz))
            order = np.argsort(k)
            keys.append(k[order])
            values.append(v[order] if counts else np.ones(len(k)))
            indptr.append(indptr[-1] + len(k))
        return (
            np.asarray(indptr, dtype=np.int64),
            np.concatenate(keys) if keys else np.zeros(0, np.int64),
            np.concatenate(values) if values else np.zeros(0),
        )

    def _maccs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The 166 MACCS keys (RDKit's 167-bit vector, bit 0 unused) as bits."""
        maccs = require("rdkit.Chem.MACCSkeys", purpose="computing MACCS keys")
        on = [np.asarray(list(maccs.GenMACCSKeys(mol).GetOnBits()), np.int64) for mol in self.mols]
        indptr = np.concatenate([[0], np.cumsum([len(k) for k in on])]).astype(np.int64)
        keys = np.concatenate(on) if on else np.zeros(0, np.int64)
        return indptr, keys, np.ones(len(keys))

    def _fragments(self, offset: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Counts of RDKit's fragment patterns (the ``fr_`` entries of ``Descriptors.descList``,
        in its order) as CSR-like rows, the ``j``-th pattern under key ``offset + j``."""
        rows = [[f(mol) for f in _fragment_functions()] for mol in self.mols]
        dense = np.asarray(rows, dtype=np.float64).reshape(len(self.mols), -1)
        nz = dense > 0
        indptr = np.concatenate([[0], np.cumsum(nz.sum(axis=1))]).astype(np.int64)
        keys = offset + np.nonzero(nz)[1].astype(np.int64)
        return indptr, keys, dense[nz]

    def fingerprint_matrix(
        self,
        *,
        radius: int = 2,
        n_bits: int = 2048,
        counts: bool = False,
        dense: bool = False,
        kind: str = "morgan",
        max_path: int = 7,
    ) -> sp.csr_matrix | np.ndarray:
        """Folded fingerprints as a SciPy CSR matrix ``(n, n_bits)`` (or dense array;
        ``(n, 167)`` for MACCS)."""
        indptr, keys, values = self.fingerprints(
            radius=radius, n_bits=n_bits, counts=counts, kind=kind, max_path=max_path
        )
        width = {"maccs": MACCS_BITS, "fragments": 0}.get(kind, n_bits)
        width += len(_fragment_functions()) if kind in ("fragments", "fragprints") else 0
        m = sp.csr_matrix((values, keys, indptr), shape=(len(self), width))
        return m.toarray() if dense else m


FINGERPRINTS = ("morgan", "atom-pair", "torsion", "maccs", "fragments", "fragprints", "paths")
"""Fingerprints of :meth:`MoleculeBatch.fingerprints`: Morgan / ECFP (Rogers & Hahn 2010),
atom pairs (Carhart, Smith & Venkataraghavan, J. Chem. Inf. Comput. Sci. 25, 1985),
topological torsions (Nilakantan et al., J. Chem. Inf. Comput. Sci. 27, 1987), all from
RDKit's ``rdFingerprintGenerator``, the MACCS structural keys (Durant et al., J. Chem.
Inf. Comput. Sci. 42, 2002; RDKit's ``MACCSkeys``), the counts of RDKit's 85 fragment
patterns (``rdkit.Chem.Fragments``, the ``fr_`` descriptors) and "fragprints": the Morgan
fingerprint (keys below ``n_bits``) followed by the fragment counts (keys ``n_bits + j``;
unfolded, ``2^32 + j``), the representation of GAUCHE's best Tanimoto GP (Griffiths et al.,
"GAUCHE: a library for Gaussian processes in chemistry", NeurIPS 2023, section 3), and
"paths": the linear paths of 1 to ``max_path`` bonds, each path (its atom and bond labels)
hashed to one key by RDKit's ``GetRDKitFPGenerator(branchedPaths=False,
numBitsPerFeature=1)``, the linear-path features of the Tanimoto kernel of Ralaivola et al.
(Neural Networks 18, 2005, section 2.1) used by Laforgue et al. (AISTATS 2019, section 5.2)."""

_UNFOLDED_KEYS = 1 << 32
"""First key above RDKit's unfolded (32-bit) fingerprint identifiers."""


def _fragment_functions() -> list[Any]:
    """RDKit's fragment counters, the ``fr_`` entries of ``Descriptors.descList`` in order."""
    desc = require("rdkit.Chem.Descriptors", purpose="counting fragments")
    return [f for name, f in desc.descList if name.startswith("fr_")]


def _side_by_side(
    *parts: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CSR-like rows of the same items, concatenated row by row (keys kept; the parts' keys
    are disjoint and each part's keys ascend, so the rows' keys ascend)."""
    indptr = sum(p[0] for p in parts)
    keys, values = [], []
    for i in range(len(indptr) - 1):
        for ptr, k, v in parts:
            keys.append(k[ptr[i] : ptr[i + 1]])
            values.append(v[ptr[i] : ptr[i + 1]])
    return indptr, np.concatenate(keys), np.concatenate(values)


MACCS_BITS = 167
"""Width of RDKit's MACCS bit vector (bit 0 unused)."""


def _generator(kind: str, radius: int, n_bits: int | None, max_path: int) -> Any:
    """RDKit's fingerprint generator of ``kind`` (folded to ``n_bits`` unless ``None``)."""
    gen_mod = require("rdkit.Chem.rdFingerprintGenerator", purpose="computing fingerprints")
    size = {} if n_bits is None else {"fpSize": n_bits}
    if kind == "morgan":
        return gen_mod.GetMorganGenerator(radius=radius, **size)
    if kind == "atom-pair":
        return gen_mod.GetAtomPairGenerator(**size)
    if kind == "paths":
        return gen_mod.GetRDKitFPGenerator(
            minPath=1, maxPath=max_path, branchedPaths=False, numBitsPerFeature=1, **size
        )
    return gen_mod.GetTopologicalTorsionGenerator(**size)


def as_molecule_batch(X: Any, *, name: str = "X") -> MoleculeBatch:
    """A :class:`MoleculeBatch` from itself, SMILES strings or RDKit molecules."""
    if isinstance(X, MoleculeBatch):
        if not len(X):
            raise InputError(f"{name}: expected at least one molecule, got 0")
        return X
    return MoleculeBatch.from_molecules(X, name=name)
