"""GAUCHE's regression protocol on ESOL: ``GaussianProcessRegressor()`` with defaults against
GAUCHE's best Tanimoto GP, on the same 20 random 80/20 splits.

Protocol of GAUCHE's ``benchmarks/run_benchmark.py`` (Griffiths et al., "GAUCHE: a library
for Gaussian processes in chemistry", NeurIPS 2023): split ``i`` is scikit-learn's
``train_test_split(test_size=0.2, random_state=i)``, ``i = 0 ... 19``; RMSE, MAE and R^2 on
the test set in the units of ``y`` (log10 mol/L); the NLPD is GAUCHE's: minus the log density
of the test targets under the joint predictive distribution (the posterior covariance of
``f`` plus the noise), divided by the test size, on targets standardised by the training
set's mean and deviation.  Means are reported with GAUCHE's spread (standard error,
``std / sqrt(20)``) and the standard deviation over the splits.

Models (every fit learns its hyper-parameters by marginal likelihood):

* ``default``: ``GaussianProcessRegressor()`` on the SMILES, every default;
* ``gauche``: GAUCHE's ``TanimotoGP`` on its best representation, reproduced:
  ``GaussianProcessRegressor(Tanimoto(3, 2048, fingerprint="fragprints"), mean="constant",
  normalize_y=True)`` (ECFP radius 3, 2048 bits, and RDKit's 85 fragment counts; constant
  mean, scaled Tanimoto kernel and Gaussian noise on standardised targets, as GAUCHE's
  ``ConstantMean`` + ``ScaleKernel(TanimotoKernel())`` + ``GaussianLikelihood``);
* ``--extra``: further specs, e.g. ``--extra "tanimoto:radius=3,fingerprint=fragprints"``
  (defaults otherwise).

``--held-out``: only the ESOL molecules absent from ``../shared/data/solubility`` (RDKit
canonical SMILES), the set the default molecule kernel was chosen on (``docs/chemistry.md``),
so the defaults are scored on molecules they never saw; ``--write-data PATH`` saves that
subset as an ESOL-format CSV (``examples/bo_esol.py --data PATH`` runs on it).

``--target crippen``: a lipophilicity-like target in place of the measured solubility, RDKit's
Crippen logP of each molecule (Wildman and Crippen, J. Chem. Inf. Comput. Sci. 39, 1999): the
shared data hold no measured lipophilicity or hydration free energy (GAUCHE's Lipophilicity and
FreeSolv sets), so this computed, atom-additive octanol/water partition coefficient stands in.

Writes ``benchmarks/results/gauche_esol[_crippen][_held_out].json``.  One torch thread.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import time
from pathlib import Path

import numpy as np
import torch
from sklearn.model_selection import train_test_split

from kernelkit import GaussianProcessRegressor
from kernelkit.kernels import Tanimoto
from kernelkit.solvers import cholesky_factor
from kernelkit.solvers._cholesky import solve_triangular

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
DATA = SHARED / "esol" / "ESOL.csv"
CHOSEN_ON = SHARED / "solubility" / "solubility.csv"
RESULTS = Path(__file__).resolve().parent / "results"
TARGET = "measured log solubility in mols per litre"


def load(path: Path) -> tuple[np.ndarray, np.ndarray]:
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    return np.array([r["smiles"] for r in rows]), np.array([float(r[TARGET]) for r in rows])


def held_out(path: Path, write: Path | None) -> np.ndarray:
    """Mask of the ESOL rows whose molecule is not in the kernel-choice set ``CHOSEN_ON``
    (canonical SMILES), and the kept rows written to ``write`` when given."""
    from rdkit import Chem, RDLogger

    RDLogger.DisableLog("rdApp.*")

    def canonical(smiles: str) -> str | None:
        mol = Chem.MolFromSmiles(smiles)
        return None if mol is None else Chem.MolToSmiles(mol)

    with open(CHOSEN_ON, newline="") as fh:
        seen = {canonical(r["smiles"]) for r in csv.DictReader(fh)}
    with open(path, newline="") as fh:
        reader = csv.DictReader(fh)
        rows = list(reader)
    keep = np.array([canonical(r["smiles"]) not in seen for r in rows])
    if write is not None:
        with open(write, "w", newline="") as fh:
            out = csv.DictWriter(fh, fieldnames=reader.fieldnames)
            out.writeheader()
            out.writerows(r for r, k in zip(rows, keep, strict=True) if k)
    return keep


def crippen_logp(smiles: np.ndarray) -> np.ndarray:
    """RDKit's Crippen logP of each SMILES."""
    from rdkit import Chem
    from rdkit.Chem import Crippen

    return np.array([Crippen.MolLogP(Chem.MolFromSmiles(s)) for s in smiles])


