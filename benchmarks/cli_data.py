"""Test inputs of real size for ``kernelkit autoencode`` (issue 13: finish on 10^3-10^4 records).

* ``molecules(n)``: the unique canonical SMILES of ESOL and of the Huuskonen solubility set
  (``../shared/data``: about 2300 molecules), completed to ``n`` with RDKit variants of them:
  one hydrogen of a random atom replaced by a methyl, fluoro, chloro or hydroxy group
  (sanitised, canonical, deduplicated), seeded.  The size and make-up of Lipophilicity (4200
  drug-like molecules).
* ``dna(n, length)``: sequences drawn from two order-2 Markov chains fitted on the promoter
  set's promoters and non-promoters (``class=+`` / ``class=-`` in the FASTA header), seeded;
  the size of the UCI splice set (3186 sequences of 60 nucleotides).

``python benchmarks/cli_data.py OUT_FOLDER [--data ../shared/data]`` writes
``molecules_4200.smi`` and ``dna_3186.fasta``; the shared data are read, never copied into
the repository.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
_GROUPS = ("C", "F", "Cl", "O")


def _seed_smiles(data: Path) -> list[str]:
    from rdkit import Chem, RDLogger

    RDLogger.DisableLog("rdApp.*")
    raw = []
    with (data / "esol" / "ESOL.csv").open(newline="") as fh:
        raw += [row["smiles"] for row in csv.DictReader(fh)]
    with (data / "solubility" / "solubility.csv").open(newline="") as fh:
        raw += [row["smiles"] for row in csv.DictReader(fh)]
    seen: dict[str, None] = {}
    for s in raw:
        mol = Chem.MolFromSmiles(s)
        if mol is not None and mol.GetNumAtoms() > 0:
            seen.setdefault(Chem.MolToSmiles(mol), None)
    return list(seen)


def _variant(smiles: str, rng: np.random.Generator) -> str | None:
    """``smiles`` with one hydrogen replaced by a random group (``None`` if none applies)."""
    from rdkit import Chem

    mol = Chem.RWMol(Chem.MolFromSmiles(smiles))
    sites = [a.GetIdx() for a in mol.GetAtoms() if a.GetTotalNumHs() > 0]
    if not sites:
        return None
    site = int(rng.choice(sites))
    group = mol.AddAtom(Chem.Atom(str(rng.choice(_GROUPS))))
    mol.AddBond(site, group, Chem.BondType.SINGLE)
    atom = mol.GetAtomWithIdx(site)
    atom.SetNoImplicit(False)
    atom.SetNumExplicitHs(max(0, atom.GetNumExplicitHs() - 1))
    try:
        Chem.SanitizeMol(mol)
    except (ValueError, RuntimeError):
        return None
    return Chem.MolToSmiles(mol)


def molecules(n: int, *, seed: int = 0, data: Path = DATA) -> list[str]:
    """``n`` distinct SMILES: the real ones first, then variants (see the module docstring)."""
    smiles = _seed_smiles(data)
    rng = np.random.default_rng(seed)
    known = set(smiles)
    while len(smiles) < n:
        new = _variant(smiles[int(rng.integers(len(smiles)))], rng)
        if new is not None and new not in known:
            known.add(new)
            smiles.append(new)
    return smiles[:n]


def _markov(seqs: list[str]) -> dict[str, np.ndarray]:
    counts: dict[str, np.ndarray] = {}
    for s in seqs:
        for i in range(2, len(s)):
            counts.setdefault(s[i - 2 : i], np.ones(4))["ACGT".index(s[i])] += 1
    return {k: v / v.sum() for k, v in counts.items()}


def dna(n: int, *, length: int = 60, seed: int = 0, data: Path = DATA) -> list[tuple[str, str]]:
    """``n`` (class, sequence) pairs from the promoter set's two Markov chains."""
    records: dict[str, list[str]] = {"+": [], "-": []}
    name = None
    for line in (data / "promoter" / "promotergene.fasta").read_text().splitlines():
        if line.startswith(">"):
            name = line.split("class=")[1].strip()
        elif name is not None:
            records[name].append(line.strip().upper())
    chains = {c: _markov(s) for c, s in records.items()}
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        c = "+-"[i % 2]
        start = records[c][int(rng.integers(len(records[c])))][:2]
        seq = list(start)
        while len(seq) < length:
            p = chains[c].get("".join(seq[-2:]), np.full(4, 0.25))
            seq.append("ACGT"[int(rng.choice(4, p=p))])
        out.append((c, "".join(seq)))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder to write the files into")
    parser.add_argument("--molecules", type=int, default=4200)
    parser.add_argument("--sequences", type=int, default=3186)
    parser.add_argument("--data", type=Path, default=DATA, help="the shared data folder")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    smi = args.out / f"molecules_{args.molecules}.smi"
    smi.write_text(
        "".join(
            f"{s} mol{i + 1}\n" for i, s in enumerate(molecules(args.molecules, data=args.data))
        )
    )
    fasta = args.out / f"dna_{args.sequences}.fasta"
    fasta.write_text(
        "".join(
            f">seq{i + 1} class={c}\n{s}\n"
            for i, (c, s) in enumerate(dna(args.sequences, data=args.data))
        )
    )
    print(f"wrote {smi} and {fasta}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
