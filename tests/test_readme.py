"""The README's quickstart runs as written."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_quickstart_runs():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert blocks, "the README has no python example"
    namespace: dict = {}
    exec(compile(blocks[0], str(README), "exec"), namespace)
    assert namespace["codes"].shape == (200, 2)
    assert tuple(namespace["k"](namespace["X"][:3], namespace["X"][:4]).shape) == (3, 4)


# ---------------------------------------------------------------------- performance table
def _readme_table_module():
    spec = importlib.util.spec_from_file_location(
        "readme_table", README.parent / "benchmarks" / "readme_table.py"
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _table_lines(block: str) -> list[list[str]]:
    rows = [line for line in block.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in row.strip("|").split(" | ")] for row in rows[1:]]


def test_readme_performance_table_is_generated_from_the_json_results():
    table = _readme_table_module()
    block = table.readme_block(README.read_text())
    assert block == table.build_table(), "run `python benchmarks/readme_table.py`"
    results = table.load_results()
    shown = table.table_rows(results)
    lines = _table_lines(block)
    assert len(lines) == len(shown) > 0
    # every table row is one JSON row: its case, kind and kernelkit time
    for cells, (kind, row) in zip(lines, shown, strict=True):
        assert cells[0] == row["case"] and cells[1] == kind
        assert cells[2] == f"{row['kernelkit_s']:.3g} s"


def test_readme_performance_table_is_honest():
    table = _readme_table_module()
    lines = _table_lines(table.readme_block(README.read_text()))
    by_case = {cells[0]: cells for cells in lines}
    # losses are shown: the Tanimoto Gram against RDKit, save / load against pickle
    tanimoto = [c for case, c in by_case.items() if "Tanimoto" in case and "RDKit" in c[3]]
    pickle_rows = [c for c in lines if c[3].startswith("pickle:")]
    assert tanimoto and pickle_rows
    for cells in [*tanimoto, *pickle_rows]:
        ratio = float(cells[4].split("x")[0])
        assert (ratio < 1) == cells[4].endswith("(kernelkit slower)")
    # float32 against float32, float64 against float64
    for cells in lines:
        assert table.same_dtype({"case": cells[0], "baseline": cells[3]}), cells
    # kernelkit against kernelkit is an ablation, never an alternative
    for cells in lines:
        if "loop of 64 single-restart fits" in cells[3] or cells[3].startswith("--threads"):
            assert cells[1] == "ablation", cells


def test_readme_table_generator_on_synthetic_results(tmp_path):
    table = _readme_table_module()
    machine = {"machine": "x86_64", "python": "3", "torch": "2", "numpy": "2", "scipy": "1",
               "sklearn": "1", "torch_threads": 2}  # fmt: skip
    rows = [
        {"case": "KRR float32", "kernelkit_s": 2.0, "baseline": "sk float64", "baseline_s": 4.0},
        {"case": "KRR float32", "kernelkit_s": 2.0, "baseline": "sk float32", "baseline_s": 1.0},
    ]
    payload = {"benchmark": "bench_estimators", "machine": machine, "rows": rows}
    (tmp_path / "bench_estimators.json").write_text(json.dumps(payload))
    lines = _table_lines(table.build_table(tmp_path))
    assert lines == [
        ["KRR float32", "alternative", "2 s", "sk float32: 1 s", "0.50x (kernelkit slower)"]
    ]
    # run_all.json of a run that a failing script stopped: the machine line says so
    run = {"finished": "2026-11-27 03:59", "total_s": 60.0, "scripts": {"bench_a": 30.0}}
    (tmp_path / "run_all.json").write_text(json.dumps({**run, "complete": False}))
    assert "only bench_a." in table.build_table(tmp_path)
    (tmp_path / "run_all.json").write_text(
        json.dumps({**run, "complete": False, "failed": "bench_b"})
    )
    assert "only bench_a; stopped by bench_b, which failed." in table.build_table(tmp_path)


def test_estimators_page_example_runs():
    """docs/estimators.md: its example asserts the kernel-name mapping, the precomputed
    equality and the default kernel of each kind."""
    page = README.parent / "docs" / "estimators.md"
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(), re.S)
    namespace: dict = {}
    exec(compile(blocks[0], str(page), "exec"), namespace)
    assert namespace["graph_model"].kernel_.n_iter == 3