def models(extra: list[str]) -> dict[str, GaussianProcessRegressor]:
    out = {
        "default": GaussianProcessRegressor(),
        "gauche": GaussianProcessRegressor(
            Tanimoto(3, 2048, fingerprint="fragprints"), mean="constant", normalize_y=True
        ),
    }
    out.update({spec: GaussianProcessRegressor(spec) for spec in extra})
    return out


def nlpd(gp: GaussianProcessRegressor, X: np.ndarray, y: np.ndarray, y_train: np.ndarray) -> float:
    """GAUCHE's NLPD: joint predictive density of the standardised test targets, per point."""
    mean, cov = gp.predict(X, return_cov=True)
    noise = float(gp.noise_) * float(gp._y_std) ** 2  # noise_ is of the normalised targets
    scale = float(np.std(y_train))
    C = torch.as_tensor(np.asarray(cov) + noise * np.eye(len(y))) / scale**2
    r = torch.as_tensor((y - np.asarray(mean)) / scale)
    # the jitter ladder when round-off leaves C indefinite (as GPyTorch's psd_safe_cholesky)
    factor = cholesky_factor((C + C.mT) / 2, name="predictive covariance")
    z = solve_triangular(factor.factor, r[:, None])[:, 0]
    logdet = float(factor.logdet())
    return 0.5 * (float(z @ z) + logdet + len(y) * math.log(2 * math.pi)) / len(y)


def summary(values: list[float]) -> dict[str, float]:
    a = np.asarray(values)
    return {
        "mean": float(a.mean()),
        "se": float(a.std() / math.sqrt(len(a))),
        "std": float(a.std()),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--splits", type=int, default=20)
    ap.add_argument("--extra", nargs="*", default=[])
    ap.add_argument("--held-out", action="store_true", help="molecules not in solubility.csv")
    ap.add_argument("--write-data", type=Path, help="save the held-out subset (CSV)")
    ap.add_argument("--target", choices=["measured", "crippen"], default="measured")
    args = ap.parse_args()
    torch.set_num_threads(1)
    smiles, y = load(args.data)
    if args.held_out:
        keep = held_out(args.data, args.write_data)
        smiles, y = smiles[keep], y[keep]
    if args.target == "crippen":
        y = crippen_logp(smiles)
    per_split: dict[str, dict[str, list[float]]] = {}
    for i in range(args.splits):
        tr, te = train_test_split(np.arange(len(y)), test_size=0.2, random_state=i)
        for name, gp in models(args.extra).items():
            t = time.perf_counter()
            gp.fit(smiles[tr], y[tr])
            pred = np.asarray(gp.predict(smiles[te]))
            rows = per_split.setdefault(name, {})
            err = pred - y[te]
            rows.setdefault("rmse", []).append(float(np.sqrt(np.mean(err**2))))
            rows.setdefault("mae", []).append(float(np.mean(np.abs(err))))
            ss = float(np.sum((y[te] - y[te].mean()) ** 2))
            rows.setdefault("r2", []).append(1 - float(np.sum(err**2)) / ss)
            rows.setdefault("nlpd", []).append(nlpd(gp, smiles[te], y[te], y[tr]))
            rows.setdefault("seconds", []).append(time.perf_counter() - t)
            print(
                f"split {i:2d} {name:>10}: RMSE {rows['rmse'][-1]:.3f}  R2 {rows['r2'][-1]:.3f}"
                f"  NLPD {rows['nlpd'][-1]:.3f}  ({rows['seconds'][-1]:.1f} s)",
                flush=True,
            )
    result = {
        "data": f"ESOL ({len(y)} molecules, {args.data.name}"
        + (", those absent from solubility.csv)" if args.held_out else ")")
        + ("; target: Crippen logP" if args.target == "crippen" else ""),
        "protocol": "GAUCHE: train_test_split(test_size=0.2, random_state=i), i < "
        f"{args.splits}; NLPD joint, standardised targets",
        "models": {name: repr(gp) for name, gp in models(args.extra).items()},
        "summary": {
            name: {metric: summary(v) for metric, v in rows.items()}
            for name, rows in per_split.items()
        },
        "per_split": per_split,
        "torch_threads": 1,
    }
    for name, rows in result["summary"].items():
        print(
            f"{name:>10}: "
            + "  ".join(f"{m} {s['mean']:.3f} ± {s['se']:.3f}" for m, s in rows.items())
        )
    RESULTS.mkdir(exist_ok=True)
    name = "gauche_esol" + ("_crippen" if args.target == "crippen" else "")
    name += "_held_out" if args.held_out else ""
    (RESULTS / f"{name}.json").write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
