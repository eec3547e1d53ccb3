"""``kernelkit demo``: a K2AE of the molecules of ESOL, shipped inside the package.

ESOL (Delaney, J. Chem. Inf. Comput. Sci. 44, 2004; MIT-licensed copy from gauche 0.1.6, see
``kernelkit/datasets/README.md``): 1128 molecules and their measured log10 aqueous
solubility.  The job of :mod:`kernelkit.cli._autoencode` with a Tanimoto kernel (binary Morgan
fingerprints, radius 2, 2048 bits) and 2-D and 10-D codes, the protocol of Laforgue et al.
(2019), section 5.2 (K2AE codes + random forest against kernel PCA), on one 80/20 split.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from kernelkit.cli._autoencode import AutoencodeSettings, Target, require_plotting, run_autoencode
from kernelkit.cli._errors import UsageError
from kernelkit.cli._output import check_output, staged
from kernelkit.data._molecule_datasets import bundled_esol_path
from kernelkit.data.readers import read_data
from kernelkit.kernels import Tanimoto

TARGET = "measured log solubility in mols per litre"

README_NUMBERS = "readme_numbers.md"
"""File of the demo's output folder holding the README's results table, written by the demo
(``tests/cli/test_demo_readme.py`` checks that the README shows it)."""

_METHODS = {"K2AE": "K2AE", "KPCA": "kernel PCA"}


def readme_table(summary: dict[str, Any]) -> str:
    """The README's Markdown table of the demo's results (``results.json`` of the demo)."""
    lines = [
        "| method | code | held-out reconstruction error | RF R² | RF NMSE |",
        "|---|---|---|---|---|",
    ]
    for d in summary["settings"]["dims"]:
        for method in _METHODS:
            r = next(r for r in summary["results"] if r["method"] == method and r["dims"] == d)
            lines.append(
                f"| {_METHODS[method]} | {d}-D | {r['test_reconstruction_error']:.3f} | "
                f"{r['rf_r2']:.3f} | {r['rf_nmse']:.3f} |"
            )
    return "\n".join(lines) + "\n"


def run_demo(
    *,
    out: str | Path = "demo_output",
    seed: int = 0,
    max_iter: int = 50,
    subset: int | None = None,
    trees: int = 100,
    quiet: bool = False,
    overwrite: bool = False,
) -> dict[str, Any]:
    """Run the demo job and write its outputs to ``out``; returns the results dictionary.

    ``subset``: use only this many molecules, drawn at random (a quick look; default all).
    """
    out = check_output(out, overwrite=overwrite, kind="folder")
    require_plotting()
    data = read_data(bundled_esol_path(), kind="molecules", target=TARGET)
    if subset is not None:
        if subset < 10:
            raise UsageError(f"--subset: expected at least 10 molecules, got {subset}")
        rows = np.sort(np.random.default_rng(seed).permutation(len(data))[:subset])
        data = data.take(rows)
    values = data.target(TARGET, task="regression").values
    settings = AutoencodeSettings(
        dims=[2, 10],
        max_iter=max_iter,
        tol=1e-5,  # the stopping test of the README's demo numbers (docs/demo_results.json)
        seed=seed,
        trees=trees,
        landmarks=None,
        quiet=quiet,
        command="demo",
    )
    with staged(out, folder=True) as folder:
        summary = run_autoencode(
            data,
            Tanimoto(radius=2, n_bits=2048),
            Target("log solubility (mol/L)", values),
            settings,
            folder,
            title="kernelkit demo: a K2AE of the ESOL molecules",
        )
        (folder / README_NUMBERS).write_text(readme_table(summary), encoding="utf-8")
    if not quiet:
        print((out / "report.md").read_text(encoding="utf-8"))
        print(f"wrote {out}/ in {summary['wall_seconds']:.1f} s")
    return summary
