"""Does the default K2AE converge, and does ``lam="auto"`` reconstruct as well as kernel PCA?

Issue 14, item 2 (Laforgue, Clémençon, d'Alché-Buc 2019, objective (5); reconstruction error
in the input kernel's RKHS, appendix B.7): 1000 ESOL molecules drawn with seed 0 from the
copy shipped in the package, an 80/20 split (seed 0), the Tanimoto kernel (the default for
SMILES).  For code sizes 2, 10 and 50 it fits

- the K2AE with default settings (``lam=1e-3``, ``max_iter=300``, ``tol=1e-5``): converged
  or a ``ConvergenceWarning``, L-BFGS iterations, held-out reconstruction error;
- the K2AE with ``lam="auto"`` (grid 1e-5..1e-1 on a 10% validation split of the training
  part, then refitted): the chosen ``lam``, its held-out error, the validation curve;
- ``KernelPCA`` with the same kernel and ``n_components`` (held-out error of the projection
  on the training mean and the kept axes),

and writes ``examples/results/kae_convergence.{json,md}``.  About 5 minutes on one core.

Run: ``PYTHONPATH=src python examples/kae_convergence.py``
"""

from __future__ import annotations

import json
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.model_selection import train_test_split

from kernelkit import KernelPCA
from kernelkit.data.molecule_datasets import load_esol
from kernelkit.estimators.autoencoder import KernelAutoencoder
from kernelkit.kernels.molecules import Tanimoto
from kernelkit.utils.errors import ConvergenceWarning

RESULTS = Path(__file__).parent / "results"
CODES = (2, 10, 50)


def held_out(model: object, X: list[str]) -> float:
    return float(np.mean(np.asarray(model.reconstruction_error(X))))  # type: ignore[attr-defined]


def fit_timed(model: KernelAutoencoder, X: list[str]) -> tuple[KernelAutoencoder, float, bool]:
    """The fitted model, its wall time and whether it warned ``ConvergenceWarning``."""
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        model.fit(X)
    warned = any(issubclass(w.category, ConvergenceWarning) for w in caught)
    return model, time.perf_counter() - t0, warned


def main() -> None:
    smiles = load_esol().smiles
    rows = np.sort(np.random.default_rng(0).permutation(len(smiles))[:1000])
    X = [smiles[i] for i in rows]
    tr, te = train_test_split(np.arange(len(X)), test_size=0.2, random_state=0)
    X_tr, X_te = [X[i] for i in tr], [X[i] for i in te]
    out = []
    for p in CODES:
        default, t_def, warned = fit_timed(
            KernelAutoencoder(dims=(p,), input_kernel=Tanimoto(), random_state=0), X_tr
        )
        auto, t_auto, auto_warned = fit_timed(
            KernelAutoencoder(dims=(p,), input_kernel=Tanimoto(), lam="auto", random_state=0),
            X_tr,
        )
        kpca = KernelPCA(Tanimoto(), n_components=p).fit(X_tr)
        row = {
            "code": p,
            "default_converged": default.stopped_ == "converged" and not warned,
            "default_n_iter": default.n_iter_,
            "default_n_eval": default.n_eval_,
            "default_seconds": t_def,
            "default_held_out": held_out(default, X_te),
            "auto_lam": auto.lam_,
            "auto_converged": auto.stopped_ == "converged" and not auto_warned,
            "auto_seconds": t_auto,
            "auto_held_out": held_out(auto, X_te),
            "auto_curve": auto.lam_curve_,
            "kpca_held_out": held_out(kpca, X_te),
        }
        print(json.dumps(row), flush=True)
        out.append(row)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "kae_convergence.json").write_text(json.dumps(out, indent=2) + "\n")
    lines = [
        "| code | default: converged (iterations, s) | default held-out | auto lam (s) "
        "| auto held-out | KPCA held-out |",
        "|---|---|---|---|---|---|",
    ]
    for r in out:
        lines.append(
            f"| {r['code']} | {'yes' if r['default_converged'] else 'no'} "
            f"({r['default_n_iter']}, {r['default_seconds']:.0f} s) | "
            f"{r['default_held_out']:.4f} | {r['auto_lam']:g} ({r['auto_seconds']:.0f} s) | "
            f"{r['auto_held_out']:.4f} | {r['kpca_held_out']:.4f} |"
        )
    (RESULTS / "kae_convergence.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
