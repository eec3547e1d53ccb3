"""Handler of ``kernelkit two-sample A B``: do two files hold samples of one distribution?

The kernel two-sample test of :mod:`kernelkit.stats` (course part 3, section 2) on two files
of the same kind (vectors, molecules, sequences, graphs).  Prints the statistic and the
p-value; writes a report folder with the null histogram, ``results.json`` and, for vectors
and molecules with the permutation or spectral method, the records where the witness
function is largest (the examples of each file that the other one lacks most).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from kernelkit.cli._commands import input_kernel, read_input, report_letters
from kernelkit.cli._errors import UsageError
from kernelkit.cli._kernels import build_kernel, describe_kernel
from kernelkit.cli._output import staged
from kernelkit.cli._progress import stage
from kernelkit.data.readers import DataFile, read_data
from kernelkit.report._document import Report
from kernelkit.report._plots import null_histogram
from kernelkit.stats import two_sample_test
from kernelkit.stats._mmd import pooled_gram, prepare, witness_from_gram
from kernelkit.stats._two_sample import gram_test
from kernelkit.utils._errors import DataFileError
from kernelkit.utils._kinds import InputKind
from kernelkit.utils._optional import require

_WITNESS_KINDS = (InputKind.VECTOR, InputKind.MOLECULE)


def _read_pair(args: argparse.Namespace) -> tuple[DataFile, DataFile]:
    """Both files, the second read as the kind (columns, alphabet) of the first."""
    args.input = args.a
    a = read_input(args)
    if len(a) < 2:
        raise DataFileError(a.path, f"expected at least 2 records, got {len(a)}")
    columns = a.feature_names if a.kind is InputKind.VECTOR else None
    try:
        b = read_data(
            args.b,
            kind=a.kind,
            column=args.column,
            columns=columns,
            alphabet=a.alphabet or args.alphabet,
            node_label=None if args.node_label.lower() == "none" else args.node_label,
            on_error="skip" if args.skip_invalid else "raise",
        )
    except DataFileError:
        raise
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    report_letters(args, b)
    if len(b) < 2:
        raise DataFileError(b.path, f"expected at least 2 records, got {len(b)}")
    return a, b


def _kernel(args: argparse.Namespace, a: DataFile, b: DataFile) -> Any:
    """``--kernel`` checked against both files; a Gaussian/Laplacian width from the pooled
    vectors (median heuristic) when not given."""
    spec = args.kernels[0]
    kernel = input_kernel(spec, a)
    input_kernel(spec, b)
    if a.kind is InputKind.VECTOR:
        kernel = build_kernel(spec, a.kind, sigma_from=np.vstack([a.items, b.items]))
    return kernel


def _item_text(data: DataFile, i: int) -> str:
    if data.kind is InputKind.VECTOR:
        values = ", ".join(f"{v:.4g}" for v in np.asarray(data.items[i])[:8])
        return f"({values}{', ...' if np.asarray(data.items[i]).size > 8 else ''})"
    return str(data.items[i])


def _witness_rows(values: np.ndarray, a: DataFile, b: DataFile, top: int) -> list[dict[str, Any]]:
    """The ``top`` records of A with the largest witness and of B with the smallest."""
    n = len(a)
    rows = []
    for data, part, sign, name in ((a, values[:n], 1.0, "A"), (b, values[n:], -1.0, "B")):
        for i in np.argsort(-sign * part, kind="stable")[:top]:
            rows.append(
                {
                    "file": name,
                    "id": data.ids[i],
                    "record": _item_text(data, int(i)),
                    "witness": float(part[i]),
                }
            )
    return rows


def _run(args: argparse.Namespace, a: DataFile, b: DataFile, kernel: Any) -> dict[str, Any]:
    samples, k = prepare(a.items, b.items, kernel, kind=a.kind)
    witness: list[dict[str, Any]] = []
    if args.method in ("permutation", "spectral"):
        stage(args, f"pooled Gram matrix of {len(a) + len(b)} records")
        K = pooled_gram(k, samples)
        stage(args, f"{args.method} null with {args.permutations} samples")
        res = gram_test(
            K,
            len(a),
            k,
            method=args.method,
            n_permutations=args.permutations,
            random_state=args.seed,
        )
        if a.kind in _WITNESS_KINDS:
            values = witness_from_gram(K, len(a)).numpy()
            witness = _witness_rows(values, a, b, args.top)
    else:
        stage(args, f"{args.method}-time test")
        res = two_sample_test(
            a.items,
            b.items,
            kernel=k,
            method=args.method,
            n_permutations=args.permutations,
            random_state=args.seed,
        )
    return {"result": res, "witness": witness}


def _report(summary: dict[str, Any], witness: list[dict[str, Any]], title: str) -> Report:
    report = Report(title)
    report.add_paragraph(
        f"A: {summary['a']} ({summary['n_a']} {summary['kind']}); B: {summary['b']} "
        f"({summary['n_b']} {summary['kind']}); kernel {summary['kernel']}."
    )
    report.add_table(
        ["statistic", "value"],
        [
            [summary["statistic_name"], f"{summary['statistic']:.6g}"],
            ["p-value", f"{summary['pvalue']:.4g}"],
            ["method", summary["method"]],
            ["null samples", str(summary["n_null"])],
            ["seed", str(summary["seed"])],
        ],
    )
    report.add_paragraph(
        "H0: A and B are samples of one distribution. p = (1 + #{null >= observed}) / (1 + J) "
        "for the permutation and spectral nulls, the normal tail for the linear and block "
        "tests (kernelkit.stats, course part 3, section 2)."
    )
    report.add_image("null_histogram.png", "Null distribution and the observed statistic")
    if witness:
        report.add_heading("Records where the two files differ most (witness function)")
        report.add_paragraph(
            "The witness f(t) = (mu_A(t) - mu_B(t)) / ||mu_A - mu_B|| is large where A is "
            "denser than B: the records of A with the largest witness and of B with the "
            "smallest are the examples each file has that the other lacks most."
        )
        report.add_table(
            ["file", "id", "record", "witness"],
            [[w["file"], w["id"], w["record"], f"{w['witness']:.4g}"] for w in witness],
        )
    report.add_heading("Files")
    files = [("results.json", "statistic, p-value, settings and null samples")]
    if witness:
        files.append(("witness.csv", "the witness rows above"))
    report.add_files(files)
    return report


def run_two_sample_command(args: argparse.Namespace) -> int:
    """``kernelkit two-sample A B [--kernel SPEC] [--method ...] --out DIR``."""
    out = args.out
    require("matplotlib", purpose="Writing the plots of the report")
    a, b = _read_pair(args)
    kernel = _kernel(args, a, b)
    start = time.perf_counter()
    ran = _run(args, a, b, kernel)
    res = ran["result"]
    name = {"linear": "linear-time MMD^2", "block": "block MMD^2"}.get(args.method, "MMD^2_u")
    summary = {
        "a": str(args.a),
        "b": str(args.b),
        "n_a": len(a),
        "n_b": len(b),
        "kind": a.kind.plural,
        "kernel": describe_kernel(res.kernel),
        "method": args.method,
        "statistic_name": name,
        "statistic": res.statistic,
        "pvalue": res.pvalue,
        "n_null": int(res.null_samples.size),
        "seed": args.seed,
        "seconds": time.perf_counter() - start,
    }
    with staged(out, folder=True) as folder:
        null_histogram(
            res.null_samples,
            res.statistic,
            folder / "null_histogram.png",
            xlabel=name,
            title=f"{args.method} null",
        )
        record = {**summary, "null_samples": res.null_samples.tolist(), "witness": ran["witness"]}
        (folder / "results.json").write_text(json.dumps(record, indent=1), encoding="utf-8")
        if ran["witness"]:
            _write_witness(folder / "witness.csv", ran["witness"])
        _report(
            summary,
            ran["witness"],
            f"kernelkit two-sample: {Path(args.a).name} vs {Path(args.b).name}",
        ).write(folder)
    if not args.quiet:
        print(
            f"{name} = {res.statistic:.6g}, p-value = {res.pvalue:.4g} ({args.method}, "
            f"{res.null_samples.size} null samples, {summary['kernel']}; {len(a)} vs {len(b)} "
            f"{a.kind.plural}); report in {out}/"
        )
    return 0


def _write_witness(path: Path, rows: list[dict[str, Any]]) -> None:
    import csv

    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=["file", "id", "record", "witness"])
        writer.writeheader()
        writer.writerows(rows)
