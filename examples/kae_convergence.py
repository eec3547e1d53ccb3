"""Does the default K2AE converge, and does ``lam="auto"`` reconstruct as well as kernel PCA?

Issue 14, item 2 (Laforgue, Clémençon, d'Alché-Buc 2019, objective (5); reconstruction error
in the input kernel's RKHS, appendix B.7): 1000 ESOL molecules drawn with seed 0 from the
copy shipped in the package, an 80/20 split (seed 0), the Tanimoto kernel (the default for
SMILES).  For code sizes 2, 10 and 50 it fits

- the K2AE with default settings (``lam="auto"``, ``max_iter=300``, ``tol=1e-5``): converged
  or a ``ConvergenceWarning``, L-BFGS iterations of the kept fit, the chosen ``lam``, the
  validation curve (grid from 1e-1 down on a 10% validation split of the training part),
  held-out reconstruction error, fit time;
- the K2AE with the fixed ``lam=1e-3`` (the former default): converged, iterations, held-out
  error, fit time (the ratio of the two times is the cost of ``"auto"``);
- ``KernelPCA`` with the same kernel and ``n_components`` (held-out error of the projection
  on the training mean and the kept axes),

and writes ``examples/results/kae_convergence.{json,md}``.  About 3 minutes on one core.

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
from kernelkit.data._molecule_datasets import load_esol
from kernelkit.estimators._autoencoder import KernelAutoencoder
from kernelkit.kernels._molecules import Tanimoto
from kernelkit.utils._errors import ConvergenceWarning

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
        fixed, t_fixed, fixed_warned = fit_timed(
            KernelAutoencoder(dims=(p,), input_kernel=Tanimoto(), lam=1e-3, random_state=0),
            X_tr,
        )
        kpca = KernelPCA(Tanimoto(), n_components=p).fit(X_tr)
        row = {
            "code": p,
            "default_converged": default.stopped_ == "converged" and not warned,
            "default_n_iter": default.n_iter_,
            "default_n_eval": default.n_eval_,
            "default_seconds": t_def,
            "default_lam": default.lam_,
            "default_curve": default.lam_curve_,
            "default_held_out": held_out(default, X_te),
            "fixed_converged": fixed.stopped_ == "converged" and not fixed_warned,
            "fixed_n_iter": fixed.n_iter_,
            "fixed_seconds": t_fixed,
            "fixed_held_out": held_out(fixed, X_te),
            "kpca_held_out": held_out(kpca, X_te),
        }
        print(json.dumps(row), flush=True)
        out.append(row)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "kae_convergence.json").write_text(json.dumps(out, indent=2) + "\n")
    lines = [
        "| code | default (lam=auto): converged (iterations), lam | held-out | fit s | "
        "lam=1e-3: converged (iterations) | held-out | fit s | auto / fixed time | "
        "KPCA held-out |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in out:
        lines.append(
            f"| {r['code']} | {'yes' if r['default_converged'] else 'no'} "
            f"({r['default_n_iter']}), {r['default_lam']:g} | {r['default_held_out']:.4f} | "
            f"{r['default_seconds']:.0f} | {'yes' if r['fixed_converged'] else 'no'} "
            f"({r['fixed_n_iter']}) | {r['fixed_held_out']:.4f} | {r['fixed_seconds']:.0f} | "
            f"{r['default_seconds'] / r['fixed_seconds']:.2f} | {r['kpca_held_out']:.4f} |"
        )
    (RESULTS / "kae_convergence.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
