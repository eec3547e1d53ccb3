"""Label hierarchies for the Table 3 analogue (Ma et al. ICML 2020, sections 6 and 7.3).

Implications come from the tree (child => parent); exclusions are taken between siblings
(children of the same parent), as in the paper: we took siblings (of the same
parent) as exclusion constraints" (section 7.3).
Real molecules break many of these exclusions (an aromatic chlorine is both ``Halogen.Aromatic``
and ``Halogen.NotFluorine``); :meth:`Hierarchy.consistent_exclusions` keeps the sibling pairs
that never co-occur in given (training) labels.  Two datasets:

* the RDKit functional-group hierarchy (``../shared/data/functional_groups``) on the molecules
  of ``../shared/data/solubility``, labels from ``FunctionalGroups.CreateMolFingerprint``
  (a molecule has a group when its count is positive);
* Reuters-21578 *grain* and *corn* (``../shared/data/reuters_grain_corn``): corn => grain.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import sip_common as common


@dataclass
class Hierarchy:
    """Labels with logic: ``implications`` (child, parent) and ``exclusions`` (a, b) as indices."""

    labels: list[str]
    implications: list[tuple[int, int]]
    exclusions: list[tuple[int, int]]

    @classmethod
    def from_parents(cls, parents: dict[str, str]) -> Hierarchy:
        """Build from ``{label: parent label or ""}``; parents must be labels of the dict.

        Exclusions join every two children of the same parent (roots have no parent, so no
        exclusion joins two roots).
        """
        labels = list(parents)
        index = {lab: i for i, lab in enumerate(labels)}
        missing = sorted({p for p in parents.values() if p and p not in index})
        if missing:
            raise ValueError(f"parents: labels {missing} are parents but not labels themselves")
        implications = [(index[c], index[p]) for c, p in parents.items() if p]
        by_parent: dict[str, list[int]] = {}
        for c, p in parents.items():
            if p:
                by_parent.setdefault(p, []).append(index[c])
        exclusions = [pair for kids in by_parent.values() for pair in combinations(kids, 2)]
        return cls(labels, implications, exclusions)

    def consistent_exclusions(self, Y: np.ndarray) -> Hierarchy:
        """The same hierarchy without the exclusions that some row of ``Y`` breaks."""
        Y = np.asarray(Y).astype(bool)
        kept = [(a, b) for a, b in self.exclusions if not (Y[:, a] & Y[:, b]).any()]
        return Hierarchy(self.labels, self.implications, kept)

    def violations(self, Y: np.ndarray) -> dict[str, np.ndarray]:
        """Per-constraint counts of rows of a 0/1 label matrix that break it.

        An implication ``c => p`` is broken by ``Y[c] = 1, Y[p] = 0``; an exclusion ``a, b`` by
        ``Y[a] = Y[b] = 1``.
        """
        Y = np.asarray(Y).astype(bool)
        imp = np.array([(Y[:, c] & ~Y[:, p]).sum() for c, p in self.implications], dtype=int)
        exc = np.array([(Y[:, a] & Y[:, b]).sum() for a, b in self.exclusions], dtype=int)
        return {"implication": imp, "exclusion": exc}

    def rows_violating(self, Y: np.ndarray) -> dict[str, int]:
        """Number of rows breaking at least one implication / one exclusion."""
        Y = np.asarray(Y).astype(bool)
        imp = np.zeros(len(Y), bool)
        for c, p in self.implications:
            imp |= Y[:, c] & ~Y[:, p]
        exc = np.zeros(len(Y), bool)
        for a, b in self.exclusions:
            exc |= Y[:, a] & Y[:, b]
        return {"implication": int(imp.sum()), "exclusion": int(exc.sum())}


def functional_group_labels(min_frequency: float) -> tuple[list[str], Hierarchy, np.ndarray]:
    """SMILES of the 1282 solubility molecules, the hierarchy and the 0/1 label matrix.

    Keeps the groups present in at least ``min_frequency`` of the molecules; the kept set is
    closed under parents (a kept child keeps its parent), so every implication stays inside.
    """
    from rdkit import Chem, RDLogger
    from rdkit.Chem import FunctionalGroups

    RDLogger.DisableLog("rdApp.*")
    table = data_rows(common.data_path("functional_groups", "functional_groups.csv"))
    roots = FunctionalGroups.BuildFuncGroupHierarchy(
        fileNm=str(common.data_path("functional_groups", "Functional_Group_Hierarchy.txt"))
    )
    order = _preorder(roots)
    file_order = [r["label"] for r in table]
    if order != file_order:
        raise RuntimeError("RDKit's fingerprint order differs from functional_groups.csv")
    smiles = [r["smiles"] for r in data_rows(common.data_path("solubility", "solubility.csv"))]
    counts = np.array(
        [FunctionalGroups.CreateMolFingerprint(Chem.MolFromSmiles(s), roots) for s in smiles]
    )
    present = counts > 0
    parent = {r["label"]: r["parent"] for r in table}
    keep = {lab for lab, f in zip(file_order, present.mean(0), strict=True) if f >= min_frequency}
    for lab in list(keep):
        while parent[lab]:
            lab = parent[lab]
            keep.add(lab)
    kept = [lab for lab in file_order if lab in keep]
    hierarchy = Hierarchy.from_parents({lab: parent[lab] for lab in kept})
    Y = present[:, [file_order.index(lab) for lab in kept]].astype(np.int64)
    return smiles, hierarchy, Y


def reuters_labels() -> tuple[list[str], Hierarchy, np.ndarray, np.ndarray]:
    """Texts (train then test), the grain ⊃ corn hierarchy, labels, and the source split."""
    texts, labels, split = [], [], []
    for part in ("train", "test"):
        for r in data_rows(
            common.data_path("reuters_grain_corn", f"reuters_grain_corn_{part}.csv")
        ):
            texts.append(r["text"])
            labels.append((int(r["grain"]), int(r["corn"])))
            split.append(part)
    hierarchy = Hierarchy.from_parents({"grain": "", "corn": "grain"})
    return texts, hierarchy, np.array(labels, dtype=np.int64), np.array(split)


def data_rows(path: object) -> list[dict[str, str]]:
    csv.field_size_limit(1 << 24)
    with open(str(path), newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _preorder(nodes: list) -> list[str]:
    out: list[str] = []
    for node in nodes:
        out.append(node.label)
        out.extend(_preorder(node.children))
    return out
